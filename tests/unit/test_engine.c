// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Client engine and ring: the training thread's state machine driven with a
 * fake backend that records every call, fake folder creation and a results
 * collector. No daemon, no sockets, no clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "ring.h"
#include "unit_fixture.h"

/* ---- fakes ---- */

#define MAX_CALLS 256
typedef struct call {
    char what[8];
    int64_t window, step, substep, part;
    char phase[PP_MAX_NAME + 1];
    char dir[PP_MAX_PATH];
} call_t;

typedef struct fake {
    call_t calls[MAX_CALLS];
    int ncalls;
    int fail_start_at; /* fail the n-th start (1-based), 0 never */
    int starts;
    char dirs[16][PP_MAX_PATH];
    int ndirs;
    pp_result_t *results[16];
    int nresults;
} fake_t;

static fake_t F;

static void record(const char *what, const profd_capture_t *cap)
{
    call_t *c = &F.calls[F.ncalls++];
    snprintf(c->what, sizeof(c->what), "%s", what);
    c->window = cap->window_id;
    c->step = cap->step;
    c->substep = cap->substep;
    c->part = cap->part;
    snprintf(c->phase, sizeof(c->phase), "%s", cap->phase ? cap->phase : "");
    snprintf(c->dir, sizeof(c->dir), "%s", cap->dir);
}

static int fake_start(const profd_capture_t *cap, void *user, char *reason, size_t len)
{
    record("start", cap);
    if (++F.starts == F.fail_start_at) {
        snprintf(reason, len, "fake: no device");
        return PROFD_EBACKEND;
    }
    return 0;
}

static int fake_stop(const profd_capture_t *cap, void *user, char *reason, size_t len)
{
    record("stop", cap);
    return 0;
}

static int fake_substep(const profd_capture_t *cap, void *user, char *reason, size_t len)
{
    record("sub", cap);
    return 0;
}

static const profd_backend_t fake_backend = {"fake", 0, fake_start, fake_stop, NULL};
static const profd_backend_t native_backend = {"native", PROFD_BACKEND_NATIVE_SCHEDULE, fake_start,
                                               fake_stop, fake_substep};

static int fake_mkdirs(const char *path, void *arg)
{
    snprintf(F.dirs[F.ndirs++], PP_MAX_PATH, "%s", path);
    return strstr(path, "nodir") ? PROFD_EIO : 0;
}

static void fake_emit(pp_result_t *res, void *arg)
{
    F.results[F.nresults++] = res;
}

static ce_t E;

/* E as rank 3 of role actor on node1 with the fake backend, spool /spool. */
static void engine_init(const ce_hooks_t *hooks)
{
    ce_identity_t id = {.job = "run",
                        .role = "actor",
                        .host = "node1",
                        .rank = 3,
                        .replica_rank = PP_NONE,
                        .pid = 4242};
    ce_init(&E, &id, hooks);
    ce_set_spool(&E, "/spool");
    assert_int_equal(ce_add_backend(&E, &fake_backend, NULL), 0);
}

static int setup(void **state)
{
    for (int i = 0; i < F.nresults; i++) {
        pp_record_free(&pp_desc_result, F.results[i]);
        free(F.results[i]);
    }
    memset(&F, 0, sizeof(F));
    ce_hooks_t hooks = {fake_mkdirs, fake_emit, NULL, NULL, NULL};
    engine_init(&hooks);
    return 0;
}

static int teardown(void **state)
{
    ce_fini(&E);
    return setup(state);
}

/* A plan with one window. */
static pp_plan_entry_t entry;
static pp_plan_t plan;
static char *phases_buf[4];

/* e: window `id` of job "run" with the fake backend over [first, last],
 * in `mode`, for one phase (NULL: none). */
static void fill_entry(pp_plan_entry_t *e, int64_t id, const char *name, int64_t first,
                       int64_t last, const char *mode, const char *phase)
{
    pp_record_init(&pp_desc_plan_entry, e);
    e->window = id;
    e->name = (char *)name;
    e->job = "run";
    e->first_step = first;
    e->last_step = last;
    e->tool = "fake";
    e->mode = (pp_mode_t)pp_enum_value(&pp_enum_mode, mode);
    if (phase) {
        phases_buf[0] = (char *)phase;
        e->phases = phases_buf;
        e->phases_n = 1;
    }
}

static const pp_plan_t *plan1(int64_t id, const char *name, int64_t first, int64_t last,
                              const char *mode, const char *phase)
{
    fill_entry(&entry, id, name, first, last, mode, phase);
    pp_record_init(&pp_desc_plan, &plan);
    plan.gen = id;
    plan.instance = "i1";
    plan.entries = &entry;
    plan.entries_n = 1;
    return &plan;
}

static void step(int64_t s)
{
    ce_on_step_begin(&E, s);
    ce_on_step_end(&E, s);
}

static void phase(const char *p, int substeps)
{
    ce_on_phase_begin(&E, 0, p, strlen(p));
    for (int i = 0; i < substeps; i++) {
        ce_on_substep(&E);
    }
    ce_on_phase_end(&E);
}

/* The first capture of result i has status `status` and reason `reason`
 * (NULL: none). */
static void outcome(int i, const char *status, const char *reason)
{
    const pp_capture_t *c = &F.results[i]->captures[0];
    assert_string_equal(pp_status_name(c->status), status);
    if (reason != NULL) {
        assert_string_equal(c->reason, reason);
    } else {
        assert_null(c->reason);
    }
}

/* The worker closes during step s: `n` results, the first truncated at s
 * with `reason`. */
static void closed_during(int64_t s, int n, const char *reason)
{
    ce_on_step_begin(&E, s);
    ce_fini(&E);
    assert_int_equal(F.nresults, n);
    outcome(0, "truncated", reason);
    assert_int_equal(F.results[0]->captures[0].last_step, s);
}

static void assert_call(int i, const char *what, int64_t step, int64_t substep, int64_t part)
{
    if (i >= F.ncalls) {
        fail_msg("call %d missing (%d calls)", i, F.ncalls);
    }
    assert_string_equal(F.calls[i].what, what);
    assert_int_equal(F.calls[i].step, step);
    assert_int_equal(F.calls[i].substep, substep);
    assert_int_equal(F.calls[i].part, part);
}

/* ---- ring ---- */

static void test_ring_push_pop_and_drop(void **state)
{
    cl_ring_t *r = malloc(sizeof(*r));
    cl_event_t out[8];
    cl_ring_init(r);
    for (unsigned i = 0; i < CL_RING_SIZE; i++) {
        assert_true(cl_ring_push(r, CL_EV_STEP_BEGIN, i, 10 * i));
    }
    assert_false(cl_ring_push(r, CL_EV_STEP_END, 99, 0)); /* full: dropped, counted */
    assert_int_equal(cl_ring_dropped(r), 1);
    assert_int_equal(cl_ring_pop(r, out, 8), 8);
    assert_int_equal(out[0].step, 0);
    assert_int_equal(out[7].step, 7);
    assert_int_equal(out[7].tick, 70);
    assert_true(cl_ring_push(r, CL_EV_STEP_END, 5000, 1)); /* room again */
    unsigned total = 0, n;
    int64_t last = -1;
    while ((n = cl_ring_pop(r, out, 8)) > 0) {
        total += n;
        last = out[n - 1].step;
    }
    assert_int_equal(total, CL_RING_SIZE - 8 + 1);
    assert_int_equal(last, 5000);
    free(r);
}

/* ---- schedule ---- */

static void test_engine_schedule_matches_torch(void **state)
{
    /* torch.profiler.schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2) */
    profd_schedule_t s = {1, 1, 1, 2, 2};
    static const ce_sched_action_t want[] = {
        CE_SCHED_NONE,
        CE_SCHED_NONE,
        CE_SCHED_WARMUP,
        CE_SCHED_RECORD,
        CE_SCHED_RECORD_AND_SAVE,
        CE_SCHED_NONE,
        CE_SCHED_WARMUP,
        CE_SCHED_RECORD,
        CE_SCHED_RECORD_AND_SAVE,
        CE_SCHED_NONE,
        CE_SCHED_NONE,
        CE_SCHED_NONE,
    };
    for (int i = 0; i < 12; i++) {
        assert_int_equal(ce_schedule_action(&s, i), want[i]);
    }
    profd_schedule_t forever = {0, 0, 0, 1, 0};
    for (int i = 0; i < 50; i++) {
        assert_int_equal(ce_schedule_action(&forever, i), CE_SCHED_RECORD_AND_SAVE);
    }
    profd_schedule_t none = {0, 0, 0, 0, 0};
    assert_int_equal(ce_schedule_action(&none, 7), CE_SCHED_RECORD);
}

/* ---- e2e ---- */

/* ---- step and phase markers ---- */

static int64_t fake_clock;
static char marker_json[4][8192];
static char marker_dir[4][PP_MAX_PATH];
static int nmarkers;

static int64_t fake_now(void *arg)
{
    return fake_clock += 1000; /* every reading 1 ms later */
}

static void fake_markers(const char *dir, int64_t part, const char *json, size_t len, void *arg)
{
    assert_true(nmarkers < 4);
    assert_int_equal(strlen(json), len);
    snprintf(marker_dir[nmarkers], PP_MAX_PATH, "%s/p%lld", dir, (long long)part);
    snprintf(marker_json[nmarkers++], sizeof(marker_json[0]), "%s", json);
}

static void test_engine_markers_of_a_capture(void **state)
{
    /* markers on: an e2e window over steps 3-4 */
    ce_fini(&E);
    ce_hooks_t hooks = {fake_mkdirs, fake_emit, NULL, fake_now, fake_markers};
    fake_clock = 0;
    nmarkers = 0;
    engine_init(&hooks);
    ce_adopt(&E, plan1(1, "w1-steps3-4", 3, 4, "e2e", NULL));
    step(1); /* nothing due: no clock read, no marker */
    assert_int_equal(fake_clock, 0);
    assert_int_equal(E.nmarks, 0);
    ce_on_step_begin(&E, 3);  /* mark 1000; capture start 2000 */
    phase("generate", 0);     /* 3000 .. 4000 */
    ce_on_step_end(&E, 3);    /* 5000 */
    ce_on_step_begin(&E, 4);  /* 6000 */
    phase("update_actor", 0); /* 7000 .. 8000 */
    ce_on_step_end(&E, 4);    /* 9000; markers written at 10000, then stop */
    assert_int_equal(nmarkers, 1);
    assert_string_equal(marker_dir[0], "/spool/run/w1-steps3-4/e2e/rank3-node1/p0");
    const char *j = marker_json[0];
    assert_non_null(strstr(j, "{\"name\":\"ProfilerStep#3\",\"ph\":\"X\",\"cat\":\"profd\","
                              "\"ts\":1000,\"dur\":4000,\"pid\":4242,\"tid\":0,\"args\":"
                              "{\"step\":3,\"profd_mono_us\":1000}}"));
    assert_non_null(strstr(j, "{\"name\":\"actor.generate\",\"ph\":\"X\",\"cat\":\"profd\","
                              "\"ts\":3000,\"dur\":1000,\"pid\":4242,\"tid\":0,\"args\":"
                              "{\"step\":3,\"phase\":\"generate\",\"profd_mono_us\":3000}}"));
    assert_non_null(strstr(j, "\"name\":\"ProfilerStep#4\",\"ph\":\"X\",\"cat\":\"profd\","
                              "\"ts\":6000,\"dur\":3000,"));
    assert_non_null(strstr(j, "\"name\":\"actor.update_actor\",\"ph\":\"X\",\"cat\":"
                              "\"profd\",\"ts\":7000,\"dur\":1000,"));
    assert_non_null(strstr(j, "\"worker\":\"rank3-actor\""));
    assert_non_null(strstr(j, "\"capture_role\":\"e2e\",\"phase\":null,\"part\":0,"
                              "\"start_us\":2000,\"stop_us\":10000"));
    assert_null(strstr(j, "profd_open"));
    /* the window is over: markers cleared, and no clock read any more */
    assert_int_equal(E.nmarks, 0);
    int64_t t = fake_clock;
    step(5);
    assert_int_equal(fake_clock, t);

    /* discrete: the step is still open when the phase's capture stops */
    ce_adopt(&E, plan1(2, "w2-step7", 7, 7, "discrete", "generate"));
    ce_on_step_begin(&E, 7);
    phase("generate", 0);
    assert_int_equal(nmarkers, 2);
    j = marker_json[1];
    assert_non_null(strstr(j, "\"name\":\"ProfilerStep#7\""));
    assert_non_null(strstr(j, "\"profd_open\":true"));
    assert_non_null(strstr(j, "\"name\":\"actor.generate\""));
    assert_non_null(strstr(j, "\"worker\":\"rank3-actor-generate\""));
    ce_on_step_end(&E, 7);
}

static void test_engine_e2e_window_exact_steps(void **state)
{
    ce_adopt(&E, plan1(1, "w1-steps3-4", 3, 4, "e2e", NULL));
    assert_int_equal(E.next_due, 3);
    assert_int_equal(E.busy, 0);
    step(1);
    step(2);
    assert_int_equal(F.ncalls, 0);
    ce_on_step_begin(&E, 3);
    assert_int_equal(F.ncalls, 1);
    assert_call(0, "start", 3, 0, 0);
    assert_string_equal(F.calls[0].dir, "/spool/run/w1-steps3-4/e2e/rank3-node1");
    assert_string_equal(F.dirs[0], "/spool/run/w1-steps3-4/e2e/rank3-node1");
    assert_int_equal(E.busy, 1);
    phase("update_actor", 3); /* phases do not matter end to end */
    ce_on_step_end(&E, 3);
    assert_int_equal(F.ncalls, 1);
    step(4);
    assert_int_equal(F.ncalls, 2);
    assert_call(1, "stop", 4, 0, 0);
    assert_int_equal(E.busy, 0);
    assert_int_equal(E.next_due, INT64_MAX);

    assert_int_equal(F.nresults, 1);
    pp_result_t *r = F.results[0];
    assert_int_equal(r->window, 1);
    assert_int_equal(r->captures_n, 1);
    pp_capture_t *c = &r->captures[0];
    assert_string_equal(c->role, "e2e");
    assert_null(c->phase);
    assert_int_equal(c->rank, 3);
    assert_int_equal(c->first_step, 3);
    assert_int_equal(c->last_step, 4);
    assert_string_equal(pp_status_name(c->status), "complete");
    assert_null(c->reason);
    assert_string_equal(c->dir, "run/w1-steps3-4/e2e/rank3-node1");
    assert_int_equal(c->pid, 4242);
    step(5);
    assert_int_equal(F.ncalls, 2);
}

static void test_engine_missed_when_plan_arrives_late(void **state)
{
    step(1);
    ce_on_step_begin(&E, 2);
    ce_adopt(&E, plan1(7, "w7-step2", 2, 2, "e2e", NULL));
    assert_int_equal(F.ncalls, 0);
    assert_int_equal(F.nresults, 1);
    pp_capture_t *c = &F.results[0]->captures[0];
    assert_string_equal(pp_status_name(c->status), "missed");
    assert_string_equal(c->reason, "plan arrived at step 2, after start step 2");
    assert_int_equal(c->first_step, PP_NONE);
    assert_null(c->dir);
    /* stays missed: no capture later */
    ce_on_step_end(&E, 2);
    step(3);
    assert_int_equal(F.ncalls, 0);
    assert_int_equal(F.nresults, 1);
}

static void test_engine_missed_when_start_step_skipped(void **state)
{
    ce_adopt(&E, plan1(2, "w2-step5", 5, 5, "e2e", NULL));
    step(4);
    step(6); /* the job jumped over step 5 */
    assert_int_equal(F.ncalls, 0);
    assert_int_equal(F.nresults, 1);
    outcome(0, "missed", "start step 5 was never begun (went to 6)");
}

static void test_engine_backend_failure_marks_failed(void **state)
{
    F.fail_start_at = 1;
    ce_adopt(&E, plan1(3, "w3-step1", 1, 1, "e2e", NULL));
    step(1);
    assert_int_equal(F.ncalls, 1); /* start only: no stop after a failed start */
    assert_int_equal(F.nresults, 1);
    pp_capture_t *c = &F.results[0]->captures[0];
    assert_string_equal(pp_status_name(c->status), "failed");
    assert_string_equal(c->reason, "fake: no device");
}

static void test_engine_no_backend_for_tool(void **state)
{
    ce_t e2;
    ce_identity_t id = {
        .job = "run", .role = "ref", .host = "h", .rank = 0, .replica_rank = PP_NONE, .pid = 1};
    ce_hooks_t hooks = {fake_mkdirs, fake_emit, NULL, NULL, NULL};
    ce_init(&e2, &id, &hooks);
    ce_set_spool(&e2, "/s");
    ce_adopt(&e2, plan1(4, "w4-step1", 1, 1, "e2e", NULL));
    ce_on_step_begin(&e2, 1);
    ce_on_step_end(&e2, 1);
    assert_int_equal(F.nresults, 1);
    outcome(0, "failed", "no profiler backend for tool 'fake' in this process");
    ce_fini(&e2);
}

static void test_engine_mkdir_failure(void **state)
{
    ce_set_spool(&E, "/nodir");
    ce_adopt(&E, plan1(5, "w5-step1", 1, 1, "e2e", NULL));
    step(1);
    assert_int_equal(F.ncalls, 0);
    outcome(0, "failed", "cannot create /nodir/run/w5-step1/e2e/rank3-node1: input/output error");
}

/* ---- discrete ---- */

static void test_engine_discrete_one_capture_per_phase(void **state)
{
    ce_adopt(&E, plan1(6, "w6-step2", 2, 2, "discrete", NULL));
    step(1);
    ce_on_step_begin(&E, 2);
    phase("compute_log_prob", 2);
    phase("update_actor", 1);
    ce_on_step_end(&E, 2);
    assert_int_equal(F.ncalls, 4);
    assert_call(0, "start", 2, 0, 0);
    assert_string_equal(F.calls[0].phase, "compute_log_prob");
    assert_string_equal(F.calls[0].dir, "/spool/run/w6-step2/actor.compute_log_prob/rank3-node1");
    assert_call(1, "stop", 2, 2, 0);
    assert_call(2, "start", 2, 0, 0);
    assert_string_equal(F.calls[2].dir, "/spool/run/w6-step2/actor.update_actor/rank3-node1");
    assert_call(3, "stop", 2, 1, 0);
    assert_int_equal(F.nresults, 1);
    pp_result_t *r = F.results[0];
    assert_int_equal(r->captures_n, 2);
    assert_string_equal(r->captures[0].role, "actor");
    assert_string_equal(r->captures[0].phase, "compute_log_prob");
    assert_string_equal(r->captures[1].phase, "update_actor");
    assert_int_equal(r->captures[1].first_step, 2);
    assert_int_equal(r->captures[1].last_step, 2);
    assert_string_equal(r->captures[1].dir, "run/w6-step2/actor.update_actor/rank3-node1");
    assert_int_equal(r->captures[1].substeps_n, 0); /* no schedule: no spans */
}

/* A phase of one of the process's roles (index into its roles). */
static void role_phase(int role, const char *p)
{
    ce_on_phase_begin(&E, role, p, strlen(p));
    ce_on_phase_end(&E);
}

/* verl's hybrid engine: actor (rank 3), rollout (rank 3) and a ref
 * numbered on its own (rank 0) in one process. A discrete window that
 * selects rollout and ref captures their phases only, named with each
 * role's own rank; several roles may run a phase of the same name. */
static void test_engine_multi_role_discrete(void **state)
{
    static char *roles[] = {"rollout", "ref"};
    assert_int_equal(ce_add_role(&E, "rollout", 3), 1);
    assert_int_equal(ce_add_role(&E, "ref", 0), 2);
    assert_int_equal(ce_add_role(&E, "ref", 0), 2);            /* again: the same */
    assert_int_equal(ce_add_role(&E, "ref", 1), PROFD_EINVAL); /* another rank */
    assert_int_equal(ce_add_role(&E, "e2e", 1), PROFD_EINVAL);
    assert_int_equal(ce_role_index(&E, NULL), 0);
    assert_int_equal(ce_role_index(&E, "critic"), -1);
    const pp_plan_t *p = plan1(6, "w6-step2", 2, 2, "discrete", NULL);
    entry.roles = roles;
    entry.roles_n = 2;
    ce_adopt(&E, p);
    ce_on_step_begin(&E, 2);
    role_phase(1, "generate");
    role_phase(0, "compute_log_prob");
    role_phase(2, "compute_log_prob");
    role_phase(0, "update_actor");
    ce_on_step_end(&E, 2);
    assert_int_equal(F.ncalls, 4);
    assert_string_equal(F.calls[0].dir, "/spool/run/w6-step2/rollout.generate/rank3-node1");
    assert_string_equal(F.calls[2].dir, "/spool/run/w6-step2/ref.compute_log_prob/rank0-node1");
    assert_int_equal(F.nresults, 1);
    pp_result_t *r = F.results[0];
    assert_int_equal(r->captures_n, 2);
    assert_string_equal(r->captures[0].role, "rollout");
    assert_int_equal(r->captures[0].rank, 3);
    assert_string_equal(r->captures[1].role, "ref");
    assert_string_equal(r->captures[1].phase, "compute_log_prob");
    assert_int_equal(r->captures[1].rank, 0);
    assert_int_equal(r->captures[1].roles_n, 0);
}

/* End to end: one capture per process and step whatever its roles; it
 * lists them; pid_dir puts the pid in the folder. */
static void test_engine_multi_role_e2e(void **state)
{
    assert_int_equal(ce_add_role(&E, "rollout", 3), 1);
    const pp_plan_t *p = plan1(4, "w4-step2", 2, 2, "e2e", NULL);
    entry.pid_dir = true;
    ce_adopt(&E, p);
    ce_on_step_begin(&E, 2);
    role_phase(1, "generate");
    role_phase(0, "update_actor");
    ce_on_step_end(&E, 2);
    assert_int_equal(F.ncalls, 2);
    assert_string_equal(F.calls[0].dir, "/spool/run/w4-step2/e2e/rank3-node1-pid4242");
    assert_int_equal(F.nresults, 1);
    pp_result_t *r = F.results[0];
    assert_int_equal(r->captures_n, 1);
    assert_string_equal(r->captures[0].role, "e2e");
    assert_string_equal(r->captures[0].dir, "run/w4-step2/e2e/rank3-node1-pid4242");
    assert_int_equal(r->captures[0].roles_n, 2);
    assert_string_equal(r->captures[0].roles[0], "actor");
    assert_string_equal(r->captures[0].roles[1], "rollout");
}

static void test_engine_discrete_phase_filter_multi_step(void **state)
{
    ce_adopt(&E, plan1(8, "w8-steps1-2", 1, 2, "discrete", "update_actor"));
    for (int s = 1; s <= 3; s++) {
        ce_on_step_begin(&E, s);
        phase("compute_log_prob", 1);
        phase("update_actor", 1);
        ce_on_step_end(&E, s);
    }
    assert_int_equal(F.ncalls, 4); /* update_actor in steps 1 and 2 only */
    assert_string_equal(F.calls[0].dir,
                        "/spool/run/w8-steps1-2/actor.update_actor/rank3-node1/step1");
    assert_string_equal(F.calls[2].dir,
                        "/spool/run/w8-steps1-2/actor.update_actor/rank3-node1/step2");
    assert_int_equal(F.nresults, 1);
    assert_int_equal(F.results[0]->captures_n, 2);
    assert_int_equal(F.results[0]->captures[0].first_step, 1);
    assert_int_equal(F.results[0]->captures[1].first_step, 2);
    assert_string_equal(F.results[0]->captures[1].dir,
                        "run/w8-steps1-2/actor.update_actor/rank3-node1/step2");
}

static void test_engine_discrete_no_matching_phase(void **state)
{
    ce_adopt(&E, plan1(9, "w9-step1", 1, 1, "discrete", "generate"));
    ce_on_step_begin(&E, 1);
    phase("update_actor", 2);
    ce_on_step_end(&E, 1);
    assert_int_equal(F.ncalls, 0);
    assert_int_equal(F.nresults, 1);
    outcome(0, "missed", "no matching phase ran in steps 1-1");
    assert_string_equal(F.results[0]->captures[0].role, "actor");
}

/* One discrete window on step 1 with a schedule, over a phase "generate" of
 * nsub sub-steps: the backend calls and the recorded spans expected. */
typedef struct sched_case {
    int64_t window;
    const char *name, *phase, *tool; /* tool: NULL for "fake" */
    pp_schedule_t schedule;
    int nsub;
    int ncalls;
    struct {
        const char *what;
        int64_t step, substep, part;
    } calls[8];
    size_t nspans;
    pp_span_t spans[2];
} sched_case_t;

static void check_schedule(const sched_case_t *k)
{
    const pp_plan_t *p = plan1(k->window, k->name, 1, 1, "discrete", k->phase);
    if (k->tool) {
        entry.tool = (char *)k->tool;
    }
    entry.schedule = k->schedule;
    ce_adopt(&E, p);
    ce_on_step_begin(&E, 1);
    phase("generate", k->nsub);
    ce_on_step_end(&E, 1);
    assert_int_equal(F.ncalls, k->ncalls);
    for (int i = 0; i < k->ncalls; i++) {
        assert_call(i, k->calls[i].what, k->calls[i].step, k->calls[i].substep, k->calls[i].part);
    }
    pp_capture_t *c = &F.results[0]->captures[0];
    assert_int_equal(c->substeps_n, k->nspans);
    for (size_t i = 0; i < k->nspans; i++) {
        assert_int_equal(c->substeps[i].first, k->spans[i].first);
        assert_int_equal(c->substeps[i].last, k->spans[i].last);
    }
    assert_string_equal(pp_status_name(c->status), "complete");
}

static void test_engine_schedule_spans_non_native(void **state)
{
    /* record sub-steps 3 and 4 only: one start before 3, one stop after 4 */
    static const sched_case_t k = {
        .window = 10,
        .name = "w10-step1",
        .phase = "generate",
        .schedule = {.skip_first = 1, .wait = 1, .warmup = 1, .active = 2, .repeat = 1},
        .nsub = 8,
        .ncalls = 2,
        .calls = {{"start", 1, 3, 0}, {"stop", 1, 5, 0}},
        .nspans = 1,
        .spans = {{.first = 3, .last = 4}},
    };
    check_schedule(&k);
}

static void test_engine_schedule_repeat_cycles(void **state)
{
    /* cycles of (wait, active): record 1 and 3 */
    static const sched_case_t k = {
        .window = 11,
        .name = "w11-step1",
        .schedule = {.wait = 1, .active = 1, .repeat = 2},
        .nsub = 6,
        .ncalls = 4,
        .calls = {{"start", 1, 1, 0}, {"stop", 1, 2, 0}, {"start", 1, 3, 1}, {"stop", 1, 4, 1}},
        .nspans = 2,
        .spans = {{.first = 1, .last = 1}, {.first = 3, .last = 3}},
    };
    check_schedule(&k);
}

static void test_engine_schedule_native_backend(void **state)
{
    /* native: start once, substep() every sub-step, stop at the phase end */
    static const sched_case_t k = {
        .window = 12,
        .name = "w12-step1",
        .tool = "native",
        .schedule = {.wait = 1, .warmup = 1, .active = 2, .repeat = 1},
        .nsub = 5,
        .ncalls = 7,
        .calls = {{"start", 1, 0, 0},
                  {"sub", 1, 0, 0},
                  {"sub", 1, 1, 0},
                  {"sub", 1, 2, 0},
                  {"sub", 1, 3, 0},
                  {"sub", 1, 4, 0},
                  {"stop", 1, 5, 0}},
        .nspans = 1,
        .spans = {{.first = 2, .last = 3}},
    };
    assert_int_equal(ce_add_backend(&E, &native_backend, NULL), 0);
    check_schedule(&k);
}

/* ---- plan changes ---- */

static void test_engine_stop_shortens_open_window(void **state)
{
    ce_adopt(&E, plan1(13, "w13-from2", 2, PP_NONE, "e2e", NULL));
    step(1);
    step(2);
    step(3);
    assert_int_equal(F.ncalls, 1);
    ce_on_step_begin(&E, 4);
    entry.last_step = 4; /* profctl stop: ends after step 4 */
    ce_adopt(&E, &plan);
    assert_int_equal(F.ncalls, 1);
    ce_on_step_end(&E, 4);
    assert_int_equal(F.ncalls, 2);
    assert_call(1, "stop", 4, 0, 0);
    assert_int_equal(F.results[0]->captures[0].first_step, 2);
    assert_int_equal(F.results[0]->captures[0].last_step, 4);
    assert_string_equal(pp_status_name(F.results[0]->captures[0].status), "complete");
}

static void test_engine_window_cancelled_and_restart(void **state)
{
    ce_adopt(&E, plan1(14, "w14-steps1-5", 1, 5, "e2e", NULL));
    step(1);
    ce_on_step_begin(&E, 2);
    pp_plan_t empty;
    pp_record_init(&pp_desc_plan, &empty);
    empty.instance = "i1";
    ce_adopt(&E, &empty);
    assert_int_equal(F.ncalls, 2);
    assert_call(1, "stop", 2, 0, 0);
    outcome(0, "truncated", "window cancelled at step 2");
    ce_on_step_end(&E, 2);

    /* same id from a restarted daemon (new instance): a new window */
    const pp_plan_t *p = plan1(14, "w14-step3", 3, 3, "e2e", NULL);
    plan.instance = "i2";
    ce_adopt(&E, p);
    step(3);
    assert_int_equal(F.ncalls, 4);
    assert_int_equal(F.nresults, 2);
    assert_string_equal(pp_status_name(F.results[1]->captures[0].status), "complete");
}

static void test_engine_close_truncates_and_misses(void **state)
{
    pp_plan_entry_t two[2];
    pp_plan_t p;
    fill_entry(&two[0], 20, "w20-steps1-9", 1, 9, "e2e", NULL);
    fill_entry(&two[1], 21, "w21-step50", 50, 50, "e2e", NULL);
    pp_record_init(&pp_desc_plan, &p);
    p.instance = "i1";
    p.entries = two;
    p.entries_n = 2;
    ce_adopt(&E, &p);
    step(1);
    closed_during(2, 2, "worker closed during step 2");
    outcome(1, "missed", "worker closed before step 50");
}

/* A window until the job ends ([start, -1)): a worker that closes between
 * steps took it whole (complete, up to its last step); one that closes
 * during a step did not (truncated). */
static void test_engine_open_window_ends_with_the_job(void **state)
{
    ce_adopt(&E, plan1(22, "w22-from3", 3, PP_NONE, "e2e", NULL));
    step(2);
    step(3);
    step(4);
    step(5);
    ce_fini(&E);
    assert_int_equal(F.nresults, 1);
    assert_int_equal(F.ncalls, 2);
    assert_call(0, "start", 3, 0, 0);
    assert_call(1, "stop", 5, 0, 0);
    outcome(0, "complete", NULL);
    assert_int_equal(F.results[0]->captures[0].first_step, 3);
    assert_int_equal(F.results[0]->captures[0].last_step, 5);
}

static void test_engine_open_window_closed_mid_step(void **state)
{
    ce_adopt(&E, plan1(23, "w23-from3", 3, PP_NONE, "e2e", NULL));
    step(3);
    closed_during(4, 1, "worker closed during step 4");
}

int main(void)
{
    int plain =
        PD_RUN_EACH(NULL, NULL, test_ring_push_pop_and_drop, test_engine_schedule_matches_torch);
    return unit_exit2(
        plain,
        PD_RUN_EACH(
            setup, teardown, test_engine_e2e_window_exact_steps,
            test_engine_missed_when_plan_arrives_late, test_engine_missed_when_start_step_skipped,
            test_engine_backend_failure_marks_failed, test_engine_no_backend_for_tool,
            test_engine_mkdir_failure, test_engine_discrete_one_capture_per_phase,
            test_engine_discrete_phase_filter_multi_step, test_engine_discrete_no_matching_phase,
            test_engine_multi_role_discrete, test_engine_multi_role_e2e,
            test_engine_schedule_spans_non_native, test_engine_schedule_repeat_cycles,
            test_engine_schedule_native_backend, test_engine_stop_shortens_open_window,
            test_engine_window_cancelled_and_restart, test_engine_close_truncates_and_misses,
            test_engine_open_window_ends_with_the_job, test_engine_open_window_closed_mid_step,
            test_engine_markers_of_a_capture));
}
