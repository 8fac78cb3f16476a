// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The capture engine: the state machine of the training thread. It takes the
 * adopted plan and the step / phase / sub-step calls, starts and stops the
 * backends exactly at the boundaries the plan names, and emits one result per
 * window when the window is over for this process.
 *
 * Pure with respect to the outside world: folders are created and results
 * delivered through hooks, so tests drive it with fakes. No clock.
 *
 * Fast path: ce_on_* inline functions do a couple of compares when nothing is
 * due; the slow path runs only when a window starts, runs or ends.
 */
#ifndef PROFD_ENGINE_H
#define PROFD_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "profd/client.h"
#include "profd/proto.h"

#define CE_MAX_BACKENDS 8

typedef enum ce_sched_action {
    CE_SCHED_NONE,
    CE_SCHED_WARMUP,
    CE_SCHED_RECORD,
    CE_SCHED_RECORD_AND_SAVE,
} ce_sched_action_t;

/* torch.profiler.schedule() semantics for sub-step i (0-based). */
ce_sched_action_t ce_schedule_action(const profd_schedule_t *s, int64_t i);

typedef struct ce_hooks {
    /* Create a folder and its parents; 0 or a negative profd error. */
    int (*mkdirs)(const char *path, void *arg);
    /* Deliver a finished window's result; the callee owns *res afterwards. */
    void (*emit)(pp_result_t *res, void *arg);
    void *arg;
    /* Optional, both or neither: the clock of the step and phase markers
     * (CLOCK_MONOTONIC, us), read only while a window is due or running;
     * and the writer of a capture's marker file (CE_MARKERS_NAME in `dir`),
     * called just before the backend's stop. */
    int64_t (*now_us)(void *arg);
    void (*markers)(const char *dir, int64_t part, const char *json, size_t len, void *arg);
} ce_hooks_t;

/*
 * Step and phase markers: while a window is due or running, the engine
 * notes every step and phase boundary with its time; when a capture stops,
 * the markers of its span go to the `markers` hook as a small Chrome trace
 * (ProfilerStep#N and role.phase ranges, "cat": "profd", their args holding
 * "profd_mono_us", the rank's CLOCK_MONOTONIC at the range's start, and
 * otherData.profd naming the worker "rank<R>-<role>[-<phase>]"). Backends
 * that can put the markers into their own trace (sim, the Python torch
 * backend) do so and remove the file; for the others it is the sidecar.
 */
#define CE_MARKERS_NAME "profd-markers-p%lld.json"
#define CE_MARKERS_MAX  4096 /* boundaries kept while a window runs */

typedef struct ce_mark {
    int64_t t_us;
    int64_t step;
    int kind; /* 1 step begin, 2 step end, 3 phase begin, 4 phase end */
    char phase[PP_MAX_NAME + 1];
    int role; /* phases: index into id.roles of the phase's role */
} ce_mark_t;

/* A role the process hosts and its rank in that role's own numbering. */
typedef struct ce_role {
    char name[PP_MAX_NAME + 1];
    int64_t rank;
} ce_role_t;

typedef struct ce_identity {
    char job[PP_MAX_NAME + 1];
    char role[PP_MAX_NAME + 1]; /* the primary role (roles[0]) */
    char host[PP_MAX_NAME + 1];
    int64_t rank;
    int64_t replica_rank; /* PP_NONE when none */
    int64_t pid;
    ce_role_t roles[PP_MAX_ROLES]; /* every role it hosts, the primary first */
    int nroles;                    /* >= 1 once ce_init() ran */
} ce_identity_t;

typedef struct ce_cap ce_cap_t;
typedef struct ce_slot ce_slot_t;

typedef struct ce {
    ce_identity_t id;
    ce_hooks_t hooks;
    char spool[PP_MAX_PATH];
    char instance[64];
    struct {
        const profd_backend_t *b;
        void *user;
    } backends[CE_MAX_BACKENDS];
    int nbackends;
    int default_backend; /* index, -1 none */

    ce_slot_t *slots;
    size_t nslots;

    /* where the training thread is */
    int64_t step; /* last step begun; 0 before the first */
    bool in_step;
    bool in_phase;
    int phase_role; /* index into id.roles of the running phase's role */
    char phase[PP_MAX_NAME + 1];
    int64_t substep; /* sub-steps completed in the current phase */

    /* fast-path summary, recomputed on every slow-path transition */
    int64_t next_due; /* smallest first_step of an armed window */
    int busy;         /* windows in progress: every call goes slow */

    int64_t captures_started;

    ce_mark_t *marks; /* while a window is due or running; NULL otherwise */
    size_t nmarks;
    int64_t marks_dropped;
} ce_t;

/* id->roles may be empty (nroles 0): the primary role at id->rank is
 * roles[0]. */
void ce_init(ce_t *e, const ce_identity_t *id, const ce_hooks_t *hooks);

/* Another role of the process (see profd_add_role): its index in
 * id.roles, or PROFD_EINVAL (bad name, negative rank, already there with
 * another rank), PROFD_ELIMIT (PP_MAX_ROLES roles). A role already there
 * with this rank: its index. */
int ce_add_role(ce_t *e, const char *role, int64_t rank);
/* The index of a role in id.roles; NULL: the primary (0); -1: none. */
int ce_role_index(const ce_t *e, const char *role);
/* Ends every capture in progress (truncated), reports every window, frees. */
void ce_fini(ce_t *e);

/* Where captures are written (absolute); set on (re)registration. */
void ce_set_spool(ce_t *e, const char *spool);

/* Register a backend (see profd_set_backend). */
int ce_add_backend(ce_t *e, const profd_backend_t *b, void *user);

/*
 * Adopt a plan. Windows keep their state across plans by id; a window that
 * left the plan is ended (truncated, "window cancelled"); a new window whose
 * start step this process already began is reported missed at once.
 * `plan` must stay valid until the next ce_adopt() or ce_fini().
 * A different `instance` (daemon restarted) drops every previous window.
 */
void ce_adopt(ce_t *e, const pp_plan_t *plan);

void ce_step_begin_slow(ce_t *e, int64_t step);
void ce_step_end_slow(ce_t *e, int64_t step);
void ce_phase_begin_slow(ce_t *e);
void ce_phase_end_slow(ce_t *e);
void ce_substep_slow(ce_t *e);

static inline void ce_on_step_begin(ce_t *e, int64_t step)
{
    e->step = step;
    e->in_step = true;
    e->substep = 0;
    if (step >= e->next_due || e->busy) {
        ce_step_begin_slow(e, step);
    }
}

static inline void ce_on_step_end(ce_t *e, int64_t step)
{
    e->in_step = false;
    if (e->busy) {
        ce_step_end_slow(e, step);
    }
}

/* `phase` must already be a valid identifier. */
static inline void ce_on_phase_end(ce_t *e);

/* `role` is an index into id.roles (0: the primary role). */
static inline void ce_on_phase_begin(ce_t *e, int role, const char *phase, size_t len)
{
    if (e->in_phase) { /* phases do not nest: the previous one ends here */
        ce_on_phase_end(e);
    }
    __builtin_memcpy(e->phase, phase, len + 1);
    e->phase_role = role;
    e->in_phase = true;
    e->substep = 0;
    if (e->busy) {
        ce_phase_begin_slow(e);
    }
}

static inline void ce_on_phase_end(ce_t *e)
{
    if (e->busy) {
        ce_phase_end_slow(e);
    }
    e->in_phase = false;
}

static inline void ce_on_substep(ce_t *e)
{
    if (e->busy) {
        ce_substep_slow(e);
    }
    e->substep++;
}

#endif
