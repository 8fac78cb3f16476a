// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The client of the gather benchmark: one worker stepping at a steady rate
 * whose backend, when a capture stops, moves a prepared tree of files into
 * the capture folder (a rename: the tree is the capture's output) and prints
 * the moment it did. The driver (run.py) prepares the tree, starts the
 * window, and times from that moment until the manifest is written.
 *
 * The tree to use is read, at each stop, from the file given by
 * --stage-file (one path; empty: nothing is moved in).
 *
 * usage: bench_gather --url WORKER_URL --stage-file PATH [--rate STEPS_PER_S]
 * Prints "stop WINDOW T_NS STATUS" per capture on stdout.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

#include "bench_util.h"

static volatile sig_atomic_t g_stop;
static const char *g_stage_file;

static void on_term(int sig)
{
    (void)sig;
    g_stop = 1;
}

static int start_cb(const profd_capture_t *cap, void *user, char *reason, size_t len)
{
    return 0;
}

static int stop_cb(const profd_capture_t *cap, void *user, char *reason, size_t len)
{
    char stage[4096] = "";
    FILE *f = fopen(g_stage_file, "r");
    if (f) {
        if (fgets(stage, sizeof(stage), f) == NULL) {
            stage[0] = '\0';
        }
        fclose(f);
    }
    stage[strcspn(stage, "\n")] = '\0';
    int rv = 0;
    if (stage[0]) { /* what the library wrote there (its markers) goes into the tree first */
        DIR *d = opendir(cap->dir);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            char from[8192], to[8192];
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                continue;
            }
            snprintf(from, sizeof(from), "%s/%s", cap->dir, e->d_name);
            snprintf(to, sizeof(to), "%s/%s", stage, e->d_name);
            (void)rename(from, to);
        }
        if (d) {
            closedir(d);
        }
        (void)rmdir(cap->dir);
    }
    if (stage[0] && rename(stage, cap->dir) != 0) {
        snprintf(reason, len, "bench: rename %s -> %s: %s", stage, cap->dir, strerror(errno));
        rv = PROFD_EBACKEND;
    }
    printf("stop %s %" PRId64 " %s\n", cap->window, bench_now_ns(), rv ? "failed" : "ok");
    fflush(stdout);
    return rv;
}

static const profd_backend_t stage_backend = {"*", 0, start_cb, stop_cb, NULL};

int main(int argc, char **argv)
{
    const char *url = NULL;
    double rate = 20;
    static const char usage[] =
        "bench_gather --url WORKER_URL --stage-file PATH [--rate STEPS_PER_S]";
    const bench_opt_t opts[] = {{"--url", BENCH_STR, &url},
                                {"--stage-file", BENCH_STR, &g_stage_file},
                                {"--rate", BENCH_DBL, &rate}};
    bench_args(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
    if (url == NULL || g_stage_file == NULL || rate <= 0) {
        bench_die("usage: %s", usage);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    profd_options_t o;
    profd_client_t *c;
    bench_options(&o, url, "benchgather", 0);
    o.flush_ms = 5; /* results go out 5 ms after a capture ends, not 50 */
    if (profd_open(&c, &o) != 0 || profd_set_backend(c, &stage_backend, NULL) != 0) {
        bench_die("profd_open failed");
    }
    int64_t period = (int64_t)(1e9 / rate), next = bench_now_ns();
    for (int64_t step = 1; !g_stop; step++) {
        profd_step_begin(c, step);
        next += period / 2;
        while (!g_stop && bench_now_ns() < next) {
            bench_sleep_us(1000);
        }
        profd_step_end(c, step);
        next += period - period / 2;
        while (!g_stop && bench_now_ns() < next) {
            bench_sleep_us(1000);
        }
    }
    profd_close(c);
    return 0;
}
