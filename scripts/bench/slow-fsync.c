// Slow storage for one process, without root or a special disk: an LD_PRELOAD library whose
// fsync, fdatasync, syncfs and sync_file_range sleep before calling the real ones, as an SD card
// or a throttled disk keeps a flush waiting. scripts/bench/relay-pulse.py builds it and runs
// vendd under it.
//
//   cc -O2 -shared -fPIC -o slow-fsync.so slow-fsync.c -ldl
//   SLOW_FSYNC_MS=100 SLOW_FSYNC_REPORT=/tmp/report LD_PRELOAD=./slow-fsync.so vendd run ...
//
// SLOW_FSYNC_MS: the sleep added to each call, in milliseconds (default 100).
// SLOW_FSYNC_REPORT: a file to which, at exit, one line is appended: how many calls of each kind
// were slowed and how long they took in all (sleep and real call): the proof the library was in
// the process's path.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { FSYNC, FDATASYNC, SYNCFS, SYNC_FILE_RANGE, KINDS };
static const char *const names[KINDS] = {"fsync", "fdatasync", "syncfs", "sync_file_range"};
static atomic_long calls[KINDS];
static atomic_llong shortest_ns = -1, longest_ns;

static long long monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

static long long delay_ns(void) {
    const char *text = getenv("SLOW_FSYNC_MS");
    return (text ? atoll(text) : 100) * 1000000LL;
}

// The whole delay even when a signal interrupts the sleep.
static void slow_down(void) {
    long long ns = delay_ns();
    struct timespec until = {0};
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ns / 1000000000LL;
    until.tv_nsec += ns % 1000000000LL;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec += 1;
        until.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {
    }
}

static void account(int kind, long long started) {
    long long took = monotonic_ns() - started;
    atomic_fetch_add(&calls[kind], 1);
    long long seen = atomic_load(&shortest_ns);
    while ((seen < 0 || took < seen) && !atomic_compare_exchange_weak(&shortest_ns, &seen, took)) {
    }
    seen = atomic_load(&longest_ns);
    while (took > seen && !atomic_compare_exchange_weak(&longest_ns, &seen, took)) {
    }
}

typedef int (*fd_call)(int);
typedef int (*range_call)(int, off_t, off_t, unsigned int);
static fd_call real_fd_call[KINDS];
static range_call real_sync_file_range;

// The real functions, found once as the library loads (before any thread can call them).
__attribute__((constructor)) static void find_real_calls(void) {
    for (int kind = FSYNC; kind <= SYNCFS; kind++) real_fd_call[kind] = (fd_call)dlsym(RTLD_NEXT, names[kind]);
    real_sync_file_range = (range_call)dlsym(RTLD_NEXT, names[SYNC_FILE_RANGE]);
}

// Keeps errno as the real call left it.
static int finish(int kind, long long started, int result) {
    int saved = errno;
    account(kind, started);
    errno = saved;
    return result;
}

static int slowed(int kind, int fd) {
    long long started = monotonic_ns();
    slow_down();
    return finish(kind, started, real_fd_call[kind](fd));
}

int fsync(int fd) { return slowed(FSYNC, fd); }

int fdatasync(int fd) { return slowed(FDATASYNC, fd); }

int syncfs(int fd) { return slowed(SYNCFS, fd); }

int sync_file_range(int fd, off_t offset, off_t nbytes, unsigned int flags) {
    long long started = monotonic_ns();
    slow_down();
    return finish(SYNC_FILE_RANGE, started, real_sync_file_range(fd, offset, nbytes, flags));
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("SLOW_FSYNC_REPORT");
    if (!path) return;
    FILE *file = fopen(path, "a");
    if (!file) return;
    fprintf(file, "pid %d, each delayed %lld ms:", (int)getpid(), delay_ns() / 1000000LL);
    for (int kind = 0; kind < KINDS; kind++) fprintf(file, " %s %ld", names[kind], atomic_load(&calls[kind]));
    if (atomic_load(&shortest_ns) < 0)
        fprintf(file, "; none called\n");
    else
        fprintf(file, "; each took %.1f to %.1f ms\n", atomic_load(&shortest_ns) / 1e6, atomic_load(&longest_ns) / 1e6);
    fclose(file);
}
