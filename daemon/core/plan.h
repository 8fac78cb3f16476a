// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The window planner: a pure function. A window request, a snapshot of the
 * registered ranks and the current time go in; the resolved windows come out
 * (which steps, which ranks with which tool settings, warnings). No I/O, no
 * clock, no sockets: tested by tables.
 *
 * Semantics (README "Window semantics"):
 *  - steps [a, b, ...]: one window per step; with `continuous`, one window
 *    per run of consecutive steps.
 *  - start/end: one window [start, end); end -1 = until the job ends.
 *  - next N: one window [S, S+N) where S is the first step every selected
 *    rank can still reach: ahead of each rank's predicted step at
 *    now + delivery latency + margin, from its measured step time; rounded
 *    up to a multiple of `roundup` when set.
 *  - selectors: a process is selected by the first selector whose role it
 *    hosts (NULL = any role) and that selects it by all_ranks, ranks or
 *    replica_ranks (inference replica index); a selector with a role tests
 *    the process's rank in that role's own numbering (verl numbers each
 *    worker group from 0), one without a role its global rank; no
 *    selectors = every process. A process hosting several roles may be
 *    selected for several of them: the window captures the phases of each
 *    role some selector selects (the member's role mask).
 *  - per-selector tool, mode, settings, schedule override the request's.
 */
#ifndef PD_PLAN_H
#define PD_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/proto.h"

/* Step times below this are treated as this (1 ms). */
#define PD_PLAN_MIN_STEP_US 1000

/* A role a process hosts, with its rank in that role's numbering. */
typedef struct pd_role {
    char name[PP_MAX_NAME + 1];
    int64_t rank;
} pd_role_t;

/* One registered rank (a process) as the planner sees it. */
typedef struct pd_plan_rank {
    int64_t id; /* registry id */
    const char *job;
    const char *role;       /* the primary role */
    const pd_role_t *roles; /* every role it hosts, the primary first; NULL, 0: `role` at `rank` */
    size_t nroles;
    int64_t rank;         /* global rank */
    int64_t replica_rank; /* PP_NONE when not a replica */
    int64_t step;         /* last step begun, PP_NONE before the first */
    bool in_step;
    int64_t step_began_us; /* when `step` began (monotonic, us) */
    int64_t step_us;       /* measured step time, 0 when unknown */
} pd_plan_rank_t;

typedef struct pd_plan_params {
    int64_t now_us;
    int64_t latency_us; /* plan delivery estimate (p99) */
    int64_t margin_us;  /* extra safety margin */
    const char *default_job;
    const char *custom_tools; /* "a,b": tools beyond the built-in ones; NULL none */
} pd_plan_params_t;

/* A step segment: one window. last PP_NONE = open-ended. */
typedef struct pd_plan_segment {
    int64_t first;
    int64_t last;
} pd_plan_segment_t;

/* A selected rank and the selector that selected it. */
typedef struct pd_plan_member {
    int64_t id;
    int selector;   /* index into spec->selectors, -1 when the spec has none */
    uint32_t roles; /* bit i: the rank's roles[i] is selected */
} pd_plan_member_t;

typedef struct pd_plan_out {
    char job[PP_MAX_NAME + 1];
    pd_plan_segment_t *segments;
    size_t n_segments;
    pd_plan_member_t *members;
    size_t n_members;
    char **warnings;
    size_t n_warnings;
} pd_plan_out_t;

/*
 * Validate `spec` and resolve it against `ranks`. Returns 0 and fills *out
 * (free with pd_plan_out_free), or PROFD_EINVAL with a one-line reason in
 * `err` (e.g. "steps must be >= 1, found 0"); *out is left empty on error.
 * Refused besides a malformed request: a tool that is not known, a schedule
 * on an e2e window, no job named while the live ranks run several, and
 * selecting no registered rank once the window's first step has passed for
 * the job. Selecting no rank before that is a warning (listing what is
 * registered). Without spec->job, the job is the one the ranks run, else
 * p->default_job.
 */
int pd_plan_resolve(const pp_window_spec_t *spec, const pd_plan_rank_t *ranks, size_t n,
                    const pd_plan_params_t *p, pd_plan_out_t *out, char *err, size_t errlen);
void pd_plan_out_free(pd_plan_out_t *out);

/* The selector index selecting `r` (-1: every rank, no selectors), or -2
 * when `r` is not selected (also when its job differs). With `roles`, the
 * mask of r's roles some selector selects (bit i: roles[i]; bit 0 alone
 * for a rank without a role list). */
int pd_plan_match(const pp_window_spec_t *spec, const char *job, const pd_plan_rank_t *r);
int pd_plan_match_roles(const pp_window_spec_t *spec, const char *job, const pd_plan_rank_t *r,
                        uint32_t *roles);

/* The step each rank is predicted to be running at now + ahead. */
int64_t pd_plan_predict(const pd_plan_rank_t *r, int64_t now_us, int64_t ahead_us);

/*
 * Aligned stop: the last step of a running window so that every member can
 * still end there: the largest step any member is predicted to be running
 * when the updated plan arrives. PP_NONE when no member has begun a step.
 */
int64_t pd_plan_stop_step(const pd_plan_rank_t *ranks, size_t n, const pd_plan_params_t *p);

/* Effective settings of a member: selector override, else request default. */
const char *pd_plan_tool(const pp_window_spec_t *spec, int selector);
/* Whether a capture can be made with `tool`: a built-in one (torch, npu,
 * nsys, sim, ...) or one of `custom` ("a,b"; NULL: none). */
bool pd_plan_tool_known(const char *tool, const char *custom);
pp_mode_t pd_plan_mode(const pp_window_spec_t *spec, int selector);
const char *pd_plan_settings(const pp_window_spec_t *spec, int selector);
const pp_schedule_t *pd_plan_schedule(const pp_window_spec_t *spec, int selector);

#endif
