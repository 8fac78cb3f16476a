// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* profctl watch: the straggler trigger, on demand. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profctl.h"
#include "pu_buf.h"

static int run_watch(ctl_t *c, int argc, char **argv)
{
    enum { O_FACTOR = 256, O_CONSEC, O_STEPS, O_INTERVAL, O_MAXB, O_TOOL, O_OFF };
    static const struct option o[] = {
        {"roles", required_argument, NULL, 'r'},
        {"job", required_argument, NULL, 'j'},
        {"factor", required_argument, NULL, O_FACTOR},
        {"consecutive", required_argument, NULL, O_CONSEC},
        {"steps", required_argument, NULL, O_STEPS},
        {"interval", required_argument, NULL, O_INTERVAL},
        {"max-bytes", required_argument, NULL, O_MAXB},
        {"tool", required_argument, NULL, O_TOOL},
        {"off", no_argument, NULL, O_OFF},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    pp_msg_t req, rep;
    char err[160];
    int ch;
    int64_t v;
    pp_msg_init(&req, PP_T_straggler);
    pp_straggler_t *s = &req.u.straggler;
    while ((ch = getopt_long(argc, argv, "r:j:h", o, NULL)) != -1) {
        switch (ch) {
        case 'h':
            return ctl_help(c);
        case 'r':
            if (pp_field_set_text(&pp_desc_straggler, s, "roles", optarg, err, sizeof(err))) {
                return ctl_usage(c, "--roles: expected names like actor,rollout");
            }
            break;
        case 'j':
            s->job = optarg;
            break;
        case O_FACTOR: {
            char *end;
            s->factor = strtod(optarg, &end);
            if (*end || !(s->factor > 1.0 && s->factor <= 1000.0)) {
                return ctl_usage(c, "--factor: expected a number over 1 (e.g. 1.5)");
            }
            break;
        }
        case O_CONSEC:
        case O_STEPS:
            if (ctl_parse_i64(optarg, &v) != 0 || v < 1 || v > 10000) {
                return ctl_usage(c, "--%s: expected 1..10000",
                                 ch == O_CONSEC ? "consecutive" : "steps");
            }
            *(ch == O_CONSEC ? &s->consecutive : &s->steps) = v;
            break;
        case O_INTERVAL:
            if (ctl_parse_i64(optarg, &v) != 0 || v < 1 || v > 86400) {
                return ctl_usage(c, "--interval: expected seconds 1..86400");
            }
            s->interval_ms = v * 1000;
            break;
        case O_MAXB:
            if (ctl_parse_i64(optarg, &v) != 0 || v < 1) {
                return ctl_usage(c, "--max-bytes: expected a positive number of bytes");
            }
            s->max_bytes = v;
            break;
        case O_TOOL:
            s->tool = optarg;
            break;
        case O_OFF:
            s->off = true;
            break;
        default:
            return ctl_usage(c, "watch: unknown option");
        }
    }
    if (optind < argc) {
        return ctl_usage(c, "watch: unexpected argument '%s'", argv[optind]);
    }
    int rv = ctl_call(c, &req, &rep);
    pu_strv_free(s->roles, s->roles_n);
    s->roles = NULL;
    if (rv != 0) {
        return 1;
    }
    if (c->json) {
        ctl_print_json(&rep);
    } else {
        ctl_print_trigger(&rep.u.straggler_reply);
    }
    pp_msg_free(&rep);
    return 0;
}

const ctl_command_t ctl_cmd_watch = {
    "watch", run_watch, "arm the straggler trigger (or --off)",
    "usage: profctl watch [--roles R,...] [--job J] [--factor K] [--consecutive M]\n"
    "                     [--steps N] [--interval S] [--max-bytes B] [--tool T] | --off\n"
    "\n"
    "Arm the daemon's straggler trigger: when a rank's step time is over K times the\n"
    "median of the other ranks of its role for M steps in a row, the daemon opens a\n"
    "window on that rank and on one healthy peer of the same role (the one nearest the\n"
    "median) for the next N steps, at most one window every S seconds and until its\n"
    "windows have gathered B bytes. The manifest's window.source and report.html say\n"
    "why the window was opened. Options left out take the daemon's triggers.straggler.*\n"
    "settings. Prints the trigger as armed (profctl top shows it too).\n"
    "\n"
    "  -r, --roles R,...    watch only these roles (default: every role)\n"
    "  -j, --job J          watch only job J\n"
    "      --factor K       how many times the role's median (default 2.0)\n"
    "      --consecutive M  for how many steps in a row (default 3)\n"
    "      --steps N        the window's length in steps (default 2)\n"
    "      --interval S     at most one window every S seconds (default 600)\n"
    "      --max-bytes B    stop once the trigger's windows gathered B bytes\n"
    "      --tool T         the windows' tool (default torch)\n"
    "      --off            disarm\n"
    "      --help           this help\n"};
