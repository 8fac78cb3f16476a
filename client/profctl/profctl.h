// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * profctl: the control CLI of profd. The pieces its commands share: the
 * connection to a control endpoint (one request, one reply, the same codec
 * as the daemon), argument parsing and the human tables. Each command is a
 * file of its own (cmd_*.c); main.c holds the command table.
 */
#ifndef PROFCTL_H
#define PROFCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "profd/proto.h"
#include "tlsconf.h"

struct ctl_command;

typedef struct ctl {
    char url[PP_MAX_PATH];
    bool json;
    int timeout_ms;
    bool timeout_set;   /* --timeout given */
    pt_tls_files_t tls; /* tls+tcp:// URLs */
    void *tls_cfg;
    nng_socket sock;
    bool open;
    const struct ctl_command *cmd; /* the command running */
} ctl_t;

/* A command: `profctl NAME ARGS`; run returns the exit status. */
typedef struct ctl_command {
    const char *name;
    int (*run)(ctl_t *c, int argc, char **argv);
    const char *summary; /* one line for profctl --help */
    const char *help;    /* its own --help */
} ctl_command_t;

extern const ctl_command_t ctl_cmd_status, ctl_cmd_windows, ctl_cmd_start, ctl_cmd_stop,
    ctl_cmd_wait, ctl_cmd_apply, ctl_cmd_top, ctl_cmd_report, ctl_cmd_merge, ctl_cmd_watch,
    ctl_cmd_doctor;

/* ---- messages and exit statuses ---- */

/* "profctl: MESSAGE" on stderr; returns code. */
int ctl_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A usage error of the running command: the reason and where to read
 * more; returns 2. */
int ctl_usage(const ctl_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The running command's --help on stdout; returns 0. */
int ctl_help(const ctl_t *c);

/* ---- the connection ---- */

/* The control endpoint when none was given: $PROFD_CONTROL_URL, else the
 * control socket where libprofd's rule finds the daemon. */
void ctl_default_url(char *buf, size_t len);
/* Send a request, wait for the reply (*rep, free with pp_msg_free). An
 * error reply prints its message. 0, or 1 (already said why). */
int ctl_call(ctl_t *c, const pp_msg_t *req, pp_msg_t *rep);
/* The same, saying nothing on failure (an optional request). */
int ctl_call_quiet(ctl_t *c, const pp_msg_t *req, pp_msg_t *rep);
/* A request answered by a `started` reply (start, stop, apply): the reply
 * printed (JSON with --json, else ctl_print_started); 0, or 1 (said). */
int ctl_call_started(ctl_t *c, const pp_msg_t *req, const char *verb);
void ctl_close(ctl_t *c);
/* The reply document, as JSON, on stdout. */
void ctl_print_json(const pp_msg_t *m);
/* The same as one compact line (a stream: one JSON document per line). */
void ctl_print_json_line(const pp_msg_t *m);

/* ---- arguments ---- */

/* A whole decimal integer; -1 when s is not one. */
int ctl_parse_i64(const char *s, int64_t *out);

/* ---- tables ---- */

const char *ctl_or_dash(const char *s);
void ctl_print_status(const pp_status_reply_t *s);
void ctl_print_windows(const pp_window_t *v, size_t n);
void ctl_print_window_detail(const pp_window_t *w);
/* verb: "started", "stopping", "applied" */
void ctl_print_started(const pp_started_t *s, const char *verb);
void ctl_fmt_steps(char *buf, size_t len, int64_t first, int64_t last);
/* bytes in B, KiB ... TiB (one decimal above B), sep between number and unit */
void ctl_fmt_size(char *buf, size_t len, int64_t b, const char *sep);
/* status: per-role figures (top, may be NULL), nodes and, with `ranks`,
 * every rank */
void ctl_print_status_grouped(const pp_status_reply_t *s, const pp_top_reply_t *top, bool ranks);
/* milliseconds: "-" for none, else 2 or 1 decimals */
void ctl_fmt_ms(char *buf, size_t len, double ms);
/* per-role step times (status, top) */
void ctl_print_roles(const pp_role_stats_t *v, size_t n, bool jobs);
/* the straggler trigger (watch, top) */
void ctl_print_trigger(const pp_straggler_t *t);

/* apply: the module search path (sys.path) of the interpreter a launch
 * line runs, asked once (hy_syspath_fn, ctx a ctl_syspath_t). */
#define CTL_MAX_SYSPATH 64
typedef struct ctl_syspath {
    bool asked;
    int rc;
    char *text;
    const char *dirs[CTL_MAX_SYSPATH];
    size_t n;
} ctl_syspath_t;
int ctl_syspath(void *ctx, const char *python, const char *const **dirs, size_t *n);
void ctl_syspath_free(ctl_syspath_t *sp);

struct pd_profcfg;
/* apply --dry-run: the windows of `cfg` (config: its name; framework: NULL
 * or whose numbering was used) as a table, or JSON with --json. Returns 0. */
int ctl_dry_run(const ctl_t *c, const char *config, const char *framework,
                const struct pd_profcfg *cfg);

#endif
