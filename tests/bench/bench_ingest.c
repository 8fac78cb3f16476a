// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Ingest: step events per second one node daemon takes in from N client
 * processes that step as fast as the library lets them deliver.
 *
 * Each client pushes bursts of 1024 step pairs (2048 events: one message of
 * the background thread) and pushes the next burst as soon as at most one
 * burst is still waiting in the event ring (a closed loop: the ring never
 * overflows and nothing is dropped, and the training thread does not burn
 * the CPU the daemon needs while it waits). The background threads flush on
 * their default period (profd_options_t.flush_ms, 50 ms).
 *
 * The rate is what the daemon counted (the sum of the ranks' "events" in
 * its status) over each measuring interval; the CPU shares come from
 * /proc/PID/stat (utime + stime) of the daemon and of the clients.
 *
 * usage: bench_ingest --url WORKER_URL --control CONTROL_URL --daemon-pid PID
 *                     [--clients N] [--reps R] [--seconds S]
 * Prints one JSON object.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define MAX_CLIENTS 1024
#define BURST       1024

static volatile sig_atomic_t g_stop;

static void on_term(int sig)
{
    (void)sig;
    g_stop = 1;
}

typedef struct report {
    int64_t sent, dropped;
} report_t;

static int client_main(const void *url, int index, int out)
{
    profd_options_t o;
    profd_client_t *c;
    profd_stats_t st;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    bench_options(&o, url, "benchingest", index);
    if (profd_open(&c, &o) != 0) {
        return 1;
    }
    bench_wait_connected(c, 30000);
    int64_t step = 1, pushed = 0;
    while (!g_stop) {
        profd_stats(c, &st);
        if (pushed - (st.events_sent + st.events_dropped) <= BURST * 2) {
            for (int i = 0; i < BURST; i++, step++) {
                profd_step_begin(c, step);
                profd_step_end(c, step);
            }
            pushed += 2 * BURST;
        } else {
            bench_sleep_us(5000);
        }
    }
    profd_stats(c, &st);
    report_t r = {st.events_sent, st.events_dropped};
    if (write(out, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
        return 1;
    }
    profd_close(c);
    return 0;
}

/* utime + stime of a process, in seconds. */
static double cpu_s(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command may hold spaces */
    unsigned long long ut = 0, st = 0;
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) {
        return -1;
    }
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The sum of every rank's event count in the daemon's status. */
static int64_t daemon_events(const char *control)
{
    char *s = bench_control(control, "{\"v\":1,\"type\":\"status\",\"job\":\"bench\"}");
    int64_t sum = 0;
    if (s == NULL) {
        return -1;
    }
    for (const char *p = strstr(s, "\"events\":"); p; p = strstr(p + 1, "\"events\":")) {
        sum += bench_json_i64(p, "events", 0);
    }
    free(s);
    return sum;
}

int main(int argc, char **argv)
{
    const char *url = NULL, *control = NULL;
    int nclients = 64, reps = 5;
    double seconds = 3;
    pid_t dpid = 0;
    int daemon_pid = 0;
    static const char usage[] =
        "bench_ingest --url WORKER_URL --control CONTROL_URL --daemon-pid PID "
        "[--clients N] [--reps R] [--seconds S]";
    const bench_opt_t opts[] = {{"--url", BENCH_STR, &url},
                                {"--control", BENCH_STR, &control},
                                {"--daemon-pid", BENCH_INT, &daemon_pid},
                                {"--clients", BENCH_INT, &nclients},
                                {"--reps", BENCH_INT, &reps},
                                {"--seconds", BENCH_DBL, &seconds}};
    bench_args(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
    dpid = (pid_t)daemon_pid;
    if (url == NULL || control == NULL || dpid <= 0 || nclients < 1 || nclients > MAX_CLIENTS ||
        reps < 1 || reps > 100 || seconds <= 0) {
        bench_die("usage: %s", usage);
    }
    pid_t pids[MAX_CLIENTS];
    int reports = bench_fork_clients(nclients, pids, client_main, url);

    bench_sleep_us(2000000); /* registration and warm-up */
    printf("{\n  \"clients\": %d,\n  \"seconds\": %.1f,\n  \"reps\": [\n", nclients, seconds);
    int64_t ev0 = daemon_events(control);
    int64_t t0 = bench_now_ns();
    double d0 = cpu_s(dpid), c0 = 0;
    for (int i = 0; i < nclients; i++) {
        c0 += cpu_s(pids[i]);
    }
    for (int r = 0; r < reps; r++) {
        bench_sleep_us((int64_t)(seconds * 1e6));
        int64_t ev1 = daemon_events(control);
        int64_t t1 = bench_now_ns();
        double d1 = cpu_s(dpid), c1 = 0;
        for (int i = 0; i < nclients; i++) {
            c1 += cpu_s(pids[i]);
        }
        double wall = (double)(t1 - t0) / 1e9;
        if (ev0 < 0 || ev1 < 0) {
            bench_die("the daemon does not answer status requests");
        }
        printf("    {\"events_per_s\": %.0f, \"daemon_cpu\": %.3f, \"clients_cpu\": %.3f}%s\n",
               (double)(ev1 - ev0) / wall, (d1 - d0) / wall, (c1 - c0) / wall,
               r + 1 < reps ? "," : "");
        fflush(stdout);
        ev0 = ev1;
        t0 = t1;
        d0 = d1;
        c0 = c1;
    }
    for (int i = 0; i < nclients; i++) {
        kill(pids[i], SIGTERM);
    }
    int64_t sent = 0, dropped = 0;
    report_t rep;
    for (int i = 0; i < nclients; i++) {
        if (read(reports, &rep, sizeof(rep)) == (ssize_t)sizeof(rep)) {
            sent += rep.sent;
            dropped += rep.dropped;
        }
    }
    for (int i = 0; i < nclients; i++) {
        waitpid(pids[i], NULL, 0);
    }
    printf("  ],\n  \"events_sent\": %" PRId64 ",\n  \"events_dropped\": %" PRId64 "\n}\n", sent,
           dropped);
    return 0;
}
