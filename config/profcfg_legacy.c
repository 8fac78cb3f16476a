// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * verl's legacy profiling schema (before global_profiler): trainer.profile_steps,
 * one actor_rollout_ref.profiler for the hybrid worker, critic/reward_model
 * profilers with discrete/all_ranks/ranks, and trainer.npu_profile.options
 * (npu_profile.yaml). Also the pieces of a verl config found on their own
 * (a role's profiler section, a ProfilerConfig, an npu_profile options file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "profcfg_verl.h"

static const kspec_t k_legacy_role[] = {{"_target_", NULL, 0},
                                        {"discrete", NULL, 0},
                                        {"all_ranks", NULL, 0},
                                        {"ranks", NULL, 0},
                                        {NULL, NULL, 0}};
static const kspec_t k_npu_options[] = {{"save_path", NULL, 0},
                                        {"roles", NULL, 0},
                                        {"level", NULL, 0},
                                        {"with_memory", NULL, 0},
                                        {"record_shapes", NULL, 0},
                                        {"with_npu", NULL, 0},
                                        {"with_cpu", NULL, 0},
                                        {"with_module", NULL, 0},
                                        {"with_stack", NULL, 0},
                                        {"analysis", NULL, 0},
                                        {NULL, NULL, 0}};
static const kspec_t k_npu_profile[] = {{"options", k_npu_options, 0}, {NULL, NULL, 0}};

static const struct {
    const char *name, *role, *phase;
} npu_roles[] = {
    {"actor_compute_log_prob", "actor", "compute_log_prob"},
    {"actor_update", "actor", "update_actor"},
    {"rollout_generate", "rollout", "generate"},
    {"ref_compute_log_prob", "ref", "ref_compute_log_prob"},
};

static int check_options(pc_t *pc, yt_node_t *opt)
{
    static const char *const role_names[] = {
        "all",          "rollout_generate",     "actor_compute_log_prob",
        "actor_update", "ref_compute_log_prob", NULL};
    static const char *const flags[] = {"with_memory", "record_shapes", "with_npu", "with_cpu",
                                        "with_module", "with_stack",    "analysis", NULL};
    yt_node_t *v;
    const char *s;
    bool b;
    char what[200];
    int rc;
    if ((rc = pc_val(pc, opt, &v)) != 0 || v == NULL || v->type == YT_NULL) {
        return rc;
    }
    if (v->type != YT_MAP) {
        return pc_expected(pc, opt, NULL, v, "a mapping (npu_profile options)");
    }
    pc_check_keys(pc, opt, k_npu_options);
    pc_choices(pc_levels, what, sizeof(what));
    if ((rc = pc_str(pc, yt_map_get(v, "level"), pc_levels, what, &s)) != 0 ||
        (rc = pc_str(pc, yt_map_get(v, "save_path"), NULL, "a path", &s)) != 0) {
        return rc;
    }
    pc_list_of(role_names, what, sizeof(what));
    if ((rc = pc_names(pc, yt_map_get(v, "roles"), role_names, what)) != 0) {
        return rc;
    }
    for (int i = 0; flags[i] != NULL; i++) {
        if ((rc = pc_bool(pc, yt_map_get(v, flags[i]), false, &b)) != 0) {
            return rc;
        }
    }
    return 0;
}

/* npu_profile options -> {"level", "contents", "analysis"} */
static int options_settings(pc_t *pc, yt_node_t *opt, char **out)
{
    static const struct {
        const char *key, *content;
    } map[] = {{"with_npu", "npu"},         {"with_cpu", "cpu"},       {"with_memory", "memory"},
               {"record_shapes", "shapes"}, {"with_module", "module"}, {"with_stack", "stack"}};
    cJSON *j = cJSON_CreateObject(), *contents = NULL;
    yt_node_t *v = NULL, *raw;
    const char *level;
    bool b, any = false;
    int rc;
    if (j == NULL || (rc = pc_val(pc, opt, &v)) != 0) {
        cJSON_Delete(j);
        return j == NULL ? pc_nomem(pc) : rc;
    }
    if (v != NULL && v->type == YT_MAP) {
        if ((rc = pc_str(pc, yt_map_get(v, "level"), pc_levels, "a level", &level)) != 0) {
            cJSON_Delete(j);
            return rc;
        }
        if (level != NULL) {
            cJSON_AddStringToObject(j, "level", level);
        }
        contents = cJSON_AddArrayToObject(j, "contents");
        for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
            raw = yt_map_get(v, map[i].key);
            any |= raw != NULL;
            if ((rc = pc_bool(pc, raw, false, &b)) != 0) {
                cJSON_Delete(j);
                return rc;
            }
            if (b) {
                cJSON_AddItemToArray(contents, cJSON_CreateString(map[i].content));
            }
        }
        if (!any) {
            cJSON_DeleteItemFromObject(j, "contents");
        }
        if ((raw = yt_map_get(v, "analysis")) != NULL) {
            if ((rc = pc_bool(pc, raw, false, &b)) != 0) {
                cJSON_Delete(j);
                return rc;
            }
            cJSON_AddBoolToObject(j, "analysis", b);
        }
    }
    return pc_json_out(pc, j, out);
}

/* The hybrid worker's selectors from options.roles (discrete npu only). */
static int legacy_hybrid(vctx_t *c, rsel_t *s, yt_node_t *opt, const char *text)
{
    pc_t *pc = c->pc;
    const role_t *hybrid = pc_roles; /* actor, rollout, ref */
    bool all = true, want[3][2] = {{false}};
    yt_node_t *v = NULL, *rv = NULL, *rraw = NULL;
    int rc;
    if ((rc = pc_val(pc, opt, &v)) != 0) {
        return rc;
    }
    if (v != NULL && v->type == YT_MAP && (rraw = yt_map_get(v, "roles")) != NULL &&
        (rc = pc_val(pc, rraw, &rv)) != 0) {
        return rc;
    }
    if (rv != NULL && rv->type == YT_SEQ) {
        all = false;
        for (size_t i = 0; i < rv->n; i++) {
            yt_node_t *e;
            if ((rc = pc_val(pc, rv->items[i], &e)) != 0) {
                return rc;
            }
            if (strcmp(e->text, "all") == 0) {
                all = true;
            }
            for (size_t k = 0; k < sizeof(npu_roles) / sizeof(npu_roles[0]); k++) {
                if (strcmp(e->text, npu_roles[k].name) == 0) {
                    int ri = strcmp(npu_roles[k].role, "actor") == 0     ? 0
                             : strcmp(npu_roles[k].role, "rollout") == 0 ? 1
                                                                         : 2;
                    want[ri][strcmp(npu_roles[k].phase, "update_actor") == 0] = true;
                }
            }
        }
    }
    if (!s->discrete && !all && rraw != NULL) {
        pc_warn(pc, &pc->spec_warnings, rraw,
                "roles only apply in discrete mode; the end-to-end capture records every role");
    }
    for (int ri = 0; ri < 3; ri++) {
        const role_t *r = &hybrid[ri];
        if (all || !s->discrete || strcmp(s->tool, "npu") != 0) {
            rc = pc_emit(c, r, s, text, NULL, NULL);
        } else if (ri == 0 && want[0][0] && want[0][1]) {
            rc = pc_emit(c, r, s, text, NULL, NULL);
        } else if (ri == 0) {
            rc = want[0][0]   ? pc_emit(c, r, s, text, r->phase, NULL)
                 : want[0][1] ? pc_emit(c, r, s, text, r->update, NULL)
                              : 0;
        } else {
            rc = want[ri][0] ? pc_emit(c, r, s, text, NULL, NULL) : 0;
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int legacy_section(vctx_t *c, const char *path, const role_t *r, const char *tool,
                          yt_node_t *opt, const char *text, bool warn_empty)
{
    pc_t *pc = c->pc;
    yt_node_t *sec, *v, *raw;
    rsel_t s = {.tool = tool};
    bool isnull;
    int rc;
    if ((rc = pc_get(pc, c->root, path, &sec)) || (rc = pc_val(pc, sec, &v))) {
        return rc;
    }
    if (v == NULL || v->type == YT_NULL) {
        return 0;
    }
    if (v->type != YT_MAP) {
        return pc_expected(pc, sec, NULL, v, "a mapping (discrete, all_ranks, ranks)");
    }
    pc_check_keys(pc, sec, k_legacy_role);
    if ((rc = pc_bool(pc, yt_map_get(v, "discrete"), false, &s.discrete)) ||
        (rc = pc_bool(pc, yt_map_get(v, "all_ranks"), false, &s.all_ranks)) ||
        (rc = pc_ints(pc, (raw = yt_map_get(v, "ranks")), 0, INT32_MAX,
                      "a list of ranks (integers >= 0)", &s.ranks, &s.n, &isnull))) {
        return rc;
    }
    s.n = pc_sort_unique(s.ranks, s.n);
    if (s.all_ranks) {
        s.n = 0;
    }
    if (c->steps && !s.all_ranks && s.n == 0) {
        if (warn_empty) {
            pc_warn(pc, &pc->spec_warnings, raw ? raw : sec,
                    "ranks: [] and all_ranks: false select no rank (legacy schema); %s not "
                    "profiled",
                    path);
        }
    } else if (c->steps) {
        rc = r == NULL ? legacy_hybrid(c, &s, opt, text) : pc_emit(c, r, &s, text, NULL, NULL);
    }
    free(s.ranks);
    return rc;
}

/* The tool settings: npu from the options, nsys the worker options. */
static int legacy_settings(pc_t *pc, yt_node_t *root, const char *tool, yt_node_t *opt, char **text,
                           const char **save_path)
{
    yt_node_t *raw;
    int rc = 0;
    if (strcmp(tool, "npu") == 0) {
        if ((rc = options_settings(pc, opt, text)) == 0 && opt != NULL &&
            (rc = pc_get(pc, opt, "save_path", &raw)) == 0) {
            rc = pc_str(pc, raw, NULL, "a path", save_path);
        }
        return rc;
    }
    cJSON *j = cJSON_CreateObject(), *w = NULL;
    if ((rc = pc_get(pc, root, "trainer.worker_nsight_options", &raw)) == 0 && raw != NULL &&
        strcmp(tool, "nsys") == 0 && (rc = pc_json(pc, raw, NULL, NULL, &w)) == 0) {
        cJSON_AddItemToObject(j, "worker_nsight_options", w);
    }
    if ((*text = pc_json_text(j)) == NULL && rc == 0) {
        rc = pc_nomem(pc);
    }
    return rc;
}

int pc_verl_legacy(pc_t *pc, yt_node_t *root)
{
    vctx_t c = {.pc = pc, .root = root, .rank_space = "global"};
    yt_node_t *np, *opt = NULL, *v, *steps_at, *cont_at;
    const char *tool = NULL, *save_path = NULL;
    char *text = NULL;
    bool continuous, isnull;
    int rc;

    if ((rc = pc_read_profd(&c, &tool)) != 0) {
        return rc;
    }
    c.rank_space = "global";
    if ((rc = pc_get(pc, root, "trainer.npu_profile", &np)) || (rc = pc_val(pc, np, &v))) {
        return rc;
    }
    if (v != NULL && v->type != YT_NULL) {
        if (v->type != YT_MAP) {
            return pc_expected(pc, np, NULL, v, "a mapping (options: ...)");
        }
        pc_check_keys(pc, np, k_npu_profile);
        opt = yt_map_get(v, "options");
    }
    if ((rc = check_options(pc, opt)) != 0) {
        return rc;
    }
    if (tool == NULL) {
        tool = np != NULL ? "npu" : "nsys";
    }
    if ((rc = pc_get(pc, root, "trainer.profile_continuous_steps", &cont_at)) ||
        (rc = pc_bool(pc, cont_at, false, &continuous)) ||
        (rc = pc_get(pc, root, "trainer.profile_steps", &steps_at)) ||
        (rc = pc_read_steps(pc, steps_at, &c.steps, &isnull))) {
        return rc;
    }
    pc->spec.continuous = c.steps && continuous;
    rc = legacy_settings(pc, root, tool, opt, &text, &save_path);
    if (rc != 0 ||
        (rc = legacy_section(&c, "actor_rollout_ref.profiler", NULL, tool, opt, text, true)) ||
        (rc = legacy_section(&c, "critic.profiler", &pc_roles[3], tool, opt, text, false)) ||
        (rc = legacy_section(&c, "reward_model.profiler", &pc_roles[4], tool, opt, text, false))) {
        goto fail;
    }
    free(text);
    if (!c.steps) {
        pc_no_window(pc, "trainer.profile_steps lists no step (verl profiles none)");
        return 0;
    }
    if (pc->spec.selectors_n == 0) {
        pc_drop_spec(pc);
        pc_warn(pc, &pc->warnings, steps_at, "no profiler section selects a rank; no window");
        pc_no_window(pc, "no profiler section selects a rank (all_ranks false, ranks [])");
        return 0;
    }
    if (pc->spec.continuous) {
        pc_continuous_check(pc, cont_at);
    }
    return pc_spec_finish(pc, save_path);
fail:
    free(text);
    if (pc->have_spec) {
        pp_record_free(&pp_desc_window_spec, &pc->spec);
        pc->have_spec = false;
    }
    return rc;
}

int pc_verl_fragment(pc_t *pc, yt_node_t *section, bool options)
{
    int rc = options ? check_options(pc, section) : pc_check_role(pc, section);
    if (rc != 0) {
        return rc;
    }
    if (options) {
        pc_warn(pc, &pc->warnings, section,
                "npu_profile options alone request no steps (they belong under "
                "trainer.npu_profile, steps in trainer.profile_steps); no window");
        pc_no_window(pc, "npu_profile options alone request no steps");
    } else {
        pc_warn(pc, &pc->warnings, section,
                "a profiler section alone requests no steps (they come from "
                "global_profiler.steps); no window");
        pc_no_window(pc, "a profiler section alone requests no steps");
    }
    return 0;
}
