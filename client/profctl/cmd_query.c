// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* profctl status, windows and wait: read-only questions to the daemon. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profctl.h"

/* The options every query takes: --job J and --help. Returns -1 to go on,
 * else the exit status (the help was printed, or a usage error). */
static int query_options(ctl_t *c, int argc, char **argv, const char **job)
{
    static const struct option o[] = {
        {"job", required_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "j:h", o, NULL)) != -1) {
        if (ch == 'h') {
            return ctl_help(c);
        }
        if (ch != 'j') {
            return ctl_usage(c, "%s: unknown option", c->cmd->name);
        }
        *job = optarg;
    }
    return -1;
}

static int run_status(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {{"job", required_argument, NULL, 'j'},
                                      {"ranks", no_argument, NULL, 'r'},
                                      {"help", no_argument, NULL, 'h'},
                                      {0, 0, 0, 0}};
    pp_msg_t req, rep;
    const char *job = NULL;
    bool ranks = false;
    int ch;
    while ((ch = getopt_long(argc, argv, "j:rh", o, NULL)) != -1) {
        if (ch == 'h') {
            return ctl_help(c);
        }
        if (ch == 'r') {
            ranks = true;
        } else if (ch == 'j') {
            job = optarg;
        } else {
            return ctl_usage(c, "status: unknown option");
        }
    }
    if (optind < argc) {
        return ctl_usage(c, "status: unexpected argument '%s'", argv[optind]);
    }
    pp_msg_init(&req, PP_T_status);
    req.u.status.job = (char *)job;
    if (ctl_call(c, &req, &rep) != 0) {
        return 1;
    }
    if (c->json) {
        ctl_print_json(&rep);
    } else {
        /* the per-role figures: a `top` request (a daemon without it: none) */
        pp_msg_t treq, trep;
        pp_msg_init(&treq, PP_T_top);
        treq.u.top.job = (char *)job;
        treq.u.top.n = 3;
        bool have = ctl_call_quiet(c, &treq, &trep) == 0;
        ctl_print_status_grouped(&rep.u.status_reply, have ? &trep.u.top_reply : NULL, ranks);
        if (have) {
            pp_msg_free(&trep);
        }
    }
    pp_msg_free(&rep);
    return 0;
}

const ctl_command_t ctl_cmd_status = {
    "status", run_status, "ranks per role and node: step times, slowest, stalled",
    "usage: profctl status [--job J] [--ranks]\n"
    "\n"
    "The daemon (node, version, save_path, unfinished windows), then per job and role the\n"
    "ranks, the newest step, the min, median and max of the ranks' recent step times, the\n"
    "stalled ranks and the slowest ones against the role's median, then a line per node\n"
    "daemon with its ranks by role. With --ranks, every registered rank too: job, global\n"
    "rank, role, replica rank, host, pid, the last step begun, the recent step time, state\n"
    "(idle, running, lost) and the seconds since it was heard from, grouped by node.\n"
    "\n"
    "  -j, --job J    only the ranks of job J\n"
    "  -r, --ranks    list every rank\n"
    "      --help     this help\n"};

static int query_windows(ctl_t *c, const char *job, int64_t id, pp_msg_t *rep)
{
    pp_msg_t req;
    pp_msg_init(&req, PP_T_windows);
    req.u.windows.job = (char *)job;
    req.u.windows.id = id;
    return ctl_call(c, &req, rep);
}

static int run_windows(ctl_t *c, int argc, char **argv)
{
    const char *job = NULL;
    int64_t id = PP_NONE;
    pp_msg_t rep;
    int rv = query_options(c, argc, argv, &job);
    if (rv >= 0) {
        return rv;
    }
    if (optind < argc && ctl_parse_i64(argv[optind++], &id) != 0) {
        return ctl_usage(c, "windows: window id must be a number");
    }
    if (optind < argc) {
        return ctl_usage(c, "windows: unexpected argument '%s'", argv[optind]);
    }
    if (query_windows(c, job, id, &rep) != 0) {
        return 1;
    }
    if (c->json) {
        ctl_print_json(&rep);
    } else if (id != PP_NONE && rep.u.windows_reply.windows_n == 1) {
        ctl_print_window_detail(&rep.u.windows_reply.windows[0]);
    } else {
        ctl_print_windows(rep.u.windows_reply.windows, rep.u.windows_reply.windows_n);
    }
    pp_msg_free(&rep);
    return 0;
}

const ctl_command_t ctl_cmd_windows = {
    "windows", run_windows, "windows and their state (ID: one, in detail)",
    "usage: profctl windows [--job J] [ID]\n"
    "\n"
    "Every window the daemon knows (the unfinished ones and the most recent finished\n"
    "ones): id, name, job, state, steps, tool, mode, roles, selected ranks and the count\n"
    "of captures complete, failed, missed and truncated. With ID: that window in detail\n"
    "(path, source, settings, warnings, and the state of every selected rank).\n"
    "\n"
    "  --job J    only the windows of job J\n"
    "  --help     this help\n"};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The window is over: what wait prints and returns. */
static int window_over(ctl_t *c, const pp_msg_t *rep, const pp_window_t *w)
{
    if (w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED) {
        return ctl_die(1, "%s %s%s%s", w->name,
                       w->state == PP_WS_FAILED ? "failed" : "was cancelled", w->reason ? ": " : "",
                       w->reason ? w->reason : "");
    }
    if (c->json) {
        ctl_print_json(rep);
    } else {
        printf("%s done: %lld complete, %lld failed, %lld missed, %lld truncated; "
               "manifest %s/manifest.json\n",
               w->name, (long long)w->complete, (long long)w->failed, (long long)w->missed,
               (long long)w->truncated, ctl_or_dash(w->path));
    }
    if (w->failed || w->missed || w->truncated) {
        fprintf(stderr, "profctl: %s: not every capture is complete:\n", w->name);
        for (size_t i = 0; i < w->ranks_n; i++) {
            for (size_t k = 0; k < w->ranks[i].failures_n; k++) {
                fprintf(stderr, "profctl: %s: rank %lld %s (%s): %s\n", w->name,
                        (long long)w->ranks[i].rank, w->ranks[i].role, w->ranks[i].host,
                        w->ranks[i].failures[k]);
            }
        }
        return 3;
    }
    return 0;
}

/* One look at the window: -1 to wait on, else the exit status. */
static int wait_once(ctl_t *c, int64_t id, bool tty, char *last, size_t lastlen)
{
    pp_msg_t rep;
    char line[256];
    int rv = -1;
    if (query_windows(c, NULL, id, &rep) != 0) {
        return 1;
    }
    if (rep.u.windows_reply.windows_n != 1) {
        pp_msg_free(&rep);
        return ctl_die(1, "no window %lld", (long long)id);
    }
    const pp_window_t *w = &rep.u.windows_reply.windows[0];
    snprintf(line, sizeof(line), "%s: %s, %lld/%lld rank(s) reported, %lld complete", w->name,
             ctl_or_dash(pp_enum_name(&pp_enum_window_state, w->state)), (long long)w->reported,
             (long long)w->selected, (long long)w->complete);
    if (tty && strcmp(line, last) != 0) {
        fprintf(stderr, "\r%s   ", line);
        snprintf(last, lastlen, "%s", line);
    }
    bool over = w->state == PP_WS_DONE || w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED ||
                w->selected == 0;
    if (over && tty) {
        fprintf(stderr, "\n");
    }
    if (w->state == PP_WS_DONE || w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED) {
        rv = window_over(c, &rep, w);
    } else if (w->selected == 0) {
        rv = ctl_die(1, "%s selects no registered rank: nothing to wait for", w->name);
    }
    pp_msg_free(&rep);
    return rv;
}

static int run_wait(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {
        {"timeout", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    int64_t id, timeout_s = 600;
    int ch;
    bool tty = isatty(STDERR_FILENO);
    while ((ch = getopt_long(argc, argv, "t:h", o, NULL)) != -1) {
        if (ch == 'h') {
            return ctl_help(c);
        }
        if (ch != 't' || ctl_parse_i64(optarg, &timeout_s) != 0 || timeout_s < 0) {
            return ctl_usage(c, "wait: --timeout expects seconds");
        }
    }
    if (optind >= argc || ctl_parse_i64(argv[optind], &id) != 0) {
        return ctl_usage(c, "wait: give a window id");
    }
    if (optind + 1 < argc) {
        return ctl_usage(c, "wait: unexpected argument '%s'", argv[optind + 1]);
    }
    int64_t deadline = now_ms() + timeout_s * 1000;
    char last[256] = "";
    for (;;) {
        int rv = wait_once(c, id, tty, last, sizeof(last));
        if (rv >= 0) {
            return rv;
        }
        if (now_ms() >= deadline) {
            if (tty) {
                fprintf(stderr, "\n");
            }
            return ctl_die(1, "timed out after %llds waiting for window %lld", (long long)timeout_s,
                           (long long)id);
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

const ctl_command_t ctl_cmd_wait = {
    "wait", run_wait, "wait until a window is gathered",
    "usage: profctl wait ID [--timeout S]\n"
    "\n"
    "Wait until window ID is gathered (its manifest written), showing its progress on a\n"
    "terminal, then print where the manifest is.\n"
    "Exit status: 0 every capture complete; 3 the window is done but some capture failed,\n"
    "was missed or truncated (each one's reason on stderr); 1 the window was cancelled or\n"
    "expired, failed (its manifest cannot be written where it belongs), selects no rank, or\n"
    "the timeout passed. A window whose manifest waits for disk space is not done yet.\n"
    "\n"
    "  --timeout S   give up after S seconds (default 600)\n"
    "  --help        this help\n"};
