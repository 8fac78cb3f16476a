// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * One role's profiler section in verl's current schema: whether the role is
 * profiled, its tool, mode, ranks, settings and schedules, and the selectors
 * made of them (pc_emit() serves the legacy schema too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "profcfg_verl.h"

/* tool_config.<tool> keys that are not tool settings (mode, schedule) */
static const char *const not_settings[] = {
    "name", "discrete", "schedule", "profile_token_start", "profile_token_end", NULL};

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
    for (const kspec_t *k = pc_k_tool_config; k->name != NULL; k++) {
        if (strcmp(k->name, tool) == 0) {
            return k->sub;
        }
    }
    return NULL;
}

int pc_settings(vctx_t *c, const role_t *r, yt_node_t *sec, const char *tool, char **out)
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
            (rc = pc_json(pc, extra, NULL, pc_k_tmem_global, &a)) != 0) {
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
    return pc_json_out(pc, j, out);
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
    pc_choices(pc_verl_tools, what, sizeof(what));
    strncat(what, " or null", sizeof(what) - strlen(what) - 1);
    if ((rc = rget(c, r, sec, "tool", &raw)) ||
        (rc = pc_str(pc, raw, pc_verl_tools, what, &s->tool))) {
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
        for (int i = 0; tc != NULL && tc->type == YT_MAP && pc_verl_profilers[i] != NULL; i++) {
            if (yt_map_get(tc, pc_verl_profilers[i]) != NULL) {
                only = pc_verl_profilers[i];
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

int pc_do_role(vctx_t *c, const role_t *r)
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
        (rc = pc_settings(c, r, sec, s.tool, &text)) != 0 ||
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
