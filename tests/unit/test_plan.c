// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Planner: table-driven, no sockets, no clock (the time is a parameter). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan.h"

#define MS  1000LL
#define NOW (1000000 * MS)

/* A job of 8 ranks: actor 0-1, rollout 2-5 (replicas 0,0,1,1), ref 6-7.
 * Every rank is at step 10, began 30 ms ago, 100 ms per step. */
static pd_plan_rank_t job[8];

static int setup(void **state)
{
    static const char *roles[8] = {"actor",   "actor",   "rollout", "rollout",
                                   "rollout", "rollout", "ref",     "ref"};
    static const int64_t replicas[8] = {PP_NONE, PP_NONE, 0, 0, 1, 1, PP_NONE, PP_NONE};
    for (int i = 0; i < 8; i++) {
        job[i] = (pd_plan_rank_t){.id = 100 + i,
                                  .job = "run",
                                  .role = roles[i],
                                  .rank = i,
                                  .replica_rank = replicas[i],
                                  .step = 10,
                                  .in_step = true,
                                  .step_began_us = NOW - 30 * MS,
                                  .step_us = 100 * MS};
    }
    return 0;
}

static pd_plan_params_t params(void)
{
    pd_plan_params_t p = {
        .now_us = NOW, .latency_us = 2 * MS, .margin_us = 100 * MS, .default_job = "run"};
    return p;
}

static pp_selector_t sel(const char *role, bool all, int64_t *ranks, size_t nranks,
                         int64_t *replicas, size_t nreplicas)
{
    pp_selector_t s;
    pp_record_init(&pp_desc_selector, &s);
    s.role = (char *)role;
    s.all_ranks = all;
    s.ranks = ranks;
    s.ranks_n = nranks;
    s.replica_ranks = replicas;
    s.replica_ranks_n = nreplicas;
    return s;
}

static pp_window_spec_t spec_steps(int64_t *steps, size_t n, bool continuous)
{
    pp_window_spec_t s;
    pp_record_init(&pp_desc_window_spec, &s);
    s.steps = steps;
    s.steps_n = n;
    s.continuous = continuous;
    return s;
}

/* A spec for the `next` steps after where the job is. */
static pp_window_spec_t spec_next(int64_t next)
{
    pp_window_spec_t s = spec_steps(NULL, 0, false);
    s.next = next;
    return s;
}

/* Every rank of the job takes `us` a step. */
static void step_time(int64_t us)
{
    for (int i = 0; i < 8; i++) {
        job[i].step_us = us;
    }
}

/* A spec over the steps with the one selector `one`. */
static pp_window_spec_t spec_one(int64_t *steps, size_t n, pp_selector_t *one)
{
    pp_window_spec_t s = spec_steps(steps, n, false);
    s.selectors = one;
    s.selectors_n = 1;
    return s;
}

static void resolve_with(const pp_window_spec_t *s, const pd_plan_params_t *p, pd_plan_out_t *out)
{
    char err[256] = "";
    int rv = pd_plan_resolve(s, job, 8, p, out, err, sizeof(err));
    if (rv != 0) {
        fail_msg("resolve failed: %s", err);
    }
}

static void resolve_ok(const pp_window_spec_t *s, pd_plan_out_t *out)
{
    pd_plan_params_t p = params();
    resolve_with(s, &p, out);
}

/* s resolves with p over the job; what it made is freed. */
static void accepted(const pp_window_spec_t *s, const pd_plan_params_t *p)
{
    pd_plan_out_t out;
    resolve_with(s, p, &out);
    pd_plan_out_free(&out);
}

/* out holds the n segments want ([first, last] each), in this order. */
static void assert_segments(const pd_plan_out_t *out, const int64_t (*want)[2], size_t n)
{
    assert_int_equal(out->n_segments, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(out->segments[i].first, want[i][0]);
        assert_int_equal(out->segments[i].last, want[i][1]);
    }
}

/* ---- steps ---- */

static void test_plan_steps_one_window_per_step(void **state)
{
    int64_t steps[] = {5, 1, 2, 2};
    pp_window_spec_t s = spec_steps(steps, 4, false);
    pd_plan_out_t out;
    resolve_ok(&s, &out);
    static const int64_t want[][2] = {{1, 1}, {2, 2}, {5, 5}};
    assert_segments(&out, want, 3);
    assert_int_equal(out.n_members, 8); /* no selectors: every rank */
    assert_int_equal(out.members[0].selector, -1);
    assert_string_equal(out.job, "run");
    pd_plan_out_free(&out);
}

static void test_plan_steps_continuous_merges_runs(void **state)
{
    int64_t steps[] = {1, 2, 5, 3, 7, 8};
    pp_window_spec_t s = spec_steps(steps, 6, true);
    pd_plan_out_t out;
    resolve_ok(&s, &out);
    static const int64_t want[][2] = {{1, 3}, {5, 5}, {7, 8}};
    assert_segments(&out, want, 3);
    pd_plan_out_free(&out);
}

static void test_plan_range_half_open(void **state)
{
    pp_window_spec_t s = spec_steps(NULL, 0, false);
    pd_plan_out_t out;
    s.start = 5;
    s.end = 10;
    resolve_ok(&s, &out);
    static const int64_t want[][2] = {{5, 9}};
    assert_segments(&out, want, 1);
    pd_plan_out_free(&out);

    s.end = -1; /* until the job ends */
    resolve_ok(&s, &out);
    assert_int_equal(out.segments[0].first, 5);
    assert_int_equal(out.segments[0].last, PP_NONE);
    pd_plan_out_free(&out);

    s.end = PP_NONE; /* no end given: open as well */
    resolve_ok(&s, &out);
    assert_int_equal(out.segments[0].last, PP_NONE);
    pd_plan_out_free(&out);
}

/* ---- selection ---- */

static void test_plan_selects_roles_ranks_replicas(void **state)
{
    int64_t actor_ranks[] = {1};
    int64_t replicas[] = {1};
    int64_t steps[] = {20};
    pp_selector_t sels[3] = {
        sel("actor", false, actor_ranks, 1, NULL, 0),
        sel("rollout", false, NULL, 0, replicas, 1),
        sel("ref", true, NULL, 0, NULL, 0),
    };
    pp_window_spec_t s = spec_steps(steps, 1, false);
    s.selectors = sels;
    s.selectors_n = 3;
    pd_plan_out_t out;
    resolve_ok(&s, &out);
    /* actor rank 1, every process of replica 1 (ranks 4, 5), both refs */
    assert_int_equal(out.n_members, 5);
    int64_t want_ids[] = {101, 104, 105, 106, 107};
    int want_sel[] = {0, 1, 1, 2, 2};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(out.members[i].id, want_ids[i]);
        assert_int_equal(out.members[i].selector, want_sel[i]);
    }
    pd_plan_out_free(&out);
}

static void test_plan_selector_without_ranks_selects_none(void **state)
{
    int64_t steps[] = {20};
    pp_selector_t one = sel("actor", false, NULL, 0, NULL, 0);
    pp_window_spec_t s = spec_one(steps, 1, &one);
    pd_plan_out_t out;
    resolve_ok(&s, &out);
    assert_int_equal(out.n_members, 0);
    assert_int_equal(out.n_warnings, 1);
    /* the start step (20) is ahead of the job (10): a warning, with what is
     * registered */
    assert_string_equal(out.warnings[0],
                        "selects no registered rank of job 'run' yet (registered: actor 0-1, "
                        "rollout 2-5, ref 6-7; global ranks 0-7); matching ranks that register "
                        "later are added");
    pd_plan_out_free(&out);
}

static int refused(const pp_window_spec_t *s, const pd_plan_params_t *p, char *err, size_t len)
{
    pd_plan_out_t out;
    int rv = pd_plan_resolve(s, job, 8, p, &out, err, len);
    assert_null(out.members);
    assert_int_equal(out.n_segments, 0);
    return rv;
}

/* Issue 31: profctl start --tool nsight ran the torch profiler and the
 * manifest said "nsight". */
static void test_plan_refuses_unknown_tool(void **state)
{
    int64_t steps[] = {20};
    pd_plan_params_t p = params();
    char err[256];
    pp_window_spec_t s = spec_steps(steps, 1, false);
    s.tool = "nsight";
    assert_int_equal(refused(&s, &p, err, sizeof(err)), PROFD_EINVAL);
    assert_string_equal(err, "unknown tool 'nsight': the tools are torch, npu, torch_memory, "
                             "cuda, nsys, exec, precision_debugger, sim (a client's own backend: "
                             "add its tool to the daemon's tools.custom)");
    pp_selector_t one = sel("actor", true, NULL, 0, NULL, 0);
    one.tool = "vtune";
    s.tool = "npu";
    s.selectors = &one;
    s.selectors_n = 1;
    assert_int_equal(refused(&s, &p, err, sizeof(err)), PROFD_EINVAL);
    assert_string_equal(err, "selector 0: unknown tool 'vtune': the tools are torch, npu, "
                             "torch_memory, cuda, nsys, exec, precision_debugger, sim (a client's "
                             "own backend: add its tool to the daemon's tools.custom)");
    /* the tools of clients' own backends, named in the daemon's settings */
    p.custom_tools = "rec, vtune";
    accepted(&s, &p);
    one.tool = "vtun";
    assert_int_equal(refused(&s, &p, err, sizeof(err)), PROFD_EINVAL);
    assert_string_equal(err, "selector 0: unknown tool 'vtun': the tools are torch, npu, "
                             "torch_memory, cuda, nsys, exec, precision_debugger, sim, rec, vtune "
                             "(a client's own backend: add its tool to the daemon's tools.custom)");
    p.custom_tools = NULL;
    const char *known[] = {"torch", "npu",  "torch_memory",       "cuda",
                           "nsys",  "exec", "precision_debugger", "sim"};
    for (size_t i = 0; i < 8; i++) {
        one.tool = (char *)known[i];
        accepted(&s, &p);
    }
}

/* Issue 31: --schedule on an e2e window was silently ignored. */
static void test_plan_refuses_schedule_on_e2e(void **state)
{
    int64_t steps[] = {20};
    pd_plan_params_t p = params();
    char err[256];
    pp_window_spec_t s = spec_steps(steps, 1, false);
    s.schedule.active = 3; /* mode unset: e2e */
    assert_int_equal(refused(&s, &p, err, sizeof(err)), PROFD_EINVAL);
    assert_string_equal(err, "a schedule applies to discrete windows only (it counts sub-steps in "
                             "a phase); this window is e2e: add --discrete or --phases, or drop "
                             "--schedule");
    s.mode = PP_MODE_E2E;
    assert_int_equal(refused(&s, &p, err, sizeof(err)), PROFD_EINVAL);
    s.mode = PP_MODE_DISCRETE;
    accepted(&s, &p);
    /* a selector's own mode: the actor e2e under a discrete request */
    pp_selector_t two[2] = {sel("rollout", true, NULL, 0, NULL, 0),
                            sel("actor", true, NULL, 0, NULL, 0)};
    two[1].mode = PP_MODE_E2E;
    s.selectors = two;
    s.selectors_n = 2;
    assert_int_equal(refused(&s, &p, err, sizeof(err)), PROFD_EINVAL);
    assert_string_equal(err, "a schedule applies to discrete windows only (it counts sub-steps in "
                             "a phase); this window (role actor) is e2e: add --discrete or "
                             "--phases, or drop --schedule");
    s.schedule.active = 0; /* a schedule of wait/warmup alone schedules nothing */
    s.schedule.wait = 1;
    accepted(&s, &p);
    /* phases on an e2e selector: one capture per process, the phases would
     * be silently ignored */
    char *gen[] = {"generate"};
    two[1].phases = gen;
    two[1].phases_n = 1;
    assert_int_equal(refused(&s, &p, err, sizeof(err)), PROFD_EINVAL);
    assert_string_equal(err, "phases apply to discrete windows only (one capture per phase); this "
                             "window (role actor) is e2e: drop --e2e or --phases");
    two[1].mode = PP_MODE_DISCRETE;
    accepted(&s, &p);
}

/* s is refused: it selects no rank of job 'run' (the job is at step 10),
 * and its first step `first` has passed. */
static void refused_past(const pp_window_spec_t *s, const pd_plan_params_t *p, int64_t first)
{
    char err[256], want[256];
    assert_int_equal(refused(s, p, err, sizeof(err)), PROFD_EINVAL);
    snprintf(
        want, sizeof(want),
        "selects no registered rank of job 'run' and its first step %lld has passed (the job is "
        "at step 10); registered: actor 0-1, rollout 2-5, ref 6-7; global ranks 0-7",
        (long long)first);
    assert_string_equal(err, want);
}

/* Issue 31: --roles actr or --ranks 9 (nothing registered like that) left
 * a window pending on steps already past, for ever. The job is at step 10. */
static void test_plan_refuses_no_rank_past_start(void **state)
{
    pd_plan_params_t p = params();
    pd_plan_out_t out;
    char err[256];
    const char *reg = "registered: actor 0-1, rollout 2-5, ref 6-7; global ranks 0-7";
    char want[256];
    int64_t steps[] = {5};
    pp_selector_t typo = sel("actr", true, NULL, 0, NULL, 0);
    pp_window_spec_t s = spec_one(steps, 1, &typo);
    refused_past(&s, &p, 5);
    /* the boundary: step 10 has begun (refused), step 11 may still match */
    steps[0] = 10;
    refused_past(&s, &p, 10);
    steps[0] = 11;
    assert_int_equal(pd_plan_resolve(&s, job, 8, &p, &out, err, sizeof(err)), 0);
    assert_int_equal(out.n_members, 0);
    assert_int_equal(out.n_warnings, 1);
    snprintf(want, sizeof(want),
             "selects no registered rank of job 'run' yet (%s); matching ranks that register "
             "later are added",
             reg);
    assert_string_equal(out.warnings[0], want);
    pd_plan_out_free(&out);
    /* --ranks 9 --next 2: nothing to align on, the window would be 1-2 */
    int64_t nine[] = {9};
    pp_selector_t r9 = sel(NULL, false, nine, 1, NULL, 0);
    pp_window_spec_t n = spec_one(NULL, 0, &r9);
    n.next = 2;
    refused_past(&n, &p, 1);
    /* a job nothing of which is registered: ranks may register later */
    n.job = "later";
    assert_int_equal(pd_plan_resolve(&n, job, 8, &p, &out, err, sizeof(err)), 0);
    assert_string_equal(out.warnings[0], "selects no registered rank of job 'later' yet; "
                                         "matching ranks that register later are added");
    pd_plan_out_free(&out);
}

/* Issue 31: without --job, with two live jobs, a request took a job none
 * of them runs ("default"): 0 ranks, a warning. */
static void test_plan_job_of_a_request(void **state)
{
    int64_t steps[] = {20};
    pd_plan_params_t p = params();
    pd_plan_out_t out;
    char err[256];
    p.default_job = "default";
    pp_window_spec_t s = spec_steps(steps, 1, false);
    /* one job live: that one */
    assert_int_equal(pd_plan_resolve(&s, job, 8, &p, &out, err, sizeof(err)), 0);
    assert_string_equal(out.job, "run");
    assert_int_equal(out.n_members, 8);
    pd_plan_out_free(&out);
    /* two: refused, naming them */
    job[6].job = "eval";
    job[7].job = "eval";
    assert_int_equal(refused(&s, &p, err, sizeof(err)), PROFD_EINVAL);
    assert_string_equal(err, "2 jobs are running (run, eval): name one with --job");
    s.job = "eval";
    assert_int_equal(pd_plan_resolve(&s, job, 8, &p, &out, err, sizeof(err)), 0);
    assert_int_equal(out.n_members, 2);
    pd_plan_out_free(&out);
    /* none live: the default job */
    s.job = NULL;
    assert_int_equal(pd_plan_resolve(&s, job, 0, &p, &out, err, sizeof(err)), 0);
    assert_string_equal(out.job, "default");
    pd_plan_out_free(&out);
}

static void test_plan_any_role_selector_and_job_filter(void **state)
{
    int64_t ranks[] = {0, 6};
    int64_t steps[] = {20};
    pp_selector_t one = sel(NULL, false, ranks, 2, NULL, 0);
    pp_window_spec_t s = spec_one(steps, 1, &one);
    pd_plan_out_t out;
    resolve_ok(&s, &out);
    assert_int_equal(out.n_members, 2);
    assert_int_equal(out.members[0].id, 100);
    assert_int_equal(out.members[1].id, 106);
    pd_plan_out_free(&out);

    s.job = "other";
    resolve_ok(&s, &out);
    assert_int_equal(out.n_members, 0);
    assert_string_equal(out.job, "other");
    pd_plan_out_free(&out);
}

static void test_plan_match_late_joiner(void **state)
{
    int64_t replicas[] = {0};
    pp_selector_t one = sel("rollout", false, NULL, 0, replicas, 1);
    pp_window_spec_t s = spec_one(NULL, 0, &one);
    assert_int_equal(pd_plan_match(&s, "run", &job[2]), 0);
    assert_int_equal(pd_plan_match(&s, "run", &job[4]), -2); /* replica 1 */
    assert_int_equal(pd_plan_match(&s, "run", &job[0]), -2); /* actor */
    assert_int_equal(pd_plan_match(&s, "other", &job[2]), -2);
    s.selectors_n = 0;
    assert_int_equal(pd_plan_match(&s, "run", &job[0]), -1);
}

/* ---- on demand ---- */

static void test_plan_next_is_aligned_ahead_of_the_fastest(void **state)
{
    pp_window_spec_t s = spec_next(2);
    pd_plan_out_t out;
    /* rank 3 is two steps ahead of the others */
    job[3].step = 12;
    resolve_ok(&s, &out);
    /* ahead = 2 ms + 100 ms; rank 3: 12 + (30 + 102) / 100 = 13 -> start 14 */
    assert_int_equal(out.segments[0].first, 14);
    assert_int_equal(out.segments[0].last, 15);
    pd_plan_out_free(&out);

    s.roundup = 10;
    resolve_ok(&s, &out);
    assert_int_equal(out.segments[0].first, 20);
    assert_int_equal(out.segments[0].last, 21);
    pd_plan_out_free(&out);
    job[3].step = 10;
}

static void test_plan_next_unknown_rate_and_no_steps(void **state)
{
    pp_window_spec_t s = spec_next(1);
    pd_plan_out_t out;
    step_time(0);
    resolve_ok(&s, &out);
    assert_int_equal(out.segments[0].first, 12); /* step + 1, then the next one */
    assert_int_equal(out.n_warnings, 1);
    assert_string_equal(out.warnings[0], "8 selected rank(s) have no measured step time yet");
    pd_plan_out_free(&out);
    /* ranks without a step time move like the slowest measured one: rank 5
     * (300 ms per step, began 30 ms ago) -> step 10 + 132 / 300 = 10; rank
     * 2, measured first, is faster (guards: an unmeasured rank borrowing
     * the first measured step time, 14 + 132 / 100 = 15 -> start 16) */
    job[2].step_us = 100 * MS;
    job[5].step_us = 300 * MS;
    job[6].step = 14; /* unmeasured, ahead: 14 + 132 / 300 = 14 -> start 15 */
    resolve_ok(&s, &out);
    assert_int_equal(out.segments[0].first, 15);
    assert_string_equal(out.warnings[0], "6 selected rank(s) have no measured step time yet");
    pd_plan_out_free(&out);
    for (int i = 0; i < 8; i++) {
        job[i].step_us = 100 * MS;
        job[i].step = PP_NONE;
    }
    resolve_ok(&s, &out); /* nobody began a step: the first step */
    assert_int_equal(out.segments[0].first, 1);
    pd_plan_out_free(&out);
    setup(NULL);
}

static void test_plan_predict_and_stop_step(void **state)
{
    pd_plan_rank_t r = job[0];
    pd_plan_params_t p = params();
    assert_int_equal(pd_plan_predict(&r, NOW, 0), 10);
    assert_int_equal(pd_plan_predict(&r, NOW, 69 * MS), 10);
    assert_int_equal(pd_plan_predict(&r, NOW, 70 * MS), 11);
    assert_int_equal(pd_plan_predict(&r, NOW, 270 * MS), 13);
    r.step = PP_NONE;
    assert_int_equal(pd_plan_predict(&r, NOW, 0), PP_NONE);
    /* stop: the step every member can still end at (ahead 102 ms) */
    assert_int_equal(pd_plan_stop_step(job, 8, &p), 11);
    assert_int_equal(pd_plan_stop_step(&r, 1, &p), PP_NONE);
}

/* Step times under PD_PLAN_MIN_STEP_US (1 ms) are measurement noise, not
 * training: the prediction takes 1 ms. The rank is at step 10, begun 30 ms
 * ago; `unfloored` is what the measured time alone would predict. */
static void test_plan_predict_min_step_time(void **state)
{
    static const struct {
        int64_t step_us, ahead_us, want, unfloored;
    } rows[] = {
        {1, 2 * MS, 42, 32010},       /* 10 + 32 ms / 1 ms */
        {500, 2 * MS, 42, 74},        /* 10 + 32 ms / 1 ms */
        {999, 969 * MS, 1009, 1010},  /* 10 + 999 ms / 1 ms */
        {1000, 969 * MS, 1009, 1009}, /* the floor itself */
        {1001, 971 * MS, 1010, 1010}, /* above it: as measured, 1001 ms / 1001 us */
        {0, 2 * MS, 11, 11},          /* not measured: it may move on */
        {-1000, 2 * MS, 11, 11},      /* nonsense: not measured */
    };
    assert_int_equal(PD_PLAN_MIN_STEP_US, 1000);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        pd_plan_rank_t r = job[0];
        r.step_us = rows[i].step_us;
        int64_t got = pd_plan_predict(&r, NOW, rows[i].ahead_us);
        if (got != rows[i].want) {
            fail_msg("row %zu (%lld us per step): predicted %lld, want %lld (%lld unfloored)", i,
                     (long long)rows[i].step_us, (long long)got, (long long)rows[i].want,
                     (long long)rows[i].unfloored);
        }
    }
    /* on demand: every rank reports 1 us per step; ahead = 2 ms + 100 ms:
     * 10 + (30 + 102) ms / 1 ms = 142 -> start 143, not 132011 */
    pp_window_spec_t s = spec_next(2);
    pd_plan_out_t out;
    step_time(1);
    resolve_ok(&s, &out);
    assert_int_equal(out.segments[0].first, 143);
    assert_int_equal(out.segments[0].last, 144);
    assert_int_equal(out.n_warnings, 0);
    pd_plan_out_free(&out);
    setup(NULL);
}

/* ---- effective settings ---- */

static void test_plan_selector_overrides(void **state)
{
    int64_t steps[] = {3};
    pp_selector_t sels[2] = {sel("actor", true, NULL, 0, NULL, 0),
                             sel("rollout", true, NULL, 0, NULL, 0)};
    sels[1].tool = "npu";
    sels[1].mode = PP_MODE_DISCRETE;
    sels[1].settings = "{\"level\":\"level1\"}";
    sels[1].schedule.wait = 1;
    sels[1].schedule.active = 2;
    pp_window_spec_t s = spec_steps(steps, 1, false);
    s.selectors = sels;
    s.selectors_n = 2;
    s.tool = "torch";
    s.settings = "{\"contents\":[\"cpu\"]}";
    assert_string_equal(pd_plan_tool(&s, 0), "torch");
    assert_string_equal(pd_plan_tool(&s, 1), "npu");
    assert_int_equal(pd_plan_mode(&s, 0), PP_MODE_E2E);
    assert_int_equal(pd_plan_mode(&s, 1), PP_MODE_DISCRETE);
    assert_string_equal(pd_plan_settings(&s, 0), "{\"contents\":[\"cpu\"]}");
    assert_string_equal(pd_plan_settings(&s, 1), "{\"level\":\"level1\"}");
    assert_int_equal(pd_plan_schedule(&s, 0)->active, 0);
    assert_int_equal(pd_plan_schedule(&s, 1)->active, 2);
    assert_int_equal(pd_plan_schedule(&s, 1)->wait, 1);
    s.tool = NULL;
    s.settings = NULL;
    assert_string_equal(pd_plan_tool(&s, -1), "torch");
    assert_string_equal(pd_plan_settings(&s, -1), "{}");
}

/* ---- rejections: exact messages ---- */

typedef struct bad_case {
    const char *why;
    void (*make)(pp_window_spec_t *s);
    const char *err;
} bad_case_t;

static int64_t zero_step[] = {0};
static int64_t neg_rank[] = {-1};
static pp_selector_t bad_sel;

static void mk_none(pp_window_spec_t *s)
{
    (void)s;
}
static void mk_two_forms(pp_window_spec_t *s)
{
    s->start = 1;
    s->next = 2;
}
static void mk_step_zero(pp_window_spec_t *s)
{
    s->steps = zero_step;
    s->steps_n = 1;
}
static void mk_end_before(pp_window_spec_t *s)
{
    s->start = 10;
    s->end = 5;
}
static void mk_end_equal(pp_window_spec_t *s)
{
    s->start = 10;
    s->end = 10;
}
static void mk_end_only(pp_window_spec_t *s)
{
    s->end = 5;
}
static void mk_next_neg(pp_window_spec_t *s)
{
    s->next = -3;
}
/* modes are an enumeration: the codec refuses unknown names (test_codec);
 * "mixed" describes windows and is no mode a request may ask for */
static void mk_bad_mode(pp_window_spec_t *s)
{
    s->next = 1;
    s->mode = PP_MODE_MIXED;
}
static void mk_bad_tool(pp_window_spec_t *s)
{
    s->next = 1;
    s->tool = "../x";
}
static void mk_bad_rank(pp_window_spec_t *s)
{
    s->next = 1;
    pp_record_init(&pp_desc_selector, &bad_sel);
    bad_sel.role = "actor";
    bad_sel.ranks = neg_rank;
    bad_sel.ranks_n = 1;
    s->selectors = &bad_sel;
    s->selectors_n = 1;
}
static void mk_bad_phase(pp_window_spec_t *s)
{
    static char *phases[] = {"gen/erate"};
    s->next = 1;
    pp_record_init(&pp_desc_selector, &bad_sel);
    bad_sel.phases = phases;
    bad_sel.phases_n = 1;
    s->selectors = &bad_sel;
    s->selectors_n = 1;
}
static void mk_bad_schedule(pp_window_spec_t *s)
{
    s->next = 1;
    s->schedule.wait = -1;
}

static void test_plan_rejects_bad_requests(void **state)
{
    static const bad_case_t cases[] = {
        {"nothing", mk_none, "no steps: give steps, start/end or next"},
        {"two forms", mk_two_forms, "give only one of steps, start/end and next"},
        {"step 0", mk_step_zero, "steps must be >= 1, found 0"},
        {"end < start", mk_end_before, "end (5) must be greater than start (10), or -1"},
        {"end == start", mk_end_equal, "end (10) must be greater than start (10), or -1"},
        {"end only", mk_end_only, "end given without start"},
        {"next < 0", mk_next_neg, "next must be >= 1, found -3"},
        {"mode", mk_bad_mode, "mode must be e2e or discrete, found 'mixed'"},
        {"tool", mk_bad_tool, "tool must be an identifier, found '../x'"},
        {"rank", mk_bad_rank, "selector 0: ranks must be >= 0, found -1"},
        {"phase", mk_bad_phase, "selector 0: phase must be an identifier, found 'gen/erate'"},
        {"schedule", mk_bad_schedule, "schedule values must be >= 0"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pp_window_spec_t s = spec_steps(NULL, 0, false);
        pd_plan_out_t out;
        char err[256] = "";
        pd_plan_params_t p = params();
        cases[i].make(&s);
        int rv = pd_plan_resolve(&s, job, 8, &p, &out, err, sizeof(err));
        if (rv != PROFD_EINVAL || strcmp(err, cases[i].err) != 0) {
            fail_msg("case '%s': rv %d, err '%s'", cases[i].why, rv, err);
        }
        assert_int_equal(out.n_segments, 0);
        assert_null(out.members);
    }
}

/* Numbers near the int64 edge never overflow: the planner refuses windows
 * out of [0, 2^53) (the codec bounds what the wire gives it, but the
 * planner is called with anything). */
static void test_plan_bounded_arithmetic(void **state)
{
    static const struct {
        const char *why;
        int64_t next, roundup, start, end, step, began_us, step_us;
        const char *err;
    } cases[] = {
        {"next huge", 9200000000000000000LL, 0, PP_NONE, PP_NONE, 10, 0, 100 * MS,
         "next must be at most 9007199254740991, found 9200000000000000000"},
        {"roundup huge", 2, 9200000000000000000LL, PP_NONE, PP_NONE, 10, 0, 100 * MS,
         "roundup must be at most 9007199254740991, found 9200000000000000000"},
        {"next and roundup", 9200000000000000000LL, 9200000000000000000LL, PP_NONE, PP_NONE, 10, 0,
         100 * MS, "next must be at most 9007199254740991, found 9200000000000000000"},
        {"past the last step", 2, 0, PP_NONE, PP_NONE, (1LL << 53) - 2, NOW, 100 * MS,
         "the window would end past step 9007199254740991"},
        {"roundup past the last step", 1, (1LL << 52) + 1, PP_NONE, PP_NONE, 1LL << 52, NOW,
         100 * MS, "the window would end past step 9007199254740991"},
        {"start huge", 0, 0, INT64_MAX - 1, PP_NONE, 10, 0, 100 * MS,
         "start must be at most 9007199254740991, found 9223372036854775806"},
        {"end huge", 0, 0, 5, INT64_MAX, 10, 0, 100 * MS,
         "end must be at most 9007199254740991, found 9223372036854775807"},
        {"rank far ahead in time", 2, 0, PP_NONE, PP_NONE, 10, INT64_MIN + 1, 1,
         "the window would end past step 9007199254740991"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pp_window_spec_t s = spec_steps(NULL, 0, false);
        pd_plan_out_t out;
        char err[256] = "";
        pd_plan_params_t p = params();
        s.next = cases[i].next;
        s.roundup = cases[i].roundup;
        s.start = cases[i].start;
        s.end = cases[i].end;
        pd_plan_rank_t r = job[0];
        r.step = cases[i].step;
        r.step_began_us = cases[i].began_us;
        r.step_us = cases[i].step_us;
        int rv = pd_plan_resolve(&s, &r, 1, &p, &out, err, sizeof(err));
        if (rv != PROFD_EINVAL || strcmp(err, cases[i].err) != 0) {
            fail_msg("case '%s': rv %d, err '%s'", cases[i].why, rv, err);
        }
    }
    int64_t steps[] = {3, INT64_MAX};
    pp_window_spec_t s = spec_steps(steps, 2, true);
    pd_plan_out_t out;
    char err[256] = "";
    pd_plan_params_t p = params();
    assert_int_equal(pd_plan_resolve(&s, job, 8, &p, &out, err, sizeof(err)), PROFD_EINVAL);
    assert_string_equal(err, "steps must be at most 9007199254740991, found 9223372036854775807");
    /* predictions saturate instead of wrapping */
    pd_plan_rank_t r = job[0];
    r.step = (1LL << 53) - 1;
    r.step_began_us = INT64_MIN + 1;
    r.step_us = 1;
    assert_true(pd_plan_predict(&r, INT64_MAX, INT64_MAX) > 0);
    assert_true(pd_plan_stop_step(&r, 1, &p) > 0);
}

/* ---- processes hosting several roles ---- */

/* verl's layout: two hybrid processes (actor, rollout and ref in one, the
 * worker group's RANK 0 and 1), a critic worker group of its own counting
 * from 0 again, and a process whose critic rank is not its global rank. */
static const pd_role_t hybrid0[] = {{"actor", 0}, {"rollout", 0}, {"ref", 0}};
static const pd_role_t hybrid1[] = {{"actor", 1}, {"rollout", 1}, {"ref", 1}};
static const pd_role_t critic0[] = {{"critic", 0}};
static const pd_role_t critic1[] = {{"critic", 1}};
static const pd_role_t mixed7[] = {{"worker", 7}, {"critic", 3}};

static pd_plan_rank_t verl_job[5];

static void verl_setup(void)
{
    static const struct {
        const char *role;
        const pd_role_t *roles;
        size_t n;
        int64_t rank;
    } p[5] = {{"actor", hybrid0, 3, 0},
              {"actor", hybrid1, 3, 1},
              {"critic", critic0, 1, 0},
              {"critic", critic1, 1, 1},
              {"worker", mixed7, 2, 7}};
    for (int i = 0; i < 5; i++) {
        verl_job[i] = (pd_plan_rank_t){.id = 200 + i,
                                       .job = "run",
                                       .role = p[i].role,
                                       .roles = p[i].roles,
                                       .nroles = p[i].n,
                                       .rank = p[i].rank,
                                       .replica_rank = PP_NONE,
                                       .step = 10,
                                       .step_us = 100 * MS,
                                       .step_began_us = NOW};
    }
}

typedef struct roles_case {
    const char *name;
    struct {
        const char *role; /* NULL: any role (the global rank) */
        int64_t ranks[2];
        size_t nranks; /* 0: all_ranks */
    } sel[2];
    size_t nsel; /* 0: no selectors */
    /* per process: the selector (-2: not a member) and the role mask */
    int want_sel[5];
    uint32_t want_roles[5];
} roles_case_t;

static void test_plan_multi_role_selection(void **state)
{
    static const roles_case_t cases[] = {
        {"critic rank 0 is the critic group's rank 0, not the hybrid rank 0",
         {{"critic", {0}, 1}},
         1,
         {-2, -2, 0, -2, -2},
         {0, 0, 1, 0, 0}},
        {"rollout rank 1 selects only that role of hybrid process 1",
         {{"rollout", {1}, 1}},
         1,
         {-2, 0, -2, -2, -2},
         {0, 2, 0, 0, 0}},
        {"two selectors: the first decides the settings, the roles add up",
         {{"ref", {0}, 0}, {"actor", {0}, 1}},
         2,
         {0, 0, -2, -2, -2},
         {5, 4, 0, 0, 0}},
        {"no role: the global rank, every role of the process",
         {{NULL, {0}, 1}},
         1,
         {0, -2, 0, -2, -2},
         {7, 0, 1, 0, 0}},
        {"a role's own rank differs from the global rank",
         {{"critic", {3}, 1}},
         1,
         {-2, -2, -2, -2, 0},
         {0, 0, 0, 0, 2}},
        {"the global rank is not the critic rank",
         {{"critic", {7}, 1}},
         1,
         {-2, -2, -2, -2, -2},
         {0, 0, 0, 0, 0}},
        {"every process, every role", {{NULL, {0}, 0}}, 0, {-1, -1, -1, -1, -1}, {7, 7, 1, 1, 3}},
    };
    verl_setup();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const roles_case_t *c = &cases[i];
        pp_selector_t sels[2];
        pp_window_spec_t s = spec_steps(NULL, 0, false);
        pd_plan_out_t out;
        char err[256] = "";
        pd_plan_params_t p = params();
        s.start = 20;
        s.end = 21;
        for (size_t k = 0; k < c->nsel; k++) {
            sels[k] = sel(c->sel[k].role, c->sel[k].nranks == 0, (int64_t *)c->sel[k].ranks,
                          c->sel[k].nranks, NULL, 0);
        }
        s.selectors = c->nsel ? sels : NULL;
        s.selectors_n = c->nsel;
        if (pd_plan_resolve(&s, verl_job, 5, &p, &out, err, sizeof(err)) != 0) {
            fail_msg("%s: %s", c->name, err);
        }
        for (int r = 0; r < 5; r++) {
            uint32_t roles = 0;
            int got = pd_plan_match_roles(&s, "run", &verl_job[r], &roles);
            if (got != c->want_sel[r] || roles != c->want_roles[r]) {
                fail_msg("%s: process %d: selector %d roles %u, want %d and %u", c->name, r, got,
                         roles, c->want_sel[r], c->want_roles[r]);
            }
            /* the resolved members say the same */
            const pd_plan_member_t *m = NULL;
            for (size_t k = 0; k < out.n_members; k++) {
                m = out.members[k].id == verl_job[r].id ? &out.members[k] : m;
            }
            if ((m != NULL) != (c->want_sel[r] != -2) ||
                (m && (m->selector != c->want_sel[r] || m->roles != c->want_roles[r]))) {
                fail_msg("%s: process %d: member %s", c->name, r, m ? "differs" : "missing");
            }
        }
        pd_plan_out_free(&out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_plan_steps_one_window_per_step, setup),
        cmocka_unit_test_setup(test_plan_steps_continuous_merges_runs, setup),
        cmocka_unit_test_setup(test_plan_range_half_open, setup),
        cmocka_unit_test_setup(test_plan_selects_roles_ranks_replicas, setup),
        cmocka_unit_test_setup(test_plan_selector_without_ranks_selects_none, setup),
        cmocka_unit_test_setup(test_plan_any_role_selector_and_job_filter, setup),
        cmocka_unit_test_setup(test_plan_refuses_unknown_tool, setup),
        cmocka_unit_test_setup(test_plan_refuses_schedule_on_e2e, setup),
        cmocka_unit_test_setup(test_plan_refuses_no_rank_past_start, setup),
        cmocka_unit_test_setup(test_plan_job_of_a_request, setup),
        cmocka_unit_test_setup(test_plan_match_late_joiner, setup),
        cmocka_unit_test_setup(test_plan_next_is_aligned_ahead_of_the_fastest, setup),
        cmocka_unit_test_setup(test_plan_next_unknown_rate_and_no_steps, setup),
        cmocka_unit_test_setup(test_plan_predict_and_stop_step, setup),
        cmocka_unit_test_setup(test_plan_predict_min_step_time, setup),
        cmocka_unit_test_setup(test_plan_selector_overrides, setup),
        cmocka_unit_test_setup(test_plan_rejects_bad_requests, setup),
        cmocka_unit_test_setup(test_plan_bounded_arithmetic, setup),
        cmocka_unit_test(test_plan_multi_role_selection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
