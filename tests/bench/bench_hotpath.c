// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The client hot path: ns per profd_step_begin + profd_step_end pair with no
 * capture due, with a capture running and with no daemon, next to two
 * baselines measured in the same run (an empty function pair called the
 * same way, in turns with profd's pair with no capture due, and one
 * nng_send of a 24-byte message on a buffered ipc:// push socket, 100 us
 * apart: what a worker sending an event per step would pay on its training
 * thread); and the system
 * calls the training thread makes on that path, counted by the kernel for
 * this thread only (perf_event_open on the raw_syscalls:sys_enter
 * tracepoint; the background thread is not counted).
 *
 * Pairs run in batches of 1024 (2048 step events, half the event ring); the
 * ring is drained between batches, outside the timed region, as it is in a
 * real job where steps are milliseconds apart. A loop stepping faster than
 * the background thread flushes would measure the full-ring drop path
 * instead.
 *
 * usage: bench_hotpath --url WORKER_URL --control CONTROL_URL [--reps N]
 * Prints one JSON object on stdout.
 *
 * bench_hotpath --url WORKER_URL --control CONTROL_URL --syscall-loop N: for
 * kernels that refuse perf_event_open: prints the training thread's id, then
 * runs N pairs between two getppid() calls, for `strace -f` to count what
 * that thread does in between.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <nng/protocol/pipeline0/pull.h>
#include <nng/protocol/pipeline0/push.h>

#define BATCH     1024
#define BATCHES   50
#define NNG_SENDS 2000

typedef int (*step_fn)(profd_client_t *, int64_t);

/* The baseline: a function with nothing in it, called the same way. */
__attribute__((noinline)) static int empty_step(profd_client_t *c, int64_t step)
{
    __asm__ volatile("" : : "r"(c), "r"(step));
    return 0;
}

/* Read through volatile pointers: every call is an indirect call the
 * compiler cannot inline or elide, for profd and the baseline alike. */
static step_fn volatile g_begin, g_end;

static int64_t run_batch(profd_client_t *c, int64_t *step, int n)
{
    step_fn b = g_begin, e = g_end;
    int64_t s = *step;
    int64_t t0 = bench_now_ns();
    for (int i = 0; i < n; i++, s++) {
        b(c, s);
        e(c, s);
    }
    int64_t t1 = bench_now_ns();
    *step = s;
    return t1 - t0;
}

/* ---- system calls of this thread ---- */

static int tracepoint_id(const char *name)
{
    static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
    char path[256], buf[32];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], name);
        int fd = open(path, O_RDONLY);
        if (fd < 0) {
            continue;
        }
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n > 0) {
            buf[n] = '\0';
            return atoi(buf);
        }
    }
    return -1;
}

/* A counter of this thread's system call entries, disabled; -1 when the
 * kernel does not allow it. */
static int syscall_counter(void)
{
    int id = tracepoint_id("raw_syscalls/sys_enter");
    if (id < 0) {
        return -1;
    }
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.type = PERF_TYPE_TRACEPOINT;
    a.size = sizeof(a);
    a.config = (uint64_t)id;
    a.disabled = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/* System calls made by this thread while running `n` pairs; the cost of
 * the measurement itself (the disabling ioctl) is subtracted. */
static int64_t count_batch(int fd, profd_client_t *c, int64_t *step, int n)
{
    uint64_t v = 0, v0 = 0;
    ioctl(fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    if (read(fd, &v0, sizeof(v0)) != sizeof(v0)) {
        return -1;
    }
    ioctl(fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    run_batch(c, step, n);
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    if (read(fd, &v, sizeof(v)) != sizeof(v)) {
        return -1;
    }
    return (int64_t)v - (int64_t)v0;
}

/* ---- the nng_send baseline ---- */

static void *pull_main(void *arg)
{
    nng_socket *s = arg;
    for (;;) {
        char *buf;
        size_t len;
        if (nng_recv(*s, &buf, &len, NNG_FLAG_ALLOC) != 0) {
            return NULL;
        }
        nng_free(buf, len);
    }
}

static void bench_nng_send(int reps, double *out)
{
    nng_socket push, pull;
    pthread_t th;
    char url[128];
    int64_t msg[3] = {1, 1, 1};
    snprintf(url, sizeof(url), "ipc:///tmp/profd-bench-nng-%d.sock", (int)getpid());
    if (nng_pull0_open(&pull) != 0 || nng_listen(pull, url, NULL, 0) != 0 ||
        nng_push0_open(&push) != 0 || nng_socket_set_int(push, NNG_OPT_SENDBUF, 1024) != 0 ||
        nng_dial(push, url, NULL, 0) != 0) {
        bench_die("nng baseline: cannot set up push/pull on %s", url);
    }
    pthread_create(&th, NULL, pull_main, &pull);
    for (int i = 0; i < 2000; i++) { /* warm up */
        nng_send(push, msg, sizeof(msg), 0);
    }
    /* one send per "step", spaced out as a training loop would space them
     * (a back-to-back loop would measure the IPC throughput instead) */
    for (int r = 0; r < reps; r++) {
        int64_t total = 0;
        for (int i = 0; i < NNG_SENDS; i++) {
            msg[1] = i;
            int64_t t0 = bench_now_ns();
            nng_send(push, msg, sizeof(msg), 0);
            total += bench_now_ns() - t0;
            bench_sleep_us(100);
        }
        out[r] = (double)total / NNG_SENDS;
    }
    nng_close(push);
    bench_sleep_us(20000);
    nng_close(pull);
    pthread_join(th, NULL);
    unlink(url + 6);
}

/* ---- the clocks a step event could be stamped with ---- */

#define CLOCK_READS 1000000

enum { CK_TSC, CK_MONO, CK_COARSE };

__attribute__((noinline)) static uint64_t clock_read(int which)
{
    struct timespec ts;
#if defined(__x86_64__) || defined(__i386__)
    if (which == CK_TSC) {
        return __rdtsc();
    }
#endif
    clock_gettime(which == CK_COARSE ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns per read of one clock (rdtsc; the vDSO's CLOCK_MONOTONIC and
 * CLOCK_MONOTONIC_COARSE), each read kept; -1 for rdtsc off x86. */
static void bench_clock(int which, int reps, double *out)
{
    uint64_t sink = 0;
#if !defined(__x86_64__) && !defined(__i386__)
    if (which == CK_TSC) {
        for (int r = 0; r < reps; r++) {
            out[r] = -1;
        }
        return;
    }
#endif
    for (int r = 0; r < reps; r++) {
        int64_t t0 = bench_now_ns();
        for (int i = 0; i < CLOCK_READS; i++) {
            sink += clock_read(which);
        }
        out[r] = (double)(bench_now_ns() - t0) / CLOCK_READS;
    }
    __asm__ volatile("" : : "r"(sink));
}

/* The resolution of CLOCK_MONOTONIC_COARSE (ns): what step times were
 * quantised to when events were stamped with it. */
static int64_t coarse_res_ns(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- a backend that does nothing: the cost measured is profd's ---- */

static int noop_cb(const profd_capture_t *cap, void *user, char *reason, size_t len)
{
    return 0;
}
static const profd_backend_t noop_backend = {"*", 0, noop_cb, noop_cb, NULL};

/* ---- measurements ---- */

enum { BETWEEN_NOTHING, BETWEEN_DRAIN, BETWEEN_SLEEP };

/* ns per pair of each repetition. Between batches: nothing (baseline),
 * wait for the ring to empty (with a daemon), or sleep past a flush (no
 * daemon: the background thread discards the events). */
static void measure(profd_client_t *c, int64_t *step, int64_t *pushed, int reps, int between,
                    double *out)
{
    for (int r = 0; r < reps; r++) {
        int64_t total = 0;
        for (int b = 0; b < BATCHES; b++) {
            total += run_batch(c, step, BATCH);
            *pushed += 2 * BATCH;
            if (between == BETWEEN_DRAIN && bench_wait_drained(c, *pushed, 5000) != 0) {
                bench_die("the background thread did not drain the ring within 5 s");
            } else if (between == BETWEEN_SLEEP) {
                bench_sleep_us(6000);
            }
        }
        out[r] = (double)total / (BATCHES * BATCH);
    }
}

#define SYSCALL_BATCHES 20

/* System calls in each of SYSCALL_BATCHES batches of pairs (into `out`);
 * returns the total, -1 when the counter cannot be read. */
static int64_t count_syscalls(int fd, profd_client_t *c, int64_t *step, int64_t *pushed,
                              int64_t *out)
{
    int64_t total = 0;
    for (int b = 0; b < SYSCALL_BATCHES; b++) {
        /* one pair outside the count: a training loop that steps, not the
         * first step after a pause (which wakes the library's thread, if
         * the drain above took over 2 s: counted by count_after_pause) */
        run_batch(c, step, 1);
        *pushed += 2;
        int64_t n = count_batch(fd, c, step, BATCH);
        if (n < 0) {
            return -1;
        }
        out[b] = n;
        total += n;
        *pushed += 2 * BATCH;
        bench_wait_drained(c, *pushed, 5000);
    }
    return total;
}

#define PAUSE_TRIALS 3
#define PAUSE_MS                                                                                   \
    4000 /* over the library thread's 2 s before its deep sleep, plus its                          \
          * up to 1 s between looks at the ring */

/* System calls of the first step pair after a pause of PAUSE_MS, in each of
 * PAUSE_TRIALS trials (into `out`); the total, -1 when the counter cannot
 * be read. */
static int64_t count_after_pause(int fd, profd_client_t *c, int64_t *step, int64_t *pushed,
                                 int64_t *out)
{
    int64_t total = 0;
    for (int t = 0; t < PAUSE_TRIALS; t++) {
        bench_sleep_us(PAUSE_MS * 1000);
        int64_t n = count_batch(fd, c, step, 1);
        if (n < 0) {
            return -1;
        }
        out[t] = n;
        total += n;
        *pushed += 2;
        bench_wait_drained(c, *pushed, 5000);
    }
    return total;
}

static void print_counts(const char *name, const int64_t *v, int n)
{
    printf("  \"%s\": [", name);
    for (int i = 0; i < n; i++) {
        printf("%s%" PRId64, i ? ", " : "", v[i]);
    }
    printf("],\n");
}

static void print_array(const char *name, const double *v, int n)
{
    printf("  \"%s\": [", name);
    for (int i = 0; i < n; i++) {
        printf("%s%.3f", i ? ", " : "", v[i]);
    }
    printf("],\n");
}

static int syscall_loop(const char *url, int64_t n)
{
    profd_options_t o;
    profd_client_t *c;
    bench_options(&o, url, "benchhot", PROFD_FROM_ENV);
    if (profd_open(&c, &o) != 0 || bench_wait_connected(c, 10000) != 0) {
        bench_die("no daemon at %s", url);
    }
    printf("tid %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    /* a loop that steps: one pair outside the markers wakes the library's
     * thread if it slept already (registered over 2 s ago) */
    profd_step_begin(c, 0);
    profd_step_end(c, 0);
    bench_sleep_us(50000);
    getppid(); /* marker */
    for (int64_t s = 1; s <= n; s++) {
        profd_step_begin(c, s);
        profd_step_end(c, s);
    }
    getppid(); /* marker */
    /* then the first pair after each of PAUSE_TRIALS pauses, between markers */
    for (int t = 0; t < PAUSE_TRIALS; t++) {
        bench_sleep_us(PAUSE_MS * 1000);
        getppid(); /* marker */
        profd_step_begin(c, n + 1 + t);
        profd_step_end(c, n + 1 + t);
        getppid(); /* marker */
    }
    profd_close(c);
    return 0;
}

int main(int argc, char **argv)
{
    const char *url = NULL, *control = NULL;
    int reps = 7;
    int64_t loop = 0;
    static const char usage[] = "bench_hotpath --url WORKER_URL --control CONTROL_URL [--reps N]";
    const bench_opt_t opts[] = {{"--url", BENCH_STR, &url},
                                {"--control", BENCH_STR, &control},
                                {"--reps", BENCH_INT, &reps},
                                {"--syscall-loop", BENCH_I64, &loop}};
    bench_args(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
    if (url && loop > 0) {
        return syscall_loop(url, loop);
    }
    if (url == NULL || control == NULL || reps < 1 || reps > 100) {
        bench_die("usage: %s", usage);
    }
    double empty[100], nngs[100], idle[100], capture[100], nodaemon[100];
    double ck_tsc[100], ck_mono[100], ck_coarse[100], idle_tsc[100], idle_mono[100];

    bench_clock(CK_TSC, reps, ck_tsc);
    bench_clock(CK_MONO, reps, ck_mono);
    bench_clock(CK_COARSE, reps, ck_coarse);

    /* the nng baseline (the empty pair's is measured with profd's pair) */
    bench_nng_send(reps, nngs);

    /* a client of the daemon, no capture due */
    profd_options_t o;
    profd_client_t *c, *lone;
    bench_options(&o, url, "benchhot", 0);
    o.flush_ms = 5; /* drain quickly between batches; the timed loop is unaffected */
    if (profd_open(&c, &o) != 0 || profd_set_backend(c, &noop_backend, NULL) != 0) {
        bench_die("profd_open failed");
    }
    if (bench_wait_connected(c, 10000) != 0) {
        bench_die("no daemon at %s", url);
    }
    /* profd's pair and the empty pair in turns, the empty pair first in
     * even repetitions: each repetition's ratio is of two neighbouring
     * measurements. Measured apart (every empty pair first), the empty
     * pair moved 10-20 % between full runs while profd's did not, and so
     * did the ratio (8.51x, 7.08x, 8.44x). Repetition -1 warms both up. */
    int64_t step = 1, pushed = 0, es = 1, epushed = 0;
    for (int r = -1; r < reps; r++) {
        double e = 0, i = 0;
        for (int k = 0; k < 2; k++) {
            if ((k == 0) == (r % 2 == 0)) {
                g_begin = empty_step;
                g_end = empty_step;
                measure(NULL, &es, &epushed, 1, BETWEEN_NOTHING, &e);
            } else {
                g_begin = profd_step_begin;
                g_end = profd_step_end;
                measure(c, &step, &pushed, 1, BETWEEN_DRAIN, &i);
            }
        }
        if (r >= 0) {
            empty[r] = e;
            idle[r] = i;
        }
    }
    g_begin = profd_step_begin;
    g_end = profd_step_end;

    int fd = syscall_counter();
    int64_t idle_sys = -1, cap_sys = -1;
    int64_t idle_b[SYSCALL_BATCHES] = {0}, cap_b[SYSCALL_BATCHES] = {0};
    int64_t pause_sys = -1, pause_b[PAUSE_TRIALS] = {0};
    if (fd >= 0) {
        idle_sys = count_syscalls(fd, c, &step, &pushed, idle_b);
        pause_sys = count_after_pause(fd, c, &step, &pushed, pause_b);
    }

    /* a capture running: an open-ended window from a step ahead */
    char req[512];
    int64_t first = step + 100000;
    snprintf(req, sizeof(req),
             "{\"v\":1,\"type\":\"start\",\"job\":\"bench\",\"start\":%" PRId64
             ",\"end\":-1,\"tool\":\"bench\",\"mode\":\"e2e\",\"selectors\":[{\"role\":"
             "\"benchhot\",\"all_ranks\":true}]}",
             first);
    char *rep = bench_control(control, req);
    if (rep == NULL || strstr(rep, "\"started\"") == NULL) {
        bench_die("start refused: %s", rep ? rep : "no reply");
    }
    int64_t wid = bench_json_i64(rep, "id", -1);
    free(rep);
    profd_stats_t st;
    int64_t deadline = bench_now_ns() + 10000000000LL;
    do { /* idle steps until the plan is adopted */
        profd_step_begin(c, step);
        profd_step_end(c, step);
        step++;
        pushed += 2;
        bench_sleep_us(1000);
        profd_stats(c, &st);
    } while (st.windows < 1 && bench_now_ns() < deadline);
    if (st.windows < 1) {
        bench_die("the plan did not arrive within 10 s");
    }
    step = first;
    profd_step_begin(c, step);
    profd_step_end(c, step);
    step++;
    pushed += 2;
    profd_stats(c, &st);
    if (st.captures < 1) {
        bench_die("the capture did not start at step %" PRId64, first);
    }
    bench_wait_drained(c, pushed, 5000);
    measure(c, &step, &pushed, reps, BETWEEN_DRAIN, capture);
    if (fd >= 0) {
        cap_sys = count_syscalls(fd, c, &step, &pushed, cap_b);
        close(fd);
    }
    snprintf(req, sizeof(req), "{\"v\":1,\"type\":\"stop\",\"job\":\"bench\",\"id\":%" PRId64 "}",
             wid);
    free(bench_control(control, req));
    for (int i = 0; i < 100; i++) { /* let the window end on an aligned step */
        profd_step_begin(c, step);
        profd_step_end(c, step);
        step++;
        bench_sleep_us(2000);
    }
    profd_close(c);

    /* the same, no capture due, with each event clock forced (clock.h) */
    static const char *const forced[] = {"tsc", "monotonic"};
    double *forced_out[] = {idle_tsc, idle_mono};
    for (int i = 0; i < 2; i++) {
        setenv("PROFD_CLOCK", forced[i], 1);
        if (profd_open(&c, &o) != 0 || bench_wait_connected(c, 10000) != 0) {
            bench_die("profd_open with PROFD_CLOCK=%s failed", forced[i]);
        }
        unsetenv("PROFD_CLOCK");
        int64_t s2 = 1, p2 = 0;
        measure(c, &s2, &p2, 1, BETWEEN_DRAIN, forced_out[i]); /* warm up */
        measure(c, &s2, &p2, reps, BETWEEN_DRAIN, forced_out[i]);
        profd_close(c);
    }

    /* no daemon: the fail-open path */
    o.url = "ipc:///nonexistent-profd-bench/worker.sock";
    if (profd_open(&lone, &o) != 0) {
        bench_die("profd_open failed");
    }
    step = 1;
    measure(lone, &step, &pushed, reps, BETWEEN_SLEEP, nodaemon);
    profd_close(lone);

    printf("{\n");
    print_array("empty_pair_ns", empty, reps);
    print_array("nng_send_ns", nngs, reps);
    print_array("idle_pair_ns", idle, reps);
    print_array("capture_pair_ns", capture, reps);
    print_array("nodaemon_pair_ns", nodaemon, reps);
    print_array("idle_pair_tsc_ns", idle_tsc, reps);
    print_array("idle_pair_monotonic_ns", idle_mono, reps);
    print_array("clock_tsc_ns", ck_tsc, reps);
    print_array("clock_monotonic_ns", ck_mono, reps);
    print_array("clock_coarse_ns", ck_coarse, reps);
    printf("  \"clock_coarse_res_ns\": %" PRId64 ",\n", coarse_res_ns());
    printf("  \"pairs_per_rep\": %d,\n", BATCHES * BATCH);
    if (idle_sys >= 0 && cap_sys >= 0) {
        print_counts("syscalls_idle_batches", idle_b, SYSCALL_BATCHES);
        print_counts("syscalls_capture_batches", cap_b, SYSCALL_BATCHES);
    }
    if (pause_sys >= 0) {
        print_counts("syscalls_after_pause", pause_b, PAUSE_TRIALS);
        printf("  \"syscalls_pause_ms\": %d,\n", PAUSE_MS);
    }
    printf("  \"syscalls_batch_pairs\": %d,\n", BATCH);
    printf("  \"syscalls_method\": \"%s\",\n",
           idle_sys >= 0 ? "perf_event_open raw_syscalls:sys_enter, training thread only"
                         : "unavailable");
    printf("  \"syscalls_idle\": %" PRId64 ", \"syscalls_idle_pairs\": %d,\n", idle_sys,
           idle_sys >= 0 ? SYSCALL_BATCHES * BATCH : 0);
    printf("  \"syscalls_capture\": %" PRId64 ", \"syscalls_capture_pairs\": %d\n}\n", cap_sys,
           cap_sys >= 0 ? SYSCALL_BATCHES * BATCH : 0);
    return 0;
}
