// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* profctl report and merge: a window's report.html, and its traces merged
 * into one timeline. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "profctl.h"

/* ID and --help; -1 to go on, else the exit status. */
static int id_only(ctl_t *c, int argc, char **argv, int64_t *id)
{
    static const struct option o[] = {{"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "h", o, NULL)) != -1) {
        if (ch == 'h') {
            return ctl_help(c);
        }
        return ctl_usage(c, "%s: unknown option", c->cmd->name);
    }
    if (optind >= argc || ctl_parse_i64(argv[optind], id) != 0) {
        return ctl_usage(c, "%s: give a window id", c->cmd->name);
    }
    if (optind + 1 < argc) {
        return ctl_usage(c, "%s: unexpected argument '%s'", c->cmd->name, argv[optind + 1]);
    }
    return -1;
}

static int run_report(ctl_t *c, int argc, char **argv)
{
    pp_msg_t req, rep;
    int64_t id;
    int rv = id_only(c, argc, argv, &id);
    if (rv >= 0) {
        return rv;
    }
    pp_msg_init(&req, PP_T_report);
    req.u.report.id = id;
    if (ctl_call(c, &req, &rep) != 0) {
        return 1;
    }
    if (c->json) {
        ctl_print_json(&rep);
    } else {
        printf("%s\n", rep.u.report_reply.html);
    }
    pp_msg_free(&rep);
    return 0;
}

const ctl_command_t ctl_cmd_report = {
    "report", run_report, "write a window's report.html again from its record; print the path",
    "usage: profctl report ID\n"
    "\n"
    "Write report.html into window ID's folder again from the window's record of step\n"
    "times (its steps.json, checked against what the window's end wrote: never rebuilt\n"
    "from the daemon's live history, so the same bytes later and after a restart), and\n"
    "print the path of report.html. A window gets both when its manifest is written.\n"
    "report.html is one self-contained page (no network):\n"
    "a rank x step heatmap of step times, each role's phase breakdown, the slowest ranks\n"
    "against their role's median and the window's captures with their status.\n"
    "\n"
    "  --help     this help\n"};

static int run_merge(ctl_t *c, int argc, char **argv)
{
    pp_msg_t req, rep;
    int64_t id;
    char size[32];
    int rv = id_only(c, argc, argv, &id);
    if (rv >= 0) {
        return rv;
    }
    if (!c->timeout_set) {
        c->timeout_ms = 3600 * 1000; /* many GiB take a while */
    }
    pp_msg_init(&req, PP_T_merge);
    req.u.merge.id = id;
    if (ctl_call(c, &req, &rep) != 0) {
        return 1;
    }
    const pp_merge_reply_t *m = &rep.u.merge_reply;
    if (c->json) {
        ctl_print_json(&rep);
    } else {
        ctl_fmt_size(size, sizeof(size), m->bytes, " ");
        printf("%s\n", m->path);
        printf("%lld event(s) of %lld trace file(s), %lld rank(s), %s; ", (long long)m->events,
               (long long)m->files, (long long)m->ranks, size);
        if (m->err_us > 0) {
            printf("clocks aligned within %lld us", (long long)m->err_us);
        } else {
            printf("clocks aligned (offsets not measured: taken as 0)");
        }
        if (m->unaligned) {
            printf(", %lld file(s) on their own clock", (long long)m->unaligned);
        }
        printf("\n");
        for (size_t i = 0; i < m->warnings_n; i++) {
            fprintf(stderr, "warning: %s\n", m->warnings[i]);
        }
    }
    pp_msg_free(&rep);
    return 0;
}

const ctl_command_t ctl_cmd_merge = {
    "merge", run_merge, "merge a window's traces into one timeline; print its path",
    "usage: profctl merge ID\n"
    "\n"
    "Merge every trace of window ID (*.pt.trace.json[.gz], torch_npu's trace_view.json\n"
    "and profd's marker files) into one Chrome / Perfetto trace, merged.trace.json in\n"
    "the window's folder, and print its path and what went in. Each rank is a process\n"
    "named \"rank R role host\"; every rank's times are moved onto the daemon's clock\n"
    "with the offset it measured from the rank's round trips (the line says the largest\n"
    "error bound). The daemon reads the traces as a stream: a window of many GiB merges\n"
    "in bounded memory. Waits up to an hour unless --timeout is given. Open the file in\n"
    "https://ui.perfetto.dev or chrome://tracing.\n"
    "\n"
    "  --help     this help\n"};
