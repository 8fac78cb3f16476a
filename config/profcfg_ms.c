// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * MindSpeed-LLM and Megatron-LM: `training.profile_*` (MindSpeed-LLM's FSDP2
 * YAML) and the top-level `profile`, `profile_step_start/end`,
 * `profile_ranks`, `use_pytorch_profiler`, `profile_level`... that Megatron
 * and MindSpeed-LLM's Megatron-core path read from their command line
 * (launch.c turns those flags into these keys). Each framework numbers the
 * profiled iterations its own way (docs/profiling-config.md, "Step
 * numbering"); profd's steps count from 1 like the iterations Megatron logs:
 *
 *   MindSpeed-LLM Megatron-core (Ascend/MindSpeed-LLM c77308a1,
 *     mindspeed_llm/training/training.py:get_profiler 271-322): [start, end)
 *     as logged, start >= 1 (features_manager/functional/profiling.py:32-36)
 *   MindSpeed-LLM FSDP2 (fsdp2/utils/profiler.py:79-88, train/trainer.py
 *     219-221, 316-320): [start, end) counted from 0 -> [start+1, end+1)
 *   Megatron-LM nsys (NVIDIA/Megatron-LM d98e8a64 megatron/training/
 *     training.py:4560-4573, 4000-4018): iterations start+1 .. end
 *   Megatron-LM torch profiler (training.py:4480-4508, 4566-4567):
 *     iterations start .. end-1
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "profcfg_int.h"

static const char *const export_types[] = {"text", "db", NULL};

/* MindSpeed's npu keys; `profile*` keys not listed are warned about. */
static const char *const ms_keys[] = {"profile",
                                      "profile_step_start",
                                      "profile_step_end",
                                      "profile_ranks",
                                      "profile_level",
                                      "profile_export_type",
                                      "profile_data_simplification",
                                      "profile_with_cpu",
                                      "profile_with_stack",
                                      "profile_with_memory",
                                      "profile_record_shapes",
                                      "profile_save_path",
                                      NULL};
static const char *const npu_only[] = {
    "profile_level",      "profile_export_type",         "profile_with_cpu",
    "profile_with_stack", "profile_with_memory",         "profile_record_shapes",
    "profile_save_path",  "profile_data_simplification", NULL};

static void check_profile_keys(pc_t *pc, const yt_node_t *map)
{
    for (size_t i = 0; map->type == YT_MAP && i < map->n; i++) {
        if (strncmp(map->pairs[i].key, "profile", 7) == 0 && !pc_in(map->pairs[i].key, ms_keys)) {
            pc_unknown(pc, &map->pairs[i]);
        }
    }
}

typedef struct ms {
    pd_framework_t fw;
    bool enabled;
    int64_t start, end;
    int64_t *ranks;
    size_t n;
    bool ranks_given;
    const char *level, *export_type, *save_path;
    bool simplification, cpu, stack, memory, shapes, torch;
    bool collect_shapes, collect_stack;
    yt_node_t *start_at, *end_at, *ranks_at, *on_at, *sec;
} ms_t;

/* The defaults of each framework's arguments. */
static void defaults(ms_t *m)
{
    bool fsdp2 = m->fw == PD_FW_MINDSPEED_FSDP2;
    m->start = fsdp2 ? 0 : 10; /* Megatron-LM arguments: 10, 12 */
    m->end = fsdp2 ? -1 : 12;
}

static int read_ranks(pc_t *pc, ms_t *m)
{
    bool isnull;
    int rc = pc_ints(pc, m->ranks_at, -1, INT32_MAX, "a list of ranks (integers >= 0, or [-1])",
                     &m->ranks, &m->n, &isnull);
    if (rc != 0) {
        return rc;
    }
    m->ranks_given = !isnull;
    if (isnull && m->fw != PD_FW_MEGATRON_LM) { /* MindSpeed FSDP2 [-1], Megatron-core [0] */
        free(m->ranks);
        if ((m->ranks = malloc(sizeof(*m->ranks))) == NULL) {
            return pc_nomem(pc);
        }
        m->ranks[0] = m->fw == PD_FW_MINDSPEED_FSDP2 ? -1 : 0;
        m->n = 1;
    }
    return 0;
}

static int read_npu_keys(pc_t *pc, yt_node_t *v, ms_t *m)
{
    char what[160];
    int rc;
    pc_choices(pc_levels, what, sizeof(what));
    if ((rc = pc_str(pc, yt_map_get(v, "profile_level"), pc_levels, what, &m->level)) != 0) {
        return rc;
    }
    pc_choices(export_types, what, sizeof(what));
    if ((rc = pc_str(pc, yt_map_get(v, "profile_export_type"), export_types, what,
                     &m->export_type)) ||
        (rc = pc_bool(pc, yt_map_get(v, "profile_data_simplification"), false,
                      &m->simplification)) ||
        (rc = pc_bool(pc, yt_map_get(v, "profile_with_cpu"), false, &m->cpu)) ||
        (rc = pc_bool(pc, yt_map_get(v, "profile_with_stack"), false, &m->stack)) ||
        (rc = pc_bool(pc, yt_map_get(v, "profile_with_memory"), false, &m->memory)) ||
        (rc = pc_bool(pc, yt_map_get(v, "profile_record_shapes"), false, &m->shapes)) ||
        (rc = pc_str(pc, yt_map_get(v, "profile_save_path"), NULL, "a path", &m->save_path))) {
        return rc;
    }
    return 0;
}

static int read_keys(pc_t *pc, yt_node_t *sec, ms_t *m)
{
    yt_node_t *v;
    int rc;
    if ((rc = pc_val(pc, sec, &v)) != 0) {
        return rc;
    }
    m->sec = sec;
    if (m->fw == PD_FW_AUTO) { /* Megatron keys: MindSpeed's npu keys mean MindSpeed */
        m->fw = PD_FW_MEGATRON_LM;
        for (int i = 0; npu_only[i] != NULL; i++) {
            if (yt_map_get(v, npu_only[i]) != NULL) {
                m->fw = PD_FW_MINDSPEED_MCORE;
            }
        }
    }
    m->on_at = yt_map_get(v, "profile");
    m->start_at = yt_map_get(v, "profile_step_start");
    m->end_at = yt_map_get(v, "profile_step_end");
    m->ranks_at = yt_map_get(v, "profile_ranks");
    defaults(m);
    if ((rc = pc_bool(pc, m->on_at, false, &m->enabled)) ||
        (rc = pc_int(pc, m->start_at, INT32_MIN, INT32_MAX, m->start, &m->start)) ||
        (rc = pc_int(pc, m->end_at, INT32_MIN, INT32_MAX, m->end, &m->end)) ||
        (rc = read_ranks(pc, m)) || (rc = read_npu_keys(pc, v, m)) ||
        (rc = pc_bool(pc, yt_map_get(v, "use_pytorch_profiler"), false, &m->torch)) ||
        (rc = pc_bool(pc, yt_map_get(v, "pytorch_profiler_collect_shapes"), false,
                      &m->collect_shapes)) ||
        (rc = pc_bool(pc, yt_map_get(v, "pytorch_profiler_collect_callstack"), false,
                      &m->collect_stack))) {
        return rc;
    }
    return 0;
}

/* MindSpeed's settings: contents in ProfilerConfig's field order. */
static int npu_settings(pc_t *pc, const ms_t *m, char **out)
{
    cJSON *j = cJSON_CreateObject(), *c;
    if (j == NULL) {
        return pc_nomem(pc);
    }
    cJSON_AddStringToObject(j, "level", m->level ? m->level : "level0");
    c = cJSON_AddArrayToObject(j, "contents");
    cJSON_AddItemToArray(c, cJSON_CreateString("npu")); /* always recorded */
    static const char *const names[] = {"cpu", "stack", "memory", "shapes"};
    const bool on[] = {m->cpu, m->stack, m->memory, m->shapes};
    for (int i = 0; i < 4; i++) {
        if (on[i]) {
            cJSON_AddItemToArray(c, cJSON_CreateString(names[i]));
        }
    }
    cJSON_AddBoolToObject(j, "analysis", true);
    cJSON_AddStringToObject(j, "export_type", m->export_type ? m->export_type : "text");
    cJSON_AddBoolToObject(j, "data_simplification", m->simplification);
    return pc_json_out(pc, j, out);
}

static int torch_settings(pc_t *pc, const ms_t *m, char **out)
{
    cJSON *j = cJSON_CreateObject(), *c;
    if (j == NULL) {
        return pc_nomem(pc);
    }
    c = cJSON_AddArrayToObject(j, "contents");
    cJSON_AddItemToArray(c, cJSON_CreateString("cpu"));
    cJSON_AddItemToArray(c, cJSON_CreateString("cuda"));
    if (m->collect_shapes) {
        cJSON_AddItemToArray(c, cJSON_CreateString("shapes"));
    }
    if (m->collect_stack) {
        cJSON_AddItemToArray(c, cJSON_CreateString("stack"));
    }
    return pc_json_out(pc, j, out);
}

/* The framework's own checks of start and end, in its words. */
static int check_steps(pc_t *pc, ms_t *m)
{
    yt_node_t *v;
    yt_node_t *at = m->start_at ? m->start_at : m->sec;
    if (m->fw == PD_FW_MINDSPEED_FSDP2) { /* arguments.py TrainingArguments.__post_init__ */
        if (m->start < 0) {
            return pc_error(pc, at, "`profile_step_start` must be >= 0");
        }
        if (m->end != -1 && m->end <= m->start) {
            return pc_error(pc, m->end_at ? m->end_at : at,
                            "`profile_step_end` must be > profile_step_start or -1");
        }
        return 0;
    }
    if (m->fw == PD_FW_MINDSPEED_MCORE) { /* profiling.py:ProfilingFeature.validate_args */
        if (m->start <= 0) {
            return pc_error(pc, at,
                            "profile_step_start should be greater than 0 but now it is %lld",
                            (long long)m->start);
        }
        if (m->end <= m->start) {
            pc_val(pc, m->end_at ? m->end_at : at, &v);
            return pc_expected(pc, m->end_at ? m->end_at : at, NULL, v,
                               "a step after profile_step_start (%lld): the torch_npu schedule "
                               "records end - start iterations",
                               (long long)m->start);
        }
        return 0;
    }
    if (m->torch && (m->end <= m->start || m->start < 0)) { /* torch.profiler.schedule */
        return pc_error(pc, m->end_at ? m->end_at : at,
                        "Invalid profiler schedule arguments (torch.profiler.schedule: "
                        "active = profile_step_end - profile_step_start must be > 0)");
    }
    return 0;
}

/* [first, end) in profd's steps, per framework. */
static void steps(pc_t *pc, ms_t *m)
{
    switch (m->fw) {
    case PD_FW_MINDSPEED_FSDP2:
        pc->spec.start = m->start + 1;
        pc->spec.end = m->end == -1 ? -1 : m->end + 1;
        break;
    case PD_FW_MINDSPEED_MCORE:
        pc->spec.start = m->start;
        pc->spec.end = m->end;
        break;
    default:
        if (m->torch) {
            pc->spec.start = m->start > 1 ? m->start : 1;
            pc->spec.end = m->end;
        } else if (m->end <= m->start) { /* never stopped: until the job ends */
            pc_warn(pc, &pc->spec_warnings, m->end_at ? m->end_at : m->sec,
                    "profile_step_end (%lld) is not after profile_step_start (%lld): Megatron "
                    "never calls cudaProfilerStop, the capture runs until the job ends",
                    (long long)m->end, (long long)m->start);
            pc->spec.start = m->start + 1;
            pc->spec.end = -1;
        } else {
            pc->spec.start = m->start + 1;
            pc->spec.end = m->end + 1;
        }
    }
}

/* Which ranks: true when every rank. False with n == 0: none. */
static bool all_ranks(pc_t *pc, ms_t *m)
{
    size_t minus = 0;
    for (size_t i = 0; i < m->n; i++) {
        minus += m->ranks[i] == -1;
    }
    if (m->fw == PD_FW_MEGATRON_LM) {
        return m->n == 0; /* common_config.py: [] is every rank */
    }
    if (m->fw == PD_FW_MINDSPEED_FSDP2 && minus > 0) {
        if (m->n > minus) {
            pc_warn(pc, &pc->warnings, m->ranks_at,
                    "-1 selects every rank; the other ranks are moot");
        }
        return true; /* profiler.py:is_profiling_rank: -1 in profile_ranks */
    }
    if (m->fw == PD_FW_MINDSPEED_MCORE && minus > 0) {
        if (m->n == minus) {
            return true; /* training.py:is_profile_enabled: profile_ranks == [-1] */
        }
        pc_warn(pc, &pc->warnings, m->ranks_at,
                "-1 next to other ranks matches no rank (MindSpeed-LLM's Megatron-core path "
                "takes every rank only for exactly [-1])");
    }
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (m->ranks[i] >= 0) {
            m->ranks[k++] = m->ranks[i];
        }
    }
    m->n = pc_sort_unique(m->ranks, k);
    return false;
}

static int build(pc_t *pc, ms_t *m)
{
    pp_selector_t sel;
    char *text = NULL;
    bool npu = m->fw != PD_FW_MEGATRON_LM;
    const char *tool = npu ? "npu" : m->torch ? "torch" : "nsys";
    int rc = check_steps(pc, m);

    if (rc != 0) {
        return rc;
    }
    pp_record_init(&pp_desc_selector, &sel);
    sel.all_ranks = all_ranks(pc, m);
    if (!sel.all_ranks && m->n == 0) {
        pc_warn(pc, &pc->warnings, m->ranks_at ? m->ranks_at : m->sec,
                "profile_ranks selects no rank; no window");
        pc_no_window(pc, "profile_ranks selects no rank");
        return 0;
    }
    if (npu) {
        rc = npu_settings(pc, m, &text);
    } else if (m->torch) {
        rc = torch_settings(pc, m, &text);
    } else if ((text = strdup("{}")) == NULL) { /* nsys: no settings */
        rc = pc_nomem(pc);
    }
    if (rc != 0) {
        return rc;
    }
    pc_spec_begin(pc);
    steps(pc, m);
    if (!sel.all_ranks) {
        sel.ranks = m->ranks;
        sel.ranks_n = m->n;
        m->ranks = NULL;
    }
    sel.settings = text;
    sel.mode = PP_MODE_E2E;
    if (pc_strdup(pc, tool, &sel.tool) || pc_add_selector(pc, &sel)) {
        pp_record_free(&pp_desc_selector, &sel);
        return PROFD_ENOMEM;
    }
    const char *dflt = m->fw == PD_FW_MINDSPEED_FSDP2 ? "./profile" : "./profile_dir";
    return pc_spec_finish(pc, npu ? (m->save_path ? m->save_path : dflt) : NULL);
}

static int run(pc_t *pc, yt_node_t *sec, pd_framework_t fw)
{
    ms_t m = {.fw = fw};
    yt_node_t *v;
    int rc = pc_val(pc, sec, &v);
    if (rc == 0) {
        check_profile_keys(pc, v);
        rc = read_keys(pc, sec, &m);
    }
    if (rc == 0 && !m.enabled) {
        pc_no_window(pc, "%s",
                     m.fw == PD_FW_MINDSPEED_FSDP2 ? "training.profile is false"
                                                   : "profiling is off (no --profile)");
    }
    if (rc == 0 && m.enabled) {
        rc = build(pc, &m);
    }
    free(m.ranks);
    if (rc != 0 && pc->have_spec) {
        pp_record_free(&pp_desc_window_spec, &pc->spec);
        pc->have_spec = false;
    }
    return rc;
}

int pc_mindspeed(pc_t *pc, yt_node_t *training)
{
    return run(pc, training, PD_FW_MINDSPEED_FSDP2);
}

int pc_megatron(pc_t *pc, yt_node_t *root)
{
    return run(pc, root, pc->fw == PD_FW_MINDSPEED_FSDP2 ? PD_FW_AUTO : pc->fw);
}
