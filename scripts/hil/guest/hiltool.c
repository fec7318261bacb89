// The HIL guest's test hand: drives gpio-sim input lines through sysfs ("pull") and watches
// output lines ("value") with microsecond timing, which the busybox shell cannot do.
//
//   hiltool press PULL                      line active (pull-down: the buttons are active-low)
//   hiltool release PULL
//   hiltool bounce PULL EDGES SPAN_US       EDGES alternating edges within SPAN_US, then pressed
//   hiltool wait VALUE LEVEL TIMEOUT_MS     waits for LEVEL; prints the ms waited; exit 1 on timeout
//   hiltool hold VALUE LEVEL MS             exit 1 if VALUE leaves LEVEL within MS
//   hiltool latency PULL VALUE PRESSES GAP_MS [PULSE_MS]
//                                           press → output active, PRESSES times; prints p50/p99 µs;
//                                           with PULSE_MS, also each pulse's length (output active →
//                                           inactive) and its deviation from PULSE_MS, for every
//                                           pulse and for those whose edges were both seen within
//                                           EDGE_GAP_US of happening
//   hiltool fsync FILE COUNT GAP_MS         appends a short record to FILE and fsyncs it, COUNT times
//                                           GAP_MS apart (what vendd's journal does per input); prints ms
//   hiltool monitor NAME=VALUE...           until killed, prints "OBS relay-on NAME T_US" and
//                                           "OBS relay-off NAME T_US ON_MS" on every change of an output
//   hiltool uart-irq TTY IRQ                tells the 8250 driver the UART's interrupt line (what
//                                           setserial does; busybox has no setserial)
//   hiltool lm75-set I2CDEV ADDR MILLI_C    sets the temperature register of the LM75 that the lm75
//                                           driver reads on i2c-stub (ADDR hex, e.g. 0x48), in m°C
// Built static on the host (gcc -static), so the guest needs no C library for it.
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <linux/serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY);
    if (fd < 0 || write(fd, text, strlen(text)) < 0) {
        perror(path);
        exit(2);
    }
    close(fd);
}

static int read_level(int fd) {
    char c = 0;
    if (pread(fd, &c, 1, 0) != 1) {
        perror("read value");
        exit(2);
    }
    return c == '1';
}

static int open_value(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        exit(2);
    }
    return fd;
}

static void press(const char *pull, int pressed) { write_text(pull, pressed ? "pull-down" : "pull-up"); }

// Spins on the sysfs value (no sleep: the latency figures must not include a polling period).
// Sets *seen to when LEVEL was first read, *gap to how long before that the other level was last
// read: the change happened within that gap. A guest CPU taken away mid-spin makes it long.
static long long wait_level(int fd, int level, long long timeout_us, long long *seen, long long *gap) {
    long long start = now_us(), last = start, now;
    while (read_level(fd) != level) {
        last = now_us();
        if (last - start > timeout_us) return -1;
    }
    now = now_us();
    if (seen) *seen = now;
    if (gap) *gap = now - last;
    return now - start;
}

// An edge seen this late may have been missed while the guest CPU was taken away from the spin;
// two such edges make the pulse's length uncertain by at most 0.5 ms.
enum { EDGE_GAP_US = 250 };

static int compare(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

// The sample at percentile P of COUNT sorted samples (index COUNT * P / 100, as the figures
// already published were computed).
static long long percentile(const long long *sorted, int count, int p) {
    int index = count * p / 100;
    return sorted[index < count ? index : count - 1];
}

// Prints NAME's p50, p99 and max in ms, and how many exceed 2 ms (the figure asked for); sorts them.
static void print_deviations(const char *name, long long *deviations, int count) {
    if (count == 0) {
        printf("%s: none\n", name);
        return;
    }
    int beyond = 0;
    for (int i = 0; i < count; i++) beyond += deviations[i] > 2000;
    qsort(deviations, (size_t)count, sizeof *deviations, compare);
    printf("%s p50 %.2f ms p99 %.2f ms max %.2f ms; %d beyond 2 ms\n", name, percentile(deviations, count, 50) / 1e3,
           percentile(deviations, count, 99) / 1e3, deviations[count - 1] / 1e3, beyond);
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "press") == 0) {
        press(argv[2], 1);
    } else if (argc >= 3 && strcmp(argv[1], "release") == 0) {
        press(argv[2], 0);
    } else if (argc >= 5 && strcmp(argv[1], "bounce") == 0) {
        // One descriptor for the whole burst: opening the file per edge is slower than a bounce.
        int fd = open(argv[2], O_WRONLY), edges = atoi(argv[3]);
        if (fd < 0) { perror(argv[2]); return 2; }
        long long span = atoll(argv[4]), start = now_us();
        long long took = 0;
        for (int i = 0; i < edges; i++) {
            while (now_us() - start < span * i / edges) {}
            const char *pull = i % 2 == 0 ? "pull-down" : "pull-up";
            if (pwrite(fd, pull, strlen(pull), 0) < 0) { perror(argv[2]); return 2; }
            took = now_us() - start;
        }
        // An even count ends released: the contact then settles closed, as a real press does.
        if (edges % 2 == 0 && pwrite(fd, "pull-down", 9, 0) < 0) { perror(argv[2]); return 2; }
        printf("%d edges in %lld us, then pressed\n", edges, took);
    } else if (argc >= 5 && strcmp(argv[1], "wait") == 0) {
        long long waited = wait_level(open_value(argv[2]), atoi(argv[3]), atoll(argv[4]) * 1000, NULL, NULL);
        if (waited < 0) return 1;
        printf("%lld\n", waited / 1000);
    } else if (argc >= 5 && strcmp(argv[1], "hold") == 0) {
        int fd = open_value(argv[2]), level = atoi(argv[3]);
        long long start = now_us(), limit = atoll(argv[4]) * 1000;
        while (now_us() - start < limit) {
            if (read_level(fd) != level) return 1;
            usleep(200);
        }
    } else if (argc >= 6 && strcmp(argv[1], "latency") == 0) {
        int fd = open_value(argv[3]), presses = atoi(argv[4]), gap_ms = atoi(argv[5]);
        long long pulse_us = argc >= 7 ? atoll(argv[6]) * 1000 : -1;
        long long *samples = calloc((size_t)presses, sizeof *samples);
        long long *pulses = calloc((size_t)presses, sizeof *pulses);
        long long *deviations = calloc((size_t)presses, sizeof *deviations);
        long long *precise = calloc((size_t)presses, sizeof *precise);  // deviations of pulses timed precisely
        int taken = 0, pulsed = 0, timed = 0;
        for (int i = 0; i < presses; i++) {
            long long start = now_us(), on = -1, off, on_gap, off_gap;
            press(argv[2], 1);
            if (wait_level(fd, 1, 2000000, &on, &on_gap) >= 0) samples[taken++] = on - start;
            else on = -1;
            press(argv[2], 0);
            if (wait_level(fd, 0, 2000000, &off, &off_gap) < 0) {
                fprintf(stderr, "press %d: output stayed active\n", i);
                return 1;
            }
            if (on >= 0 && pulse_us >= 0) {
                pulses[pulsed] = off - on;
                deviations[pulsed] = llabs(pulses[pulsed] - pulse_us);
                if (on_gap <= EDGE_GAP_US && off_gap <= EDGE_GAP_US) precise[timed++] = deviations[pulsed];
                pulsed++;
            }
            usleep((useconds_t)gap_ms * 1000);
        }
        if (taken < presses) fprintf(stderr, "%d of %d presses never turned the output on\n", presses - taken, presses);
        if (taken == 0) return 1;
        qsort(samples, (size_t)taken, sizeof *samples, compare);
        printf("presses %d p50 %lld us p99 %lld us max %lld us\n", taken, percentile(samples, taken, 50),
               percentile(samples, taken, 99), samples[taken - 1]);
        if (pulsed > 0) {
            qsort(pulses, (size_t)pulsed, sizeof *pulses, compare);
            printf("pulses %d (configured %lld ms) p50 %.2f ms p90 %.2f ms p99 %.2f ms max %.2f ms min %.2f ms; ",
                   pulsed, pulse_us / 1000, percentile(pulses, pulsed, 50) / 1e3, percentile(pulses, pulsed, 90) / 1e3,
                   percentile(pulses, pulsed, 99) / 1e3, pulses[pulsed - 1] / 1e3, pulses[0] / 1e3);
            print_deviations("|length - configured|", deviations, pulsed);
            printf("pulses with both edges seen within %d us: %d of %d; ", EDGE_GAP_US, timed, pulsed);
            print_deviations("|length - configured|", precise, timed);
        }
    } else if (argc >= 5 && strcmp(argv[1], "fsync") == 0) {
        // Each record as vendd's journal writes one: append, then fsync before going on.
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644), count = atoi(argv[3]), gap_ms = atoi(argv[4]);
        if (fd < 0 || count < 1) { perror(argv[2]); return 2; }
        long long *samples = calloc((size_t)count, sizeof *samples);
        char record[200];
        memset(record, 'x', sizeof record - 1);
        record[sizeof record - 1] = '\n';
        for (int i = 0; i < count; i++) {
            usleep((useconds_t)gap_ms * 1000);
            long long start = now_us();
            if (write(fd, record, sizeof record) != (ssize_t)sizeof record || fsync(fd) < 0) { perror(argv[2]); return 2; }
            samples[i] = now_us() - start;
        }
        qsort(samples, (size_t)count, sizeof *samples, compare);
        printf("fsyncs %d min %.1f ms p50 %.1f ms max %.1f ms\n", count, samples[0] / 1e3,
               percentile(samples, count, 50) / 1e3, samples[count - 1] / 1e3);
    } else if (argc >= 3 && strcmp(argv[1], "monitor") == 0) {
        // The power-cut test's witness: each line is written the moment the change is seen, so
        // it reaches the host before a cut. Polled every 1 ms: a relay pulse lasts 300 ms.
        enum { MAX_LINES = 16 };
        int count = argc - 2, fds[MAX_LINES], levels[MAX_LINES];
        long long since[MAX_LINES];
        const char *names[MAX_LINES];
        if (count > MAX_LINES) { fprintf(stderr, "at most %d lines\n", MAX_LINES); return 64; }
        setvbuf(stdout, NULL, _IOLBF, 0);
        for (int i = 0; i < count; i++) {
            char *equals = strchr(argv[i + 2], '=');
            if (!equals) { fprintf(stderr, "monitor takes NAME=VALUE_PATH\n"); return 64; }
            *equals = 0;
            names[i] = argv[i + 2];
            fds[i] = open_value(equals + 1);
            levels[i] = 0;  // a line already active at start is reported as a relay-on
            since[i] = now_us();
        }
        printf("OBS monitor-ready %d lines\n", count);
        for (;;) {
            for (int i = 0; i < count; i++) {
                int level = read_level(fds[i]);
                if (level == levels[i]) continue;
                long long t = now_us();
                if (level) printf("OBS relay-on %s %lld\n", names[i], t);
                else printf("OBS relay-off %s %lld %lld\n", names[i], t, (t - since[i]) / 1000);
                levels[i] = level;
                since[i] = t;
            }
            usleep(1000);
        }
    } else if (argc >= 4 && strcmp(argv[1], "uart-irq") == 0) {
        // The kernel's legacy table puts COM3 on COM1's IRQ 4; qemu wires the MDB UART to its own.
        struct serial_struct serial;
        int fd = open(argv[2], O_RDWR | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) { perror(argv[2]); return 2; }
        if (ioctl(fd, TIOCGSERIAL, &serial) < 0) { perror("TIOCGSERIAL"); return 2; }
        serial.irq = atoi(argv[3]);
        if (ioctl(fd, TIOCSSERIAL, &serial) < 0) { perror("TIOCSSERIAL"); return 2; }
        close(fd);
    } else if (argc >= 5 && strcmp(argv[1], "lm75-set") == 0) {
        // The LM75's temperature register holds °C in 1/256 steps, most significant byte first;
        // the driver reads it as a byte-swapped SMBus word, so the stub keeps the swapped word.
        // FORCE: the lm75 driver holds the address.
        int fd = open(argv[2], O_RDWR);
        if (fd < 0) { perror(argv[2]); return 2; }
        if (ioctl(fd, I2C_SLAVE_FORCE, strtol(argv[3], NULL, 16)) < 0) { perror("I2C_SLAVE_FORCE"); return 2; }
        int raw = (int)(atol(argv[4]) * 256 / 1000) & 0xffff;
        union i2c_smbus_data data = {.word = (unsigned short)(((raw & 0xff) << 8) | (raw >> 8))};
        struct i2c_smbus_ioctl_data request = {
            .read_write = I2C_SMBUS_WRITE, .command = 0, .size = I2C_SMBUS_WORD_DATA, .data = &data};
        if (ioctl(fd, I2C_SMBUS, &request) < 0) { perror("I2C_SMBUS write"); return 2; }
        close(fd);
    } else {
        fprintf(stderr, "usage: see the comment at the top of hiltool.c\n");
        return 64;
    }
    return 0;
}
