// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * verl profiling configurations, current schema (global_profiler + one
 * `profiler` section per role, read in profcfg_verl_role.c), and the global
 * parts the legacy one (profcfg_legacy.c) reads too: steps, the profd
 * section. The rules and the choices made where verl's
 * documents and code disagree are in docs/profiling-config.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profcfg_verl.h"
#include "pu_buf.h"

static const char *const rank_spaces[] = {"replica", "global", NULL};

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
    pc_check_keys(pc, sec, pc_k_profd);
    pc_choices(rank_spaces, what, sizeof(what));
    if ((rc = pc_get(pc, sec, "rollout_ranks", &raw)) ||
        (rc = pc_str(pc, raw, rank_spaces, what, &c->rank_space))) {
        return rc;
    }
    c->rank_space_set = c->rank_space != NULL;
    if (c->rank_space == NULL) {
        c->rank_space = "replica";
    }
    pc_choices(pc_verl_profilers, what, sizeof(what));
    if ((rc = pc_get(pc, sec, "tool", &raw)) ||
        (rc = pc_str(pc, raw, pc_verl_profilers, what, tool))) {
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
        size_t cap = pc->warnings.n;
        if (PU_GROW(pc->warnings.v, cap, pc->warnings.n + 1) != 0) {
            free(pc->spec_warnings.v[i]);
            continue;
        }
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
    pc_check_keys(pc, gp, pc_k_global);
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
    pc_choices(pc_verl_tools, what, sizeof(what));
    strncat(what, " or null", sizeof(what) - strlen(what) - 1);
    if ((rc = pc_get(pc, gp, "tool", &raw)) ||
        (rc = pc_str(pc, raw, pc_verl_tools, what, &c->gtool)) ||
        (rc = pc_get(pc, gp, "save_path", &raw)) ||
        (rc = pc_str(pc, raw, NULL, "a path", save_path)) ||
        (rc = pc_get(pc, gp, "profile_continuous_steps", cont_at)) ||
        (rc = pc_get(pc, gp, "global_tool_config.nsys", &raw)) ||
        (rc = pc_check_tool(pc, raw, "nsys")) ||
        (rc = pc_get(pc, gp, "global_tool_config.torch_memory", &raw))) {
        return rc;
    }
    return pc_check_tool(pc, raw, "torch_memory");
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
    if ((rc = pc_settings(c, &pc_roles[0], c->actor, "torch_memory", &text)) == 0 &&
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
        if ((rc = pc_do_role(&c, &pc_roles[i])) != 0) {
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
