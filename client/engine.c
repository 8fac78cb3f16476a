// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Capture engine (see engine.h). Runs on the training thread only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "pu_buf.h"

enum slot_state { SLOT_ARMED, SLOT_ACTIVE, SLOT_DONE };

struct ce_cap {
    pp_capture_t rec;
    int64_t t_start; /* the backend's start, on the markers' clock */
    size_t spans_cap;
    int be;         /* backend index, -1 when none */
    bool recording; /* between backend start and stop */
    bool ended;     /* failed or finished: no more backend calls */
    bool span_open;
    int64_t span_from;
    int64_t part; /* spans started */
    char dir[PP_MAX_PATH];
};

struct ce_slot {
    int64_t id;
    const pp_plan_entry_t *e;
    enum slot_state state;
    bool discrete;
    int64_t last; /* inclusive; INT64_MAX when open */
    ce_cap_t *caps;
    size_t ncaps, capcap;
    ce_cap_t *cur; /* discrete: the capture of the running phase occurrence */
};

/* ---- schedule ---- */

ce_sched_action_t ce_schedule_action(const profd_schedule_t *s, int64_t i)
{
    if (s->active <= 0) {
        return CE_SCHED_RECORD;
    }
    if (i < s->skip_first) {
        return CE_SCHED_NONE;
    }
    i -= s->skip_first;
    int64_t cycle = s->wait + s->warmup + s->active;
    if (s->repeat > 0 && i >= s->repeat * cycle) {
        return CE_SCHED_NONE;
    }
    int64_t m = i % cycle;
    if (m < s->wait) {
        return CE_SCHED_NONE;
    }
    if (m < s->wait + s->warmup) {
        return CE_SCHED_WARMUP;
    }
    return m < cycle - 1 ? CE_SCHED_RECORD : CE_SCHED_RECORD_AND_SAVE;
}

static bool is_record(ce_sched_action_t a)
{
    return a == CE_SCHED_RECORD || a == CE_SCHED_RECORD_AND_SAVE;
}

static profd_schedule_t slot_schedule(const ce_slot_t *s)
{
    const pp_schedule_t *p = &s->e->schedule;
    profd_schedule_t r = {p->skip_first, p->wait, p->warmup, p->active, p->repeat};
    if (r.active <= 0 || r.wait < 0 || r.warmup < 0 || r.skip_first < 0 || r.repeat < 0) {
        memset(&r, 0, sizeof(r));
    }
    return r;
}

/* ---- setup ---- */

void ce_init(ce_t *e, const ce_identity_t *id, const ce_hooks_t *hooks)
{
    memset(e, 0, sizeof(*e));
    e->id = *id;
    if (e->id.nroles <= 0) {
        snprintf(e->id.roles[0].name, sizeof(e->id.roles[0].name), "%s", e->id.role);
        e->id.roles[0].rank = e->id.rank;
        e->id.nroles = 1;
    }
    e->hooks = *hooks;
    e->default_backend = -1;
    e->next_due = INT64_MAX;
}

int ce_role_index(const ce_t *e, const char *role)
{
    if (role == NULL) {
        return 0;
    }
    for (int i = 0; i < e->id.nroles; i++) {
        if (strcmp(e->id.roles[i].name, role) == 0) {
            return i;
        }
    }
    return -1;
}

int ce_add_role(ce_t *e, const char *role, int64_t rank)
{
    if (!pp_ident_ok(role) || rank < 0 || strcmp(role, "e2e") == 0) {
        return PROFD_EINVAL;
    }
    int i = ce_role_index(e, role);
    if (i >= 0) {
        return e->id.roles[i].rank == rank ? i : PROFD_EINVAL;
    }
    if (e->id.nroles >= PP_MAX_ROLES) {
        return PROFD_ELIMIT;
    }
    i = e->id.nroles++;
    snprintf(e->id.roles[i].name, sizeof(e->id.roles[i].name), "%s", role);
    e->id.roles[i].rank = rank;
    return i;
}

void ce_set_spool(ce_t *e, const char *spool)
{
    snprintf(e->spool, sizeof(e->spool), "%s", spool ? spool : "");
}

int ce_add_backend(ce_t *e, const profd_backend_t *b, void *user)
{
    if (b == NULL || b->name == NULL || b->start == NULL || b->stop == NULL) {
        return PROFD_EINVAL;
    }
    for (int i = 0; i < e->nbackends; i++) {
        if (strcmp(e->backends[i].b->name, b->name) == 0) {
            e->backends[i].b = b;
            e->backends[i].user = user;
            return 0;
        }
    }
    if (e->nbackends == CE_MAX_BACKENDS) {
        return PROFD_ELIMIT;
    }
    e->backends[e->nbackends].b = b;
    e->backends[e->nbackends].user = user;
    if (e->default_backend < 0 || strcmp(b->name, "*") == 0) {
        e->default_backend = e->nbackends;
    }
    e->nbackends++;
    return 0;
}

static int backend_for(const ce_t *e, const char *tool)
{
    for (int i = 0; tool && i < e->nbackends; i++) {
        if (strcmp(e->backends[i].b->name, tool) == 0) {
            return i;
        }
    }
    return e->default_backend;
}

/* ---- captures ---- */

static void summarize(ce_t *e)
{
    e->next_due = INT64_MAX;
    e->busy = 0;
    for (size_t i = 0; i < e->nslots; i++) {
        const ce_slot_t *s = &e->slots[i];
        if (s->state == SLOT_ARMED && s->e->first_step < e->next_due) {
            e->next_due = s->e->first_step;
        } else if (s->state == SLOT_ACTIVE) {
            e->busy++;
        }
    }
    if (e->busy == 0) {
        e->nmarks = 0; /* no capture runs: the markers are of no use */
    }
}

/* ---- markers ---- */

static void mark(ce_t *e, int kind, int64_t step, const char *phase)
{
    if (e->hooks.now_us == NULL) {
        return;
    }
    if (e->marks == NULL && (e->marks = malloc(CE_MARKERS_MAX * sizeof(*e->marks))) == NULL) {
        return;
    }
    if (e->nmarks == CE_MARKERS_MAX) {
        e->marks_dropped++;
        return;
    }
    ce_mark_t *m = &e->marks[e->nmarks++];
    m->t_us = e->hooks.now_us(e->hooks.arg);
    m->step = step;
    m->kind = kind;
    m->role = e->phase_role;
    snprintf(m->phase, sizeof(m->phase), "%s", phase ? phase : "");
}

static void range(pu_sbuf_t *b, const ce_t *e, bool *first, const char *name, const char *phase,
                  int64_t step, int64_t t0, int64_t t1, bool open)
{
    pu_sbuf_fmt(b,
                "%s{\"name\":\"%s%s%s\",\"ph\":\"X\",\"cat\":\"profd\",\"ts\":%lld,\"dur\":%lld,"
                "\"pid\":%lld,\"tid\":0,\"args\":{\"step\":%lld,%s%s%s\"profd_mono_us\":%lld%s}}",
                *first ? "" : ",\n", name, phase ? "." : "", phase ? phase : "", (long long)t0,
                (long long)(t1 > t0 ? t1 - t0 : 0), (long long)e->id.pid, (long long)step,
                phase ? "\"phase\":\"" : "", phase ? phase : "", phase ? "\"," : "", (long long)t0,
                open ? ",\"profd_open\":true" : "");
    *first = false;
}

/* The marker file of capture c, for its span [c->t_start, now]. */
static void markers_write(ce_t *e, const ce_slot_t *s, const ce_cap_t *c)
{
    if (e->hooks.now_us == NULL || e->hooks.markers == NULL || c->dir[0] == '\0') {
        return;
    }
    int64_t now = e->hooks.now_us(e->hooks.arg);
    int64_t step = 0, step_t0 = 0, ph_step = 0, ph_t0 = 0;
    const char *ph = NULL, *ph_role = NULL;
    bool first = true;
    char name[32];
    pu_sbuf_t b = {0};
    const char *phase = c->rec.phase;
    /* the worker: the capture's role and rank (a discrete capture of another
     * role of the process counts in that role's numbering), else the
     * process's primary role */
    const char *wrole = phase ? c->rec.role : e->id.role;
    int64_t wrank = phase ? c->rec.rank : e->id.rank;
    pu_sbuf_fmt(&b,
                "{\"traceEvents\":[\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":0,"
                "\"args\":{\"name\":\"profd: steps and phases\"}}",
                (long long)e->id.pid);
    first = false;
    bool step_open = false;
    for (size_t i = 0; i < e->nmarks; i++) {
        const ce_mark_t *m = &e->marks[i];
        if (ph) { /* any boundary ends the phase running (phases do not nest) */
            if (m->t_us >= c->t_start) {
                range(&b, e, &first, ph_role, ph, ph_step, ph_t0, m->t_us, false);
            }
            ph = NULL;
        }
        if (m->kind == 1 || (m->kind == 2 && step_open && m->step == step)) {
            if (step_open && m->t_us >= c->t_start) {
                snprintf(name, sizeof(name), "ProfilerStep#%lld", (long long)step);
                range(&b, e, &first, name, NULL, step, step_t0, m->t_us, false);
            }
            step_open = m->kind == 1;
            step = m->step;
            step_t0 = m->t_us;
        } else if (m->kind == 3) {
            ph = m->phase;
            ph_role = e->id.roles[m->role >= 0 && m->role < e->id.nroles ? m->role : 0].name;
            ph_step = step_open ? step : m->step;
            ph_t0 = m->t_us;
        }
    }
    if (step_open) {
        snprintf(name, sizeof(name), "ProfilerStep#%lld", (long long)step);
        range(&b, e, &first, name, NULL, step, step_t0, now, true);
    }
    if (ph) {
        range(&b, e, &first, ph_role, ph, ph_step, ph_t0, now, true);
    }
    pu_sbuf_fmt(&b,
                "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"profd\":{\"version\":1,"
                "\"clock\":\"CLOCK_MONOTONIC\",\"unit\":\"us\",\"worker\":\"rank%lld-%s%s%s\","
                "\"job\":\"%s\",\"role\":\"%s\",\"rank\":%lld,\"host\":\"%s\",\"pid\":%lld,"
                "\"window\":\"%s\",\"capture_role\":\"%s\",\"phase\":%s%s%s,\"part\":%lld,"
                "\"start_us\":%lld,\"stop_us\":%lld,\"dropped\":%lld}}}\n",
                (long long)wrank, wrole, phase ? "-" : "", phase ? phase : "", s->e->job, wrole,
                (long long)wrank, e->id.host, (long long)e->id.pid, s->e->name, c->rec.role,
                phase ? "\"" : "", phase ? phase : "null", phase ? "\"" : "", (long long)c->part,
                (long long)c->t_start, (long long)now, (long long)e->marks_dropped);
    if (!b.oom && b.p) {
        e->hooks.markers(c->dir, c->part, b.p, b.len, e->hooks.arg);
    }
    pu_sbuf_free(&b);
}

static void cap_fail(ce_cap_t *c, pp_capture_status_t status, const char *reason)
{
    free(c->rec.reason);
    c->rec.status = status;
    c->rec.reason = reason ? strdup(reason) : NULL;
    c->ended = true;
}

static void fill_capture(const ce_t *e, const ce_slot_t *s, const ce_cap_t *c, int64_t step,
                         int64_t substep, profd_capture_t *out)
{
    const pp_plan_entry_t *pe = s->e;
    memset(out, 0, sizeof(*out));
    out->window_id = pe->window;
    out->window = pe->name;
    out->job = pe->job;
    out->role = c->rec.role;
    out->phase = c->rec.phase;
    out->rank = c->rec.rank;
    out->replica_rank = e->id.replica_rank == PP_NONE ? PROFD_NO_REPLICA : e->id.replica_rank;
    out->first_step = pe->first_step;
    out->last_step = pe->last_step == PP_NONE ? -1 : pe->last_step;
    out->step = step;
    out->substep = substep;
    out->part = c->part;
    out->tool = pe->tool ? pe->tool : "";
    out->mode = pe->mode == PP_MODE_DISCRETE ? "discrete" : "e2e";
    out->settings_json = pe->settings ? pe->settings : "{}";
    out->dir = c->dir;
    out->schedule = slot_schedule(s);
}

static void cap_start(ce_t *e, ce_slot_t *s, ce_cap_t *c, int64_t substep)
{
    char reason[256] = "";
    profd_capture_t pc;
    if (c->ended || c->recording) {
        return;
    }
    if (c->be < 0) {
        snprintf(reason, sizeof(reason), "no profiler backend for tool '%s' in this process",
                 s->e->tool ? s->e->tool : "");
        cap_fail(c, PP_CAP_FAILED, reason);
        return;
    }
    fill_capture(e, s, c, e->step, substep, &pc);
    const profd_backend_t *b = e->backends[c->be].b;
    c->t_start = e->hooks.now_us ? e->hooks.now_us(e->hooks.arg) : 0;
    int rv = b->start(&pc, e->backends[c->be].user, reason, sizeof(reason));
    if (rv != 0) {
        if (reason[0] == '\0') {
            snprintf(reason, sizeof(reason), "%s start: %s", b->name, profd_strerror(rv));
        }
        cap_fail(c, PP_CAP_FAILED, reason);
        return;
    }
    c->recording = true;
    e->captures_started++;
}

static void cap_stop(ce_t *e, ce_slot_t *s, ce_cap_t *c, int64_t substep)
{
    char reason[256] = "";
    profd_capture_t pc;
    if (!c->recording) {
        return;
    }
    if (c->rec.phase == NULL) {
        substep = 0; /* end to end: sub-steps belong to phases, not to the capture */
    }
    c->recording = false;
    fill_capture(e, s, c, e->step, substep, &pc);
    const profd_backend_t *b = e->backends[c->be].b;
    markers_write(e, s, c);
    int rv = b->stop(&pc, e->backends[c->be].user, reason, sizeof(reason));
    c->part++;
    if (rv != 0) {
        if (reason[0] == '\0') {
            snprintf(reason, sizeof(reason), "%s stop: %s", b->name, profd_strerror(rv));
        }
        cap_fail(c, PP_CAP_FAILED, reason);
    }
}

static void span_push(ce_cap_t *c, int64_t first, int64_t last)
{
    if (last < first) {
        return;
    }
    if (PU_GROW(c->rec.substeps, c->spans_cap, c->rec.substeps_n + 1) != 0) {
        return; /* the span list is informative; losing it is not fatal */
    }
    c->rec.substeps[c->rec.substeps_n].first = first;
    c->rec.substeps[c->rec.substeps_n].last = last;
    c->rec.substeps_n++;
}

/* A new capture: end to end (phase NULL), or of role `ri`'s phase. */
static ce_cap_t *cap_new(ce_t *e, ce_slot_t *s, int ri, const char *phase, int64_t step)
{
    char capdir[PP_MAX_PATH], rel[PP_MAX_PATH];
    /* cur points into the array: it is only set while a phase runs, and a
     * new capture is only made when none runs for this slot */
    if (PU_GROW(s->caps, s->capcap, s->ncaps + 1) != 0) {
        return NULL;
    }
    ce_cap_t *c = &s->caps[s->ncaps++];
    memset(c, 0, sizeof(*c));
    pp_record_init(&pp_desc_capture, &c->rec);
    const char *role = phase ? e->id.roles[ri].name : "e2e";
    int64_t rank = phase ? e->id.roles[ri].rank : e->id.rank;
    c->rec.role = strdup(role);
    c->rec.phase = phase ? strdup(phase) : NULL;
    c->rec.rank = rank;
    if (phase == NULL && (c->rec.roles = calloc((size_t)e->id.nroles, sizeof(char *))) != NULL) {
        for (int i = 0; i < e->id.nroles; i++) { /* the roles an e2e capture covers */
            if ((c->rec.roles[c->rec.roles_n] = strdup(e->id.roles[i].name)) != NULL) {
                c->rec.roles_n++;
            }
        }
    }
    c->rec.replica_rank = e->id.replica_rank;
    c->rec.host = strdup(e->id.host);
    c->rec.pid = e->id.pid;
    c->rec.tool = strdup(s->e->tool ? s->e->tool : "");
    c->rec.first_step = step;
    c->rec.status = PP_CAP_COMPLETE;
    c->be = backend_for(e, s->e->tool);

    int rv = pp_capture_dir(capdir, sizeof(capdir), role, phase, rank, e->id.replica_rank,
                            e->id.host, s->e->pid_dir ? e->id.pid : 0);
    int n = -1;
    if (rv == 0) {
        bool multi = phase && (s->last == INT64_MAX || s->last > s->e->first_step);
        if (multi) {
            n = snprintf(rel, sizeof(rel), "%s/%s/%s/step%lld", s->e->job, s->e->name, capdir,
                         (long long)step);
        } else {
            n = snprintf(rel, sizeof(rel), "%s/%s/%s", s->e->job, s->e->name, capdir);
        }
    }
    if (n < 0 || (size_t)n >= sizeof(rel) ||
        (size_t)snprintf(c->dir, sizeof(c->dir), "%s/%s", e->spool, rel) >= sizeof(c->dir)) {
        cap_fail(c, PP_CAP_FAILED, "capture folder name too long or invalid");
        return c;
    }
    c->rec.dir = strdup(rel);
    if (c->rec.role == NULL || c->rec.host == NULL || c->rec.tool == NULL || c->rec.dir == NULL ||
        (phase && c->rec.phase == NULL)) {
        cap_fail(c, PP_CAP_FAILED, "out of memory");
        return c;
    }
    if (e->hooks.mkdirs && (rv = e->hooks.mkdirs(c->dir, e->hooks.arg)) != 0) {
        char reason[PP_MAX_PATH + 64];
        snprintf(reason, sizeof(reason), "cannot create %s: %s", c->dir, profd_strerror(rv));
        cap_fail(c, PP_CAP_FAILED, reason);
    }
    return c;
}

/* End one capture (or one phase occurrence of it). */
static void cap_end(ce_t *e, ce_slot_t *s, ce_cap_t *c, pp_capture_status_t status,
                    const char *reason)
{
    if (c->span_open) {
        span_push(c, c->span_from, e->substep - 1);
        c->span_open = false;
    }
    cap_stop(e, s, c, e->substep);
    c->rec.last_step = e->step;
    if (status != PP_CAP_NONE && !c->ended) {
        cap_fail(c, status, reason);
    }
}

static void slot_emit(ce_t *e, ce_slot_t *s, const char *missed_reason)
{
    pp_result_t *res = calloc(1, sizeof(*res));
    if (res == NULL) {
        return;
    }
    pp_record_init(&pp_desc_result, res);
    res->window = s->id;
    size_t n = s->ncaps ? s->ncaps : 1;
    res->captures = calloc(n, sizeof(*res->captures));
    if (res->captures == NULL) {
        free(res);
        return;
    }
    if (s->ncaps == 0) {
        pp_capture_t *c = &res->captures[0];
        pp_record_init(&pp_desc_capture, c);
        /* a discrete window with no phase run: the first role it captures */
        int ri = s->e->roles_n ? ce_role_index(e, s->e->roles[0]) : 0;
        ri = ri < 0 ? 0 : ri;
        c->role = strdup(s->discrete ? e->id.roles[ri].name : "e2e");
        c->rank = s->discrete ? e->id.roles[ri].rank : e->id.rank;
        c->replica_rank = e->id.replica_rank;
        c->host = strdup(e->id.host);
        c->pid = e->id.pid;
        c->tool = strdup(s->e->tool ? s->e->tool : "");
        c->status = PP_CAP_MISSED;
        c->reason = strdup(missed_reason ? missed_reason : "no matching phase ran");
    } else {
        for (size_t i = 0; i < s->ncaps; i++) {
            res->captures[i] = s->caps[i].rec; /* moved */
            pp_record_init(&pp_desc_capture, &s->caps[i].rec);
        }
    }
    res->captures_n = n;
    free(s->caps);
    s->caps = NULL;
    s->ncaps = s->capcap = 0;
    s->cur = NULL;
    s->state = SLOT_DONE;
    if (e->hooks.emit) {
        e->hooks.emit(res, e->hooks.arg);
    } else {
        pp_record_free(&pp_desc_result, res);
        free(res);
    }
}

/* The window is over for this process. */
static void slot_finish(ce_t *e, ce_slot_t *s, pp_capture_status_t status, const char *reason)
{
    char why[160];
    for (size_t i = 0; i < s->ncaps; i++) {
        ce_cap_t *c = &s->caps[i];
        if (c->recording || s->cur == c || (!s->discrete && !c->ended)) {
            cap_end(e, s, c, status, reason);
        }
    }
    s->cur = NULL;
    if (s->discrete && s->ncaps == 0) {
        snprintf(why, sizeof(why), "no matching phase ran in steps %lld-%lld",
                 (long long)s->e->first_step, (long long)e->step);
        slot_emit(e, s, why);
    } else {
        slot_emit(e, s, reason);
    }
}

static void slot_missed(ce_t *e, ce_slot_t *s, const char *reason)
{
    s->state = SLOT_DONE;
    slot_emit(e, s, reason);
}

static void slot_free(ce_slot_t *s)
{
    for (size_t i = 0; i < s->ncaps; i++) {
        pp_record_free(&pp_desc_capture, &s->caps[i].rec);
    }
    free(s->caps);
    s->caps = NULL;
    s->ncaps = 0;
}

static bool phase_selected(const ce_t *e, const ce_slot_t *s, int ri, const char *phase)
{
    if (s->e->roles_n) { /* a process hosting several roles: those the window captures */
        size_t i;
        for (i = 0; i < s->e->roles_n && strcmp(s->e->roles[i], e->id.roles[ri].name) != 0; i++) {
        }
        if (i == s->e->roles_n) {
            return false;
        }
    }
    if (s->e->phases_n == 0) {
        return true;
    }
    for (size_t i = 0; i < s->e->phases_n; i++) {
        if (strcmp(s->e->phases[i], phase) == 0) {
            return true;
        }
    }
    return false;
}

/* ---- plan adoption ---- */

static void slot_retarget(ce_t *e, ce_slot_t *s, const pp_plan_entry_t *pe)
{
    s->e = pe;
    s->id = pe->window;
    s->discrete = pe->mode == PP_MODE_DISCRETE;
    s->last = pe->last_step == PP_NONE ? INT64_MAX : pe->last_step;
}

void ce_adopt(ce_t *e, const pp_plan_t *plan)
{
    char why[160];
    bool restarted = plan->instance && e->instance[0] && strcmp(plan->instance, e->instance) != 0;
    size_t n = plan->entries_n;
    ce_slot_t *slots = n ? calloc(n, sizeof(*slots)) : NULL;

    if (n && slots == NULL) {
        return; /* keep the old plan; the next one will be tried again */
    }
    if (plan->instance) {
        snprintf(e->instance, sizeof(e->instance), "%s", plan->instance);
    }
    for (size_t i = 0; i < n; i++) {
        const pp_plan_entry_t *pe = &plan->entries[i];
        ce_slot_t *old = NULL;
        for (size_t j = 0; !restarted && j < e->nslots; j++) {
            if (e->slots[j].e && e->slots[j].id == pe->window) {
                old = &e->slots[j];
                break;
            }
        }
        if (old) {
            slots[i] = *old;
            old->e = NULL; /* moved */
            slot_retarget(e, &slots[i], pe);
            continue;
        }
        slot_retarget(e, &slots[i], pe);
        slots[i].state = SLOT_ARMED;
    }

    /* windows that left the plan end now */
    for (size_t j = 0; j < e->nslots; j++) {
        ce_slot_t *s = &e->slots[j];
        if (s->e == NULL) {
            continue;
        }
        if (s->state == SLOT_ACTIVE) {
            snprintf(why, sizeof(why), "window cancelled at step %lld", (long long)e->step);
            slot_finish(e, s, PP_CAP_TRUNCATED, why);
        }
        slot_free(s);
    }
    free(e->slots);
    e->slots = slots;
    e->nslots = n;

    for (size_t i = 0; i < n; i++) {
        ce_slot_t *s = &slots[i];
        if (s->state == SLOT_ARMED && e->step >= s->e->first_step) {
            snprintf(why, sizeof(why), "plan arrived at step %lld, after start step %lld",
                     (long long)e->step, (long long)s->e->first_step);
            slot_missed(e, s, why);
        } else if (s->state == SLOT_ACTIVE && !e->in_step && e->step >= s->last) {
            slot_finish(e, s, PP_CAP_NONE, NULL); /* stopped: ends at the last step taken */
        }
    }
    summarize(e);
}

/* ---- the slow paths ---- */

void ce_step_begin_slow(ce_t *e, int64_t step)
{
    char why[160];
    mark(e, 1, step, NULL);
    for (size_t i = 0; i < e->nslots; i++) {
        ce_slot_t *s = &e->slots[i];
        if (s->state == SLOT_ARMED && step >= s->e->first_step) {
            if (step > s->e->first_step) {
                snprintf(why, sizeof(why), "start step %lld was never begun (went to %lld)",
                         (long long)s->e->first_step, (long long)step);
                slot_missed(e, s, why);
                continue;
            }
            s->state = SLOT_ACTIVE;
            if (!s->discrete) {
                ce_cap_t *c = cap_new(e, s, 0, NULL, step);
                if (c) {
                    cap_start(e, s, c, 0);
                }
            }
        } else if (s->state == SLOT_ACTIVE && step > s->last) {
            /* the last step's end was never marked: finish with what ran */
            e->step = step - 1;
            slot_finish(e, s, PP_CAP_NONE, NULL);
            e->step = step;
        }
    }
    summarize(e);
}

void ce_step_end_slow(ce_t *e, int64_t step)
{
    mark(e, 2, step, NULL);
    for (size_t i = 0; i < e->nslots; i++) {
        ce_slot_t *s = &e->slots[i];
        if (s->state != SLOT_ACTIVE) {
            continue;
        }
        if (s->cur) { /* a phase left open at the step's end ends with it */
            cap_end(e, s, s->cur, PP_CAP_NONE, NULL);
            s->cur = NULL;
        }
        if (step >= s->last) {
            slot_finish(e, s, PP_CAP_NONE, NULL);
        }
    }
    summarize(e);
}

static void occurrence_start(ce_t *e, ce_slot_t *s, ce_cap_t *c)
{
    profd_schedule_t sc = slot_schedule(s);
    bool native = c->be >= 0 && (e->backends[c->be].b->flags & PROFD_BACKEND_NATIVE_SCHEDULE);
    if (sc.active == 0 || native || is_record(ce_schedule_action(&sc, 0))) {
        cap_start(e, s, c, 0);
    }
}

void ce_phase_begin_slow(ce_t *e)
{
    mark(e, 3, e->step, e->phase);
    for (size_t i = 0; i < e->nslots; i++) {
        ce_slot_t *s = &e->slots[i];
        if (s->state != SLOT_ACTIVE || !s->discrete || !e->in_step ||
            !phase_selected(e, s, e->phase_role, e->phase)) {
            continue;
        }
        if (s->cur) { /* phases do not nest: the previous one ends here */
            cap_end(e, s, s->cur, PP_CAP_NONE, NULL);
            s->cur = NULL;
        }
        ce_cap_t *c = NULL;
        for (size_t j = 0; j < s->ncaps; j++) {
            if (s->caps[j].rec.first_step == e->step &&
                strcmp(s->caps[j].rec.phase, e->phase) == 0 &&
                strcmp(s->caps[j].rec.role, e->id.roles[e->phase_role].name) == 0) {
                c = &s->caps[j];
                break;
            }
        }
        if (c == NULL && (c = cap_new(e, s, e->phase_role, e->phase, e->step)) == NULL) {
            continue;
        }
        s->cur = c;
        occurrence_start(e, s, c);
    }
}

void ce_phase_end_slow(ce_t *e)
{
    mark(e, 4, e->step, e->phase);
    for (size_t i = 0; i < e->nslots; i++) {
        ce_slot_t *s = &e->slots[i];
        if (s->state == SLOT_ACTIVE && s->cur) {
            cap_end(e, s, s->cur, PP_CAP_NONE, NULL);
            s->cur = NULL;
        }
    }
}

void ce_substep_slow(ce_t *e)
{
    int64_t i = e->substep; /* the sub-step just completed */
    for (size_t k = 0; k < e->nslots; k++) {
        ce_slot_t *s = &e->slots[k];
        ce_cap_t *c = s->cur;
        if (s->state != SLOT_ACTIVE || c == NULL || c->ended) {
            continue;
        }
        profd_schedule_t sc = slot_schedule(s);
        if (sc.active == 0) {
            continue;
        }
        const profd_backend_t *b = c->be >= 0 ? e->backends[c->be].b : NULL;
        bool native = b && (b->flags & PROFD_BACKEND_NATIVE_SCHEDULE);
        ce_sched_action_t a = ce_schedule_action(&sc, i);
        if (is_record(a)) {
            if (!c->span_open) {
                c->span_open = true;
                c->span_from = i;
            }
            if (a == CE_SCHED_RECORD_AND_SAVE) {
                span_push(c, c->span_from, i);
                c->span_open = false;
            }
        }
        if (native) {
            if (b->substep && c->recording) {
                char reason[256] = "";
                profd_capture_t pc;
                fill_capture(e, s, c, e->step, i, &pc);
                int rv = b->substep(&pc, e->backends[c->be].user, reason, sizeof(reason));
                if (rv != 0) {
                    c->recording = false;
                    cap_fail(c, PP_CAP_FAILED, reason[0] ? reason : profd_strerror(rv));
                }
            }
            continue;
        }
        if (a == CE_SCHED_RECORD_AND_SAVE) {
            cap_stop(e, s, c, i + 1);
        }
        if (!c->ended && is_record(ce_schedule_action(&sc, i + 1))) {
            cap_start(e, s, c, i + 1);
        }
    }
}

void ce_fini(ce_t *e)
{
    char why[160];
    for (size_t i = 0; i < e->nslots; i++) {
        ce_slot_t *s = &e->slots[i];
        if (s->state == SLOT_ACTIVE && !e->in_step && s->last == INT64_MAX) {
            /* a window "until the job ends", and the job ended between steps */
            slot_finish(e, s, PP_CAP_NONE, NULL);
        } else if (s->state == SLOT_ACTIVE) {
            snprintf(why, sizeof(why), "worker closed during step %lld", (long long)e->step);
            slot_finish(e, s, PP_CAP_TRUNCATED, why);
        } else if (s->state == SLOT_ARMED) {
            snprintf(why, sizeof(why), "worker closed before step %lld",
                     (long long)s->e->first_step);
            slot_missed(e, s, why);
        }
        slot_free(s);
    }
    free(e->slots);
    e->slots = NULL;
    e->nslots = 0;
    summarize(e);
    free(e->marks);
    e->marks = NULL;
}
