// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * verl profiling configurations: the current schema (global_profiler + one
 * `profiler` section per role), the legacy one (trainer.profile_steps,
 * actor_rollout_ref.profiler, trainer.npu_profile.options) and the pieces
 * of either found on their own. The rules and the choices made where verl's
 * documents and code disagree are in docs/profiling-config.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "profcfg_verl.h"

static const char *const tools[] = {"nsys", "npu", "torch", "torch_memory", "precision_debugger",
                                    "exec", "sim", NULL};
static const char *const profilers[] = {"nsys", "npu", "torch", "torch_memory", NULL};
static const char *const npu_contents[] = {"npu",    "cpu",   "memory", "shapes",
                                           "module", "stack", NULL};
static const char *const torch_contents[] = {"cuda", "cpu", "memory", "shapes", "stack", NULL};
static const char *const rank_spaces[] = {"replica", "global", NULL};
/* tool_config.<tool> keys that are not tool settings (mode, schedule) */
static const char *const not_settings[] = {
    "name", "discrete", "schedule", "profile_token_start", "profile_token_end", NULL};

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
static const kspec_t k_tool_config[] = {{"npu", k_npu, 0},
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
                                 {"tool_config", k_tool_config, 0},
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
static const kspec_t k_tmem_global[] = {
    {"_target_", NULL, 0},    {"trace_alloc_max_entries", NULL, 0},
    {"stack_depth", NULL, 0}, {"context", NULL, 0},
    {"stacks", NULL, 0},      {"kw_args", NULL, KS_ANY},
    {NULL, NULL, 0}};
static const kspec_t k_global_tools[] = {
    {"nsys", k_nsys_global, 0}, {"torch_memory", k_tmem_global, 0},   {"npu", k_npu, 0},
    {"torch", k_torch, 0},      {"precision_debugger", NULL, KS_ANY}, {NULL, NULL, 0}};
static const kspec_t k_global[] = {{"_target_", NULL, 0},
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
static const kspec_t k_profd[] = {{"rollout_ranks", NULL, 0}, {"tool", NULL, 0}, {NULL, NULL, 0}};
/* ---- roles ---- */

const role_t pc_roles[PC_NROLES] = {
    {"actor", "actor_rollout_ref.actor.profiler", false, "compute_log_prob", "update_actor"},
    {"rollout", "actor_rollout_ref.rollout.profiler", true, "generate", NULL},
    {"ref", "actor_rollout_ref.ref.profiler", true, "ref_compute_log_prob", NULL},
    {"critic", "critic.profiler", false, "compute_values", "update_critic"},
    {"reward", "reward_model.profiler", false, "compute_rm_score", NULL},
};

/* A role's key, or the actor's when the role inherits and does not set it. */
static int rget(vctx_t *c, const role_t *r, yt_node_t *sec, const char *key, yt_node_t **raw)
{
    int rc = 0;
    *raw = NULL;
    if (sec != NULL && (rc = pc_get(c->pc, sec, key, raw)) != 0) {
        return rc;
    }
    if (*raw == NULL && r->inherits && c->actor != NULL && !c->pc->composed) {
        rc = pc_get(c->pc, c->actor, key, raw);
    }
    return rc;
}

static int is_literal(const yt_node_t *raw)
{
    return raw != NULL && !oc_is_interp(raw);
}

static void ranks_text(const int64_t *v, size_t n, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < n && off < len; i++) {
        off += (size_t)snprintf(buf + off, len - off, "%s%lld", i ? ", " : "", (long long)v[i]);
    }
    if (off < len) {
        snprintf(buf + off, len - off, "]");
    }
}

/* ---- validation of what a section says, used or not ---- */

static int check_tool(pc_t *pc, yt_node_t *tc, const char *tool)
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
    pc_choices(tools, what, sizeof(what));
    strncat(what, " or null", sizeof(what) - strlen(what) - 1);
    if ((rc = pc_str(pc, yt_map_get(v, "tool"), tools, what, &s)) != 0 ||
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
    for (int i = 0; profilers[i] != NULL; i++) {
        if ((rc = check_tool(pc, yt_map_get(v, profilers[i]), profilers[i])) != 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- settings and schedules ---- */

/* base's keys in base's order (values from `over` where it has them), then
 * over's other keys. Both consumed. */
static cJSON *json_merge(cJSON *base, cJSON *over)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *it;
    if (out == NULL) {
        goto done;
    }
    cJSON_ArrayForEach(it, base)
    {
        cJSON *o = cJSON_GetObjectItemCaseSensitive(over, it->string);
        cJSON_AddItemToObject(out, it->string, cJSON_Duplicate(o ? o : it, true));
    }
    cJSON_ArrayForEach(it, over)
    {
        if (cJSON_GetObjectItemCaseSensitive(base, it->string) == NULL) {
            cJSON_AddItemToObject(out, it->string, cJSON_Duplicate(it, true));
        }
    }
done:
    cJSON_Delete(base);
    cJSON_Delete(over);
    return out;
}

/* The keys of tool_config.<tool> that are settings (unknown ones were
 * warned about and are left out); NULL: any (exec, sim). */
static const kspec_t *tool_keys(const char *tool)
{
    for (const kspec_t *k = k_tool_config; k->name != NULL; k++) {
        if (strcmp(k->name, tool) == 0) {
            return k->sub;
        }
    }
    return NULL;
}

static int settings(vctx_t *c, const role_t *r, yt_node_t *sec, const char *tool, char **out)
{
    pc_t *pc = c->pc;
    char key[64];
    yt_node_t *own = NULL, *base = NULL, *extra = NULL;
    const kspec_t *keep = tool_keys(tool);
    cJSON *a = NULL, *b = NULL, *j;
    int rc;

    snprintf(key, sizeof(key), "tool_config.%s", tool);
    if ((sec != NULL && (rc = pc_get(pc, sec, key, &own)) != 0) ||
        (r->inherits && c->actor != NULL && !pc->composed &&
         (rc = pc_get(pc, c->actor, key, &base)) != 0)) {
        return rc;
    }
    if ((rc = pc_json(pc, base, not_settings, keep, &a)) != 0) {
        return rc;
    }
    if ((rc = pc_json(pc, own, not_settings, keep, &b)) != 0) {
        cJSON_Delete(a);
        return rc;
    }
    if (!cJSON_IsObject(a)) { /* null: nothing set */
        cJSON_Delete(a);
        a = cJSON_CreateObject();
    }
    if (!cJSON_IsObject(b)) {
        cJSON_Delete(b);
        b = cJSON_CreateObject();
    }
    j = json_merge(a, b);
    if (strcmp(tool, "torch_memory") == 0) {
        /* the global memory-history options, overridden by the role's */
        if ((rc = pc_get(pc, c->root, "global_profiler.global_tool_config.torch_memory", &extra)) !=
                0 ||
            (rc = pc_json(pc, extra, NULL, k_tmem_global, &a)) != 0) {
            cJSON_Delete(j);
            return rc;
        }
        if (!cJSON_IsObject(a)) {
            cJSON_Delete(a);
            a = cJSON_CreateObject();
        }
        j = json_merge(a, j);
    } else if (strcmp(tool, "nsys") == 0) {
        if ((rc = pc_get(pc, c->root,
                         "global_profiler.global_tool_config.nsys.worker_nsight_options",
                         &extra)) != 0) {
            cJSON_Delete(j);
            return rc;
        }
        if (extra != NULL) {
            if ((rc = pc_json(pc, extra, NULL, NULL, &a)) != 0) {
                cJSON_Delete(j);
                return rc;
            }
            cJSON_AddItemToObject(j, "worker_nsight_options", a);
        }
    }
    if ((*out = pc_json_text(j)) == NULL) {
        return pc_nomem(pc);
    }
    return 0;
}

/* profile_token_start/end -> a schedule over decode steps (rollout only). */
static int token_schedule(vctx_t *c, const role_t *r, yt_node_t *sec, const char *tool,
                          bool discrete, pp_schedule_t *s)
{
    pc_t *pc = c->pc;
    char k1[64], k2[64];
    yt_node_t *a, *b, *va, *vb;
    int64_t start, end;
    int rc;
    snprintf(k1, sizeof(k1), "tool_config.%s.profile_token_start", tool);
    snprintf(k2, sizeof(k2), "tool_config.%s.profile_token_end", tool);
    if ((rc = rget(c, r, sec, k1, &a)) || (rc = rget(c, r, sec, k2, &b)) ||
        (rc = pc_val(pc, a, &va)) || (rc = pc_val(pc, b, &vb)) ||
        (rc = pc_int(pc, a, 0, INT32_MAX, -1, &start)) ||
        (rc = pc_int(pc, b, 0, INT32_MAX, -1, &end))) {
        return rc;
    }
    if (start < 0 && end < 0) {
        return 0;
    }
    yt_node_t *at = start >= 0 ? a : b;
    if (strcmp(r->name, "rollout") != 0) {
        pc_warn(pc, &pc->spec_warnings, at,
                "profile_token_start/end only apply to the rollout (generate); ignored for %s",
                r->name);
        return 0;
    }
    if (!discrete) {
        pc_warn(pc, &pc->spec_warnings, at,
                "profile_token_start/end apply in discrete mode only; the end-to-end capture "
                "records whole steps");
        return 0;
    }
    if (start >= 0 && end >= 0 && end <= start) {
        return pc_expected(pc, b, NULL, vb, "a token index after profile_token_start (%lld)",
                           (long long)start);
    }
    if (start < 0) {
        start = 0;
    }
    s->wait = start;
    s->warmup = 0;
    s->active = end >= 0 ? end - start : INT32_MAX;
    s->repeat = 1;
    return 0;
}

/* tool_config.torch.schedule with active > 0. */
static int torch_schedule(vctx_t *c, const role_t *r, yt_node_t *sec, pp_schedule_t *s,
                          yt_node_t **at)
{
    pc_t *pc = c->pc;
    yt_node_t *raw, *v;
    int rc = rget(c, r, sec, "tool_config.torch.schedule", &raw);
    *at = raw;
    if (rc != 0 || (rc = pc_val(pc, raw, &v)) != 0 || v == NULL || v->type != YT_MAP) {
        return rc;
    }
    if ((rc = pc_int(pc, yt_map_get(v, "skip_first"), 0, INT32_MAX, 0, &s->skip_first)) ||
        (rc = pc_int(pc, yt_map_get(v, "wait"), 0, INT32_MAX, 0, &s->wait)) ||
        (rc = pc_int(pc, yt_map_get(v, "warmup"), 0, INT32_MAX, 0, &s->warmup)) ||
        (rc = pc_int(pc, yt_map_get(v, "active"), INT32_MIN, INT32_MAX, 0, &s->active)) ||
        (rc = pc_int(pc, yt_map_get(v, "repeat"), 0, INT32_MAX, 0, &s->repeat))) {
        return rc;
    }
    if (s->active <= 0) {
        memset(s, 0, sizeof(*s));
    }
    return 0;
}

/* ---- one role -> selectors ---- */

/* Which tool a role uses; NULL (with a warning) when none. */
static int pick_tool(vctx_t *c, const role_t *r, yt_node_t *sec, rsel_t *s)
{
    pc_t *pc = c->pc;
    yt_node_t *raw, *tc;
    char what[160];
    int rc;
    pc_choices(tools, what, sizeof(what));
    strncat(what, " or null", sizeof(what) - strlen(what) - 1);
    if ((rc = rget(c, r, sec, "tool", &raw)) || (rc = pc_str(pc, raw, tools, what, &s->tool))) {
        return rc;
    }
    if (s->tool == NULL) {
        s->tool = c->gtool;
    }
    if (s->tool == NULL) {
        /* no tool anywhere: the one tool_config names, if only one */
        const char *only = NULL;
        int count = 0;
        if ((rc = rget(c, r, sec, "tool_config", &raw)) || (rc = pc_val(pc, raw, &tc))) {
            return rc;
        }
        for (int i = 0; tc != NULL && tc->type == YT_MAP && profilers[i] != NULL; i++) {
            if (yt_map_get(tc, profilers[i]) != NULL) {
                only = profilers[i];
                count++;
            }
        }
        if (count == 1) {
            pc_warn(pc, &pc->spec_warnings, s->enable_at,
                    "no tool set (global_profiler.tool is null); using '%s', the only tool in "
                    "tool_config",
                    only);
            s->tool = only;
        } else {
            pc_warn(pc, &pc->spec_warnings, s->enable_at,
                    "enabled but no tool set (global_profiler.tool is null): verl profiles "
                    "nothing; not selected");
            return 0;
        }
    }
    if (strcmp(s->tool, "precision_debugger") == 0) {
        pc_warn(pc, &pc->spec_warnings, s->enable_at,
                "precision_debugger is not a profiler profd runs; not selected");
        s->tool = NULL;
        c->debugger++;
    }
    return 0;
}

static int pick_mode(vctx_t *c, const role_t *r, yt_node_t *sec, rsel_t *s, yt_node_t **dat)
{
    pc_t *pc = c->pc;
    char key[64];
    yt_node_t *raw, *v;
    int rc;
    snprintf(key, sizeof(key), "tool_config.%s.discrete", s->tool);
    if ((rc = rget(c, r, sec, key, &raw)) || (rc = pc_val(pc, raw, &v))) {
        return rc;
    }
    if ((v == NULL || v->type == YT_NULL) && strcmp(s->tool, "nsys") == 0) {
        rc = pc_get(pc, c->root, "global_profiler.global_tool_config.nsys.discrete", &raw);
        if (rc == 0) {
            rc = pc_val(pc, raw, &v);
        }
    }
    if (rc == 0 && (v == NULL || v->type == YT_NULL)) { /* older verl: profiler.discrete */
        if ((rc = rget(c, r, sec, "discrete", &raw)) == 0) {
            rc = pc_val(pc, raw, &v);
        }
    }
    if (rc != 0 || (rc = pc_bool(pc, raw, false, &s->discrete)) != 0) {
        return rc;
    }
    *dat = (v != NULL && v->type != YT_NULL) ? raw : NULL;
    if (s->discrete && strcmp(s->tool, "torch_memory") == 0) {
        pc_warn(pc, &pc->spec_warnings, raw,
                "torch_memory has no discrete mode; captured end to end");
        s->discrete = false;
    }
    return 0;
}

static int pick_ranks(vctx_t *c, const role_t *r, yt_node_t *sec, rsel_t *s)
{
    pc_t *pc = c->pc;
    yt_node_t *raw;
    bool isnull;
    int rc;
    if ((rc = rget(c, r, sec, "all_ranks", &raw)) ||
        (rc = pc_bool(pc, raw, false, &s->all_ranks)) || (rc = rget(c, r, sec, "ranks", &raw)) ||
        (rc = pc_ints(pc, raw, 0, INT32_MAX, "a list of ranks (integers >= 0)", &s->ranks, &s->n,
                      &isnull))) {
        return rc;
    }
    s->n = pc_sort_unique(s->ranks, s->n);
    if (s->all_ranks) {
        s->n = 0;
    } else if (s->n == 0) {
        /* verl's DistProfiler: enabled without ranks profiles rank 0 */
        free(s->ranks);
        if ((s->ranks = malloc(sizeof(*s->ranks))) == NULL) {
            return pc_nomem(pc);
        }
        s->ranks[0] = 0;
        s->n = 1;
        pc_warn(pc, &pc->spec_warnings, raw ? raw : s->enable_at,
                "enabled with all_ranks false and ranks []: profiles rank 0 (verl's default)");
    }
    return 0;
}

/* Engine limits of an agent-loop style rollout profiled with npu. */
static int engine_warnings(vctx_t *c, const role_t *r, yt_node_t *sec, rsel_t *s)
{
    pc_t *pc = c->pc;
    yt_node_t *lv, *an, *ct, *v;
    const char *level;
    bool analysis;
    int rc;
    if (c->engine == NULL || strcmp(s->tool, "npu") != 0 ||
        (strcmp(c->engine, "vllm") != 0 && strcmp(c->engine, "sglang") != 0)) {
        return 0;
    }
    if ((rc = rget(c, r, sec, "tool_config.npu.level", &lv)) ||
        (rc = rget(c, r, sec, "tool_config.npu.analysis", &an)) ||
        (rc = rget(c, r, sec, "tool_config.npu.contents", &ct)) ||
        (rc = pc_str(pc, lv, pc_levels, "a level", &level)) ||
        (rc = pc_bool(pc, an, false, &analysis)) || (rc = pc_val(pc, ct, &v))) {
        return rc;
    }
    if (level == NULL) {
        level = "level0";
    }
    if (strcmp(c->engine, "vllm") == 0) {
        if (analysis) {
            pc_warn(pc, &pc->spec_warnings, an,
                    "vllm rollout ignores analysis: true (offline analysis needed)");
        }
        if (strcmp(level, "level1") != 0) {
            pc_warn(pc, &pc->spec_warnings, lv ? lv : s->enable_at,
                    "vllm rollout ignores profiler level '%s' (uses level1)", level);
        }
        return 0;
    }
    for (size_t i = 0; v != NULL && v->type == YT_SEQ && i < v->n; i++) {
        yt_node_t *e;
        if ((rc = pc_val(pc, v->items[i], &e)) != 0) {
            return rc;
        }
        if (e->type == YT_STR && strcmp(e->text, "memory") == 0) {
            pc_warn(pc, &pc->spec_warnings, ct,
                    "sglang rollout does not support 'memory' in contents");
        }
    }
    if (!analysis) {
        pc_warn(pc, &pc->spec_warnings, an ? an : s->enable_at,
                "sglang rollout ignores analysis: false (always analyses)");
    }
    if (strcmp(level, "level0") != 0) {
        pc_warn(pc, &pc->spec_warnings, lv,
                "sglang rollout ignores profiler level '%s' (uses level0)", level);
    }
    return 0;
}

/* Agent-loop rollout ranks read as global GPU ranks: each selects the
 * replica owning it (verl-project 1dda039b verl/utils/profiler/profile.py:
 * build_rollout_dist_profiler 382-414, rank // (tp * dp * pp)). */
static int owner_replicas(vctx_t *c, const rsel_t *s, pp_selector_t *sel)
{
    int64_t *v = malloc(s->n * sizeof(*v));
    if (v == NULL) {
        return pc_nomem(c->pc);
    }
    for (size_t i = 0; i < s->n; i++) {
        v[i] = s->ranks[i] / (c->replica_size > 0 ? c->replica_size : 1);
    }
    sel->replica_ranks = v;
    sel->replica_ranks_n = pc_sort_unique(v, s->n);
    return 0;
}

int pc_emit(vctx_t *c, const role_t *r, rsel_t *s, const char *settings_text, const char *phase,
            const pp_schedule_t *sched)
{
    pc_t *pc = c->pc;
    pp_selector_t sel;
    bool loop = strcmp(r->name, "rollout") == 0 && c->agent_loop;
    bool replica = loop && strcmp(c->rank_space, "replica") == 0;
    pp_record_init(&pp_desc_selector, &sel);
    sel.all_ranks = s->all_ranks;
    sel.mode = s->discrete ? PP_MODE_DISCRETE : PP_MODE_E2E;
    if (pc_strdup(pc, r->name, &sel.role) || pc_strdup(pc, s->tool, &sel.tool) ||
        pc_strdup(pc, settings_text, &sel.settings)) {
        pp_record_free(&pp_desc_selector, &sel);
        return PROFD_ENOMEM;
    }
    if (s->n > 0) {
        int64_t *v = malloc(s->n * sizeof(*v));
        if (v == NULL) {
            pp_record_free(&pp_desc_selector, &sel);
            return pc_nomem(pc);
        }
        memcpy(v, s->ranks, s->n * sizeof(*v));
        if (replica) {
            sel.replica_ranks = v;
            sel.replica_ranks_n = s->n;
        } else {
            sel.ranks = v;
            sel.ranks_n = s->n;
        }
        if (loop && !replica && owner_replicas(c, s, &sel) != 0) {
            pp_record_free(&pp_desc_selector, &sel);
            return PROFD_ENOMEM;
        }
    }
    if (phase != NULL) {
        if ((sel.phases = calloc(1, sizeof(char *))) == NULL ||
            (sel.phases[0] = strdup(phase)) == NULL) {
            pp_record_free(&pp_desc_selector, &sel);
            return pc_nomem(pc);
        }
        sel.phases_n = 1;
    }
    if (sched != NULL) {
        sel.schedule = *sched;
    }
    return pc_add_selector(pc, &sel);
}

/* An agent-loop rollout is profiled by its inference engine, with torch or
 * npu only (trtllm: nsys too), and in discrete mode only; otherwise verl
 * runs the job and the replicas get no profiler (verl-project 1dda039b
 * vllm_async_server.py:169-176, 856-874; volcengine b178a3cd 138-146,
 * 575-593; async_sglang_server.py likewise). So is it here, with a warning. */
static int agent_loop_skip(vctx_t *c, const role_t *r, yt_node_t *sec, rsel_t *s, yt_node_t *dat,
                           bool *skip)
{
    pc_t *pc = c->pc;
    bool trt = c->engine != NULL && strcmp(c->engine, "trtllm") == 0;
    *skip = false;
    if (!c->agent_loop || strcmp(r->name, "rollout") != 0) {
        return 0;
    }
    if (strcmp(s->tool, "torch") != 0 && strcmp(s->tool, "npu") != 0 &&
        !(trt && strcmp(s->tool, "nsys") == 0)) {
        pc_warn(pc, &pc->spec_warnings, s->enable_at,
                trt ? "trtllm rollout: unsupported profiler tool '%s', disabling; rollout not "
                      "selected"
                    : "agent loop only support torch and npu profiler, got %s; rollout not "
                      "selected",
                s->tool);
        *skip = true;
        return 0;
    }
    if (s->discrete) {
        return 0;
    }
    yt_node_t *own = NULL;
    int rc = sec != NULL ? pc_get(pc, sec, "enable", &own) : 0;
    if (rc == 0 && (is_literal(own) || is_literal(dat))) {
        pc_warn(pc, &pc->spec_warnings, dat ? dat : s->enable_at,
                "an agent-loop rollout is profiled in discrete mode only (verl starts its "
                "engine profiler only then) and tool_config.%s.discrete is false; rollout not "
                "selected",
                s->tool);
    } else if (rc == 0) {
        pc_warn(pc, &pc->spec_warnings, dat ? dat : c->mode_at,
                "rollout follows the actor's end-to-end mode, but an agent-loop rollout is "
                "profiled in discrete mode only; rollout not selected");
    }
    *skip = true;
    return rc;
}

/* How agent-loop rollout ranks are read, said in the request. */
static int agent_loop_ranks(vctx_t *c, const role_t *r, yt_node_t *sec, rsel_t *s)
{
    pc_t *pc = c->pc;
    yt_node_t *at;
    char list[128];
    int rc;
    if (!c->agent_loop || strcmp(r->name, "rollout") != 0 || s->all_ranks) {
        return 0;
    }
    if ((rc = rget(c, r, sec, "ranks", &at)) != 0) {
        return rc;
    }
    ranks_text(s->ranks, s->n, list, sizeof(list));
    if (strcmp(c->rank_space, "replica") == 0) {
        pc_warn(pc, &pc->spec_warnings, at ? at : s->enable_at,
                "agent-loop rollout: ranks %s are inference replica indices%s", list,
                c->rank_space_set ? ""
                                  : " (+profd.rollout_ranks=global reads them as global ranks)");
    } else {
        pc_warn(pc, &pc->spec_warnings, at ? at : s->enable_at,
                "agent-loop rollout: ranks %s are global ranks, each selecting the replica that "
                "owns it%s",
                list,
                c->rank_space_set ? ""
                                  : " (+profd.rollout_ranks=replica reads them as replica "
                                    "indices)");
    }
    return 0;
}

/* A value looked at, not needed: `???` or absent reads as `def`. */
static int opt_bool(vctx_t *c, const char *path, bool def, bool *out, bool *present)
{
    yt_node_t *raw, *v;
    int rc = pc_get(c->pc, c->root, path, &raw);
    if (rc == 0 && (rc = pc_val_opt(c->pc, raw, &v)) == 0) {
        *present = v != NULL && v->type != YT_NULL;
        *out = def;
        if (*present) {
            rc = pc_bool(c->pc, raw, def, out);
        }
    }
    return rc;
}

/* Does verl start this role's workers? ref: need_reference_policy; critic:
 * need_critic (verl-project 1dda039b verl/trainer/ppo/utils.py:75, 96);
 * reward model (volcengine b178a3cd): reward_model.enable without the reward
 * loop (ray_trainer.py:1062-1063). Keys a snippet does not have: yes. */
static int role_runs(vctx_t *c, const role_t *r, bool *runs, const char **why)
{
    bool a = false, b = false, pa = false, pb = false;
    yt_node_t *raw, *v;
    int rc = 0;
    *runs = true;
    if (strcmp(r->name, "ref") == 0 &&
        !(rc = opt_bool(c, "algorithm.use_kl_in_reward", false, &a, &pa)) &&
        !(rc = opt_bool(c, "actor_rollout_ref.actor.use_kl_loss", false, &b, &pb)) && (pa || pb)) {
        *runs = a || b;
        *why = "neither actor.use_kl_loss nor algorithm.use_kl_in_reward is true";
    } else if (strcmp(r->name, "critic") == 0 &&
               !(rc = opt_bool(c, "critic.enable", false, &a, &pa))) {
        const char *est = NULL;
        if (!pa && !(rc = pc_get(c->pc, c->root, "algorithm.adv_estimator", &raw)) &&
            !(rc = pc_val_opt(c->pc, raw, &v)) && v != NULL && v->type == YT_STR) {
            est = v->text;
        }
        *runs = pa ? a : est == NULL || strcmp(est, "gae") == 0;
        *why = pa ? "critic.enable is false" : "algorithm.adv_estimator is not gae";
    } else if (strcmp(r->name, "reward") == 0 &&
               !(rc = opt_bool(c, "reward_model.enable", true, &a, &pa)) &&
               !(rc = opt_bool(c, "reward_model.use_reward_loop", false, &b, &pb))) {
        *runs = a && !b;
        *why = !a ? "reward_model.enable is false"
                  : "the reward loop (reward_model.use_reward_loop) has no profiled workers";
    }
    return rc;
}

/* The role's section, whether it is enabled and runs, and its tool.
 * *go: a selector is to be made. */
static int role_gate(vctx_t *c, const role_t *r, yt_node_t **sec, rsel_t *s, bool *go)
{
    pc_t *pc = c->pc;
    yt_node_t *v, *raw;
    bool enable, runs;
    const char *why = NULL;
    int rc;
    *go = false;
    if ((rc = pc_get(pc, c->root, r->path, sec)) != 0 || (rc = pc_check_role(pc, *sec)) != 0 ||
        (rc = pc_val(pc, *sec, &v)) != 0) {
        return rc;
    }
    if (v != NULL && v->type == YT_NULL) {
        *sec = NULL;
    }
    if (*sec == NULL && !(r->inherits && c->actor != NULL && !pc->composed)) {
        return 0;
    }
    if ((rc = rget(c, r, *sec, "enable", &raw)) || (rc = pc_bool(pc, raw, false, &enable)) ||
        !enable || !c->steps || (rc = role_runs(c, r, &runs, &why))) {
        return rc;
    }
    if (!runs) {
        pc_warn(pc, &pc->spec_warnings, raw ? raw : *sec,
                "enabled, but verl starts no %s worker (%s); not selected", r->name, why);
        return 0;
    }
    c->enabled++;
    s->enable_at = raw;
    if ((rc = pick_tool(c, r, *sec, s)) != 0) {
        return rc;
    }
    c->no_tool += s->tool == NULL;
    *go = s->tool != NULL;
    return 0;
}

/* The token window (npu, torch) and the update schedule (torch). */
static int role_schedules(vctx_t *c, const role_t *r, yt_node_t *sec, rsel_t *s, pp_schedule_t *tok,
                          pp_schedule_t *tsch)
{
    yt_node_t *at;
    int rc = 0;
    if (strcmp(s->tool, "npu") == 0 || strcmp(s->tool, "torch") == 0) {
        rc = token_schedule(c, r, sec, s->tool, s->discrete, tok);
    }
    if (rc != 0 || strcmp(s->tool, "torch") != 0 ||
        (rc = torch_schedule(c, r, sec, tsch, &at)) != 0) {
        return rc;
    }
    if (tsch->active > 0 && (!s->discrete || r->update == NULL)) {
        if (!s->discrete && r->update != NULL) {
            pc_warn(c->pc, &c->pc->spec_warnings, at,
                    "tool_config.torch.schedule applies in discrete mode only; the "
                    "end-to-end capture records whole steps");
        }
        memset(tsch, 0, sizeof(*tsch));
    }
    return 0;
}

static int do_role(vctx_t *c, const role_t *r)
{
    yt_node_t *sec, *dat = NULL;
    rsel_t s = {0};
    bool go, skip;
    char *text = NULL;
    pp_schedule_t tok = {0}, tsch = {0};
    int rc = role_gate(c, r, &sec, &s, &go);
    if (rc != 0 || !go) {
        return rc;
    }
    if ((rc = pick_mode(c, r, sec, &s, &dat)) ||
        (rc = agent_loop_skip(c, r, sec, &s, dat, &skip)) || skip ||
        (rc = pick_ranks(c, r, sec, &s)) || (rc = agent_loop_ranks(c, r, sec, &s))) {
        goto out;
    }
    if ((strcmp(r->name, "rollout") == 0 && (rc = engine_warnings(c, r, sec, &s)) != 0) ||
        (rc = settings(c, r, sec, s.tool, &text)) != 0 ||
        (rc = role_schedules(c, r, sec, &s, &tok, &tsch)) != 0) {
        goto out;
    }
    if (tsch.active > 0) { /* the schedule walks the update's mini-batches only */
        if ((rc = pc_emit(c, r, &s, text, r->phase, NULL)) == 0) {
            rc = pc_emit(c, r, &s, text, r->update, &tsch);
        }
    } else {
        rc = pc_emit(c, r, &s, text, NULL, tok.active > 0 ? &tok : NULL);
    }
out:
    free(text);
    free(s.ranks);
    return rc;
}

/* ---- global parts ---- */

int pc_read_steps(pc_t *pc, yt_node_t *raw, bool *have, bool *isnull)
{
    int64_t *steps;
    size_t n;
    int rc = pc_ints(pc, raw, 1, INT64_MAX, "a list of positive step numbers or null", &steps, &n,
                     isnull);
    *have = false;
    if (rc != 0 || n == 0) {
        free(steps);
        return rc;
    }
    size_t k = pc_sort_unique(steps, n);
    pc_spec_begin(pc);
    pc->spec.steps = steps;
    pc->spec.steps_n = k;
    if (k != n) {
        pc_warn(pc, &pc->spec_warnings, raw, "repeated steps are profiled once");
    }
    *have = true;
    return 0;
}

int pc_read_profd(vctx_t *c, const char **tool)
{
    pc_t *pc = c->pc;
    yt_node_t *sec, *raw;
    char what[160];
    int rc;
    c->rank_space = "replica";
    if ((rc = pc_get(pc, c->root, "profd", &sec)) != 0 || sec == NULL) {
        return rc;
    }
    pc_check_keys(pc, sec, k_profd);
    pc_choices(rank_spaces, what, sizeof(what));
    if ((rc = pc_get(pc, sec, "rollout_ranks", &raw)) ||
        (rc = pc_str(pc, raw, rank_spaces, what, &c->rank_space))) {
        return rc;
    }
    c->rank_space_set = c->rank_space != NULL;
    if (c->rank_space == NULL) {
        c->rank_space = "replica";
    }
    pc_choices(profilers, what, sizeof(what));
    if ((rc = pc_get(pc, sec, "tool", &raw)) || (rc = pc_str(pc, raw, profilers, what, tool))) {
        return rc;
    }
    return 0;
}

/* Without profd.rollout_ranks: verl versions whose rollout doc maps global
 * ranks to replicas are the ones with relocate_results / finish_hook_*. */
static int guess_rank_space(vctx_t *c, yt_node_t *rollout)
{
    static const char *const newer[] = {"relocate_results", "finish_hook_cmd",
                                        "finish_hook_all_ranks", "finish_hook_ranks", NULL};
    yt_node_t *secs[2] = {rollout, c->actor}, *v;
    for (int s = 0; s < 2 && !c->rank_space_set; s++) {
        int rc = pc_val(c->pc, secs[s], &v);
        if (rc != 0) {
            return rc;
        }
        for (int i = 0; v != NULL && v->type == YT_MAP && newer[i] != NULL; i++) {
            if (yt_map_get(v, newer[i]) != NULL) {
                c->rank_space = "global";
                return 0;
            }
        }
    }
    return 0;
}

/* The request could not select anything: its warnings become the file's. */
void pc_drop_spec(pc_t *pc)
{
    for (size_t i = 0; i < pc->spec_warnings.n; i++) {
        char **nv = realloc(pc->warnings.v, (pc->warnings.n + 1) * sizeof(*nv));
        if (nv == NULL) {
            free(pc->spec_warnings.v[i]);
            continue;
        }
        pc->warnings.v = nv;
        pc->warnings.v[pc->warnings.n++] = pc->spec_warnings.v[i];
    }
    free(pc->spec_warnings.v);
    pc->spec_warnings.v = NULL;
    pc->spec_warnings.n = 0;
    pp_record_free(&pp_desc_window_spec, &pc->spec);
    pc->have_spec = false;
}

void pc_continuous_check(pc_t *pc, yt_node_t *raw)
{
    for (size_t i = 0; i < pc->spec.selectors_n; i++) {
        if (pc->spec.selectors[i].mode == PP_MODE_DISCRETE) {
            pc_warn(pc, &pc->spec_warnings, raw,
                    "profile_continuous_steps needs discrete: false (verl); %s is discrete, so "
                    "its phases are captured step by step",
                    pc->spec.selectors[i].role);
            return;
        }
    }
}

/* global_profiler, the profd section, the legacy key next to it. */
static int verl_global(vctx_t *c, yt_node_t *gp, const char **save_path, yt_node_t **cont_at)
{
    pc_t *pc = c->pc;
    yt_node_t *raw, *v;
    const char *ptool = NULL;
    char what[160];
    int rc;
    pc_check_keys(pc, gp, k_global);
    if ((rc = pc_read_profd(c, &ptool)) != 0) {
        return rc;
    }
    if (ptool != NULL && (rc = pc_get(pc, c->root, "profd.tool", &raw)) == 0) {
        pc_warn(pc, &pc->warnings, raw,
                "profd.tool only chooses the legacy schema's tool; set global_profiler.tool");
    }
    if (rc != 0 || (rc = pc_get(pc, c->root, "trainer.profile_steps", &raw)) ||
        (rc = pc_val(pc, raw, &v))) {
        return rc;
    }
    if (v != NULL && v->type != YT_NULL) {
        pc_warn(pc, &pc->warnings, raw,
                "legacy key ignored: this config uses global_profiler.steps");
    }
    pc_choices(tools, what, sizeof(what));
    strncat(what, " or null", sizeof(what) - strlen(what) - 1);
    if ((rc = pc_get(pc, gp, "tool", &raw)) || (rc = pc_str(pc, raw, tools, what, &c->gtool)) ||
        (rc = pc_get(pc, gp, "save_path", &raw)) ||
        (rc = pc_str(pc, raw, NULL, "a path", save_path)) ||
        (rc = pc_get(pc, gp, "profile_continuous_steps", cont_at)) ||
        (rc = pc_get(pc, gp, "global_tool_config.nsys", &raw)) ||
        (rc = check_tool(pc, raw, "nsys")) ||
        (rc = pc_get(pc, gp, "global_tool_config.torch_memory", &raw))) {
        return rc;
    }
    return check_tool(pc, raw, "torch_memory");
}

/* nsys with steps needs worker_nsight_options (verl-project 1dda039b
 * verl/trainer/ppo/v1/trainer_base.py:276-286; volcengine b178a3cd
 * ray_trainer.py:837-847): verl refuses the run. Checked where verl's own
 * config has the global_tool_config section. */
static int nsys_options(vctx_t *c, yt_node_t *gp)
{
    yt_node_t *gtc, *raw, *v;
    int rc;
    if (c->gtool == NULL || strcmp(c->gtool, "nsys") != 0 ||
        (rc = pc_get(c->pc, gp, "global_tool_config", &gtc)) != 0 || gtc == NULL) {
        return 0;
    }
    if ((rc = pc_get(c->pc, gp, "global_tool_config.nsys.worker_nsight_options", &raw)) ||
        (rc = pc_val(c->pc, raw, &v))) {
        return rc;
    }
    if (v == NULL || v->type == YT_NULL) {
        return pc_error(c->pc, raw ? raw : gtc,
                        "worker_nsight_options must be set when using nsys with profile_steps");
    }
    return 0;
}

/* The rollout: agent loop, engine, replica size, how its ranks are read. */
static int verl_rollout(vctx_t *c)
{
    pc_t *pc = c->pc;
    static const char *const sizes[] = {"tensor_model_parallel_size", "data_parallel_size",
                                        "pipeline_model_parallel_size", NULL};
    yt_node_t *raw, *v, *rollout;
    char key[96];
    int rc;
    if ((rc = pc_get(pc, c->root, "actor_rollout_ref.rollout.mode", &c->mode_at)) ||
        (rc = pc_val_opt(pc, c->mode_at, &v))) {
        return rc;
    }
    c->agent_loop = v != NULL && v->type == YT_STR && strcmp(v->text, "async") == 0;
    if ((rc = pc_get(pc, c->root, "actor_rollout_ref.rollout.name", &raw)) ||
        (rc = pc_val_opt(pc, raw, &v))) {
        return rc;
    }
    c->engine = v != NULL && v->type == YT_STR ? v->text : NULL;
    c->replica_size = 1;
    for (int i = 0; sizes[i] != NULL; i++) {
        int64_t x;
        snprintf(key, sizeof(key), "actor_rollout_ref.rollout.%s", sizes[i]);
        if ((rc = pc_get(pc, c->root, key, &raw)) || (rc = pc_val_opt(pc, raw, &v)) ||
            (v != NULL && (rc = pc_int(pc, raw, 1, INT32_MAX, 1, &x)))) {
            return rc;
        }
        c->replica_size *= v != NULL ? x : 1;
    }
    if ((rc = pc_get(pc, c->root, pc_roles[1].path, &rollout)) != 0) {
        return rc;
    }
    return guess_rank_space(c, rollout);
}

/* verl before the removal of actor.dump_memory_snapshot (verl-project
 * 78afaa5b, 2026-04-29; e.g. volcengine b178a3cd ray_trainer.py:1702-1708)
 * dumps a torch_memory snapshot on every actor rank after every step when
 * the actor's tool is torch_memory, whatever steps and enable say. Such a
 * config is told by its top-level reward_model section without the
 * `reward` section that replaced it (verl-project #5255, 2026-02-11). */
static int memory_every_step(vctx_t *c, const char *save_path)
{
    pc_t *pc = c->pc;
    yt_node_t *raw = NULL, *v = NULL, *rm = NULL;
    char *text = NULL;
    rsel_t s = {.all_ranks = true, .tool = "torch_memory"};
    int rc = 0;
    yt_node_t *reward = NULL;
    if (c->actor == NULL || (rc = pc_get(pc, c->root, "reward_model", &rm)) != 0 || rm == NULL ||
        (rc = pc_get(pc, c->root, "reward", &reward)) != 0 || reward != NULL ||
        (rc = pc_get(pc, c->actor, "tool", &raw)) != 0 || (rc = pc_val_opt(pc, raw, &v)) != 0 ||
        v == NULL || v->type != YT_STR || strcmp(v->text, "torch_memory") != 0) {
        return rc;
    }
    pc_spec_begin(pc);
    pc->spec.start = 1;
    pc->spec.end = -1;
    pc_warn(pc, &pc->spec_warnings, raw,
            "this verl (reward_model at the top, no reward section: before verl-project "
            "78afaa5b) dumps a "
            "torch_memory snapshot on every actor rank after every step, whatever "
            "global_profiler.steps and profiler.enable say (the one after step N is filed under "
            "step N+1)");
    s.enable_at = raw;
    if ((rc = settings(c, &pc_roles[0], c->actor, "torch_memory", &text)) == 0 &&
        (rc = pc_emit(c, &pc_roles[0], &s, text, NULL, NULL)) == 0 &&
        (rc = pc_spec_finish(pc, save_path)) == 0) {
        rc = pc_spec_push(pc);
    }
    free(text);
    c->skip_actor = rc == 0;
    return rc;
}

/* No selector: why, for the user. */
static void verl_none(vctx_t *c, yt_node_t *steps_at)
{
    pc_t *pc = c->pc;
    pc_drop_spec(pc);
    if (c->enabled == 0) {
        pc_warn(pc, &pc->warnings, steps_at,
                "no role is profiled (set a role's profiler.enable: true); no window");
        pc_no_window(pc, "no role has profiler.enable: true%s",
                     c->skip_actor ? " besides the actor's memory snapshots" : "");
    } else if (c->debugger == c->enabled) {
        pc_warn(pc, &pc->warnings, steps_at, "no enabled role is profiled; no window");
        pc_no_window(pc, "the tool is precision_debugger, not a profiler");
    } else if (c->no_tool == c->enabled) {
        pc_warn(pc, &pc->warnings, steps_at, "no enabled role has a profiler tool; no window");
        pc_no_window(pc, "global_profiler.tool is null (and no role sets a tool): verl's "
                         "profiler is a no-op");
    } else {
        pc_warn(pc, &pc->warnings, steps_at, "no enabled role is profiled; no window");
        pc_no_window(pc, "no enabled role is profiled (see the warnings)");
    }
}

int pc_verl(pc_t *pc, yt_node_t *root)
{
    vctx_t c = {.pc = pc, .root = root};
    yt_node_t *gp, *v, *steps_at, *cont_at;
    const char *save_path;
    bool continuous, isnull;
    int rc;

    if ((rc = pc_get(pc, root, "global_profiler", &gp)) || (rc = pc_val(pc, gp, &v))) {
        return rc;
    }
    if (v != NULL && v->type != YT_MAP && v->type != YT_NULL) {
        return pc_expected(pc, gp, NULL, v, "a mapping (global_profiler settings)");
    }
    if ((rc = verl_global(&c, gp, &save_path, &cont_at)) ||
        (rc = pc_bool(pc, cont_at, false, &continuous)) ||
        (rc = pc_get(pc, root, pc_roles[0].path, &c.actor)) || (rc = pc_val(pc, c.actor, &v))) {
        return rc;
    }
    if (v == NULL || v->type != YT_MAP) {
        c.actor = NULL;
    }
    if ((rc = verl_rollout(&c)) || (rc = memory_every_step(&c, save_path)) ||
        (rc = pc_get(pc, gp, "steps", &steps_at)) ||
        (rc = pc_read_steps(pc, steps_at, &c.steps, &isnull)) ||
        (rc = isnull ? 0 : nsys_options(&c, gp))) {
        goto fail;
    }
    pc->spec.continuous = continuous;
    for (size_t i = c.skip_actor ? 1 : 0; i < PC_NROLES; i++) {
        if ((rc = do_role(&c, &pc_roles[i])) != 0) {
            goto fail;
        }
    }
    if (!c.steps) {
        pc_no_window(pc, isnull ? "global_profiler.steps is null: verl profiles no step"
                                : "global_profiler.steps is []: no step is listed");
        return 0;
    }
    if (pc->spec.selectors_n == 0) {
        verl_none(&c, steps_at);
        return 0;
    }
    if (pc->spec.continuous) {
        pc_continuous_check(pc, cont_at);
    }
    return pc_spec_finish(pc, save_path);
fail:
    if (pc->have_spec) {
        pp_record_free(&pp_desc_window_spec, &pc->spec);
        pc->have_spec = false;
    }
    return rc;
}
