// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* profctl doctor: which daemon profctl reaches and what it says, then the
 * Python side (python3 -m profd doctor): the drop-in, libprofd, the worker
 * socket. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "profctl.h"

static int run_doctor(ctl_t *c, int argc, char **argv)
{
    pp_msg_t req, rep;
    int bad = 0;
    if (argc > 1) {
        return argc == 2 && strcmp(argv[1], "--help") == 0
                   ? ctl_help(c)
                   : ctl_usage(c, "doctor: unexpected argument '%s'", argv[1]);
    }
    pp_msg_init(&req, PP_T_status);
    if (ctl_call(c, &req, &rep) == 0) {
        const pp_status_reply_t *s = &rep.u.status_reply;
        printf("daemon: %s: node %s (%s), profd %s, %zu rank(s), %lld open window(s)\n", c->url,
               ctl_or_dash(s->node), ctl_or_dash(s->mode), ctl_or_dash(s->version), s->ranks_n,
               (long long)s->windows);
        pp_msg_free(&rep);
    } else {
        printf("daemon: %s: not reachable (the reason above); start profd, or give --url or "
               "PROFD_CONTROL_URL\n",
               c->url);
        bad = 1;
    }
    fflush(stdout);
    /* the Python side, as the python3 a job would run sees it */
    int st = system("python3 -m profd doctor");
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127) {
        printf("python: no python3 to ask\n");
        bad = 1;
    } else if (WEXITSTATUS(st) != 0) {
        printf("python: python3 -m profd doctor: exit %d (profd not importable there: pip "
               "install client/python, or PYTHONPATH)\n",
               WEXITSTATUS(st));
        bad = 1;
    }
    return bad;
}

const ctl_command_t ctl_cmd_doctor = {
    "doctor", run_doctor, "which daemon profctl and this Python reach, and why not",
    "usage: profctl doctor\n"
    "\n"
    "Ask the daemon profctl reaches (--url, PROFD_CONTROL_URL, else the run folder's\n"
    "control socket) for its status, then run `python3 -m profd doctor`: whether the\n"
    "PROFD_AUTO drop-in is active in that interpreter, where libprofd is loaded from,\n"
    "and which worker socket a job would register with. Exit status 0 when all is\n"
    "well, else 1.\n"};
