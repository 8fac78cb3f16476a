// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The window planner (see plan.h). Pure: no I/O, no clock. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "pu_buf.h"
#include "text.h"

static bool has(const int64_t *v, size_t n, int64_t x)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i] == x) {
            return true;
        }
    }
    return false;
}

static uint32_t all_roles(const pd_plan_rank_t *r)
{
    size_t n = r->nroles ? r->nroles : 1;
    return n >= 32 ? UINT32_MAX : (((uint32_t)1 << n) - 1);
}

/* Does selector s select r's role i (i = -1: a selector without a role, the
 * global rank)? */
static bool selects(const pp_selector_t *s, const pd_plan_rank_t *r, int64_t rank)
{
    return s->all_ranks || has(s->ranks, s->ranks_n, rank) ||
           (r->replica_rank != PP_NONE &&
            has(s->replica_ranks, s->replica_ranks_n, r->replica_rank));
}

int pd_plan_match_roles(const pp_window_spec_t *spec, const char *job, const pd_plan_rank_t *r,
                        uint32_t *roles)
{
    int first = -2;
    uint32_t mask = 0;
    if (job && r->job && strcmp(job, r->job) != 0) {
        return -2;
    }
    if (spec->selectors_n == 0) {
        if (roles) {
            *roles = all_roles(r);
        }
        return -1;
    }
    for (size_t i = 0; i < spec->selectors_n; i++) {
        const pp_selector_t *s = &spec->selectors[i];
        uint32_t got = 0;
        if (s->role == NULL) {
            got = selects(s, r, r->rank) ? all_roles(r) : 0;
        } else if (r->nroles == 0) {
            got = r->role && strcmp(s->role, r->role) == 0 && selects(s, r, r->rank) ? 1u : 0;
        } else {
            for (size_t j = 0; j < r->nroles && j < 32; j++) {
                if (strcmp(s->role, r->roles[j].name) == 0 && selects(s, r, r->roles[j].rank)) {
                    got |= (uint32_t)1 << j;
                }
            }
        }
        if (got && first == -2) {
            first = (int)i;
        }
        mask |= got;
    }
    if (roles) {
        *roles = mask;
    }
    return first;
}

int pd_plan_match(const pp_window_spec_t *spec, const char *job, const pd_plan_rank_t *r)
{
    return pd_plan_match_roles(spec, job, r, NULL);
}

/* Saturating arithmetic: whatever a rank reported, a prediction is a large
 * number rather than a wrapped one. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t v;
    return __builtin_add_overflow(a, b, &v) ? (b > 0 ? INT64_MAX : INT64_MIN) : v;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
    int64_t v;
    return __builtin_sub_overflow(a, b, &v) ? (b < 0 ? INT64_MAX : INT64_MIN) : v;
}

int64_t pd_plan_predict(const pd_plan_rank_t *r, int64_t now_us, int64_t ahead_us)
{
    if (r->step == PP_NONE) {
        return PP_NONE;
    }
    if (r->step_us <= 0) {
        return sat_add(r->step, 1); /* no measured step time: assume it may move on */
    }
    int64_t elapsed = sat_sub(now_us, r->step_began_us);
    if (elapsed < 0) {
        elapsed = 0;
    }
    /* steps shorter than the floor are measurement noise, not training */
    int64_t per = r->step_us < PD_PLAN_MIN_STEP_US ? PD_PLAN_MIN_STEP_US : r->step_us;
    return sat_add(r->step, sat_add(elapsed, ahead_us > 0 ? ahead_us : 0) / per);
}

int64_t pd_plan_stop_step(const pd_plan_rank_t *ranks, size_t n, const pd_plan_params_t *p)
{
    int64_t last = PP_NONE;
    for (size_t i = 0; i < n; i++) {
        int64_t s = pd_plan_predict(&ranks[i], p->now_us, p->latency_us + p->margin_us);
        if (s != PP_NONE && (last == PP_NONE || s > last)) {
            last = s;
        }
    }
    return last;
}

static int check_mode(pp_mode_t mode, const char *where, char *err, size_t errlen)
{
    if (mode != PP_MODE_NONE && mode != PP_MODE_E2E && mode != PP_MODE_DISCRETE) {
        return pd_errf(err, errlen, PROFD_EINVAL, "%smode must be e2e or discrete, found '%.64s'",
                       where, pp_mode_name(mode) ? pp_mode_name(mode) : "?");
    }
    return 0;
}

static int check_schedule(const pp_schedule_t *s, const char *where, char *err, size_t errlen)
{
    if (s->skip_first < 0 || s->wait < 0 || s->warmup < 0 || s->active < 0 || s->repeat < 0) {
        return pd_errf(err, errlen, PROFD_EINVAL, "%sschedule values must be >= 0", where);
    }
    return 0;
}

/* The tools a capture can be made with: the client's built-in backends
 * (libprofd's sim and exec, the Python client's torch, npu, torch_memory,
 * cuda and nsys) and verl's precision_debugger (profiling-config.md). */
static const char *const known_tools[] = {"torch", "npu",  "torch_memory",       "cuda",
                                          "nsys",  "exec", "precision_debugger", "sim"};

bool pd_plan_tool_known(const char *tool, const char *custom)
{
    for (size_t i = 0; i < sizeof(known_tools) / sizeof(known_tools[0]); i++) {
        if (strcmp(tool, known_tools[i]) == 0) {
            return true;
        }
    }
    size_t len = strlen(tool);
    for (const char *c = custom; c && *c;) {
        c += strspn(c, ", ");
        size_t k = strcspn(c, ", ");
        if (k == len && strncmp(c, tool, k) == 0) {
            return true;
        }
        c += k;
    }
    return false;
}

static int check_tool(const char *tool, const char *custom, const char *where, char *err,
                      size_t errlen)
{
    if (tool == NULL || pd_plan_tool_known(tool, custom)) {
        return 0;
    }
    char names[160] = "";
    size_t at = 0;
    for (size_t i = 0; i < sizeof(known_tools) / sizeof(known_tools[0]); i++) {
        int k = snprintf(names + at, sizeof(names) - at, "%s%s", i ? ", " : "", known_tools[i]);
        at += k > 0 && (size_t)k < sizeof(names) - at ? (size_t)k : 0;
    }
    return pd_errf(err, errlen, PROFD_EINVAL,
                   "%sunknown tool '%.64s': the tools are %s%s%.96s (a client's own backend: add "
                   "its tool to the daemon's tools.custom)",
                   where, tool, names, custom && custom[0] ? ", " : "", custom ? custom : "");
}

/* A schedule counts sub-steps inside a phase: it means nothing to an e2e
 * window (one capture per process), and silently dropping it would profile
 * something else than asked. */
static int check_mode_options(const pp_window_spec_t *spec, char *err, size_t errlen)
{
    size_t n = spec->selectors_n ? spec->selectors_n : 1;
    for (size_t i = 0; i < n; i++) {
        int sel = spec->selectors_n ? (int)i : -1;
        if (sel >= 0 && spec->selectors[sel].phases_n > 0 &&
            pd_plan_mode(spec, sel) == PP_MODE_E2E) {
            char where[64] = "";
            if (spec->selectors[sel].role) {
                snprintf(where, sizeof(where), " (role %.32s)", spec->selectors[sel].role);
            }
            return pd_errf(err, errlen, PROFD_EINVAL,
                           "phases apply to discrete windows only (one capture per phase); this "
                           "window%s is e2e: drop --e2e or --phases",
                           where);
        }
        if (pd_plan_mode(spec, sel) == PP_MODE_E2E && pd_plan_schedule(spec, sel)->active > 0) {
            char where[64] = "";
            if (sel >= 0 && spec->selectors[sel].role) {
                snprintf(where, sizeof(where), " (role %.32s)", spec->selectors[sel].role);
            }
            return pd_errf(err, errlen, PROFD_EINVAL,
                           "a schedule applies to discrete windows only (it counts sub-steps in a "
                           "phase); this window%s is e2e: add --discrete or --phases, or drop "
                           "--schedule",
                           where);
        }
    }
    return 0;
}

static int validate(const pp_window_spec_t *spec, const char *custom, char *err, size_t errlen)
{
    char where[64];
    int forms = (spec->steps_n > 0) + (spec->start != PP_NONE) + (spec->next != 0);
    int rv;

    if (spec->start == PP_NONE && spec->end != PP_NONE) {
        return pd_errf(err, errlen, PROFD_EINVAL, "end given without start");
    }
    if (forms == 0) {
        return pd_errf(err, errlen, PROFD_EINVAL, "no steps: give steps, start/end or next");
    }
    if (forms > 1) {
        return pd_errf(err, errlen, PROFD_EINVAL, "give only one of steps, start/end and next");
    }
    for (size_t i = 0; i < spec->steps_n; i++) {
        if (spec->steps[i] < 1) {
            return pd_errf(err, errlen, PROFD_EINVAL, "steps must be >= 1, found %lld",
                           (long long)spec->steps[i]);
        }
        if (spec->steps[i] > PP_INT_MAX) {
            return pd_errf(err, errlen, PROFD_EINVAL, "steps must be at most %lld, found %lld",
                           (long long)PP_INT_MAX, (long long)spec->steps[i]);
        }
    }
    /* every step stays below 2^53: the arithmetic on them cannot overflow */
    const struct {
        const char *name;
        int64_t v;
    } bounded[] = {{"start", spec->start},
                   {"end", spec->end},
                   {"next", spec->next},
                   {"roundup", spec->roundup}};
    for (size_t i = 0; i < sizeof(bounded) / sizeof(bounded[0]); i++) {
        if (bounded[i].v != PP_NONE && bounded[i].v > PP_INT_MAX) {
            return pd_errf(err, errlen, PROFD_EINVAL, "%s must be at most %lld, found %lld",
                           bounded[i].name, (long long)PP_INT_MAX, (long long)bounded[i].v);
        }
    }
    if (spec->start != PP_NONE) {
        if (spec->start < 0) {
            return pd_errf(err, errlen, PROFD_EINVAL, "start must be >= 0, found %lld",
                           (long long)spec->start);
        }
        if (spec->end != PP_NONE && spec->end != -1 && spec->end <= spec->start) {
            return pd_errf(err, errlen, PROFD_EINVAL,
                           "end (%lld) must be greater than start (%lld), or -1",
                           (long long)spec->end, (long long)spec->start);
        }
    }
    if (spec->next < 0) {
        return pd_errf(err, errlen, PROFD_EINVAL, "next must be >= 1, found %lld",
                       (long long)spec->next);
    }
    if (spec->roundup < 0) {
        return pd_errf(err, errlen, PROFD_EINVAL, "roundup must be >= 0, found %lld",
                       (long long)spec->roundup);
    }
    if (spec->job && !pp_ident_ok(spec->job)) {
        return pd_errf(err, errlen, PROFD_EINVAL, "job must be an identifier, found '%.64s'",
                       spec->job);
    }
    if (spec->tool && !pp_ident_ok(spec->tool)) {
        return pd_errf(err, errlen, PROFD_EINVAL, "tool must be an identifier, found '%.64s'",
                       spec->tool);
    }
    if ((rv = check_tool(spec->tool, custom, "", err, errlen)) != 0) {
        return rv;
    }
    if ((rv = check_mode(spec->mode, "", err, errlen)) != 0 ||
        (rv = check_schedule(&spec->schedule, "", err, errlen)) != 0) {
        return rv;
    }
    for (size_t i = 0; i < spec->selectors_n; i++) {
        const pp_selector_t *s = &spec->selectors[i];
        snprintf(where, sizeof(where), "selector %zu: ", i);
        if (s->role && !pp_ident_ok(s->role)) {
            return pd_errf(err, errlen, PROFD_EINVAL, "%srole must be an identifier, found '%.64s'",
                           where, s->role);
        }
        if (s->tool && !pp_ident_ok(s->tool)) {
            return pd_errf(err, errlen, PROFD_EINVAL, "%stool must be an identifier, found '%.64s'",
                           where, s->tool);
        }
        for (size_t j = 0; j < s->ranks_n; j++) {
            if (s->ranks[j] < 0) {
                return pd_errf(err, errlen, PROFD_EINVAL, "%sranks must be >= 0, found %lld", where,
                               (long long)s->ranks[j]);
            }
        }
        for (size_t j = 0; j < s->replica_ranks_n; j++) {
            if (s->replica_ranks[j] < 0) {
                return pd_errf(err, errlen, PROFD_EINVAL,
                               "%sreplica ranks must be >= 0, found %lld", where,
                               (long long)s->replica_ranks[j]);
            }
        }
        for (size_t j = 0; j < s->phases_n; j++) {
            if (!pp_ident_ok(s->phases[j])) {
                return pd_errf(err, errlen, PROFD_EINVAL,
                               "%sphase must be an identifier, found '%.64s'", where, s->phases[j]);
            }
        }
        if ((rv = check_tool(s->tool, custom, where, err, errlen)) != 0 ||
            (rv = check_mode(s->mode, where, err, errlen)) != 0 ||
            (rv = check_schedule(&s->schedule, where, err, errlen)) != 0) {
            return rv;
        }
    }
    return check_mode_options(spec, err, errlen);
}

static int add_warning(pd_plan_out_t *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int add_warning(pd_plan_out_t *out, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return pd_strv_add(&out->warnings, &out->n_warnings, buf) == 0 ? 0 : PROFD_ENOMEM;
}

/* The windows: the expansion profctl apply --dry-run shares (proto). */
static int make_segments(const pp_window_spec_t *spec, int64_t next_start, pd_plan_out_t *out)
{
    pp_segment_t *seg;
    size_t n;
    int rv = pp_spec_segments(spec, next_start, &seg, &n);
    if (rv != 0) {
        return rv;
    }
    if ((out->segments = calloc(n, sizeof(*out->segments))) == NULL) {
        free(seg);
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        out->segments[i].first = seg[i].first;
        out->segments[i].last = seg[i].last;
    }
    out->n_segments = n;
    free(seg);
    return 0;
}

/* The job of a request that names none: the one job the live ranks run
 * (ranks holds the active ones only: a job whose ranks are all gone is
 * never chosen), NULL when none is live; several: refused. */
static int live_job(const pd_plan_rank_t *ranks, size_t n, const char **job, char *err,
                    size_t errlen)
{
    char names[160] = "";
    size_t at = 0, njobs = 0;
    *job = NULL;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            seen = ranks[j].job && ranks[i].job && strcmp(ranks[j].job, ranks[i].job) == 0;
        }
        if (seen || ranks[i].job == NULL) {
            continue;
        }
        int k = snprintf(names + at, sizeof(names) - at, "%s%s", njobs ? ", " : "", ranks[i].job);
        at += k > 0 && (size_t)k < sizeof(names) - at ? (size_t)k : 0;
        if (njobs++ == 0) {
            *job = ranks[i].job;
        }
    }
    if (njobs > 1) {
        *job = NULL;
        return pd_errf(err, errlen, PROFD_EINVAL, "%zu jobs are running (%s): name one with --job",
                       njobs, names);
    }
    return 0;
}

static bool same_job(const pd_plan_rank_t *r, const char *job)
{
    return r->job && strcmp(r->job, job) == 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* "a-b,c" from sorted v[0..n) into buf at *at. */
static void put_ranges(char *buf, size_t len, size_t *at, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] <= v[j] + 1) {
            j++;
        }
        int k = v[j] == v[i]
                    ? snprintf(buf + *at, len - *at, "%s%lld", i ? "," : "", (long long)v[i])
                    : snprintf(buf + *at, len - *at, "%s%lld-%lld", i ? "," : "", (long long)v[i],
                               (long long)v[j]);
        *at += k > 0 && (size_t)k < len - *at ? (size_t)k : 0;
        i = j;
    }
}

/* What the ranks of `job` are registered as: "actor 0-1, rollout 0-3;
 * global ranks 0-5". Empty when none is registered; NULL: out of memory. */
static char *registered(const pd_plan_rank_t *ranks, size_t n, const char *job, char *buf,
                        size_t len)
{
    size_t at = 0, nv = 0, total = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        total += ranks[i].nroles ? ranks[i].nroles : 1;
    }
    int64_t *v = malloc((total + 1) * sizeof(*v));
    if (v == NULL) {
        return NULL;
    }
    /* each role in the order it first appears, with the ranks in its own
     * numbering */
    for (size_t i = 0; i < n; i++) {
        size_t ni = ranks[i].nroles ? ranks[i].nroles : 1;
        for (size_t r = 0; r < ni; r++) {
            const char *role = ranks[i].nroles ? ranks[i].roles[r].name : ranks[i].role;
            bool seen = false;
            if (role == NULL || !same_job(&ranks[i], job)) {
                continue;
            }
            for (size_t j = 0; j <= i && !seen; j++) {
                size_t nj = ranks[j].nroles ? ranks[j].nroles : 1;
                for (size_t q = 0; q < nj && !(j == i && q >= r) && !seen; q++) {
                    const char *o = ranks[j].nroles ? ranks[j].roles[q].name : ranks[j].role;
                    seen = o && same_job(&ranks[j], job) && strcmp(o, role) == 0;
                }
            }
            if (seen) {
                continue;
            }
            nv = 0;
            for (size_t j = i; j < n; j++) {
                size_t nj = ranks[j].nroles ? ranks[j].nroles : 1;
                for (size_t q = 0; q < nj && same_job(&ranks[j], job); q++) {
                    const char *o = ranks[j].nroles ? ranks[j].roles[q].name : ranks[j].role;
                    int64_t rk = ranks[j].nroles && ranks[j].roles[q].rank != PP_NONE
                                     ? ranks[j].roles[q].rank
                                     : ranks[j].rank;
                    if (o && strcmp(o, role) == 0) {
                        v[nv++] = rk;
                    }
                }
            }
            qsort(v, nv, sizeof(*v), cmp_i64);
            int k = snprintf(buf + at, len - at, "%s%.32s ", at ? ", " : "", role);
            at += k > 0 && (size_t)k < len - at ? (size_t)k : 0;
            put_ranges(buf, len, &at, v, nv);
        }
    }
    nv = 0;
    for (size_t i = 0; i < n; i++) {
        if (same_job(&ranks[i], job)) {
            v[nv++] = ranks[i].rank;
        }
    }
    if (nv) {
        qsort(v, nv, sizeof(*v), cmp_i64);
        int k = snprintf(buf + at, len - at, "%sglobal ranks ", at ? "; " : "");
        at += k > 0 && (size_t)k < len - at ? (size_t)k : 0;
        put_ranges(buf, len, &at, v, nv);
    }
    free(v);
    return buf;
}

/* A request that selects no registered rank of its job: refused when its
 * first step has passed for that job (no rank that registers later could
 * catch up with it: it would wait for ever), else a warning. Both list what
 * is registered. */
static int no_member(const pd_plan_rank_t *ranks, size_t n, const char *job, pd_plan_out_t *out,
                     char *err, size_t errlen)
{
    char what[200];
    int64_t at = PP_NONE;
    for (size_t i = 0; i < n; i++) {
        if (same_job(&ranks[i], job) && ranks[i].step != PP_NONE &&
            (at == PP_NONE || ranks[i].step > at)) {
            at = ranks[i].step;
        }
    }
    if (registered(ranks, n, job, what, sizeof(what)) == NULL) {
        return pd_errf(err, errlen, PROFD_EINVAL, "out of memory");
    }
    int64_t first = out->n_segments ? out->segments[0].first : PP_NONE;
    if (at != PP_NONE && first != PP_NONE && first <= at) {
        return pd_errf(err, errlen, PROFD_EINVAL,
                       "selects no registered rank of job '%s' and its first step %lld has "
                       "passed (the job is at step %lld); registered: %s",
                       job, (long long)first, (long long)at, what);
    }
    if (what[0] == '\0') {
        return add_warning(out,
                           "selects no registered rank of job '%s' yet; matching ranks that "
                           "register later are added",
                           job);
    }
    return add_warning(out,
                       "selects no registered rank of job '%s' yet (registered: %s); matching "
                       "ranks that register later are added",
                       job, what);
}

int pd_plan_resolve(const pp_window_spec_t *spec, const pd_plan_rank_t *ranks, size_t n,
                    const pd_plan_params_t *p, pd_plan_out_t *out, char *err, size_t errlen)
{
    int rv;
    memset(out, 0, sizeof(*out));
    if ((rv = validate(spec, p->custom_tools, err, errlen)) != 0) {
        return rv;
    }
    const char *job = spec->job;
    if (job == NULL && (rv = live_job(ranks, n, &job, err, errlen)) != 0) {
        return rv;
    }
    if (job == NULL) {
        job = p->default_job ? p->default_job : "default";
    }
    snprintf(out->job, sizeof(out->job), "%s", job);

    if (n && (out->members = calloc(n, sizeof(*out->members))) == NULL) {
        goto nomem;
    }
    int64_t next_start = 1;
    int unknown_rate = 0;
    /* a rank without a measured step time yet moves like the others of its
     * job that have one (the slowest of them, to be safe) */
    int64_t known_us = 0;
    for (size_t i = 0; i < n; i++) {
        if (pd_plan_match(spec, job, &ranks[i]) != -2 && ranks[i].step_us > known_us) {
            known_us = ranks[i].step_us;
        }
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t roles = 0;
        int sel = pd_plan_match_roles(spec, job, &ranks[i], &roles);
        if (sel == -2) {
            continue;
        }
        out->members[out->n_members].id = ranks[i].id;
        out->members[out->n_members].selector = sel;
        out->members[out->n_members].roles = roles;
        out->n_members++;
        if (spec->next > 0) {
            pd_plan_rank_t r = ranks[i];
            if (r.step != PP_NONE && r.step_us <= 0) {
                unknown_rate++;
                r.step_us = known_us; /* 0 when no rank has one: plain step + 1 */
            }
            int64_t s = pd_plan_predict(&r, p->now_us, p->latency_us + p->margin_us);
            if (s != PP_NONE && sat_add(s, 1) > next_start) {
                next_start = sat_add(s, 1);
            }
        }
    }
    if (spec->next > 0 && spec->roundup > 1 && next_start <= PP_INT_MAX) {
        /* both below 2^53: no overflow */
        next_start = ((next_start + spec->roundup - 1) / spec->roundup) * spec->roundup;
    }
    if (spec->next > 0 && (next_start > PP_INT_MAX || spec->next - 1 > PP_INT_MAX - next_start)) {
        pd_plan_out_free(out);
        return pd_errf(err, errlen, PROFD_EINVAL, "the window would end past step %lld",
                       (long long)PP_INT_MAX);
    }
    if ((rv = make_segments(spec, next_start, out)) != 0) {
        goto nomem;
    }
    for (size_t i = 0; i < spec->warnings_n; i++) {
        if (add_warning(out, "%s", spec->warnings[i]) != 0) {
            goto nomem;
        }
    }
    if (out->n_members == 0 && (rv = no_member(ranks, n, job, out, err, errlen)) != 0) {
        if (rv == PROFD_ENOMEM) {
            goto nomem;
        }
        pd_plan_out_free(out);
        return rv;
    }
    if (unknown_rate &&
        add_warning(out, "%d selected rank(s) have no measured step time yet", unknown_rate) != 0) {
        goto nomem;
    }
    return 0;
nomem:
    pd_plan_out_free(out);
    pd_errf(err, errlen, PROFD_EINVAL, "out of memory");
    return PROFD_ENOMEM;
}

void pd_plan_out_free(pd_plan_out_t *out)
{
    free(out->segments);
    free(out->members);
    pu_strv_free(out->warnings, out->n_warnings);
    memset(out, 0, sizeof(*out));
}

const char *pd_plan_tool(const pp_window_spec_t *spec, int selector)
{
    if (selector >= 0 && spec->selectors[selector].tool) {
        return spec->selectors[selector].tool;
    }
    return spec->tool ? spec->tool : "torch";
}

pp_mode_t pd_plan_mode(const pp_window_spec_t *spec, int selector)
{
    if (selector >= 0 && spec->selectors[selector].mode != PP_MODE_NONE) {
        return spec->selectors[selector].mode;
    }
    return spec->mode != PP_MODE_NONE ? spec->mode : PP_MODE_E2E;
}

const char *pd_plan_settings(const pp_window_spec_t *spec, int selector)
{
    if (selector >= 0 && spec->selectors[selector].settings) {
        return spec->selectors[selector].settings;
    }
    return spec->settings ? spec->settings : "{}";
}

const pp_schedule_t *pd_plan_schedule(const pp_window_spec_t *spec, int selector)
{
    if (selector >= 0 && spec->selectors[selector].schedule.active > 0) {
        return &spec->selectors[selector].schedule;
    }
    return &spec->schedule;
}
