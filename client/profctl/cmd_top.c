// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* profctl top: the step times of every role, live. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profctl.h"

static volatile sig_atomic_t stop_top;

static void on_int(int sig)
{
    (void)sig;
    stop_top = 1;
}

static void snapshot(const pp_top_reply_t *t)
{
    time_t now = time(NULL);
    struct tm tm;
    char when[32];
    localtime_r(&now, &tm);
    strftime(when, sizeof(when), "%H:%M:%S", &tm);
    printf("profd top: node %s (%s), %lld rank(s), %lld stalled  %s\n", ctl_or_dash(t->node),
           ctl_or_dash(t->mode), (long long)t->nranks, (long long)t->nstalled, when);
    if (t->roles_n == 0) {
        printf("no step time yet\n");
    } else {
        ctl_print_roles(t->roles, t->roles_n, true);
    }
    for (size_t i = 0; i < t->ranks_n; i++) {
        const pp_rank_stat_t *r = &t->ranks[i];
        char ms[24];
        if (i == 0) {
            printf("\n%-10s %-12s %6s %-16s %-12s %8s %9s %6s %s\n", "JOB", "ROLE", "RANK", "HOST",
                   "NODE", "STEP", "STEP_MS", "RATIO", "STALLED");
        }
        ctl_fmt_ms(ms, sizeof(ms), r->step_ms);
        printf("%-10s %-12s %6lld %-16s %-12s %8lld %9s %6.2f %s\n", ctl_or_dash(r->job), r->role,
               (long long)r->rank, r->host, ctl_or_dash(r->node),
               (long long)(r->step == PP_NONE ? -1 : r->step), ms, r->ratio,
               r->stalled ? "yes" : "no");
    }
    for (size_t i = 0; i < t->sections_n; i++) {
        const pp_rank_sections_t *r = &t->sections[i];
        char v[6][24];
        if (i == 0) {
            printf("\nwhere the time goes (medians of the last 8 steps, ms); compute score: the "
                   "role's fastest compute / the rank's (relative), its own best / now "
                   "(individual)\n%-10s %-12s %6s %9s %10s %9s %9s %9s %8s %8s\n",
                   "JOB", "ROLE", "RANK", "STEP", "COMPUTE", "COMM", "DATA", "OTHER", "REL", "IND");
        }
        ctl_fmt_ms(v[0], sizeof(v[0]), r->step_ms);
        ctl_fmt_ms(v[1], sizeof(v[1]), r->compute_ms);
        ctl_fmt_ms(v[2], sizeof(v[2]), r->comm_ms);
        ctl_fmt_ms(v[3], sizeof(v[3]), r->data_ms);
        ctl_fmt_ms(v[4], sizeof(v[4]), r->other_ms);
        printf("%-10s %-12s %6lld %9s %10s %9s %9s %9s %8.2f %8.2f\n", r->job, r->role,
               (long long)r->rank, v[0], v[1], v[2], v[3], v[4], r->relative, r->individual);
    }
    if (t->sections_n) {
        printf("\n");
    }
    ctl_print_trigger(&t->trigger);
}

static int run_top(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {
        {"job", required_argument, NULL, 'j'},
        {"slowest", required_argument, NULL, 'n'},
        {"interval", required_argument, NULL, 'i'},
        {"once", no_argument, NULL, '1'},
        {"ranks", no_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    pp_msg_t req, rep;
    int ch;
    int64_t interval = 2, n = 3;
    bool once = false, tty = isatty(STDOUT_FILENO);
    pp_msg_init(&req, PP_T_top);
    while ((ch = getopt_long(argc, argv, "j:n:i:1rh", o, NULL)) != -1) {
        switch (ch) {
        case 'h':
            return ctl_help(c);
        case 'j':
            req.u.top.job = optarg;
            break;
        case 'n':
            if (ctl_parse_i64(optarg, &n) != 0 || n < 0 || n > 64) {
                return ctl_usage(c, "--slowest: expected 0..64");
            }
            break;
        case 'i':
            if (ctl_parse_i64(optarg, &interval) != 0 || interval < 1 || interval > 3600) {
                return ctl_usage(c, "--interval: expected seconds 1..3600");
            }
            break;
        case '1':
            once = true;
            break;
        case 'r':
            req.u.top.ranks = true;
            break;
        default:
            return ctl_usage(c, "top: unknown option");
        }
    }
    if (optind < argc) {
        return ctl_usage(c, "top: unexpected argument '%s'", argv[optind]);
    }
    req.u.top.n = n;
    signal(SIGINT, on_int);
    signal(SIGTERM, on_int);
    for (int round = 0; !stop_top; round++) {
        if (ctl_call(c, &req, &rep) != 0) {
            return 1;
        }
        if (c->json && !once) {
            ctl_print_json_line(&rep); /* a stream: one document per line */
        } else if (c->json) {
            ctl_print_json(&rep);
        } else {
            if (tty && !once) {
                printf("\033[H\033[2J"); /* the terminal's top left, cleared */
            } else if (round) {
                printf("\n");
            }
            snapshot(&rep.u.top_reply);
        }
        pp_msg_free(&rep);
        fflush(stdout);
        if (once) {
            break;
        }
        for (int64_t k = 0; k < interval * 10 && !stop_top; k++) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}

const ctl_command_t ctl_cmd_top = {
    "top", run_top, "step times per role, the slowest and stalled ranks, live",
    "usage: profctl top [--once] [--job J] [--slowest N] [--interval S] [--ranks]\n"
    "\n"
    "Show, per job and role, the ranks, the newest step begun, the min, median and max\n"
    "of the ranks' recent step times (each rank's median of its last 8 steps), the\n"
    "stalled ranks (in a step for over 4 times the role's median, at least 2 s, or lost)\n"
    "and the N slowest ranks with their time against the role's median; then the\n"
    "straggler trigger. Refreshed in place on a terminal until Ctrl-C; with --json,\n"
    "one compact JSON document per line (--once: one, indented).\n"
    "\n"
    "  -1, --once          one snapshot, then exit\n"
    "  -j, --job J         only job J\n"
    "  -n, --slowest N     slowest ranks per role (default 3)\n"
    "  -i, --interval S    seconds between refreshes (default 2)\n"
    "  -r, --ranks         every rank too\n"
    "      --help          this help\n"};
