// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Plan delivery: how long from a control "start" request (what profctl
 * start sends) until every one of N idle clients on this node holds the new
 * plan, ready for the training thread to adopt at its next call.
 *
 * Each client is its own process (as workers are), registered and idle: it
 * makes no step call. "Armed" is the moment its background thread publishes
 * the plan to the training thread, which the library reports through the log
 * hook ("plan G with W window(s)") right before publishing; the hook stamps
 * it with CLOCK_MONOTONIC, a clock every process on the host shares, and
 * writes it to a pipe. The parent stamps the request just before sending
 * it on a control connection it opened beforehand.
 *
 * Each repetition starts one window at a far-away step (nothing is
 * captured; only the plan changes), then cancels it and waits until every
 * client saw the cancellation, so that each measures the delivery of a plan
 * of the same size.
 *
 * usage: bench_plan --url WORKER_URL --control CONTROL_URL [--clients N] [--reps R]
 * Prints one JSON object: per repetition, every client's latency in us.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define MAX_CLIENTS 1024

enum { EV_REGISTERED = 1, EV_PLAN = 2 };

typedef struct record {
    int32_t client;
    int32_t kind;
    int64_t windows;
    int64_t t_ns;
} record_t;

static int g_pipe = -1;
static int g_index;
static volatile sig_atomic_t g_stop;

static void on_term(int sig)
{
    (void)sig;
    g_stop = 1;
}

/* The library's log hook, called from the background thread. */
static void hook(void *arg, int level, const char *msg)
{
    record_t r = {g_index, 0, 0, bench_now_ns()};
    long long gen, win;
    if (sscanf(msg, "profd: plan %lld with %lld window", &gen, &win) == 2) {
        r.kind = EV_PLAN;
        r.windows = win;
    } else if (strncmp(msg, "profd: registered with", 22) == 0) {
        r.kind = EV_REGISTERED;
    } else {
        return;
    }
    if (write(g_pipe, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
        return; /* the parent is gone */
    }
}

static int client_main(const void *url, int index, int out)
{
    profd_options_t o;
    profd_client_t *c;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    g_index = index;
    g_pipe = out;
    bench_options(&o, url, "benchplan", index);
    o.log = hook;
    o.log_level = PROFD_LOG_DEBUG;
    if (profd_open(&c, &o) != 0) {
        return 1;
    }
    while (!g_stop) {
        pause(); /* idle: no step call at all */
    }
    profd_close(c);
    return 0;
}

static bool read_record(int fd, record_t *r, int64_t deadline_ns)
{
    size_t got = 0;
    while (got < sizeof(*r)) {
        int64_t left = deadline_ns - bench_now_ns();
        if (left <= 0) {
            return false;
        }
        fd_set fds;
        FD_ZERO(&fds);
        FD_SET(fd, &fds);
        struct timeval tv = {(time_t)(left / 1000000000), (long)(left % 1000000000) / 1000};
        int n = select(fd + 1, &fds, NULL, NULL, &tv);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        ssize_t k = read(fd, (char *)r + got, sizeof(*r) - got);
        if (k <= 0) {
            return false;
        }
        got += (size_t)k;
    }
    return true;
}

int main(int argc, char **argv)
{
    const char *url = NULL, *control = NULL;
    int nclients = 64, reps = 20;
    static const char usage[] =
        "bench_plan --url WORKER_URL --control CONTROL_URL [--clients N] [--reps R]";
    const bench_opt_t opts[] = {{"--url", BENCH_STR, &url},
                                {"--control", BENCH_STR, &control},
                                {"--clients", BENCH_INT, &nclients},
                                {"--reps", BENCH_INT, &reps}};
    bench_args(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
    if (url == NULL || control == NULL || nclients < 1 || nclients > MAX_CLIENTS || reps < 1 ||
        reps > 1000) {
        bench_die("usage: %s", usage);
    }
    pid_t pids[MAX_CLIENTS];
    int records = bench_fork_clients(nclients, pids, client_main, url);

    /* every client registered and holding its first plan */
    int64_t *windows = calloc((size_t)nclients, sizeof(int64_t));
    bool *ready = calloc((size_t)nclients, sizeof(bool));
    int nready = 0;
    int64_t deadline = bench_now_ns() + 30000000000LL;
    record_t r;
    while (nready < nclients) {
        if (!read_record(records, &r, deadline)) {
            bench_die("only %d of %d clients registered within 30 s", nready, nclients);
        }
        if (r.kind == EV_PLAN && !ready[r.client]) {
            ready[r.client] = true;
            windows[r.client] = r.windows;
            nready++;
        }
    }
    /* past the daemon's latency probe (a plan resent about a second after
     * the first registrations) */
    bench_sleep_us(2500000);

    nng_socket ctl;
    if (bench_control_open(&ctl, control) != 0) {
        bench_die("cannot dial %s", control);
    }
    printf("{\n  \"clients\": %d,\n  \"latency_us\": [\n", nclients);
    int64_t *lat = calloc((size_t)nclients, sizeof(int64_t));
    for (int rep = 0; rep < reps; rep++) {
        char req[512];
        snprintf(req, sizeof(req),
                 "{\"v\":1,\"type\":\"start\",\"job\":\"bench\",\"steps\":[%d],\"tool\":\"bench\","
                 "\"selectors\":[{\"role\":\"benchplan\",\"all_ranks\":true}]}",
                 100000000 + rep);
        for (int i = 0; i < nclients; i++) {
            lat[i] = -1;
        }
        int64_t t0 = bench_now_ns();
        char *reply = bench_request(ctl, req);
        if (reply == NULL || strstr(reply, "\"started\"") == NULL) {
            bench_die("start refused: %s", reply ? reply : "no reply");
        }
        int64_t wid = bench_json_i64(reply, "id", -1);
        free(reply);
        int armed = 0;
        deadline = bench_now_ns() + 10000000000LL;
        while (armed < nclients) {
            if (!read_record(records, &r, deadline)) {
                bench_die("repetition %d: %d of %d clients armed within 10 s", rep, armed,
                          nclients);
            }
            if (r.kind == EV_PLAN && r.windows > windows[r.client] && lat[r.client] < 0) {
                lat[r.client] = (r.t_ns - t0) / 1000;
                armed++;
            }
        }
        printf("    [");
        for (int i = 0; i < nclients; i++) {
            printf("%s%" PRId64, i ? ", " : "", lat[i]);
        }
        printf("]%s\n", rep + 1 < reps ? "," : "");
        fflush(stdout);

        /* cancel it; every client back to its previous plan */
        snprintf(req, sizeof(req),
                 "{\"v\":1,\"type\":\"stop\",\"job\":\"bench\",\"id\":%" PRId64 "}", wid);
        free(bench_request(ctl, req));
        int back = 0;
        for (int i = 0; i < nclients; i++) {
            lat[i] = -1;
        }
        while (back < nclients) {
            if (!read_record(records, &r, deadline)) {
                bench_die("repetition %d: the cancellation reached %d of %d clients", rep, back,
                          nclients);
            }
            if (r.kind == EV_PLAN && r.windows == windows[r.client] && lat[r.client] < 0) {
                lat[r.client] = 0;
                back++;
            }
        }
        bench_sleep_us(50000 + (rep % 5) * 13000); /* not in phase with any timer */
    }
    printf("  ]\n}\n");

    nng_close(ctl);
    for (int i = 0; i < nclients; i++) {
        kill(pids[i], SIGTERM);
    }
    for (int i = 0; i < nclients; i++) {
        waitpid(pids[i], NULL, 0);
    }
    free(lat);
    free(windows);
    free(ready);
    return 0;
}
