// The GPIO shim: one small API (CGPIOShim.h) over libgpiod v1 and v2. The installed gpiod.h
// says which one it is: v1 defines GPIOD_LINE_BULK_MAX_LINES, v2 has no such macro.
#include "CGPIOShim.h"

#include <gpiod.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define VGPIO_V1 1
#endif

struct vgpio_chip {
    struct gpiod_chip *chip;
    char *path;
};

// One request = the lines of one GPIOInputGroup or GPIOOutputGroup.
struct vgpio_request {
    size_t count;
    int is_output;
    unsigned int *offsets;
#ifdef VGPIO_V1
    // v1 lines belong to a chip handle; the request keeps its own, and closing it releases them.
    struct gpiod_chip *chip;
    struct gpiod_line **lines;
#else
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *buffer;
#endif
};

static void copy_text(const char *text, char *buffer, size_t size) {
    if (size == 0) return;
    strncpy(buffer, text ? text : "", size - 1);
    buffer[size - 1] = '\0';
}

static vgpio_request *new_request(size_t count, int is_output) {
    vgpio_request *request = calloc(1, sizeof *request);
    if (!request) return NULL;
    request->count = count;
    request->is_output = is_output;
    request->offsets = calloc(count ? count : 1, sizeof *request->offsets);
#ifdef VGPIO_V1
    request->lines = calloc(count ? count : 1, sizeof *request->lines);
    if (!request->offsets || !request->lines) {
        free(request->offsets);
        free(request->lines);
#else
    if (!request->offsets) {
#endif
        free(request);
        errno = ENOMEM;
        return NULL;
    }
    return request;
}

static void free_request(vgpio_request *request) {
    free(request->offsets);
#ifdef VGPIO_V1
    free(request->lines);
#endif
    free(request);
}

vgpio_chip *vgpio_chip_open(const char *path) {
    vgpio_chip *chip = calloc(1, sizeof *chip);
    if (!chip) return NULL;
    chip->path = strdup(path);
    chip->chip = chip->path ? gpiod_chip_open(path) : NULL;
    if (!chip->chip) {
        int saved = errno;
        free(chip->path);
        free(chip);
        errno = saved;
        return NULL;
    }
    return chip;
}

void vgpio_chip_close(vgpio_chip *chip) {
    if (!chip) return;
    gpiod_chip_close(chip->chip);
    free(chip->path);
    free(chip);
}

#ifdef VGPIO_V1

int vgpio_api_major(void) { return 1; }
const char *vgpio_library_version(void) { return gpiod_version_string(); }
int vgpio_kernel_debounce(void) { return 0; }

int vgpio_chip_name(vgpio_chip *chip, char *buffer, size_t size) {
    copy_text(gpiod_chip_name(chip->chip), buffer, size);
    return 0;
}

int vgpio_chip_label(vgpio_chip *chip, char *buffer, size_t size) {
    copy_text(gpiod_chip_label(chip->chip), buffer, size);
    return 0;
}

unsigned int vgpio_chip_line_count(vgpio_chip *chip) { return gpiod_chip_num_lines(chip->chip); }

int vgpio_chip_find_line(vgpio_chip *chip, const char *name) {
    struct gpiod_line *line = gpiod_chip_find_line(chip->chip, name);
    return line ? (int)gpiod_line_offset(line) : -1;
}

int vgpio_line_consumer(vgpio_chip *chip, unsigned int offset, char *buffer, size_t size) {
    struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offset);
    if (!line || gpiod_line_update(line) < 0) return -1;
    copy_text(gpiod_line_consumer(line), buffer, size);
    return gpiod_line_is_used(line) ? 1 : 0;
}

static int v1_flags(int active_low, int bias) {
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    switch (bias) {
    case VGPIO_BIAS_DISABLED: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE; break;
    case VGPIO_BIAS_PULL_UP: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP; break;
    case VGPIO_BIAS_PULL_DOWN: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN; break;
    default: break;
    }
    return flags;
}

// Requests each line on a chip handle of the request's own: uAPI v1 has one request per line.
static vgpio_request *v1_request(vgpio_chip *chip, size_t count, int is_output, const unsigned int *offsets,
                                 const int *active_low, const int *bias, const char *consumer) {
    vgpio_request *request = new_request(count, is_output);
    if (!request) return NULL;
    request->chip = gpiod_chip_open(chip->path);
    if (!request->chip) goto fail;
    for (size_t i = 0; i < count; i++) {
        request->offsets[i] = offsets[i];
        request->lines[i] = gpiod_chip_get_line(request->chip, offsets[i]);
        if (!request->lines[i]) goto fail;
        struct gpiod_line_request_config config = {
            .consumer = consumer,
            .request_type = is_output ? GPIOD_LINE_REQUEST_DIRECTION_OUTPUT : GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES,
            .flags = v1_flags(active_low[i], bias ? bias[i] : VGPIO_BIAS_AS_IS),
        };
        if (gpiod_line_request(request->lines[i], &config, 0) < 0) goto fail;
    }
    return request;
fail: {
        int saved = errno;
        if (request->chip) gpiod_chip_close(request->chip);
        free_request(request);
        errno = saved;
        return NULL;
    }
}

vgpio_request *vgpio_request_inputs(vgpio_chip *chip, const struct vgpio_input *lines, size_t count,
                                    const char *consumer) {
    unsigned int *offsets = calloc(count ? count : 1, sizeof *offsets);
    int *active_low = calloc(count ? count : 1, sizeof *active_low);
    int *bias = calloc(count ? count : 1, sizeof *bias);
    vgpio_request *request = NULL;
    if (offsets && active_low && bias) {
        for (size_t i = 0; i < count; i++) {
            offsets[i] = lines[i].offset;
            active_low[i] = lines[i].active_low;
            bias[i] = lines[i].bias;
        }
        request = v1_request(chip, count, 0, offsets, active_low, bias, consumer);
    } else {
        errno = ENOMEM;
    }
    int saved = errno;
    free(offsets);
    free(active_low);
    free(bias);
    errno = saved;
    return request;
}

vgpio_request *vgpio_request_outputs(vgpio_chip *chip, const unsigned int *offsets, const int *active_low,
                                     size_t count, const char *consumer) {
    return v1_request(chip, count, 1, offsets, active_low, NULL, consumer);
}

size_t vgpio_request_fd_count(vgpio_request *request) { return request->is_output ? 0 : request->count; }

int vgpio_request_fd(vgpio_request *request, size_t which) { return gpiod_line_event_get_fd(request->lines[which]); }

int vgpio_read_edges(vgpio_request *request, size_t which, struct vgpio_edge *edges, size_t capacity) {
    struct gpiod_line_event events[16];
    if (capacity > 16) capacity = 16;
    int fd = gpiod_line_event_get_fd(request->lines[which]);
    int count = gpiod_line_event_read_fd_multiple(fd, events, (unsigned int)capacity);
    for (int i = 0; i < count; i++) {
        edges[i].index = (unsigned int)which;
        edges[i].is_active = events[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
        edges[i].timestamp_ns = (uint64_t)events[i].ts.tv_sec * 1000000000u + (uint64_t)events[i].ts.tv_nsec;
    }
    return count;
}

int vgpio_get_values(vgpio_request *request, int *values) {
    for (size_t i = 0; i < request->count; i++) {
        values[i] = gpiod_line_get_value(request->lines[i]);
        if (values[i] < 0) return -1;
    }
    return 0;
}

int vgpio_set_value(vgpio_request *request, size_t index, int active) {
    return gpiod_line_set_value(request->lines[index], active ? 1 : 0);
}

void vgpio_release(vgpio_request *request) {
    if (!request) return;
    if (request->is_output) {
        for (size_t i = 0; i < request->count; i++) gpiod_line_set_value(request->lines[i], 0);
    }
    gpiod_chip_close(request->chip);
    free_request(request);
}

#else  // libgpiod v2

int vgpio_api_major(void) { return 2; }
const char *vgpio_library_version(void) { return gpiod_api_version(); }
int vgpio_kernel_debounce(void) { return 1; }

static int chip_info_text(vgpio_chip *chip, int label, char *buffer, size_t size) {
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip->chip);
    if (!info) return -1;
    copy_text(label ? gpiod_chip_info_get_label(info) : gpiod_chip_info_get_name(info), buffer, size);
    gpiod_chip_info_free(info);
    return 0;
}

int vgpio_chip_name(vgpio_chip *chip, char *buffer, size_t size) { return chip_info_text(chip, 0, buffer, size); }
int vgpio_chip_label(vgpio_chip *chip, char *buffer, size_t size) { return chip_info_text(chip, 1, buffer, size); }

unsigned int vgpio_chip_line_count(vgpio_chip *chip) {
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip->chip);
    if (!info) return 0;
    unsigned int count = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    return count;
}

int vgpio_chip_find_line(vgpio_chip *chip, const char *name) {
    return gpiod_chip_get_line_offset_from_name(chip->chip, name);
}

int vgpio_line_consumer(vgpio_chip *chip, unsigned int offset, char *buffer, size_t size) {
    struct gpiod_line_info *info = gpiod_chip_get_line_info(chip->chip, offset);
    if (!info) return -1;
    copy_text(gpiod_line_info_get_consumer(info), buffer, size);
    int used = gpiod_line_info_is_used(info) ? 1 : 0;
    gpiod_line_info_free(info);
    return used;
}

static enum gpiod_line_bias v2_bias(int bias) {
    switch (bias) {
    case VGPIO_BIAS_DISABLED: return GPIOD_LINE_BIAS_DISABLED;
    case VGPIO_BIAS_PULL_UP: return GPIOD_LINE_BIAS_PULL_UP;
    case VGPIO_BIAS_PULL_DOWN: return GPIOD_LINE_BIAS_PULL_DOWN;
    default: return GPIOD_LINE_BIAS_AS_IS;
    }
}

// Kernel edge buffer: room for long bursts on many lines before anything is dropped.
enum { V2_EVENT_BUFFER = 1024, V2_READ_BATCH = 64 };

// One request for every line, each with settings of its own (bias, active-low, debounce).
static vgpio_request *v2_request(vgpio_chip *chip, size_t count, int is_output, const struct vgpio_input *inputs,
                                 const unsigned int *offsets, const int *active_low, const char *consumer) {
    vgpio_request *request = new_request(count, is_output);
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    if (!request || !line_config || !request_config) goto done;
    if (!is_output) {
        request->buffer = gpiod_edge_event_buffer_new(V2_READ_BATCH);
        if (!request->buffer) goto done;
        gpiod_request_config_set_event_buffer_size(request_config, V2_EVENT_BUFFER);
    }
    gpiod_request_config_set_consumer(request_config, consumer);
    for (size_t i = 0; i < count; i++) {
        struct gpiod_line_settings *settings = gpiod_line_settings_new();
        if (!settings) goto done;
        unsigned int offset = is_output ? offsets[i] : inputs[i].offset;
        request->offsets[i] = offset;
        if (is_output) {
            gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT);
            gpiod_line_settings_set_active_low(settings, active_low[i] != 0);
            gpiod_line_settings_set_output_value(settings, GPIOD_LINE_VALUE_INACTIVE);
        } else {
            gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT);
            gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH);
            gpiod_line_settings_set_active_low(settings, inputs[i].active_low != 0);
            gpiod_line_settings_set_bias(settings, v2_bias(inputs[i].bias));
            gpiod_line_settings_set_debounce_period_us(settings, inputs[i].debounce_us);
            gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC);
        }
        int added = gpiod_line_config_add_line_settings(line_config, &offset, 1, settings);
        gpiod_line_settings_free(settings);
        if (added < 0) goto done;
    }
    request->request = gpiod_chip_request_lines(chip->chip, request_config, line_config);
done: {
        int saved = errno;
        gpiod_line_config_free(line_config);
        gpiod_request_config_free(request_config);
        if (request && !request->request) {
            gpiod_edge_event_buffer_free(request->buffer);
            free_request(request);
            request = NULL;
        }
        errno = saved;
        return request;
    }
}

vgpio_request *vgpio_request_inputs(vgpio_chip *chip, const struct vgpio_input *lines, size_t count,
                                    const char *consumer) {
    return v2_request(chip, count, 0, lines, NULL, NULL, consumer);
}

vgpio_request *vgpio_request_outputs(vgpio_chip *chip, const unsigned int *offsets, const int *active_low,
                                     size_t count, const char *consumer) {
    return v2_request(chip, count, 1, NULL, offsets, active_low, consumer);
}

size_t vgpio_request_fd_count(vgpio_request *request) { return request->is_output ? 0 : 1; }

int vgpio_request_fd(vgpio_request *request, size_t which) {
    (void)which;
    return gpiod_line_request_get_fd(request->request);
}

int vgpio_read_edges(vgpio_request *request, size_t which, struct vgpio_edge *edges, size_t capacity) {
    (void)which;
    if (capacity > V2_READ_BATCH) capacity = V2_READ_BATCH;
    int count = gpiod_line_request_read_edge_events(request->request, request->buffer, capacity);
    for (int i = 0; i < count; i++) {
        struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(request->buffer, (unsigned long)i);
        unsigned int offset = gpiod_edge_event_get_line_offset(event);
        edges[i].index = 0;
        for (size_t line = 0; line < request->count; line++) {
            if (request->offsets[line] == offset) edges[i].index = (unsigned int)line;
        }
        edges[i].is_active = gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE;
        edges[i].timestamp_ns = gpiod_edge_event_get_timestamp_ns(event);
    }
    return count;
}

int vgpio_get_values(vgpio_request *request, int *values) {
    enum gpiod_line_value *read = calloc(request->count ? request->count : 1, sizeof *read);
    if (!read) return -1;
    int result = gpiod_line_request_get_values(request->request, read);
    for (size_t i = 0; result == 0 && i < request->count; i++) values[i] = read[i] == GPIOD_LINE_VALUE_ACTIVE;
    free(read);
    return result;
}

int vgpio_set_value(vgpio_request *request, size_t index, int active) {
    return gpiod_line_request_set_value(request->request, request->offsets[index],
                                        active ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

void vgpio_release(vgpio_request *request) {
    if (!request) return;
    if (request->is_output) {
        for (size_t i = 0; i < request->count; i++) vgpio_set_value(request, i, 0);
    }
    gpiod_line_request_release(request->request);
    gpiod_edge_event_buffer_free(request->buffer);
    free_request(request);
}

#endif
