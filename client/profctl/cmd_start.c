// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* profctl start and stop: open and close windows. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profctl.h"
#include "pu_buf.h"

/* A start request being built: the request, the selector every role gets,
 * the roles, and the tool settings named by --level / --contents. */
typedef struct start {
    ctl_t *c;
    pp_window_spec_t *spec;
    pp_selector_t base;
    pp_tool_settings_t settings;
    bool named_settings; /* --level or --contents */
    char **roles;
    size_t nroles;
} start_t;

/* Where an option's value goes: a field of one of the records, parsed by
 * the field's kind (pp_field_set_text), or a function for what is more
 * than one field. */
enum { T_SPEC, T_SEL, T_SETTINGS, T_FN };

typedef struct start_opt {
    const char *name;
    int has_arg;
    int target;
    const char *field; /* T_SPEC, T_SEL, T_SETTINGS */
    int (*fn)(start_t *st, const char *arg);
} start_opt_t;

/* --steps 2,4 | 5:10 | 5: */
static int opt_steps(start_t *st, const char *arg)
{
    char err[128];
    const char *colon = strchr(arg, ':');
    if (colon == NULL) {
        if (pp_field_set_text(&pp_desc_window_spec, st->spec, "steps", arg, err, sizeof(err))) {
            return ctl_usage(st->c, "--steps: expected a list like 2,4 or a range like 5:10");
        }
        return 0;
    }
    char a[32];
    size_t n = (size_t)(colon - arg);
    if (n == 0 || n >= sizeof(a)) {
        return ctl_usage(st->c, "--steps: expected A:B, A: or a list like 2,4");
    }
    memcpy(a, arg, n);
    a[n] = '\0';
    if (ctl_parse_i64(a, &st->spec->start) != 0 ||
        (colon[1] ? ctl_parse_i64(colon + 1, &st->spec->end) != 0 : (st->spec->end = -1, 0))) {
        return ctl_usage(st->c, "--steps: expected A:B, A: or a list like 2,4");
    }
    return 0;
}

static int opt_roles(start_t *st, const char *arg)
{
    pp_selector_t tmp;
    char err[128];
    pp_record_init(&pp_desc_selector, &tmp);
    if (pp_field_set_text(&pp_desc_selector, &tmp, "phases", arg, err, sizeof(err)) != 0) {
        return ctl_usage(st->c, "--roles: expected names like actor,rollout");
    }
    pu_strv_free(st->roles, st->nroles);
    st->roles = tmp.phases; /* the names, moved */
    st->nroles = tmp.phases_n;
    return 0;
}

/* --ranks all | 0,1 */
static int opt_ranks(start_t *st, const char *arg)
{
    char err[128];
    if (strcmp(arg, "all") == 0) {
        st->base.all_ranks = true;
        return 0;
    }
    if (pp_field_set_text(&pp_desc_selector, &st->base, "ranks", arg, err, sizeof(err)) != 0) {
        return ctl_usage(st->c, "--ranks: expected all or a list like 0,1");
    }
    st->base.all_ranks = false;
    return 0;
}

/* --next N, --roundup R: positive; `why` is the usage error otherwise */
static int opt_positive(start_t *st, const char *field, const int64_t *v, const char *arg,
                        const char *why)
{
    char err[128];
    if (pp_field_set_text(&pp_desc_window_spec, st->spec, field, arg, err, sizeof(err)) != 0 ||
        *v < 1) {
        return ctl_usage(st->c, "%s", why);
    }
    return 0;
}

static int opt_next(start_t *st, const char *arg)
{
    return opt_positive(st, "next", &st->spec->next, arg,
                        "--next: expected a positive number of steps");
}

static int opt_roundup(start_t *st, const char *arg)
{
    return opt_positive(st, "roundup", &st->spec->roundup, arg,
                        "--roundup: expected a positive number");
}

/* --replica-ranks 0,1: replicas rather than every rank, unless --ranks
 * named ranks too */
static int opt_replicas(start_t *st, const char *arg)
{
    char err[128];
    if (pp_field_set_text(&pp_desc_selector, &st->base, "replica_ranks", arg, err, sizeof(err))) {
        return ctl_usage(st->c, "--replica-ranks: expected a list like 0,1");
    }
    if (st->base.ranks_n == 0) {
        st->base.all_ranks = false;
    }
    return 0;
}

static int opt_discrete(start_t *st, const char *arg)
{
    st->spec->mode = PP_MODE_DISCRETE;
    return 0;
}

static int opt_e2e(start_t *st, const char *arg)
{
    st->spec->mode = PP_MODE_E2E;
    return 0;
}

/* --schedule wait=1,warmup=1,active=3,repeat=1,skip_first=0: each pair a
 * field of the schedule record. */
static int opt_schedule(start_t *st, const char *arg)
{
    char err[128], *copy = strdup(arg), *save = NULL;
    pp_schedule_t sc;
    int rv = copy ? 0 : -1;
    pp_record_init(&pp_desc_schedule, &sc);
    for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && rv == 0;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (eq == NULL) {
            rv = -1;
            break;
        }
        *eq = '\0';
        rv = pp_field_set_text(&pp_desc_schedule, &sc, tok, eq + 1, err, sizeof(err));
    }
    free(copy);
    if (rv != 0 || sc.active <= 0 || sc.wait < 0 || sc.warmup < 0 || sc.repeat < 0 ||
        sc.skip_first < 0) {
        return ctl_usage(st->c,
                         "--schedule: expected wait=N,warmup=N,active=N(>0),repeat=N,skip_first=N");
    }
    st->spec->schedule = sc;
    return 0;
}

static int opt_help(start_t *st, const char *arg)
{
    ctl_help(st->c);
    return -1; /* done: exit 0 */
}

static const start_opt_t options[] = {
    {"steps", 1, T_FN, NULL, opt_steps},
    {"next", 1, T_FN, NULL, opt_next},
    {"roundup", 1, T_FN, NULL, opt_roundup},
    {"roles", 1, T_FN, NULL, opt_roles},
    {"ranks", 1, T_FN, NULL, opt_ranks},
    {"replica-ranks", 1, T_FN, NULL, opt_replicas},
    {"phases", 1, T_SEL, "phases", NULL},
    {"discrete", 0, T_FN, NULL, opt_discrete},
    {"e2e", 0, T_FN, NULL, opt_e2e},
    {"continuous", 0, T_SPEC, "continuous", NULL},
    {"tool", 1, T_SPEC, "tool", NULL},
    {"level", 1, T_SETTINGS, "level", NULL},
    {"contents", 1, T_SETTINGS, "contents", NULL},
    {"settings", 1, T_SPEC, "settings", NULL},
    {"schedule", 1, T_FN, NULL, opt_schedule},
    {"job", 1, T_SPEC, "job", NULL},
    {"save-path", 1, T_SPEC, "save_path", NULL},
    {"queue", 0, T_SPEC, "queue", NULL},
    {"help", 0, T_FN, NULL, opt_help},
};
#define NOPTS (sizeof(options) / sizeof(options[0]))

/* One option: 0, -1 (done, exit 0) or a usage error's status. */
static int apply_option(start_t *st, const start_opt_t *o, const char *arg)
{
    static const pp_desc_t *const descs[] = {&pp_desc_window_spec, &pp_desc_selector,
                                             &pp_desc_tool_settings};
    void *recs[] = {st->spec, &st->base, &st->settings};
    char err[160];
    if (o->target == T_FN) {
        return o->fn(st, arg);
    }
    if (pp_field_set_text(descs[o->target], recs[o->target], o->field, arg ? arg : "true", err,
                          sizeof(err)) != 0) {
        return ctl_usage(st->c, "--%s: %s", o->name, err);
    }
    st->named_settings |= o->target == T_SETTINGS;
    return 0;
}

/* What no single field can say: values that must be positive, names that
 * must be identifiers, and options that go together. */
static int check_request(start_t *st)
{
    pp_window_spec_t *s = st->spec;
    if ((s->tool && !pp_ident_ok(s->tool)) || (s->job && !pp_ident_ok(s->job))) {
        return ctl_usage(st->c, "--%s: expected an identifier like torch",
                         s->tool && !pp_ident_ok(s->tool) ? "tool" : "job");
    }
    if (st->settings.level && !pp_ident_ok(st->settings.level)) {
        return ctl_usage(st->c, "--level: expected a name like level1");
    }
    if (s->steps_n == 0 && s->start == PP_NONE && s->next == 0) {
        return ctl_usage(st->c, "start: give --steps or --next");
    }
    if (s->settings && st->named_settings) {
        return ctl_usage(st->c, "start: give --settings or --level/--contents, not both");
    }
    return 0;
}

/* The request as sent: settings from --level/--contents, one selector per
 * role (or one for every role). */
static int finish_request(start_t *st)
{
    pp_window_spec_t *s = st->spec;
    if (st->base.phases_n && s->mode == PP_MODE_NONE) {
        s->mode = PP_MODE_DISCRETE; /* phases are discrete captures */
    }
    if (st->named_settings &&
        pp_record_encode(&pp_desc_tool_settings, &st->settings, false, &s->settings, NULL) != 0) {
        return ctl_die(1, "out of memory");
    }
    s->source = strdup("profctl");
    size_t nsel = st->nroles ? st->nroles : 1;
    if ((s->selectors = calloc(nsel, sizeof(*s->selectors))) == NULL) {
        return ctl_die(1, "out of memory");
    }
    s->selectors_n = nsel;
    for (size_t i = 0; i < nsel; i++) {
        if (pp_record_copy(&pp_desc_selector, &s->selectors[i], &st->base) != 0 ||
            (st->nroles && (s->selectors[i].role = strdup(st->roles[i])) == NULL)) {
            return ctl_die(1, "out of memory");
        }
    }
    return 0;
}

/* Parse the options into st: 0, -1 (done, exit 0) or a usage status. */
static int parse_start(start_t *st, int argc, char **argv)
{
    struct option lo[NOPTS + 1];
    for (size_t i = 0; i < NOPTS; i++) {
        lo[i] =
            (struct option){options[i].name, options[i].has_arg ? required_argument : no_argument,
                            NULL, (int)i + 1};
    }
    lo[NOPTS] = (struct option){0, 0, 0, 0};
    int ch, rv = 0;
    while (rv == 0 && (ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (ch < 1 || ch > (int)NOPTS) {
            return ctl_usage(st->c, "start: unknown option");
        }
        rv = apply_option(st, &options[ch - 1], optarg);
    }
    if (rv == 0 && optind < argc) {
        return ctl_usage(st->c, "start: unexpected argument '%s'", argv[optind]);
    }
    return rv != 0 ? rv : check_request(st);
}

static int run_start(ctl_t *c, int argc, char **argv)
{
    pp_msg_t req;
    start_t st = {.c = c};
    pp_msg_init(&req, PP_T_start);
    st.spec = &req.u.start;
    pp_record_init(&pp_desc_selector, &st.base);
    pp_record_init(&pp_desc_tool_settings, &st.settings);
    st.base.all_ranks = true;
    int rv = parse_start(&st, argc, argv);
    if (rv == 0) {
        rv = finish_request(&st);
    }
    if (rv == 0) {
        rv = ctl_call_started(c, &req, "started");
    }
    pu_strv_free(st.roles, st.nroles);
    pp_record_free(&pp_desc_selector, &st.base);
    pp_record_free(&pp_desc_tool_settings, &st.settings);
    pp_msg_free(&req);
    return rv < 0 ? 0 : rv;
}

const ctl_command_t ctl_cmd_start = {
    "start", run_start, "open a profiling window",
    "usage: profctl start (--steps S | --next N) [options]\n"
    "\n"
    "Open a profiling window on the selected ranks. Every selected rank captures the\n"
    "same steps; a rank that cannot make the first step is reported missed.\n"
    "\n"
    "  --steps 2,4 | 5:10 | 5:    steps: a list (one window per step), a half-open range,\n"
    "                             an open end (until the job ends)\n"
    "  --next N [--roundup R]     the next N steps every selected rank can still reach\n"
    "                             (the first a multiple of R)\n"
    "  --roles actor,rollout      roles (default: every role)\n"
    "  --ranks 0,1|all            global ranks (default: all)\n"
    "  --replica-ranks 0,1        inference replica indices\n"
    "  --phases generate,...      phases (implies --discrete)\n"
    "  --discrete | --e2e         one capture per phase | per process (default)\n"
    "  --continuous               one window per run of consecutive --steps\n"
    "  --tool T                   torch|npu|nsys|torch_memory|cuda|precision_debugger|exec|sim\n"
    "                             (default torch)\n"
    "  --level L --contents a,b   tool settings (npu/torch)\n"
    "  --settings JSON            tool settings as a JSON object\n"
    "  --schedule wait=1,warmup=1,active=3,repeat=1,skip_first=0\n"
    "                             sub-step schedule inside a phase (torch.profiler's;\n"
    "                             discrete windows only)\n"
    "  --job J                    the job (default: the one job running; required when\n"
    "                             several are)\n"
    "  --queue                    overlapping a window on the same ranks: begin after it\n"
    "                             (default: refused)\n"
    "  --save-path P              where the window's folder goes (relative: below the\n"
    "                             daemon's save_path)\n"
    "  --help                     this help\n"};

static int run_stop(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {
        {"job", required_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    pp_msg_t req;
    int ch;
    pp_msg_init(&req, PP_T_stop);
    while ((ch = getopt_long(argc, argv, "j:h", o, NULL)) != -1) {
        if (ch == 'h') {
            return ctl_help(c);
        }
        if (ch != 'j') {
            return ctl_usage(c, "stop: unknown option");
        }
        req.u.stop.job = optarg;
    }
    if (optind < argc && ctl_parse_i64(argv[optind++], &req.u.stop.id) != 0) {
        return ctl_usage(c, "stop: window id must be a number");
    }
    if (optind < argc) {
        return ctl_usage(c, "stop: unexpected argument '%s'", argv[optind]);
    }
    return ctl_call_started(c, &req, "stopping");
}

const ctl_command_t ctl_cmd_stop = {
    "stop", run_stop, "end a window at the next aligned step (all: no ID)",
    "usage: profctl stop [ID] [--job J]\n"
    "\n"
    "End window ID (without ID: every running window) after the step every member can\n"
    "still reach; a window that has not started is cancelled.\n"
    "\n"
    "  --job J    with no ID: only the windows of job J\n"
    "  --help     this help\n"};
