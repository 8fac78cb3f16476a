// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Training configurations -> window requests: the entry point and schema
 * detection. The schemas themselves are read in profcfg_verl*.c,
 * profcfg_legacy.c and profcfg_ms.c, over the helpers of profcfg_util.c;
 * docs/profiling-config.md describes the rules.
 */
#include "profcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hydra.h"
#include "profcfg_int.h"
#include "pu_buf.h"

/* ---- schema detection ---------------------------------------------------------- */

static bool has(pc_t *pc, yt_node_t *root, const char *path, int *rc)
{
    yt_node_t *raw = NULL;
    if (*rc == 0) {
        *rc = pc_get(pc, root, path, &raw);
    }
    return *rc == 0 && raw != NULL;
}

/* Top-level keys Megatron (and MindSpeed on Megatron) use for profiling. */
static bool megatron_keys(const yt_node_t *map)
{
    for (size_t i = 0; i < map->n; i++) {
        const char *k = map->pairs[i].key;
        if (strcmp(k, "profile") == 0 || strncmp(k, "profile_step_", 13) == 0 ||
            strcmp(k, "profile_ranks") == 0 || strcmp(k, "use_pytorch_profiler") == 0) {
            return true;
        }
    }
    return false;
}

/* verl's sections: current schema, legacy schema, critic/reward alone.
 * *done: one of them was found (and read). */
static int detect_verl(pc_t *pc, yt_node_t *root, bool *done)
{
    static const char *const current[] = {"global_profiler", "actor_rollout_ref.actor.profiler",
                                          "actor_rollout_ref.rollout.profiler",
                                          "actor_rollout_ref.ref.profiler", NULL};
    static const char *const legacy[] = {"trainer.profile_steps", "trainer.npu_profile",
                                         "actor_rollout_ref.profiler", NULL};
    int rc = 0;
    *done = true;
    for (int i = 0; current[i] != NULL; i++) {
        if (has(pc, root, current[i], &rc)) {
            pc->schema = "verl";
            return pc_verl(pc, root);
        }
    }
    for (int i = 0; legacy[i] != NULL; i++) {
        if (has(pc, root, legacy[i], &rc)) {
            pc->schema = "verl-legacy";
            return pc_verl_legacy(pc, root);
        }
    }
    /* critic / reward_model sections alone: the current schema has `enable` */
    if (has(pc, root, "critic.profiler.enable", &rc) ||
        has(pc, root, "reward_model.profiler.enable", &rc)) {
        pc->schema = "verl";
        return pc_verl(pc, root);
    }
    if (has(pc, root, "critic.profiler", &rc) || has(pc, root, "reward_model.profiler", &rc)) {
        pc->schema = "verl-legacy";
        return pc_verl_legacy(pc, root);
    }
    *done = false;
    return rc;
}

/* MindSpeed FSDP2's `training.profile*`, or top-level Megatron keys. */
static int detect_ms(pc_t *pc, yt_node_t *root, yt_node_t *v, bool *done)
{
    yt_node_t *training = NULL, *sec;
    int rc = pc_get(pc, root, "training", &training);
    *done = true;
    if (rc == 0 && training != NULL && (rc = pc_val(pc, training, &sec)) == 0 &&
        sec->type == YT_MAP) {
        for (size_t i = 0; i < sec->n; i++) {
            if (strncmp(sec->pairs[i].key, "profile", 7) == 0) {
                pc->schema = "mindspeed";
                return pc_mindspeed(pc, training);
            }
        }
    }
    if (rc == 0 &&
        (megatron_keys(v) || pc->fw == PD_FW_MEGATRON_LM || pc->fw == PD_FW_MINDSPEED_MCORE)) {
        pc->schema = "megatron";
        return pc_megatron(pc, root);
    }
    *done = false;
    return rc;
}

/* Fragments: a file that is one piece of a verl config. */
static int detect_fragment(pc_t *pc, yt_node_t *root, yt_node_t *v)
{
    yt_node_t *sec;
    int rc;
    if ((rc = pc_get(pc, root, "options", &sec)) != 0) {
        return rc;
    }
    if (sec != NULL) {
        pc->schema = "verl-legacy";
        return pc_verl_fragment(pc, sec, true);
    }
    if ((rc = pc_get(pc, root, "profiler", &sec)) != 0) {
        return rc;
    }
    if (sec != NULL) {
        pc->schema = "verl";
        return pc_verl_fragment(pc, sec, false);
    }
    if (yt_map_get(v, "tool_config") != NULL || yt_map_get(v, "enable") != NULL ||
        yt_map_get(v, "all_ranks") != NULL) {
        pc->schema = "verl";
        return pc_verl_fragment(pc, root, false);
    }
    snprintf(pc->err, pc->errlen,
             "%s:%d:%d: no profiling settings found (expected global_profiler, "
             "trainer.profile_steps, training.profile_*, profile_step_start... or a verl "
             "profiler section)",
             pc_file_of(pc, root), root->line, root->col);
    return PROFD_ECONFIG;
}

static int detect(pc_t *pc, yt_node_t *root)
{
    yt_node_t *v;
    bool done;
    int rc = pc_val(pc, root, &v);
    if (rc != 0) {
        return rc;
    }
    if (v->type == YT_NULL || (v->type == YT_MAP && v->n == 0)) { /* nothing to profile */
        pc->schema = "none";
        pc_warn(pc, &pc->warnings, root, "empty configuration; no window");
        pc_no_window(pc, "the configuration is empty");
        return 0;
    }
    if (v->type != YT_MAP) {
        return pc_expected(pc, root, NULL, v, "a mapping with a profiling section");
    }
    if ((rc = detect_verl(pc, root, &done)) != 0 || done ||
        (rc = detect_ms(pc, root, v, &done)) != 0 || done) {
        return rc;
    }
    return detect_fragment(pc, root, v);
}

/* ---- public ------------------------------------------------------------------------ */

const char *pd_framework_name(pd_framework_t fw)
{
    switch (fw) {
    case PD_FW_MEGATRON_LM:
        return "Megatron-LM";
    case PD_FW_MINDSPEED_MCORE:
        return "MindSpeed-LLM (Megatron-core)";
    case PD_FW_MINDSPEED_FSDP2:
        return "MindSpeed-LLM (FSDP2)";
    default:
        return NULL;
    }
}

/* The defaults chain of the file an error is about, after the error. */
static void add_chain(pc_t *pc)
{
    const yt_source_t *s = pc->oc.err_src;
    size_t off = strlen(pc->err);
    if (s != NULL && s->chain != NULL && off < pc->errlen) {
        snprintf(pc->err + off, pc->errlen - off, " (defaults: %s)", s->chain);
    }
}

/* Hand the reader's results over. */
static int finish(pc_t *pc, int rc, pd_profcfg_t *out)
{
    pd_profcfg_t res = {0};
    size_t n = pc->ndone + (pc->have_spec ? 1 : 0);
    if (rc == 0 && n > 0) {
        if ((res.specs = malloc(n * sizeof(*res.specs))) == NULL) {
            rc = pc_nomem(pc);
        } else {
            memcpy(res.specs, pc->done, pc->ndone * sizeof(*res.specs));
            if (pc->have_spec) {
                res.specs[pc->ndone] = pc->spec;
            }
            res.n_specs = n;
            pc->have_spec = false;
            pc->ndone = 0;
        }
    }
    if (rc == 0 && res.n_specs == 0) {
        pc_no_window(pc, "the configuration requests no window (see the warnings)");
        if ((res.no_window = strdup(pc->no_window)) == NULL) {
            rc = pc_nomem(pc);
        }
    }
    if (rc == 0 && (res.schema = strdup(pc->schema)) == NULL) {
        rc = pc_nomem(pc);
    }
    if (rc == 0) {
        res.warnings = pc->warnings.v;
        res.n_warnings = pc->warnings.n;
        pc->warnings.v = NULL;
        pc->warnings.n = 0;
        *out = res;
    } else {
        pd_profcfg_free(&res);
        if (rc == PROFD_ECONFIG) {
            add_chain(pc);
        }
        yt_one_line(pc->err);
    }
    if (pc->have_spec) {
        pp_record_free(&pp_desc_window_spec, &pc->spec);
    }
    for (size_t i = 0; i < pc->ndone; i++) {
        pp_record_free(&pp_desc_window_spec, &pc->done[i]);
    }
    pc_strv_free(&pc->warnings);
    pc_strv_free(&pc->spec_warnings);
    return rc;
}

int pd_profcfg_read(const char *file, yt_node_t *root, const pd_profcfg_opts_t *opts,
                    pd_profcfg_t *out, char *err, size_t errlen)
{
    pc_t pc = {.file = file ? file : "<config>", .err = err, .errlen = errlen};
    oc_init(&pc.oc, pc.file, root, err, errlen);
    if (opts != NULL) {
        pc.fw = opts->framework;
        pc.composed = opts->composed;
        pc.oc.env = opts->env;
        pc.oc.env_ctx = opts->env_ctx;
        pc.oc.resolvers = opts->resolvers;
        pc.oc.resolvers_ctx = opts->resolvers_ctx;
    }
    return finish(&pc, detect(&pc, root), out);
}

int pd_profcfg_load(const char *file, const char *text, size_t len, char *const *overrides,
                    size_t n_overrides, pd_profcfg_t *out, char *err, size_t errlen)
{
    yt_node_t *root;
    int rc;
    file = file ? file : "<config>";
    if (text == NULL && len != 0) {
        snprintf(err, errlen, "%s: no text", file);
        return PROFD_EINVAL;
    }
    if ((rc = yt_parse(file, text ? text : "", len, &root, err, errlen)) != 0) {
        return rc;
    }
    rc = hy_apply_overrides(file, &root, overrides, n_overrides, err, errlen);
    if (rc == 0) {
        rc = pd_profcfg_read(file, root, NULL, out, err, errlen);
    } else {
        yt_one_line(err);
    }
    yt_free(root);
    return rc;
}

void pd_profcfg_free(pd_profcfg_t *cfg)
{
    if (cfg == NULL) {
        return;
    }
    pp_records_free(&pp_desc_window_spec, cfg->specs, cfg->n_specs);
    pu_strv_free(cfg->warnings, cfg->n_warnings);
    free(cfg->schema);
    free(cfg->no_window);
    memset(cfg, 0, sizeof(*cfg));
}
