// The latency baseline: the least a program using libgpiod can do between a button edge and a
// relay output. It mirrors input line IN (active-low, pull-up, both edges) onto output line OUT
// until killed. Builds against libgpiod v1 or v2, like vendd's shim.
// With PULSE_MS it is the pulse baseline instead: each press turns OUT on for PULSE_MS (a sleep
// to an absolute deadline, as a relay timer's), which is the least this guest stretches a pulse.
//
//   gpio-mirror CHIP_PATH IN OUT [PULSE_MS]
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static struct timespec deadline_after(long ms) {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_sec += ms / 1000;
    at.tv_nsec += (ms % 1000) * 1000000;
    if (at.tv_nsec >= 1000000000) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000;
    }
    return at;
}

static void sleep_until(const struct timespec *at) {
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, at, NULL) != 0) {}
}

#ifdef GPIOD_LINE_BULK_MAX_LINES  // libgpiod v1

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) return 64;
    long pulse_ms = argc == 5 ? atol(argv[4]) : 0;
    struct gpiod_chip *chip = gpiod_chip_open(argv[1]);
    if (!chip) { perror(argv[1]); return 1; }
    struct gpiod_line *in = gpiod_chip_get_line(chip, (unsigned)atoi(argv[2]));
    struct gpiod_line *out = gpiod_chip_get_line(chip, (unsigned)atoi(argv[3]));
    if (!in || !out ||
        gpiod_line_request_both_edges_events_flags(in, "gpio-mirror",
            GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW | GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP) < 0 ||
        gpiod_line_request_output(out, "gpio-mirror", 0) < 0) { perror("request"); return 1; }
    printf("gpio-mirror: ready (libgpiod %s)\n", gpiod_version_string());
    fflush(stdout);
    for (;;) {
        struct gpiod_line_event event;
        if (gpiod_line_event_read(in, &event) < 0) { perror("read"); return 1; }
        int pressed = event.event_type == GPIOD_LINE_EVENT_RISING_EDGE;
        if (pulse_ms == 0) {
            gpiod_line_set_value(out, pressed);
        } else if (pressed) {
            gpiod_line_set_value(out, 1);
            struct timespec end = deadline_after(pulse_ms);
            sleep_until(&end);
            gpiod_line_set_value(out, 0);
        }
    }
}

#else  // libgpiod v2

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) return 64;
    long pulse_ms = argc == 5 ? atol(argv[4]) : 0;
    struct gpiod_chip *chip = gpiod_chip_open(argv[1]);
    if (!chip) { perror(argv[1]); return 1; }
    unsigned int in = (unsigned)atoi(argv[2]), out = (unsigned)atoi(argv[3]);
    struct gpiod_line_settings *input = gpiod_line_settings_new(), *output = gpiod_line_settings_new();
    gpiod_line_settings_set_direction(input, GPIOD_LINE_DIRECTION_INPUT);
    gpiod_line_settings_set_edge_detection(input, GPIOD_LINE_EDGE_BOTH);
    gpiod_line_settings_set_bias(input, GPIOD_LINE_BIAS_PULL_UP);
    gpiod_line_settings_set_active_low(input, true);
    gpiod_line_settings_set_direction(output, GPIOD_LINE_DIRECTION_OUTPUT);
    gpiod_line_settings_set_output_value(output, GPIOD_LINE_VALUE_INACTIVE);
    struct gpiod_line_config *config = gpiod_line_config_new();
    gpiod_line_config_add_line_settings(config, &in, 1, input);
    gpiod_line_config_add_line_settings(config, &out, 1, output);
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    gpiod_request_config_set_consumer(request_config, "gpio-mirror");
    struct gpiod_line_request *request = gpiod_chip_request_lines(chip, request_config, config);
    if (!request) { perror("request"); return 1; }
    struct gpiod_edge_event_buffer *buffer = gpiod_edge_event_buffer_new(16);
    printf("gpio-mirror: ready (libgpiod %s)\n", gpiod_api_version());
    fflush(stdout);
    for (;;) {
        int count = gpiod_line_request_read_edge_events(request, buffer, 16);
        if (count < 0) { perror("read"); return 1; }
        struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(buffer, (unsigned long)count - 1);
        int pressed = gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE;
        if (pulse_ms == 0) {
            gpiod_line_request_set_value(request, out, pressed ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
        } else if (pressed) {
            gpiod_line_request_set_value(request, out, GPIOD_LINE_VALUE_ACTIVE);
            struct timespec end = deadline_after(pulse_ms);
            sleep_until(&end);
            gpiod_line_request_set_value(request, out, GPIOD_LINE_VALUE_INACTIVE);
        }
    }
}

#endif
