// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * verl's profiler sections, both schemas: the tools, the key tables (unknown
 * keys are warnings), the roles, and the checks of what a role's section
 * and a tool's settings say, used or not.
 */
#include <stdlib.h>
#include <string.h>

#include "profcfg_verl.h"

const char *const pc_verl_tools[] = {"nsys", "npu", "torch", "torch_memory", "precision_debugger",
                                     "exec", "sim", NULL};
const char *const pc_verl_profilers[] = {"nsys", "npu", "torch", "torch_memory", NULL};
static const char *const npu_contents[] = {"npu",    "cpu",   "memory", "shapes",
                                           "module", "stack", NULL};
static const char *const torch_contents[] = {"cuda", "cpu", "memory", "shapes", "stack", NULL};

/* ---- key tables (unknown keys are warnings) ---- */

static const kspec_t k_sched[] = {
    {"_target_", NULL, 0}, {"skip_first", NULL, 0}, {"wait", NULL, 0}, {"warmup", NULL, 0},
    {"active", NULL, 0},   {"repeat", NULL, 0},     {NULL, NULL, 0}};
static const kspec_t k_npu[] = {{"_target_", NULL, 0},
                                {"name", NULL, 0},
                                {"contents", NULL, 0},
                                {"level", NULL, 0},
                                {"analysis", NULL, 0},
                                {"discrete", NULL, 0},
                                {"profile_token_start", NULL, 0},
                                {"profile_token_end", NULL, 0},
                                {NULL, NULL, 0}};
static const kspec_t k_torch[] = {{"_target_", NULL, 0},
                                  {"name", NULL, 0},
                                  {"contents", NULL, 0},
                                  {"discrete", NULL, 0},
                                  {"profile_token_start", NULL, 0},
                                  {"profile_token_end", NULL, 0},
                                  {"schedule", k_sched, 0},
                                  {NULL, NULL, 0}};
static const kspec_t k_nsys[] = {
    {"_target_", NULL, 0}, {"name", NULL, 0}, {"discrete", NULL, 0}, {NULL, NULL, 0}};
static const kspec_t k_tmem[] = {{"_target_", NULL, 0},
                                 {"name", NULL, 0},
                                 {"discrete", NULL, 0}, /* not verl's, warned about */
                                 {"trace_alloc_max_entries", NULL, 0},
                                 {"stack_depth", NULL, 0},
                                 {NULL, NULL, 0}};
const kspec_t pc_k_tool_config[] = {{"npu", k_npu, 0},
                                    {"torch", k_torch, 0},
                                    {"nsys", k_nsys, 0},
                                    {"torch_memory", k_tmem, 0},
                                    {"precision_debugger", NULL, KS_ANY},
                                    {"exec", NULL, KS_ANY},
                                    {"sim", NULL, KS_ANY},
                                    {NULL, NULL, 0}};
static const kspec_t k_role[] = {{"_target_", NULL, 0},
                                 {"tool", NULL, 0},
                                 {"enable", NULL, 0},
                                 {"all_ranks", NULL, 0},
                                 {"ranks", NULL, 0},
                                 {"save_path", NULL, 0},
                                 {"discrete", NULL, 0},
                                 {"tool_config", pc_k_tool_config, 0},
                                 {"global_tool_config", NULL, KS_ANY},
                                 {"relocate_results", NULL, 0},
                                 {"finish_hook_cmd", NULL, 0},
                                 {"finish_hook_all_ranks", NULL, 0},
                                 {"finish_hook_ranks", NULL, 0},
                                 {NULL, NULL, 0}};
static const kspec_t k_nsys_global[] = {{"_target_", NULL, 0},
                                        {"discrete", NULL, 0},
                                        {"controller_nsight_options", NULL, KS_ANY},
                                        {"worker_nsight_options", NULL, KS_ANY},
                                        {NULL, NULL, 0}};
const kspec_t pc_k_tmem_global[] = {{"_target_", NULL, 0},    {"trace_alloc_max_entries", NULL, 0},
                                    {"stack_depth", NULL, 0}, {"context", NULL, 0},
                                    {"stacks", NULL, 0},      {"kw_args", NULL, KS_ANY},
                                    {NULL, NULL, 0}};
static const kspec_t k_global_tools[] = {
    {"nsys", k_nsys_global, 0}, {"torch_memory", pc_k_tmem_global, 0}, {"npu", k_npu, 0},
    {"torch", k_torch, 0},      {"precision_debugger", NULL, KS_ANY},  {NULL, NULL, 0}};
const kspec_t pc_k_global[] = {{"_target_", NULL, 0},
                               {"tool", NULL, 0},
                               {"steps", NULL, 0},
                               {"profile_continuous_steps", NULL, 0},
                               {"save_path", NULL, 0},
                               {"global_tool_config", k_global_tools, 0},
                               {"relocate_results", NULL, 0},
                               {"finish_hook_cmd", NULL, 0},
                               {"finish_hook_all_ranks", NULL, 0},
                               {"finish_hook_ranks", NULL, 0},
                               {NULL, NULL, 0}};
const kspec_t pc_k_profd[] = {{"rollout_ranks", NULL, 0}, {"tool", NULL, 0}, {NULL, NULL, 0}};
/* ---- roles ---- */

const role_t pc_roles[PC_NROLES] = {
    {"actor", "actor_rollout_ref.actor.profiler", false, "compute_log_prob", "update_actor"},
    {"rollout", "actor_rollout_ref.rollout.profiler", true, "generate", NULL},
    {"ref", "actor_rollout_ref.ref.profiler", true, "ref_compute_log_prob", NULL},
    {"critic", "critic.profiler", false, "compute_values", "update_critic"},
    {"reward", "reward_model.profiler", false, "compute_rm_score", NULL},
};

/* ---- validation of what a section says, used or not ---- */

int pc_check_tool(pc_t *pc, yt_node_t *tc, const char *tool)
{
    yt_node_t *v, *raw;
    int rc;
    int64_t x;
    bool b;
    const char *s;
    char what[160];
    if ((rc = pc_val(pc, tc, &v)) != 0 || v == NULL || v->type == YT_NULL) {
        return rc;
    }
    if (v->type != YT_MAP) {
        return pc_expected(pc, tc, NULL, v, "a mapping of %s settings", tool);
    }
    if (strcmp(tool, "npu") == 0 || strcmp(tool, "torch") == 0) {
        bool npu = strcmp(tool, "npu") == 0;
        if (npu) {
            pc_choices(pc_levels, what, sizeof(what));
            if ((rc = pc_str(pc, yt_map_get(v, "level"), pc_levels, what, &s)) != 0) {
                return rc;
            }
        }
        pc_list_of(npu ? npu_contents : torch_contents, what, sizeof(what));
        if ((rc = pc_names(pc, yt_map_get(v, "contents"), npu ? npu_contents : torch_contents,
                           what)) != 0 ||
            (rc = pc_bool(pc, yt_map_get(v, "analysis"), false, &b)) != 0 ||
            (rc = pc_int(pc, yt_map_get(v, "profile_token_start"), 0, INT32_MAX, 0, &x)) != 0 ||
            (rc = pc_int(pc, yt_map_get(v, "profile_token_end"), 0, INT32_MAX, 0, &x)) != 0) {
            return rc;
        }
        if ((raw = yt_map_get(v, "schedule")) != NULL) {
            static const char *const f[] = {"skip_first", "wait", "warmup", "repeat", NULL};
            yt_node_t *sv;
            if ((rc = pc_val(pc, raw, &sv)) != 0) {
                return rc;
            }
            if (sv->type != YT_MAP && sv->type != YT_NULL) {
                return pc_expected(pc, raw, NULL, sv,
                                   "a mapping (skip_first, wait, warmup, "
                                   "active, repeat)");
            }
            for (int i = 0; f[i] != NULL; i++) {
                if ((rc = pc_int(pc, yt_map_get(sv, f[i]), 0, INT32_MAX, 0, &x)) != 0) {
                    return rc;
                }
            }
            if ((rc = pc_int(pc, yt_map_get(sv, "active"), INT32_MIN, INT32_MAX, 0, &x)) != 0) {
                return rc;
            }
        }
    } else if (strcmp(tool, "torch_memory") == 0) {
        if ((rc = pc_int(pc, yt_map_get(v, "trace_alloc_max_entries"), 0, INT64_MAX, 0, &x)) ||
            (rc = pc_int(pc, yt_map_get(v, "stack_depth"), 0, INT64_MAX, 0, &x))) {
            return rc;
        }
    }
    return pc_bool(pc, yt_map_get(v, "discrete"), false, &b);
}

int pc_check_role(pc_t *pc, yt_node_t *sec)
{
    yt_node_t *v, *raw;
    int rc;
    const char *s;
    bool b;
    int64_t *ranks;
    size_t n;
    char what[160];
    if ((rc = pc_val(pc, sec, &v)) != 0 || v == NULL || v->type == YT_NULL) {
        return rc;
    }
    if (v->type != YT_MAP) {
        return pc_expected(pc, sec, NULL, v, "a mapping (the role's profiler settings)");
    }
    pc_check_keys(pc, sec, k_role);
    pc_choices(pc_verl_tools, what, sizeof(what));
    strncat(what, " or null", sizeof(what) - strlen(what) - 1);
    if ((rc = pc_str(pc, yt_map_get(v, "tool"), pc_verl_tools, what, &s)) != 0 ||
        (rc = pc_bool(pc, yt_map_get(v, "enable"), false, &b)) != 0 ||
        (rc = pc_bool(pc, yt_map_get(v, "all_ranks"), false, &b)) != 0 ||
        (rc = pc_bool(pc, yt_map_get(v, "discrete"), false, &b)) != 0 ||
        (rc = pc_ints(pc, yt_map_get(v, "ranks"), 0, INT32_MAX, "a list of ranks (integers >= 0)",
                      &ranks, &n, &b)) != 0) {
        return rc;
    }
    free(ranks);
    if ((rc = pc_str(pc, yt_map_get(v, "save_path"), NULL, "a path", &s)) != 0) {
        return rc;
    }
    raw = yt_map_get(v, "tool_config");
    if ((rc = pc_val(pc, raw, &v)) != 0 || v == NULL || v->type == YT_NULL) {
        return rc;
    }
    if (v->type != YT_MAP) {
        return pc_expected(pc, raw, NULL, v, "a mapping of tool settings");
    }
    for (int i = 0; pc_verl_profilers[i] != NULL; i++) {
        if ((rc = pc_check_tool(pc, yt_map_get(v, pc_verl_profilers[i]), pc_verl_profilers[i])) !=
            0) {
            return rc;
        }
    }
    return 0;
}
