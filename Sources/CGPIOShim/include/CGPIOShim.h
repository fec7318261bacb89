// A small, version-neutral GPIO API over libgpiod v1 (1.6.x) and v2 (2.x). Swift sees only this
// header, so no libgpiod type leaks out and one Swift source tree builds against either.
// Functions that fail return NULL or -1 with errno set, as libgpiod does.
#ifndef CGPIOSHIM_H
#define CGPIOSHIM_H

#include <stddef.h>
#include <stdint.h>

typedef struct vgpio_chip vgpio_chip;
typedef struct vgpio_request vgpio_request;

enum vgpio_bias { VGPIO_BIAS_AS_IS = 0, VGPIO_BIAS_DISABLED, VGPIO_BIAS_PULL_UP, VGPIO_BIAS_PULL_DOWN };

struct vgpio_input {
    unsigned int offset;
    int active_low;
    int bias;                     // enum vgpio_bias
    unsigned int debounce_us;     // applied by the kernel on v2; ignored on v1 (debounce in software)
};

struct vgpio_edge {
    unsigned int index;           // position of the line in the request
    int is_active;                // the new level, active-low already applied
    uint64_t timestamp_ns;        // CLOCK_MONOTONIC, stamped by the kernel at the edge
};

// 1 or 2: the libgpiod API this build was compiled against.
int vgpio_api_major(void);
// The runtime library's version, e.g. "1.6.3".
const char *vgpio_library_version(void);
// Whether the kernel filters bounces for us (v2 with a debounce period).
int vgpio_kernel_debounce(void);

vgpio_chip *vgpio_chip_open(const char *path);
void vgpio_chip_close(vgpio_chip *chip);
// Copies of the chip's name / label into the caller's buffer; 0 on success.
int vgpio_chip_name(vgpio_chip *chip, char *buffer, size_t size);
int vgpio_chip_label(vgpio_chip *chip, char *buffer, size_t size);
unsigned int vgpio_chip_line_count(vgpio_chip *chip);
// The offset of the line the board names `name`, or -1 when there is none.
int vgpio_chip_find_line(vgpio_chip *chip, const char *name);
// Writes the consumer holding `offset` (empty when unused or unnamed); 1 if the line is in use,
// 0 if free, -1 on error.
int vgpio_line_consumer(vgpio_chip *chip, unsigned int offset, char *buffer, size_t size);

vgpio_request *vgpio_request_inputs(vgpio_chip *chip, const struct vgpio_input *lines, size_t count,
                                    const char *consumer);
// Outputs are requested inactive: nothing twitches while the daemon starts.
vgpio_request *vgpio_request_outputs(vgpio_chip *chip, const unsigned int *offsets, const int *active_low,
                                     size_t count, const char *consumer);
// Event file descriptors to poll: v1 has one per line, v2 one per request.
size_t vgpio_request_fd_count(vgpio_request *request);
int vgpio_request_fd(vgpio_request *request, size_t which);
// Reads the edges queued on fd `which` (after poll said it is readable). Returns how many were
// written to `edges`, or -1.
int vgpio_read_edges(vgpio_request *request, size_t which, struct vgpio_edge *edges, size_t capacity);
// Levels of every line of the request (active = 1), into `values[count]`; 0 on success.
int vgpio_get_values(vgpio_request *request, int *values);
int vgpio_set_value(vgpio_request *request, size_t index, int active);
// Every output driven inactive, then the lines given back.
void vgpio_release(vgpio_request *request);

#endif
