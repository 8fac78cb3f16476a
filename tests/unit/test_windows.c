// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The window table, alone: membership, report checks, stop, the missed and
 * truncated rules, lost members and nodes, the manifest record and the
 * delivery estimate. No loop, no sockets, no clock, no files: the table
 * links the pure core only, times are parameters and what it asks of the
 * daemon is recorded by the hooks below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "latency.h"
#include "manifest.h"
#include "windows.h"

#define MS  1000LL
#define NOW (1000000 * MS) /* us */

/* ---- fixture: a job of five ranks and recording hooks ---- */

typedef struct gathered {
    int64_t window, client, owner;
    size_t cap;
} gathered_t;

typedef struct fixture {
    pd_log_t log;
    pd_registry_t reg;
    pd_windows_t ws;
    pd_rank_t *k[5]; /* actor 0, actor 1, rollout 2 (replica 0), rollout 3 (replica 1), critic 0 */
    int changed, dirty;
    gathered_t gathered[16];
    int ngathered;
    int64_t completed[8];
    int ncompleted;
} fixture_t;

static void on_changed(void *arg)
{
    ((fixture_t *)arg)->changed++;
}

static void on_dirty(void *arg)
{
    ((fixture_t *)arg)->dirty++;
}

static void on_gather(void *arg, pd_window_t *w, pd_member_t *m, size_t cap, int64_t owner)
{
    fixture_t *f = arg;
    assert_true(f->ngathered < 16);
    f->gathered[f->ngathered++] = (gathered_t){w->id, m->client, owner, cap};
}

static void on_complete(void *arg, pd_window_t *w)
{
    fixture_t *f = arg;
    assert_true(f->ncompleted < 8);
    f->completed[f->ncompleted++] = w->id;
}

static pd_rank_t *add_rank(fixture_t *f, const char *job, const char *role, int64_t rank,
                           int64_t replica, const char *host, int64_t pid)
{
    pd_rank_t *k;
    pp_hello_t h;
    pp_record_init(&pp_desc_hello, &h);
    h.job = (char *)job;
    h.role = (char *)role;
    h.rank = rank;
    h.replica_rank = replica;
    h.host = (char *)host;
    h.pid = pid;
    assert_int_equal(pd_registry_add(&f->reg, &h, "node1", 0, &k), 0);
    k->uid = 1000 + rank;
    /* at step 10, began 30 ms ago, 100 ms a step */
    k->step = 10;
    k->in_step = true;
    k->step_began_us = NOW - 30 * MS;
    k->step_us = 100 * MS;
    return k;
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    pd_log_init(&f->log, PD_LOG_ERROR - 1); /* quiet */
    pd_registry_init(&f->reg, 64);
    pd_windows_init(&f->ws, &f->log, 8);
    f->ws.hooks = (pd_windows_hooks_t){on_changed, on_dirty, on_gather, on_complete, f};
    f->k[0] = add_rank(f, "run", "actor", 0, PP_NONE, "h0", 100);
    f->k[1] = add_rank(f, "run", "actor", 1, PP_NONE, "h1", 101);
    f->k[2] = add_rank(f, "run", "rollout", 2, 0, "h2", 102);
    f->k[3] = add_rank(f, "run", "rollout", 3, 1, "h3", 103);
    f->k[4] = add_rank(f, "run", "critic", 0, PP_NONE, "h4", 104);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    pd_windows_fini(&f->ws);
    pd_registry_fini(&f->reg);
    free(f);
    return 0;
}

static pd_plan_params_t params(void)
{
    return (pd_plan_params_t){
        .now_us = NOW, .latency_us = 2 * MS, .margin_us = 100 * MS, .default_job = "run"};
}

/* A window over `steps` [first, last] for the selectors; its id. */
static int64_t create(fixture_t *f, int64_t first, int64_t last, pp_selector_t *sels, size_t n,
                      pp_mode_t mode)
{
    pp_window_spec_t spec;
    pd_plan_out_t out;
    pd_plan_params_t p = params();
    char err[256] = "";
    int64_t *ids;
    size_t nids;
    pp_record_init(&pp_desc_window_spec, &spec);
    spec.start = first;
    spec.end = last + 1;
    spec.selectors = sels;
    spec.selectors_n = n;
    spec.mode = mode;
    spec.tool = "sim";
    if (pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)) != 0) {
        fail_msg("plan: %s", err);
    }
    assert_int_equal(pd_windows_add(&f->ws, &f->reg, &spec, &out, "/save", NOW / MS, &ids, &nids),
                     0);
    assert_int_equal(nids, 1);
    int64_t id = ids[0];
    free(ids);
    return id;
}

static pp_selector_t role_sel(const char *role)
{
    pp_selector_t s;
    pp_record_init(&pp_desc_selector, &s);
    s.role = (char *)role;
    s.all_ranks = true;
    return s;
}

/* ---- membership ---- */

typedef struct member_case {
    const char *name;
    const char *role; /* NULL: every role */
    int64_t ranks[4];
    size_t nranks; /* 0 with all: every rank of the role */
    int64_t replicas[2];
    size_t nreplicas;
    int expect[5]; /* which of f->k are members */
} member_case_t;

static void test_windows_membership_by_selector(void **state)
{
    static const member_case_t cases[] = {
        {"every actor", "actor", {0}, 0, {0}, 0, {1, 1, 0, 0, 0}},
        {"actor rank 1", "actor", {1}, 1, {0}, 0, {0, 1, 0, 0, 0}},
        {"rollout replica 1", "rollout", {0}, 0, {1}, 1, {0, 0, 0, 1, 0}},
        {"critic rank 0, not actor rank 0", "critic", {0}, 1, {0}, 0, {0, 0, 0, 0, 1}},
        {"every role", NULL, {0}, 0, {0}, 0, {1, 1, 1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const member_case_t *c = &cases[i];
        fixture_t *f;
        setup((void **)&f);
        pp_selector_t s = role_sel(c->role);
        s.all_ranks = c->nranks == 0 && c->nreplicas == 0;
        s.ranks = (int64_t *)c->ranks;
        s.ranks_n = c->nranks;
        s.replica_ranks = (int64_t *)c->replicas;
        s.replica_ranks_n = c->nreplicas;
        pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &s, 1, PP_MODE_E2E));
        assert_non_null(w);
        for (int r = 0; r < 5; r++) {
            bool member = pd_windows_member(w, f->k[r]->id) != NULL;
            if (member != (bool)c->expect[r]) {
                fail_msg("%s: rank %d member %d, want %d", c->name, r, member, c->expect[r]);
            }
        }
        assert_int_equal(w->state, PP_WS_PENDING);
        assert_string_equal(w->name, "w1-steps20-21");
        assert_string_equal(w->dir, "/save/run/w1-steps20-21");
        assert_int_equal(f->changed, 1);
        teardown((void **)&f);
    }
}

static void test_windows_plan_for_members_only(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("actor");
    static char *phases[] = {"update_actor"};
    s.phases = phases;
    s.phases_n = 1;
    int64_t id = create(f, 20, 20, &s, 1, PP_MODE_DISCRETE);
    pp_plan_t plan;
    pp_record_init(&pp_desc_plan, &plan);
    assert_int_equal(pd_windows_plan_for(&f->ws, f->k[0], &plan), 0);
    assert_int_equal(plan.entries_n, 1);
    assert_int_equal(plan.entries[0].window, id);
    assert_string_equal(plan.entries[0].name, "w1-step20");
    assert_int_equal(plan.entries[0].first_step, 20);
    assert_int_equal(plan.entries[0].last_step, 20);
    assert_string_equal(plan.entries[0].tool, "sim");
    assert_int_equal(plan.entries[0].mode, PP_MODE_DISCRETE);
    assert_int_equal(plan.entries[0].phases_n, 1);
    assert_string_equal(plan.entries[0].phases[0], "update_actor");
    free(plan.entries);
    assert_int_equal(pd_windows_plan_for(&f->ws, f->k[2], &plan), 0);
    assert_int_equal(plan.entries_n, 0);
}

static void test_windows_late_joiner(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("actor");
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &s, 1, PP_MODE_E2E));
    int changed = f->changed;
    pd_rank_t *late = add_rank(f, "run", "actor", 7, PP_NONE, "h7", 107);
    pd_rank_t *other = add_rank(f, "other-job", "actor", 8, PP_NONE, "h8", 108);
    pd_windows_on_register(&f->ws, late);
    pd_windows_on_register(&f->ws, other);
    assert_non_null(pd_windows_member(w, late->id));
    assert_null(pd_windows_member(w, other->id));
    assert_int_equal(w->nmembers, 3);
    assert_int_equal(f->changed, changed + 1);
    /* a node daemon's coordinator decides who joins */
    f->ws.follower = true;
    pd_rank_t *later = add_rank(f, "run", "actor", 9, PP_NONE, "h9", 109);
    pd_windows_on_register(&f->ws, later);
    assert_null(pd_windows_member(w, later->id));
    assert_int_equal(f->changed, changed + 1);
}

static void test_windows_missed_warning_for_late_ranks(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("actor");
    f->k[1]->step = 25; /* already past the window's first step */
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &s, 1, PP_MODE_E2E));
    assert_int_equal(w->nwarnings, 1);
    assert_string_equal(w->warnings[0],
                        "1 selected rank(s) already began step 20 or later: they will report "
                        "missed");
    /* the boundary (guards: > for >=): a rank in the window's first step
     * began it already and is late; one a step before is not (each window
     * after the last: the same ranks at the same steps are refused) */
    f->k[0]->step = 30;
    f->k[1]->step = 29;
    w = pd_windows_get(&f->ws, create(f, 30, 31, &s, 1, PP_MODE_E2E));
    assert_int_equal(w->nwarnings, 1);
    assert_string_equal(w->warnings[0],
                        "1 selected rank(s) already began step 30 or later: they will report "
                        "missed");
    f->k[0]->step = 39;
    w = pd_windows_get(&f->ws, create(f, 40, 41, &s, 1, PP_MODE_E2E));
    assert_int_equal(w->nwarnings, 0);
}

/* Issue 31: a second and third window on the same ranks and steps were
 * accepted, then failed "Profiler is already enabled on this thread". */
static void test_windows_overlap_refused_or_queued(void **state)
{
    fixture_t *f = *state;
    pp_selector_t actor = role_sel("actor"), rollout = role_sel("rollout");
    pp_window_spec_t spec;
    pd_plan_out_t out;
    pd_plan_params_t p = params();
    char err[256] = "";
    int64_t first = create(f, 20, 21, &actor, 1, PP_MODE_E2E);
    pp_record_init(&pp_desc_window_spec, &spec);
    spec.start = 21;
    spec.end = 23;
    spec.selectors = &actor;
    spec.selectors_n = 1;
    assert_int_equal(pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)),
                     PROFD_ESTATE);
    assert_string_equal(err, "overlaps window 1 (w1-steps20-21, steps 20-21) on 2 of its rank(s): "
                             "stop it (profctl stop 1) or pass --queue to begin after it");
    assert_int_equal(out.n_segments, 0);
    /* the steps right after it, or other ranks at the same steps: accepted */
    spec.start = 22;
    assert_int_equal(pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)), 0);
    pd_plan_out_free(&out);
    create(f, 20, 21, &rollout, 1, PP_MODE_E2E);
    /* --queue: after it, the same length */
    spec.start = 21;
    spec.queue = true;
    assert_int_equal(pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)), 0);
    assert_int_equal(out.n_segments, 1);
    assert_int_equal(out.segments[0].first, 22);
    assert_int_equal(out.segments[0].last, 23);
    assert_int_equal(out.n_warnings, 1);
    assert_string_equal(out.warnings[0], "queued: begins at step 22 instead of 21");
    pd_plan_out_free(&out);
    /* a stopped window is in nobody's way */
    assert_int_equal(pd_windows_stop(&f->ws, &f->reg, first, &p, NOW / MS, err, sizeof(err)), 0);
    spec.queue = false;
    assert_int_equal(pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)), 0);
    assert_int_equal(out.segments[0].first, 21);
    pd_plan_out_free(&out);
    /* an open-ended window cannot be queued after */
    spec.start = 50;
    spec.end = -1;
    spec.selectors = &rollout;
    int64_t *ids;
    size_t nids;
    assert_int_equal(pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)), 0);
    assert_int_equal(pd_windows_add(&f->ws, &f->reg, &spec, &out, "/save", NOW / MS, &ids, &nids),
                     0);
    free(ids);
    spec.start = 60;
    spec.end = 61;
    spec.queue = true;
    assert_int_equal(pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)),
                     PROFD_ESTATE);
    assert_string_equal(err, "overlaps window 3 (w3-from50, steps 50-) on 2 of its rank(s): "
                             "stop it (profctl stop 3); an open-ended window cannot be queued "
                             "after");
}

/* Issue 31: a request without a job took a job whose ranks were gone. */
static void test_windows_dead_job_never_chosen(void **state)
{
    fixture_t *f = *state;
    pp_window_spec_t spec;
    pd_plan_out_t out;
    pd_plan_params_t p = params();
    char err[256] = "";
    p.default_job = "default";
    pd_rank_t *old = add_rank(f, "old", "actor", 0, PP_NONE, "h9", 900);
    old->state = PD_RANK_LOST;
    pp_record_init(&pp_desc_window_spec, &spec);
    spec.next = 2;
    assert_int_equal(pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)), 0);
    assert_string_equal(out.job, "run");
    assert_int_equal(out.n_members, 5);
    pd_plan_out_free(&out);
    /* the job's ranks gone too: the default job, not the dead one */
    for (int i = 0; i < 5; i++) {
        f->k[i]->state = PD_RANK_LOST;
    }
    assert_int_equal(pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)), 0);
    assert_string_equal(out.job, "default");
    assert_int_equal(out.n_members, 0);
    pd_plan_out_free(&out);
}

static void test_windows_limit_of_unfinished(void **state)
{
    fixture_t *f = *state;
    pp_window_spec_t spec;
    pd_plan_out_t out;
    pd_plan_params_t p = params();
    char err[256];
    int64_t steps[9] = {11, 12, 13, 14, 15, 16, 17, 18, 19};
    pp_record_init(&pp_desc_window_spec, &spec);
    spec.steps = steps;
    spec.steps_n = 9; /* one window a step: 9 > the limit of 8 */
    assert_int_equal(pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)),
                     PROFD_ELIMIT);
    assert_string_equal(err, "9 window(s) would exceed the limit of 8 unfinished windows");
    assert_int_equal(f->ws.count, 0);
}

/* ---- reports ---- */

typedef struct report_case {
    const char *name;
    pp_capture_status_t status;
    const char *role, *phase, *dir, *reason;
    pp_capture_status_t want;
    const char *want_reason;
    bool want_dir; /* kept, and handed to the gather hook */
} report_case_t;

static void report_one(fixture_t *f, pd_window_t *w, const report_case_t *c)
{
    char err[256];
    pp_result_t res;
    pp_record_init(&pp_desc_result, &res);
    res.window = w->id;
    res.captures = calloc(1, sizeof(*res.captures));
    res.captures_n = 1;
    pp_capture_t *cap = &res.captures[0];
    pp_record_init(&pp_desc_capture, cap);
    cap->status = c->status;
    cap->role = strdup(c->role);
    cap->phase = c->phase ? strdup(c->phase) : NULL;
    cap->dir = c->dir ? strdup(c->dir) : NULL;
    cap->reason = c->reason ? strdup(c->reason) : NULL;
    cap->host = strdup("forged-host");
    cap->rank = 77;
    cap->first_step = 20;
    assert_int_equal(pd_windows_on_result(&f->ws, f->k[0], &res, err, sizeof(err)), 0);
    pp_record_free(&pp_desc_result, &res);
}

static void test_windows_report_checks(void **state)
{
    static const report_case_t cases[] = {
        {"complete e2e", PP_CAP_COMPLETE, "e2e", NULL, "run/w1-steps20-21/e2e/rank0-h0", NULL,
         PP_CAP_COMPLETE, NULL, true},
        {"complete discrete, one step", PP_CAP_COMPLETE, "actor", "update_actor",
         "run/w1-steps20-21/actor.update_actor/rank0-h0/step20", NULL, PP_CAP_COMPLETE, NULL, true},
        {"truncated keeps its files", PP_CAP_TRUNCATED, "e2e", NULL,
         "run/w1-steps20-21/e2e/rank0-h0", "the job ended at step 20", PP_CAP_TRUNCATED,
         "the job ended at step 20", true},
        {"missed has no folder", PP_CAP_MISSED, "e2e", NULL, "run/w1-steps20-21/e2e/rank0-h0",
         "began step 25", PP_CAP_MISSED, "began step 25", false},
        {"unknown status", PP_CAP_NONE, "e2e", NULL, "run/w1-steps20-21/e2e/rank0-h0", NULL,
         PP_CAP_FAILED, "unknown capture status in the report", false},
        {"another role", PP_CAP_COMPLETE, "critic", "update_critic",
         "run/w1-steps20-21/critic.update_critic/rank0-h0", NULL, PP_CAP_FAILED,
         "capture role or phase does not match the rank", false},
        {"a phase that is no name", PP_CAP_COMPLETE, "actor", "up/date", NULL, NULL, PP_CAP_FAILED,
         "capture role or phase does not match the rank", false},
        {"another rank's folder", PP_CAP_COMPLETE, "e2e", NULL, "run/w1-steps20-21/e2e/rank1-h1",
         NULL, PP_CAP_FAILED,
         "capture folder 'run/w1-steps20-21/e2e/rank1-h1' is not where this capture belongs",
         false},
        {"out of the spool", PP_CAP_COMPLETE, "e2e", NULL, "../../etc", NULL, PP_CAP_FAILED,
         "capture folder '../../etc' is not where this capture belongs", false},
        {"a worker's reason is quoted", PP_CAP_FAILED, "e2e", NULL, NULL, "bad\x01\\",
         PP_CAP_FAILED, "bad\\x01\\x5c", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const report_case_t *c = &cases[i];
        fixture_t *f;
        setup((void **)&f);
        pp_selector_t s = role_sel("actor");
        pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &s, 1, PP_MODE_E2E));
        int dirty = f->dirty;
        report_one(f, w, c);
        pd_member_t *m = pd_windows_member(w, f->k[0]->id);
        assert_int_equal(m->state, PP_MS_REPORTED);
        assert_int_equal(m->ncaps, 1);
        const pp_capture_t *cap = &m->caps[0];
        if (cap->status != c->want) {
            fail_msg("%s: status %s, want %s", c->name, pp_status_name(cap->status),
                     pp_status_name(c->want));
        }
        if (c->want_reason ? (cap->reason == NULL || strcmp(cap->reason, c->want_reason) != 0)
                           : cap->reason != NULL) {
            fail_msg("%s: reason '%s', want '%s'", c->name, cap->reason ? cap->reason : "(null)",
                     c->want_reason ? c->want_reason : "(null)");
        }
        assert_int_equal(cap->dir != NULL, c->want_dir);
        assert_int_equal(f->ngathered, c->want_dir ? 1 : 0);
        if (c->want_dir) {
            assert_int_equal(f->gathered[0].window, w->id);
            assert_int_equal(f->gathered[0].client, f->k[0]->id);
            assert_int_equal(f->gathered[0].owner, 1000); /* the rank's uid */
        }
        /* who captured is the daemon's knowledge, not the report's */
        assert_int_equal(cap->rank, 0);
        assert_string_equal(cap->host, "h0");
        assert_int_equal(cap->pid, 100);
        assert_string_equal(cap->tool, "sim");
        assert_int_equal(f->dirty, dirty + 1);
        assert_int_equal(w->state, PP_WS_ACTIVE); /* actor 1 has not reported */
        teardown((void **)&f);
    }
}

static void test_windows_report_refusals(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("actor");
    int64_t id = create(f, 20, 21, &s, 1, PP_MODE_E2E);
    pd_window_t *w;
    pd_member_t *m = NULL;
    pp_capture_t *caps = NULL;
    size_t n = 0;
    char err[256];
    assert_int_equal(
        pd_windows_report(&f->ws, f->k[0], 99, &caps, &n, false, &w, &m, err, sizeof(err)),
        PROFD_ENOENT);
    assert_string_equal(err, "no window 99");
    assert_int_equal(
        pd_windows_report(&f->ws, f->k[2], id, &caps, &n, false, &w, &m, err, sizeof(err)),
        PROFD_ESTATE);
    snprintf(err + 128, 128, "client %lld is not a member of window w1-steps20-21",
             (long long)f->k[2]->id);
    assert_string_equal(err, err + 128);
    assert_null(m); /* out-parameters only on success */
    assert_int_equal(
        pd_windows_report(&f->ws, f->k[0], id, &caps, &n, false, &w, &m, err, sizeof(err)), 0);
    assert_int_equal(
        pd_windows_report(&f->ws, f->k[0], id, &caps, &n, false, &w, &m, err, sizeof(err)),
        PROFD_ESTATE);
    assert_string_equal(err, "window w1-steps20-21 already has the captures of rank 0");
}

/* Every member reported or lost, nothing pending: complete, once. */
static void test_windows_complete_when_nothing_left(void **state)
{
    fixture_t *f = *state;
    static const report_case_t ok = {
        "e2e", PP_CAP_COMPLETE, "e2e", NULL, "run/w1-steps20-21/e2e/rank0-h0",
        NULL,  PP_CAP_COMPLETE, NULL,  true};
    pp_selector_t s = role_sel("actor");
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &s, 1, PP_MODE_E2E));
    w->pending = 1; /* the gathering the hook queued */
    report_one(f, w, &ok);
    assert_int_equal(f->ncompleted, 0);
    f->k[1]->step = 21;
    pd_windows_on_lost(&f->ws, f->k[1], "closed its connection");
    pd_member_t *m = pd_windows_member(w, f->k[1]->id);
    assert_int_equal(m->state, PP_MS_LOST);
    assert_int_equal(m->caps[0].status, PP_CAP_FAILED);
    assert_string_equal(m->caps[0].reason, "closed its connection (last step begun: 21)");
    assert_string_equal(m->caps[0].role, "actor");
    assert_int_equal(w->state, PP_WS_GATHERING);
    assert_int_equal(f->ncompleted, 0); /* the gathering is still pending */
    w->pending = 0;
    pd_windows_maybe_finish(&f->ws, w);
    assert_int_equal(f->ncompleted, 1);
    assert_int_equal(f->completed[0], w->id);
    pp_window_t info;
    pd_windows_info(w, true, &info);
    assert_int_equal(info.selected, 2);
    assert_int_equal(info.reported, 2);
    assert_int_equal(info.complete, 1);
    assert_int_equal(info.failed, 1);
    assert_int_equal(info.state, PP_WS_GATHERING);
    assert_int_equal(info.ranks_n, 2);
    assert_int_equal(info.ranks[1].state, PP_MS_LOST);
    pd_windows_info_free(&info);
}

static void test_windows_lost_before_first_step(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("critic");
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &s, 1, PP_MODE_E2E));
    f->k[4]->step = PP_NONE;
    pd_windows_on_lost(&f->ws, f->k[4], "exited without reporting its captures");
    assert_string_equal(w->members[0].caps[0].reason,
                        "exited without reporting its captures (before its first step)");
    assert_int_equal(f->ncompleted, 1); /* nothing to gather: done at once */
}

/* ---- processes hosting several roles ---- */

/* A rank with roles beyond its primary one (each "role:rank"). */
static pd_rank_t *add_multi(fixture_t *f, const char *role, int64_t rank, const char *host,
                            int64_t pid, const char *const *more, size_t n)
{
    pd_rank_t *k;
    pp_hello_t h;
    pp_role_rank_t roles[4];
    char names[4][PP_MAX_NAME + 1];
    pp_record_init(&pp_desc_hello, &h);
    for (size_t i = 0; i < n; i++) {
        const char *colon = strchr(more[i], ':');
        snprintf(names[i], sizeof(names[i]), "%.*s", (int)(colon - more[i]), more[i]);
        roles[i] = (pp_role_rank_t){names[i], strtoll(colon + 1, NULL, 10)};
    }
    h.job = "run";
    h.role = (char *)role;
    h.rank = rank;
    h.replica_rank = PP_NONE;
    h.host = (char *)host;
    h.pid = pid;
    h.roles = roles;
    h.roles_n = n;
    assert_int_equal(pd_registry_add(&f->reg, &h, "node1", 0, &k), 0);
    k->uid = 2000;
    k->step = 10;
    k->step_began_us = NOW - 30 * MS;
    k->step_us = 100 * MS;
    return k;
}

/* One capture reported by rank k; the capture as the member holds it. */
static const pp_capture_t *report_by(fixture_t *f, pd_window_t *w, pd_rank_t *k, const char *role,
                                     const char *phase, const char *dir)
{
    char err[256];
    pp_result_t res;
    pp_record_init(&pp_desc_result, &res);
    res.window = w->id;
    res.captures = calloc(1, sizeof(*res.captures));
    res.captures_n = 1;
    pp_capture_t *cap = &res.captures[0];
    pp_record_init(&pp_desc_capture, cap);
    cap->status = PP_CAP_COMPLETE;
    cap->role = strdup(role);
    cap->phase = phase ? strdup(phase) : NULL;
    cap->dir = strdup(dir);
    cap->first_step = 20;
    assert_int_equal(pd_windows_on_result(&f->ws, k, &res, err, sizeof(err)), 0);
    pp_record_free(&pp_desc_result, &res);
    pd_member_t *m = pd_windows_member(w, k->id);
    return &m->caps[m->ncaps - 1];
}

/* verl on one host "hv": a hybrid process (actor, rollout and ref, its
 * worker group's rank 0), the critic's own worker group rank 0 and the
 * hybrid rank 1. End to end: one capture per process; the critic process
 * has the hybrid rank 0's rank and host, and joined after it: -pid<PID>. */
static void test_windows_multi_role_e2e_folders(void **state)
{
    fixture_t *f = *state;
    static const char *const h0[] = {"rollout:0", "ref:0"};
    static const char *const h1[] = {"rollout:1", "ref:1"};
    pd_rank_t *hyb0 = add_multi(f, "actor", 0, "hv", 300, h0, 2);
    pd_rank_t *crit0 = add_multi(f, "critic", 0, "hv", 301, NULL, 0);
    pd_rank_t *hyb1 = add_multi(f, "actor", 1, "hv", 302, h1, 2);
    pp_selector_t s[2] = {role_sel("rollout"), role_sel("critic")};
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, s, 2, PP_MODE_E2E));
    /* f->k[2], f->k[3] (rollout), f->k[4] (critic on h4), then the three */
    assert_int_equal(w->nmembers, 6);
    pd_member_t *m0 = pd_windows_member(w, hyb0->id), *mc = pd_windows_member(w, crit0->id),
                *m1 = pd_windows_member(w, hyb1->id);
    assert_false(m0->pid_dir);
    assert_true(mc->pid_dir);
    assert_false(m1->pid_dir);
    assert_int_equal(m0->nroles, 3);
    assert_int_equal(m0->selected, 2); /* rollout only */

    pp_plan_t plan;
    pp_record_init(&pp_desc_plan, &plan);
    assert_int_equal(pd_windows_plan_for(&f->ws, hyb0, &plan), 0);
    assert_int_equal(plan.entries_n, 1);
    assert_int_equal(plan.entries[0].roles_n, 1);
    assert_string_equal(plan.entries[0].roles[0], "rollout");
    assert_false(plan.entries[0].pid_dir);
    free(plan.entries);
    assert_int_equal(pd_windows_plan_for(&f->ws, crit0, &plan), 0);
    assert_int_equal(plan.entries[0].roles_n, 0); /* one role */
    assert_true(plan.entries[0].pid_dir);
    free(plan.entries);

    /* the critic's folder is its own; the plain name is the hybrid's */
    const pp_capture_t *c = report_by(f, w, crit0, "e2e", NULL, "run/w1-steps20-21/e2e/rank0-hv");
    assert_int_equal(c->status, PP_CAP_FAILED);
    mc = pd_windows_member(w, crit0->id); /* try again: the report as if never made */
    pp_record_free(&pp_desc_capture, &mc->caps[0]);
    free(mc->caps);
    mc->caps = NULL;
    mc->ncaps = 0;
    mc->state = PP_MS_EXPECTED;
    c = report_by(f, w, crit0, "e2e", NULL, "run/w1-steps20-21/e2e/rank0-hv-pid301");
    assert_int_equal(c->status, PP_CAP_COMPLETE);
    assert_int_equal(c->roles_n, 1);
    assert_string_equal(c->roles[0], "critic");
    c = report_by(f, w, hyb0, "e2e", NULL, "run/w1-steps20-21/e2e/rank0-hv");
    assert_int_equal(c->status, PP_CAP_COMPLETE);
    assert_int_equal(c->rank, 0);
    /* the roles an e2e capture covers: every role of the process */
    assert_int_equal(c->roles_n, 3);
    assert_string_equal(c->roles[0], "actor");
    assert_string_equal(c->roles[1], "rollout");
    assert_string_equal(c->roles[2], "ref");
}

/* Discrete: one capture per role phase, named with the role's own rank. */
static void test_windows_multi_role_discrete_reports(void **state)
{
    typedef struct dcase {
        const char *name, *role, *phase, *dir;
        pp_capture_status_t want;
        int64_t want_rank;
    } dcase_t;
    static const dcase_t cases[] = {
        {"a selected role's phase", "rollout", "generate",
         "run/w1-step20/rollout.generate/rank0-hv", PP_CAP_COMPLETE, 0},
        {"the role's own rank names the folder", "critic", "update_critic",
         "run/w1-step20/critic.update_critic/rank4-hv", PP_CAP_COMPLETE, 4},
        {"the global rank does not", "critic", "update_critic",
         "run/w1-step20/critic.update_critic/rank0-hv", PP_CAP_FAILED, 4},
        {"a role the process does not host", "reward", "compute_rm_score",
         "run/w1-step20/reward.compute_rm_score/rank0-hv", PP_CAP_FAILED, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const dcase_t *d = &cases[i];
        fixture_t *f;
        setup((void **)&f);
        static const char *const roles[] = {"rollout:0", "critic:4"};
        pd_rank_t *hyb = add_multi(f, "actor", 0, "hv", 300, roles, 2);
        pp_selector_t s = role_sel("rollout");
        pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 20, &s, 1, PP_MODE_DISCRETE));
        const pp_capture_t *c = report_by(f, w, hyb, d->role, d->phase, d->dir);
        if (c->status != d->want || c->rank != d->want_rank) {
            fail_msg("%s: status %d rank %lld, want %d %lld (%s)", d->name, c->status,
                     (long long)c->rank, d->want, (long long)d->want_rank,
                     c->reason ? c->reason : "");
        }
        teardown((void **)&f);
    }
}

/* A process that adds a role registers again: it joins the windows that
 * select the new role, and those it is in capture that role too. */
static void test_windows_added_role_joins(void **state)
{
    fixture_t *f = *state;
    static const char *const one[] = {"rollout:0"};
    static const char *const two[] = {"rollout:0", "critic:0"};
    pd_rank_t *hyb = add_multi(f, "actor", 0, "h4", 300, one, 1);
    pp_selector_t crit = role_sel("critic");
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &crit, 1, PP_MODE_DISCRETE));
    pp_selector_t both[2] = {role_sel("rollout"), role_sel("critic")};
    pd_window_t *w2 = pd_windows_get(&f->ws, create(f, 22, 23, both, 2, PP_MODE_DISCRETE));
    assert_null(pd_windows_member(w, hyb->id));
    assert_int_equal(pd_windows_member(w2, hyb->id)->selected, 2);
    int changed = f->changed;
    assert_ptr_equal(add_multi(f, "actor", 0, "h4", 300, two, 2), hyb);
    pd_windows_on_register(&f->ws, hyb);
    pd_member_t *m = pd_windows_member(w, hyb->id);
    assert_non_null(m);
    assert_int_equal(m->selected, 4);
    /* f->k[4] is the critic group's rank 0 on h4, a member before it */
    assert_true(m->pid_dir);
    assert_int_equal(pd_windows_member(w2, hyb->id)->selected, 6);
    assert_int_equal(f->changed, changed + 1);
    /* the same hello again changes nothing */
    pd_windows_on_register(&f->ws, hyb);
    assert_int_equal(f->changed, changed + 1);
}

/* ---- stop ---- */

static void test_windows_stop_rules(void **state)
{
    fixture_t *f = *state;
    pd_plan_params_t p = params();
    char err[256];
    pp_selector_t s = role_sel("actor");
    /* not started: every member is before step 20 -> cancelled */
    int64_t a = create(f, 20, 29, &s, 1, PP_MODE_E2E);
    int changed = f->changed;
    assert_int_equal(pd_windows_stop(&f->ws, &f->reg, a, &p, 7000, err, sizeof(err)), 0);
    pd_window_t *wa = pd_windows_get(&f->ws, a);
    assert_int_equal(wa->state, PP_WS_CANCELLED);
    assert_string_equal(wa->reason, "cancelled before step 20");
    assert_int_equal(wa->done_ms, 7000);
    assert_int_equal(f->changed, changed + 1);
    assert_int_equal(pd_windows_stop(&f->ws, &f->reg, a, &p, 7000, err, sizeof(err)), PROFD_ESTATE);
    assert_string_equal(err, "window w1-steps20-29 is already cancelled");
    /* running from step 5, open-ended: stops at the step every member can
     * still reach (step 10, 30 ms in, 100 ms a step, 102 ms ahead: 11) */
    int64_t b = create(f, 5, 5, &s, 1, PP_MODE_E2E);
    pd_window_t *wb = pd_windows_get(&f->ws, b);
    wb->last = PP_NONE;
    assert_int_equal(pd_windows_stop(&f->ws, &f->reg, b, &p, 7000, err, sizeof(err)), 0);
    assert_int_equal(wb->state, PP_WS_PENDING);
    assert_int_equal(wb->last, 11);
    assert_int_equal(pd_windows_stop(&f->ws, &f->reg, 42, &p, 7000, err, sizeof(err)),
                     PROFD_ENOENT);
    assert_string_equal(err, "no window 42");
}

/* ---- coordinator: nodes and restarts ---- */

static void test_windows_node_gone_and_rebind(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("rollout");
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &s, 1, PP_MODE_E2E));
    /* rollout 2 is a remote rank of node2; rollout 3 a local one */
    w->members[0].node_client = 5;
    snprintf(w->members[0].node, sizeof(w->members[0].node), "node2");
    pd_windows_node_gone(&f->ws, "node2", "lost with node node2 (restarted)");
    assert_int_equal(w->members[0].state, PP_MS_LOST);
    assert_string_equal(w->members[0].caps[0].reason, "lost with node node2 (restarted)");
    assert_int_equal(w->members[1].state, PP_MS_EXPECTED);
    /* a member kept over a restart (client 0) is bound to the rank that is it */
    w->members[1].client = 0;
    pd_rank_t *back = add_rank(f, "run", "rollout", 3, 1, "h3", 103);
    pd_windows_rebind(&f->ws, back);
    assert_int_equal(w->members[1].client, back->id);
}

/* A job whose ranks have all gone: its windows with nobody to wait for
 * expire with the reason, the others finish as their members are lost;
 * a follower (a node daemon) leaves its coordinator's windows alone. */
static void test_windows_job_gone(void **state)
{
    fixture_t *f = *state;
    pp_selector_t reward = role_sel("reward");
    pp_selector_t actor = role_sel("actor");
    pd_window_t *empty = pd_windows_get(&f->ws, create(f, 20, 21, &reward, 1, PP_MODE_E2E));
    pd_window_t *full = pd_windows_get(&f->ws, create(f, 20, 21, &actor, 1, PP_MODE_E2E));
    assert_int_equal(empty->nmembers, 0);
    assert_int_equal(full->nmembers, 2);
    int changed = f->changed;
    pd_windows_job_gone(&f->ws, "other", NOW / MS);
    assert_int_equal(empty->state, PP_WS_PENDING);
    pd_windows_on_lost(&f->ws, f->k[0], "left");
    pd_windows_on_lost(&f->ws, f->k[1], "left");
    pd_windows_job_gone(&f->ws, "run", NOW / MS + 5);
    assert_int_equal(empty->state, PP_WS_CANCELLED);
    assert_string_equal(empty->reason, "expired: job run has no registered rank left");
    assert_int_equal(empty->done_ms, NOW / MS + 5);
    assert_int_equal(full->state, PP_WS_GATHERING);
    assert_true(f->changed > changed);
    f->ws.follower = true;
    pd_window_t *mirror = pd_windows_get(&f->ws, create(f, 30, 31, &reward, 1, PP_MODE_E2E));
    pd_windows_job_gone(&f->ws, "run", NOW / MS + 6);
    assert_int_equal(mirror->state, PP_WS_PENDING);
}

/* Coordinator: a node that came back as a new daemon. Members whose capture
 * has not begun wait for their process to register through it again (and
 * fail when it does not in time); the others fail at once. */
static void test_windows_node_restarted(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("actor");
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &s, 1, PP_MODE_E2E));
    for (int i = 0; i < 2; i++) { /* both actors are remote ranks of node2 */
        w->members[i].node_client = 10 + i;
        snprintf(w->members[i].node, sizeof(w->members[i].node), "node2");
        f->k[i]->node_client = 10 + i;
        snprintf(f->k[i]->node, sizeof(f->k[i]->node), "node2");
    }
    f->k[1]->step = 20; /* actor 1 began the window */
    pd_windows_node_restarted(&f->ws, &f->reg, "node2", NOW / MS + 1000);
    pd_windows_on_lost(&f->ws, f->k[0], "lost with node node2 (restarted)");
    pd_windows_on_lost(&f->ws, f->k[1], "lost with node node2 (restarted)");
    pd_windows_node_gone(&f->ws, "node2", "lost with node node2 (restarted)");
    assert_int_equal(w->members[0].state, PP_MS_EXPECTED);
    assert_int_equal(w->members[1].state, PP_MS_LOST);
    /* the same process through the new node daemon: bound again */
    pp_hello_t h;
    pd_rank_t *k;
    pp_record_init(&pp_desc_hello, &h);
    h.job = "run";
    h.role = "actor";
    h.rank = 0;
    h.host = "h0";
    h.pid = 100;
    pd_registry_remove(&f->reg, f->k[0]->id);
    assert_int_equal(pd_registry_add(&f->reg, &h, "node2", 0, &k), 0);
    k->node_client = 77;
    int changed = f->changed;
    pd_windows_on_register(&f->ws, k);
    assert_int_equal(w->members[0].client, k->id);
    assert_int_equal(w->members[0].node_client, 77);
    assert_int_equal(w->members[0].rebind_until_ms, 0);
    assert_true(f->changed > changed); /* its plan changed */
    /* one that does not come back in time fails */
    pd_window_t *w2 = pd_windows_get(&f->ws, create(f, 30, 31, &s, 1, PP_MODE_E2E));
    w2->members[0].node_client = 77;
    snprintf(w2->members[0].node, sizeof(w2->members[0].node), "node2");
    pd_windows_node_restarted(&f->ws, &f->reg, "node2", NOW / MS + 2000);
    pd_windows_rebind_expire(&f->ws, NOW / MS + 1999);
    assert_int_equal(w2->members[0].state, PP_MS_EXPECTED);
    /* a stall of the daemon itself (5 s) moves the deadline as far */
    pd_windows_credit(&f->ws, 5000);
    assert_int_equal(w2->members[0].rebind_until_ms, NOW / MS + 7000);
    pd_windows_rebind_expire(&f->ws, NOW / MS + 6999);
    assert_int_equal(w2->members[0].state, PP_MS_EXPECTED);
    pd_windows_rebind_expire(&f->ws, NOW / MS + 7000);
    assert_int_equal(w2->members[0].state, PP_MS_LOST);
    assert_string_equal(w2->members[0].caps[0].reason,
                        "lost with node node2 (restarted): its worker did not register again");
}

static void test_windows_trim_keeps_the_recent(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("actor");
    for (int i = 0; i < 4; i++) {
        pd_window_t *w = pd_windows_get(&f->ws, create(f, 20 + i, 20 + i, &s, 1, PP_MODE_E2E));
        w->state = i < 3 ? PP_WS_DONE : PP_WS_ACTIVE;
    }
    pd_windows_trim(&f->ws, 1);
    assert_int_equal(f->ws.count, 2);
    assert_null(pd_windows_get(&f->ws, 1));
    assert_null(pd_windows_get(&f->ws, 2));
    assert_non_null(pd_windows_get(&f->ws, 3));
    assert_non_null(pd_windows_get(&f->ws, 4)); /* running: never trimmed */
    assert_int_equal(pd_windows_live(&f->ws), 1);
}

/* ---- the manifest record ---- */

static void test_windows_manifest_order_and_steps(void **state)
{
    fixture_t *f = *state;
    pp_selector_t sels[2] = {role_sel("actor"), role_sel("rollout")};
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, sels, 2, PP_MODE_DISCRETE));
    /* reports out of order: rollout 3, actor 1 (two steps), actor 0 */
    static const struct {
        int member;
        const char *role, *phase;
        int64_t first;
    } caps[] = {{3, "rollout", "generate", 20},
                {1, "actor", "update_actor", 21},
                {1, "actor", "update_actor", 20},
                {0, "actor", "update_actor", 20}};
    for (size_t i = 0; i < 4; i++) {
        pd_member_t *m = &w->members[caps[i].member];
        m->caps = realloc(m->caps, (m->ncaps + 1) * sizeof(*m->caps));
        pp_capture_t *c = &m->caps[m->ncaps++];
        pp_record_init(&pp_desc_capture, c);
        c->role = strdup(caps[i].role);
        c->phase = strdup(caps[i].phase);
        c->rank = m->rank;
        c->replica_rank = m->replica_rank;
        c->first_step = c->last_step = caps[i].first;
        c->status = PP_CAP_COMPLETE;
        m->state = PP_MS_REPORTED;
    }
    pp_manifest_t man;
    assert_int_equal(pd_manifest_build(w, &man), 0);
    assert_int_equal(man.version, 1);
    assert_string_equal(man.job, "run");
    assert_string_equal(man.window.name, "w1-steps20-21");
    assert_int_equal(man.window.steps_n, 2);
    assert_int_equal(man.window.steps[0], 20);
    assert_int_equal(man.window.steps[1], 22); /* half-open */
    assert_int_equal(man.window.roles_n, 2);
    assert_string_equal(man.window.roles[0], "actor");
    assert_string_equal(man.window.roles[1], "rollout");
    assert_int_equal(man.window.mode, PP_MODE_DISCRETE);
    assert_int_equal(man.captures_n, 4);
    const char *order[4][2] = {
        {"actor", "0/20"}, {"actor", "1/20"}, {"actor", "1/21"}, {"rollout", "3/20"}};
    for (size_t i = 0; i < 4; i++) {
        char got[32];
        snprintf(got, sizeof(got), "%lld/%lld", (long long)man.captures[i].rank,
                 (long long)man.captures[i].first_step);
        assert_string_equal(man.captures[i].role, order[i][0]);
        assert_string_equal(got, order[i][1]);
    }
    pd_manifest_free(&man);
    /* an open window ends after the last step a capture reached */
    w->last = PP_NONE;
    assert_int_equal(pd_manifest_build(w, &man), 0);
    assert_int_equal(man.window.steps[1], 22);
    pd_manifest_free(&man);
}

/* ---- the delivery estimate ---- */

static void test_windows_latency_p99(void **state)
{
    pd_latency_t l = {0};
    assert_int_equal(pd_latency_p99(&l), PD_LATENCY_MIN_US);
    pd_latency_sample(&l, -1);             /* ignored */
    pd_latency_sample(&l, 61 * 1000000LL); /* ignored */
    assert_int_equal(l.n, 0);
    for (int i = 1; i <= 100; i++) {
        pd_latency_sample(&l, i * 100); /* 0.1 .. 10 ms; the ring keeps the last 64 */
    }
    assert_int_equal(l.n, PD_LATENCY_SAMPLES);
    assert_int_equal(pd_latency_p99(&l), 10000); /* 3.7 .. 10 ms kept: index 63 */
    pd_latency_t small = {0};
    pd_latency_sample(&small, 500);
    assert_int_equal(pd_latency_p99(&small), PD_LATENCY_MIN_US); /* at least 2 ms */
}

/* Files arriving at a coordinator: each found by its path through the
 * index as the table grows past several rebuilds, an unknown path not
 * found, a path of PD_INCOMING_PATH_MAX bytes taken and a longer one not. */
static void test_windows_incoming_index(void **state)
{
    (void)state;
    pd_window_t *w = calloc(1, sizeof(*w));
    char path[PD_INCOMING_PATH_MAX + 2];
    size_t idx = 99;
    assert_non_null(w);
    assert_null(pd_windows_incoming(w, "none", &idx));
    for (int i = 0; i < 1000; i++) {
        snprintf(path, sizeof(path), "actor/rank%d-host%d/trace.pt.trace.json", i, i % 7);
        pd_incoming_t *in = pd_windows_add_incoming(w, path);
        assert_non_null(in);
        in->member = (size_t)i;
        if (i % 100 == 0) { /* lookups between additions grow the index in steps */
            assert_ptr_equal(pd_windows_incoming(w, path, &idx), &w->incoming[i]);
            assert_int_equal(idx, i);
        }
    }
    assert_int_equal(w->nincoming, 1000);
    for (int i = 0; i < 1000; i++) {
        snprintf(path, sizeof(path), "actor/rank%d-host%d/trace.pt.trace.json", i, i % 7);
        pd_incoming_t *in = pd_windows_incoming(w, path, &idx);
        assert_non_null(in);
        assert_int_equal(idx, i);
        assert_int_equal(in->member, i);
        assert_string_equal(in->path, path);
    }
    assert_null(pd_windows_incoming(w, "actor/rank1000-host6/trace.pt.trace.json", &idx));
    assert_null(pd_windows_incoming(w, "", &idx));
    memset(path, 'a', PD_INCOMING_PATH_MAX);
    path[PD_INCOMING_PATH_MAX] = '\0';
    assert_non_null(pd_windows_add_incoming(w, path));
    assert_non_null(pd_windows_incoming(w, path, &idx));
    assert_int_equal(idx, 1000);
    path[PD_INCOMING_PATH_MAX] = 'a';
    path[PD_INCOMING_PATH_MAX + 1] = '\0';
    assert_null(pd_windows_add_incoming(w, path));
    assert_int_equal(w->nincoming, 1001);
    pd_windows_free_one(w);
}

/* Members found by client id through the index: 3,000 of them, ids far
 * apart; members bound to new ids again and again (pd_windows_rebind's
 * case, stale entries piling up until the index is rebuilt) are found
 * under the new id only; an unknown id and 0 find nothing. */
static void test_windows_member_index(void **state)
{
    (void)state;
    pd_window_t *w = calloc(1, sizeof(*w));
    pd_rank_t k;
    pd_role_t role = {.name = "actor", .rank = 0};
    assert_non_null(w);
    memset(&k, 0, sizeof(k));
    snprintf(k.role, sizeof(k.role), "actor");
    k.roles = &role;
    k.nroles = 1;
    k.uid = -1;
    k.replica_rank = PP_NONE;
    assert_null(pd_windows_member(w, 7));
    for (int i = 0; i < 3000; i++) {
        k.id = 1000003LL * (i + 1);
        k.rank = i;
        role.rank = i;
        snprintf(k.host, sizeof(k.host), "h%d", i);
        assert_non_null(pd_windows_add_member(w, &k, 0, 1));
        if (i % 500 == 0) {
            assert_ptr_equal(pd_windows_member(w, k.id), &w->members[i]);
        }
    }
    for (int i = 0; i < 3000; i++) {
        assert_ptr_equal(pd_windows_member(w, 1000003LL * (i + 1)), &w->members[i]);
    }
    assert_null(pd_windows_member(w, 1000003LL * 3001));
    assert_null(pd_windows_member(w, 0));
    /* member 5 bound to 40,000 new ids in turn: stale entries force rebuilds */
    for (int64_t id = 1; id <= 40000; id++) {
        int64_t old = w->members[5].client;
        w->members[5].client = -id;
        pd_windows_member_bound(w, 5);
        assert_ptr_equal(pd_windows_member(w, -id), &w->members[5]);
        assert_null(pd_windows_member(w, old));
    }
    assert_true(w->mix.fill * 2 <= w->mix.cap);
    assert_ptr_equal(pd_windows_member(w, 1000003LL * 7), &w->members[6]);
    pd_windows_free_one(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_membership_by_selector),
        cmocka_unit_test_setup_teardown(test_windows_plan_for_members_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_late_joiner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_missed_warning_for_late_ranks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_windows_overlap_refused_or_queued, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_dead_job_never_chosen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_limit_of_unfinished, setup, teardown),
        cmocka_unit_test(test_windows_report_checks),
        cmocka_unit_test_setup_teardown(test_windows_report_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_complete_when_nothing_left, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_lost_before_first_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_multi_role_e2e_folders, setup, teardown),
        cmocka_unit_test(test_windows_multi_role_discrete_reports),
        cmocka_unit_test_setup_teardown(test_windows_added_role_joins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_stop_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_node_gone_and_rebind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_job_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_node_restarted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_trim_keeps_the_recent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_manifest_order_and_steps, setup, teardown),
        cmocka_unit_test(test_windows_latency_p99),
        cmocka_unit_test(test_windows_incoming_index),
        cmocka_unit_test(test_windows_member_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
