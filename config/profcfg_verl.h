// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Internals shared by the two verl readers: the current schema
 * (profcfg_verl.c, a role's section in profcfg_verl_role.c) and the legacy
 * one with the fragments (profcfg_legacy.c); the tools, key tables, roles
 * and section checks both use are in profcfg_verl_check.c.
 */
#ifndef PD_PROFCFG_VERL_H
#define PD_PROFCFG_VERL_H

#include "profcfg_int.h"

typedef struct role {
    const char *name;
    const char *path;   /* its profiler section */
    bool inherits;      /* keys it does not set come from the actor's section */
    const char *phase;  /* first (or only) phase */
    const char *update; /* the update phase a torch schedule applies to */
} role_t;

/* actor, rollout, ref, critic, reward: in the order selectors are listed */
#define PC_NROLES 5
extern const role_t pc_roles[PC_NROLES];

typedef struct vctx {
    pc_t *pc;
    yt_node_t *root;
    yt_node_t *actor; /* the actor's profiler section (what rollout and ref inherit) */
    const char *gtool;
    bool steps; /* a request is being built */
    bool agent_loop;
    yt_node_t *mode_at;
    const char *engine;
    const char *rank_space;
    bool rank_space_set;
    int64_t replica_size; /* GPUs of one rollout replica: tp * dp * pp */
    bool skip_actor;      /* the actor has a window of its own (torch_memory, older verl) */
    int enabled, no_tool, debugger; /* roles enabled; ... of them without a tool */
} vctx_t;

/* What one role's section selects. */
typedef struct rsel {
    const char *tool;
    bool discrete;
    bool all_ranks;
    int64_t *ranks;
    size_t n;
    yt_node_t *enable_at;
} rsel_t;

/* verl's tools (profilers and the others), its profilers */
extern const char *const pc_verl_tools[];
extern const char *const pc_verl_profilers[];
/* Key tables: a role's tool_config, global torch_memory settings,
 * global_profiler, the profd section. */
extern const kspec_t pc_k_tool_config[];
extern const kspec_t pc_k_tmem_global[];
extern const kspec_t pc_k_global[];
extern const kspec_t pc_k_profd[];

/* Check a tool's settings (tool_config.<tool> or global_tool_config.<tool>). */
int pc_check_tool(pc_t *pc, yt_node_t *tc, const char *tool);
/* The JSON settings text of role r's tool (current schema). */
int pc_settings(vctx_t *c, const role_t *r, yt_node_t *sec, const char *tool, char **out);
/* Role r's selectors (current schema). */
int pc_do_role(vctx_t *c, const role_t *r);

/* A selector for role r (ranks copied; the rollout's are replica indices in
 * agent-loop mode when so read), appended to the request. */
int pc_emit(vctx_t *c, const role_t *r, rsel_t *s, const char *settings_text, const char *phase,
            const pp_schedule_t *sched);
/* A steps list; starts the request when it has steps. *isnull: null or
 * absent (verl's "steps is None"). */
int pc_read_steps(pc_t *pc, yt_node_t *raw, bool *have, bool *isnull);
/* The optional top-level `profd` section (rollout_ranks, tool). */
int pc_read_profd(vctx_t *c, const char **tool);
/* Validate a role's current-schema profiler section. */
int pc_check_role(pc_t *pc, yt_node_t *sec);
/* The request selected nothing: drop it, keep its warnings at file level. */
void pc_drop_spec(pc_t *pc);
/* profile_continuous_steps with a discrete selector: a warning. */
void pc_continuous_check(pc_t *pc, yt_node_t *raw);

#endif
