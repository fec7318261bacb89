// The HIL guest's spiral motors: a model of the matrix's motors and their cam (home) switches
// on gpio-sim lines. vendd holds the row and column lines (outputs) and the home lines (inputs),
// so no other program can request them through libgpiod: the model reads the outputs from the
// sim's sysfs `value` files and drives the home switches through their `pull` files, as
// hiltool's hand does the buttons. A motor is on while its row and its column are both active;
// its cam leaves home LEAVE_MS after power and is back TURN_MS after power, unless the motor is
// jammed (it leaves and never comes back) or missing (it never leaves). A motor cut while away
// from home stays there (a power cut mid-turn) until the control file puts it back by hand.
//
//   motor-model SPEC CONTROL [--bench N GAP_MS]
//
// SPEC, one item a line:     leave_ms MS | turn_ms MS
//                            row R VALUE_PATH | column C VALUE_PATH
//                            home * PULL_PATH        (the line shared by every motor without its own)
//                            home R C PULL_PATH      (motor R,C's own line)
//                            button R C PULL_PATH    (its selection button, for --bench)
// CONTROL (read again whenever it changes; missing = empty):
//                            jam R C | missing R C   (faults, for as long as the line is there)
//                            away R C | home R C     (puts the cam there now, by hand)
// Home switches are active-low (closed to ground at home): at home is "pull-down", away "pull-up".
// Prints "MODEL ..." lines: each motor powered, its cam's moves, its release (with the time from
// the cam's return to the column's release: the overshoot), and any matrix misuse ("MODEL
// VIOLATION ...": a column on with no row, two motors on, a motor turned while away from home,
// a row released before its column).
// With --bench N GAP_MS the model also presses the motors' buttons itself, one motor after the
// other, N times GAP_MS apart, spinning on the lines (no sleep) so that the release is timed to
// the microsecond, and prints the overshoot's p50/p99/max over the N turns.
// Built static on the host, like hiltool: it needs no library in the guest.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROWS 16
#define MAX_COLUMNS 16

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void die(const char *what, const char *detail) {
    fprintf(stderr, "motor-model: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static int row_fd[MAX_ROWS], column_fd[MAX_COLUMNS], rows, columns;
static char *shared_home;
static char *own_home[MAX_ROWS][MAX_COLUMNS], *button[MAX_ROWS][MAX_COLUMNS];
static int away[MAX_ROWS][MAX_COLUMNS], jammed[MAX_ROWS][MAX_COLUMNS], missing[MAX_ROWS][MAX_COLUMNS];
static long long leave_us = 200000, turn_us = 1200000;

static int read_level(int fd) {
    char c = 0;
    if (pread(fd, &c, 1, 0) != 1) die("cannot read a line's value", NULL);
    return c == '1';
}

static void write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY);
    if (fd < 0 || write(fd, text, strlen(text)) < 0) die("cannot write", path);
    close(fd);
}

// The level of a home line follows its motors: the shared one is at home only while every motor
// on it is. Written only when it changes; `written` remembers what each path was given.
static char *written_path[MAX_ROWS * MAX_COLUMNS + 1];
static int written_level[MAX_ROWS * MAX_COLUMNS + 1], written_count;

static void drive_home(const char *path, int at_home) {
    int i = 0;
    while (i < written_count && strcmp(written_path[i], path) != 0) i++;
    if (i < written_count && written_level[i] == at_home) return;
    if (i == written_count) written_path[written_count++] = (char *)path;
    written_level[i] = at_home;
    write_text(path, at_home ? "pull-down" : "pull-up");
}

static void update_homes(void) {
    int shared_at_home = 1;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < columns; c++) {
            if (own_home[r][c]) drive_home(own_home[r][c], !away[r][c]);
            else if (away[r][c]) shared_at_home = 0;
        }
    if (shared_home) drive_home(shared_home, shared_at_home);
}

static int parse_motor(const char *text, int *r, int *c) {
    if (sscanf(text, "%d %d", r, c) != 2 || *r < 1 || *r > rows || *c < 1 || *c > columns) return 0;
    (*r)--, (*c)--;
    return 1;
}

static void read_spec(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) die("cannot open the spec", path);
    char line[512], word[32], rest[480];
    int r, c;
    while (fgets(line, sizeof line, file)) {
        line[strcspn(line, "\n")] = 0;
        if (sscanf(line, "%31s %479[^\n]", word, rest) != 2) continue;
        char *last = strrchr(rest, ' ');
        char *target = strdup(last ? last + 1 : rest);
        if (strcmp(word, "leave_ms") == 0) leave_us = atoll(rest) * 1000;
        else if (strcmp(word, "turn_ms") == 0) turn_us = atoll(rest) * 1000;
        else if (strcmp(word, "row") == 0 && rows < MAX_ROWS) {
            if ((row_fd[rows++] = open(target, O_RDONLY)) < 0) die("cannot open a row's value", target);
        } else if (strcmp(word, "column") == 0 && columns < MAX_COLUMNS) {
            if ((column_fd[columns++] = open(target, O_RDONLY)) < 0) die("cannot open a column's value", target);
        } else if (strcmp(word, "home") == 0 && rest[0] == '*') shared_home = target;
        else if (strcmp(word, "home") == 0 && parse_motor(rest, &r, &c)) own_home[r][c] = target;
        else if (strcmp(word, "button") == 0 && parse_motor(rest, &r, &c)) button[r][c] = target;
        else die("bad spec line (rows and columns come before the motors that use them)", line);
    }
    fclose(file);
    if (rows == 0 || columns == 0) die("the spec names no rows or no columns", path);
}

// The control file: faults as listed; "away"/"home" put a cam there now (the technician's hand).
static struct timespec control_mtime;
static off_t control_size = -1;

static void read_control(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) st.st_size = 0, st.st_mtim = (struct timespec){0, 0};
    if (st.st_size == control_size && st.st_mtim.tv_sec == control_mtime.tv_sec && st.st_mtim.tv_nsec == control_mtime.tv_nsec) return;
    control_size = st.st_size, control_mtime = st.st_mtim;
    memset(jammed, 0, sizeof jammed);
    memset(missing, 0, sizeof missing);
    FILE *file = fopen(path, "r");
    char line[128], word[16], rest[112];
    int r, c;
    while (file && fgets(line, sizeof line, file)) {
        if (sscanf(line, "%15s %111[^\n]", word, rest) != 2 || !parse_motor(rest, &r, &c)) continue;
        if (strcmp(word, "jam") == 0) jammed[r][c] = 1;
        else if (strcmp(word, "missing") == 0) missing[r][c] = 1;
        else if (strcmp(word, "away") == 0) away[r][c] = 1;
        else if (strcmp(word, "home") == 0) away[r][c] = 0;
    }
    if (file) fclose(file);
    update_homes();
    printf("MODEL control read\n");
    fflush(stdout);
}

// The one motor on: R,C, when it got power, whether its cam has left and come back (and when).
static int on_row = -1, on_column = -1, left, returned;
static long long on_at, home_at;
static long long *overshoots;
static int overshoot_count;

static int active_line(const int *fds, int count, int *active) {
    int found = 0;
    for (int i = 0; i < count; i++)
        if (read_level(fds[i])) *active = i, found++;
    return found;
}

// Looks at the lines once; returns 1 while a motor is on. The rows are read before the columns:
// vendd releases the column first, so a row seen released has its column released already. A
// column seen with no row may be a motor being powered between the two reads (the row first),
// so it counts as misuse only if the rows read again show none and the column is still on.
static int observe(void) {
    int active_row = -1, active_column = -1, column_again = -1, unused;
    int active_rows = active_line(row_fd, rows, &active_row);
    int active_columns = active_line(column_fd, columns, &active_column);
    if (active_columns > 0 && active_rows == 0 && active_line(row_fd, rows, &unused) == 0 &&
        active_line(column_fd, columns, &column_again) > 0 && column_again == active_column)
        printf("MODEL VIOLATION column %d active with no row\n", active_column + 1);
    long long now = now_us();
    if (active_rows > 1 || active_columns > 1) printf("MODEL VIOLATION %d rows and %d columns active at once\n", active_rows, active_columns);
    if (on_row >= 0 && (active_row != on_row || active_column != on_column)) {
        // Released: the column must go first (a row dropped under load is a violation).
        if (active_row != on_row && active_column == on_column)
            printf("MODEL VIOLATION row %d released before column %d\n", on_row + 1, on_column + 1);
        if (returned) {
            overshoots[overshoot_count++] = now - home_at;
            printf("MODEL released %d %d: turned, overshoot %lld us\n", on_row + 1, on_column + 1, now - home_at);
        } else {
            printf("MODEL released %d %d after %lld ms, cam %s\n", on_row + 1, on_column + 1, (now - on_at) / 1000,
                   away[on_row][on_column] ? "stopped away from home" : "still at home");
        }
        on_row = on_column = -1;
    }
    if (on_row < 0 && active_rows == 1 && active_columns == 1) {
        on_row = active_row, on_column = active_column, on_at = now, left = returned = 0;
        if (away[on_row][on_column]) printf("MODEL VIOLATION motor %d %d turned while away from home\n", on_row + 1, on_column + 1);
        printf("MODEL powered %d %d%s%s\n", on_row + 1, on_column + 1, jammed[on_row][on_column] ? " (jams)" : "",
               missing[on_row][on_column] ? " (missing)" : "");
        left = away[on_row][on_column];  // a cam already away only has to come back
    }
    if (on_row >= 0) {
        int r = on_row, c = on_column;
        if (!left && !missing[r][c] && now - on_at >= leave_us) {
            away[r][c] = left = 1;
            update_homes();
            printf("MODEL left home %d %d\n", r + 1, c + 1);
        } else if (left && !returned && !jammed[r][c] && now - on_at >= turn_us) {
            home_at = now_us();
            away[r][c] = 0;
            returned = 1;
            update_homes();
            printf("MODEL home %d %d after %lld ms\n", r + 1, c + 1, (home_at - on_at) / 1000);
        }
    }
    fflush(stdout);
    return on_row >= 0;
}

static int compare(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

// Presses the motors' buttons in turn (those the spec names), N turns; spins throughout.
static int bench(int turns, long gap_ms) {
    int order[MAX_ROWS * MAX_COLUMNS][2], motors = 0, failed = 0;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < columns; c++)
            if (button[r][c]) order[motors][0] = r, order[motors++][1] = c;
    if (motors == 0) die("--bench needs button lines in the spec", NULL);
    for (int i = 0; i < turns; i++) {
        int r = order[i % motors][0], c = order[i % motors][1], before = overshoot_count;
        write_text(button[r][c], "pull-down");
        long long pressed = now_us();
        while (!observe() && now_us() - pressed < 2000000) {}
        write_text(button[r][c], "pull-up");
        while (observe() && now_us() - pressed < 10000000) {}
        if (overshoot_count == before) {
            fprintf(stderr, "motor-model: turn %d (motor %d %d) did not turn\n", i + 1, r + 1, c + 1);
            if (++failed > 5) return 1;
        }
        usleep((useconds_t)gap_ms * 1000);
    }
    if (overshoot_count == 0) return 1;
    qsort(overshoots, (size_t)overshoot_count, sizeof *overshoots, compare);
    printf("BENCH motor overshoot (cam home -> column released): turns %d p50 %lld us p99 %lld us max %lld us\n", overshoot_count,
           overshoots[overshoot_count / 2], overshoots[overshoot_count * 99 / 100], overshoots[overshoot_count - 1]);
    return failed > 0;
}

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 6 && strcmp(argv[3], "--bench") == 0)) die("usage: motor-model SPEC CONTROL [--bench N GAP_MS]", NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    read_spec(argv[1]);
    overshoots = calloc(argc == 6 ? (size_t)atoi(argv[4]) + 1 : 100000, sizeof *overshoots);
    read_control(argv[2]);
    update_homes();
    printf("MODEL ready: %d rows, %d columns, leave %lld ms, turn %lld ms\n", rows, columns, leave_us / 1000, turn_us / 1000);
    if (argc == 6) return bench(atoi(argv[4]), atol(argv[5]));
    for (long long loops = 0;; loops++) {
        // The control file is looked at every 50 ms; the lines every millisecond.
        if (loops % 50 == 0) read_control(argv[2]);
        if (overshoot_count >= 99999) overshoot_count = 0;
        observe();
        usleep(1000);
    }
}
