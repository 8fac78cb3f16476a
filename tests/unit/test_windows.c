// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The window table, alone: membership, report checks, the missed and
 * truncated rules, processes hosting several roles. No loop, no sockets,
 * no clock, no files: the table links the pure core only, times are
 * parameters and what it asks of the daemon is recorded by the hooks of
 * windows_fixture.c. (Stop, lost members and nodes, the manifest record
 * and the delivery estimate: test_windows_nodes.c.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency.h"
#include "manifest.h"
#include "unit_fixture.h"
#include "windows_fixture.h"

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

/* A result for window w with one capture, empty: the caller fills it in. */
static pp_capture_t *one_capture(pp_result_t *res, const pd_window_t *w)
{
    pp_record_init(&pp_desc_result, res);
    res->window = w->id;
    res->captures = calloc(1, sizeof(*res->captures));
    res->captures_n = 1;
    pp_record_init(&pp_desc_capture, &res->captures[0]);
    return &res->captures[0];
}

/* Rank k reports res, accepted; res freed. */
static void deliver(fixture_t *f, pd_rank_t *k, pp_result_t *res)
{
    char err[256];
    assert_int_equal(pd_windows_on_result(&f->ws, k, res, err, sizeof(err)), 0);
    pp_record_free(&pp_desc_result, res);
}

static void report_one(fixture_t *f, pd_window_t *w, const report_case_t *c)
{
    pp_result_t res;
    pp_capture_t *cap = one_capture(&res, w);
    cap->status = c->status;
    cap->role = strdup(c->role);
    cap->phase = c->phase ? strdup(c->phase) : NULL;
    cap->dir = c->dir ? strdup(c->dir) : NULL;
    cap->reason = c->reason ? strdup(c->reason) : NULL;
    cap->host = strdup("forged-host");
    cap->rank = 77;
    cap->first_step = 20;
    deliver(f, f->k[0], &res);
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
    pp_result_t res;
    pp_capture_t *cap = one_capture(&res, w);
    cap->status = PP_CAP_COMPLETE;
    cap->role = strdup(role);
    cap->phase = phase ? strdup(phase) : NULL;
    cap->dir = strdup(dir);
    cap->first_step = 20;
    deliver(f, k, &res);
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

/* ---- a done window compacted ---- */

/* Rank k reports these captures (status, first step, folder, reason). */
static void report_caps(fixture_t *f, pd_window_t *w, pd_rank_t *k, const pp_capture_status_t *st,
                        const int64_t *first, const char *const *dir, const char *const *why,
                        size_t n)
{
    pp_result_t res;
    pp_record_init(&pp_desc_result, &res);
    res.window = w->id;
    res.captures = calloc(n, sizeof(*res.captures));
    res.captures_n = n;
    for (size_t i = 0; i < n; i++) {
        pp_capture_t *c = &res.captures[i];
        pp_record_init(&pp_desc_capture, c);
        c->role = strdup("e2e");
        c->status = st[i];
        c->first_step = first[i];
        c->last_step = first[i];
        c->dir = dir[i] ? strdup(dir[i]) : NULL;
        c->reason = why[i] ? strdup(why[i]) : NULL;
    }
    deliver(f, k, &res);
}

/* Each member's captures in the manifest's order, encoded: one text per
 * member (the caller frees them). */
static void member_caps_text(const pd_window_t *w, char **out)
{
    for (size_t i = 0; i < w->nmembers; i++) {
        const pd_member_t *m = &w->members[i];
        pp_capture_t *v = m->ncaps ? calloc(m->ncaps, sizeof(*v)) : NULL;
        size_t len = 0, at = 0;
        char *text = NULL;
        if (m->ncaps) {
            memcpy(v, m->caps, m->ncaps * sizeof(*v)); /* shallow */
            qsort(v, m->ncaps, sizeof(*v), pd_manifest_cmp);
        }
        out[i] = strdup("");
        for (size_t c = 0; c < m->ncaps; c++) {
            assert_int_equal(pp_record_encode(&pp_desc_capture, &v[c], false, &text, &len), 0);
            at = strlen(out[i]);
            out[i] = realloc(out[i], at + len + 2);
            memcpy(out[i] + at, text, len);
            memcpy(out[i] + at + len, "\n", 2);
            free(text);
        }
        free(v);
    }
}

/* The strings, comma-separated (the caller frees it). */
static char *strv_join(char **v, size_t n)
{
    char *out = strdup("");
    for (size_t i = 0; i < n; i++) {
        size_t at = strlen(out);
        out = realloc(out, at + strlen(v[i]) + 2);
        sprintf(out + at, "%s%s", i ? "," : "", v[i]);
    }
    return out;
}

/* Compacted, a done window keeps its counts and what it needs of its
 * members (how many, the owner's uid, tool, mode, roles), nothing of its
 * members, their captures or its incoming files; read back from its
 * manifest, its members are rebuilt (the same role, rank, replica rank,
 * host, pid and state) with the captures they had, and freed again at the
 * next compaction; a manifest that is not the window's is refused and
 * leaves it compacted, without members. */
static void test_windows_compact_and_read_back(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s[2] = {role_sel("actor"), role_sel("rollout")};
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, s, 2, PP_MODE_E2E));
    assert_int_equal(w->nmembers, 4);
    /* actor 0: a failed capture reported before its complete one */
    const pp_capture_status_t st0[] = {PP_CAP_FAILED, PP_CAP_COMPLETE};
    const int64_t first0[] = {21, 20};
    const char *dir0[] = {NULL, "run/w1-steps20-21/e2e/rank0-h0"};
    const char *why0[] = {"out of memory at step 21", NULL};
    report_caps(f, w, f->k[0], st0, first0, dir0, why0, 2);
    const pp_capture_status_t st1[] = {PP_CAP_MISSED}, st2[] = {PP_CAP_FAILED};
    const int64_t first1[] = {25};
    const char *none[] = {NULL}, *why1[] = {"began step 25"}, *why2[] = {"profiler crashed"};
    report_caps(f, w, f->k[1], st1, first1, none, why1, 1);
    report_caps(f, w, f->k[2], st2, first0, none, why2, 1);
    f->k[3]->step = 21;
    pd_windows_on_lost(&f->ws, f->k[3], "closed its connection");
    assert_non_null(pd_windows_add_incoming(w, "e2e/rank0-h0/trace.json"));
    w->state = PP_WS_DONE;

    const int64_t want[5] = {0, 1, 3, 1, 0}; /* none, complete, failed, missed, truncated */
    int64_t by[5];
    pd_windows_captured(w, by);
    assert_memory_equal(by, want, sizeof(want));
    pp_manifest_t man;
    char *text, *before[4], *after[4], err[256];
    size_t len;
    assert_int_equal(pd_manifest_build(w, &man), 0);
    assert_int_equal(pp_record_encode(&pp_desc_manifest, &man, true, &text, &len), 0);
    pd_manifest_free(&man);
    member_caps_text(w, before);
    pd_member_t was[4];
    memcpy(was, w->members, sizeof(was)); /* who they were: names, ids (shallow) */
    w->members[0].uid = -1;               /* none: the next one's */
    w->members[1].uid = 1234;
    w->members[2].uid = 99;
    pp_window_t info;
    pd_windows_info(w, false, &info);
    char *tool = strdup(info.tool), *roles = strv_join(info.roles, info.roles_n);
    pp_mode_t mode = info.mode;
    pd_windows_info_free(&info);

    pd_windows_compact(w);
    assert_true(w->compact);
    assert_true(w->slim);
    assert_memory_equal(w->captured, want, sizeof(want));
    assert_null(w->members); /* no per-member memory */
    assert_int_equal(w->nmembers, 0);
    assert_int_equal(w->capm, 0);
    assert_null(w->mix.slot);
    assert_null(w->hix.slot);
    assert_null(w->jmembers);
    assert_int_equal(w->kept.ranks, 4);
    assert_int_equal(pd_windows_ranks(w), 4);
    assert_int_equal(pd_windows_owner_uid(w), 1234); /* the first member's with a uid */
    assert_null(w->incoming);
    assert_int_equal(w->nincoming, 0);
    pd_windows_info(w, true, &info);
    assert_int_equal(info.selected, 4);
    assert_int_equal(info.reported, 4);
    assert_int_equal(info.complete, 1);
    assert_int_equal(info.failed, 3);
    assert_int_equal(info.missed, 1);
    assert_int_equal(info.truncated, 0);
    assert_int_equal(info.pending_files, 0);
    assert_int_equal(info.ranks_n, 0); /* per rank: read back from the manifest */
    assert_string_equal(info.tool, tool);
    assert_int_equal(info.mode, mode);
    char *roles2 = strv_join(info.roles, info.roles_n);
    assert_string_equal(roles2, roles);
    assert_string_equal(roles2, "actor,rollout");
    free(roles2);
    pd_windows_info_free(&info);

    /* read back: the captures it had, each with its member */
    assert_int_equal(pp_record_decode(&pp_desc_manifest, text, len, &man, err, sizeof(err)), 0);
    assert_int_equal(pd_windows_uncompact(w, &man, err, sizeof(err)), 0);
    assert_null(man.captures);
    assert_false(w->compact);
    pp_record_free(&pp_desc_manifest, &man);
    assert_int_equal(w->nmembers, 4);
    const size_t ncaps[4] = {2, 1, 1, 1};
    member_caps_text(w, after);
    for (size_t i = 0; i < 4; i++) { /* by rank, replica rank, host, pid */
        const pd_member_t *m = &w->members[i];
        size_t j = 0;
        while (j < 4 && !(was[j].pid == m->pid && strcmp(was[j].host, m->host) == 0)) {
            j++;
        }
        assert_true(j < 4);
        assert_true(i == 0 || m[-1].rank <= m->rank);
        assert_string_equal(m->role, was[j].role);
        assert_int_equal(m->rank, was[j].rank);
        assert_int_equal(m->replica_rank, was[j].replica_rank);
        assert_int_equal(m->state, was[j].state);
        assert_int_equal(m->state, j == 3 ? PP_MS_LOST : PP_MS_REPORTED);
        assert_string_equal(m->node, was[j].node);
        assert_int_equal(m->selector, was[0].selector);
        assert_int_equal(m->ncaps, ncaps[j]);
        assert_string_equal(after[i], before[j]);
        free(after[i]);
    }
    for (size_t i = 0; i < 4; i++) {
        if (w->members[i].pid == was[0].pid) {
            assert_int_equal(w->members[i].caps[0].first_step, 20); /* the manifest's order */
        }
    }
    pd_windows_captured(w, by);
    assert_memory_equal(by, want, sizeof(want));
    pd_windows_info(w, true, &info); /* the detail: each rank's state again */
    assert_int_equal(info.ranks_n, 4);
    assert_int_equal(info.selected, 4);
    assert_string_equal(info.tool, tool);
    pd_windows_info_free(&info);
    pd_windows_compact(w);
    assert_memory_equal(w->captured, want, sizeof(want));
    assert_null(w->members); /* freed again, the kept ones stay */
    assert_int_equal(w->nmembers, 0);
    assert_int_equal(w->kept.ranks, 4);
    assert_int_equal(pd_windows_owner_uid(w), 1234);
    free(tool);
    free(roles);

    /* a manifest that is not the window's: refused, the window as it was */
    static const struct {
        const char *name, *want;
    } bad[] = {
        {"another window", "its manifest is another window's (w1-steps20-21 99)"},
        {"a capture of nobody", "its manifest names 5 process(es), more than its 4 member(s)"},
        {"other counts", "its manifest lists 5 capture(s), not the ones it had"},
    };
    for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
        assert_int_equal(pp_record_decode(&pp_desc_manifest, text, len, &man, err, sizeof(err)), 0);
        if (b == 0) {
            man.window.id = 99;
        } else if (b == 1) {
            free(man.captures[0].host);
            man.captures[0].host = strdup("h9");
        } else {
            man.captures[0].status = PP_CAP_FAILED;
        }
        err[0] = '\0';
        if (pd_windows_uncompact(w, &man, err, sizeof(err)) != PROFD_EINVAL) {
            fail_msg("%s: not refused", bad[b].name);
        }
        if (strcmp(err, bad[b].want) != 0) {
            fail_msg("%s: '%s', want '%s'", bad[b].name, err, bad[b].want);
        }
        pp_record_free(&pp_desc_manifest, &man);
        assert_true(w->compact);
        assert_null(w->members);
        assert_int_equal(w->nmembers, 0);
    }
    for (size_t i = 0; i < 4; i++) {
        free(before[i]);
    }
    free(text);
}

int main(void)
{
    int plain = PD_RUN_EACH(NULL, NULL, test_windows_membership_by_selector,
                            test_windows_report_checks, test_windows_multi_role_discrete_reports);
    return unit_exit2(
        plain, PD_RUN_EACH(setup, teardown, test_windows_plan_for_members_only,
                           test_windows_late_joiner, test_windows_missed_warning_for_late_ranks,
                           test_windows_overlap_refused_or_queued,
                           test_windows_dead_job_never_chosen, test_windows_limit_of_unfinished,
                           test_windows_report_refusals, test_windows_complete_when_nothing_left,
                           test_windows_lost_before_first_step, test_windows_multi_role_e2e_folders,
                           test_windows_added_role_joins, test_windows_compact_and_read_back));
}
