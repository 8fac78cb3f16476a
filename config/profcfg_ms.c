/*
 * MindSpeed FSDP2 (`training.profile_*`) and Megatron-style top-level
 * `profile`, `profile_step_start/end`, `profile_ranks`,
 * `use_pytorch_profiler` (plus the MindSpeed npu keys when MindSpeed runs on
 * Megatron). Both count steps from 0 and stop before profile_step_end; profd
 * counts from 1, so [start, end) becomes [start + 1, end + 1).
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
    bool megatron;
    bool enabled;
    int64_t start, end;
    int64_t *ranks;
    size_t n;
    const char *level, *export_type, *save_path;
    bool simplification, cpu, stack, memory, shapes, torch, npu;
    yt_node_t *start_at, *end_at, *ranks_at, *on_at;
} ms_t;

static int read_keys(pc_t *pc, yt_node_t *sec, ms_t *m)
{
    yt_node_t *v;
    bool isnull;
    char what[160];
    int rc;
    if ((rc = pc_val(pc, sec, &v)) != 0) {
        return rc;
    }
    pc_choices(pc_levels, what, sizeof(what));
    m->on_at = yt_map_get(v, "profile");
    m->start_at = yt_map_get(v, "profile_step_start");
    m->end_at = yt_map_get(v, "profile_step_end");
    m->ranks_at = yt_map_get(v, "profile_ranks");
    if ((rc = pc_bool(pc, m->on_at, false, &m->enabled)) ||
        (rc = pc_int(pc, m->start_at, 0, INT32_MAX, m->megatron ? 10 : 0, &m->start)) ||
        (rc = pc_int(pc, m->end_at, -1, INT32_MAX, m->megatron ? 12 : -1, &m->end)) ||
        (rc = pc_ints(pc, m->ranks_at, -1, INT32_MAX, "a list of ranks (integers >= 0, or [-1])",
                      &m->ranks, &m->n, &isnull)) ||
        (rc = pc_str(pc, yt_map_get(v, "profile_level"), pc_levels, what, &m->level))) {
        return rc;
    }
    if (isnull) { /* defaults: MindSpeed [-1] (all), Megatron [0] */
        free(m->ranks);
        if ((m->ranks = malloc(sizeof(*m->ranks))) == NULL) {
            return pc_nomem(pc);
        }
        m->ranks[0] = m->megatron ? 0 : -1;
        m->n = 1;
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
        (rc = pc_str(pc, yt_map_get(v, "profile_save_path"), NULL, "a path", &m->save_path)) ||
        (rc = pc_bool(pc, yt_map_get(v, "use_pytorch_profiler"), false, &m->torch))) {
        return rc;
    }
    m->npu = !m->megatron;
    for (int i = 0; m->megatron && npu_only[i] != NULL; i++) {
        m->npu |= yt_map_get(v, npu_only[i]) != NULL;
    }
    return 0;
}

static int npu_settings(pc_t *pc, const ms_t *m, char **out)
{
    cJSON *j = cJSON_CreateObject(), *c;
    if (j == NULL) {
        return pc_nomem(pc);
    }
    cJSON_AddStringToObject(j, "level", m->level ? m->level : "level0");
    c = cJSON_AddArrayToObject(j, "contents");
    cJSON_AddItemToArray(c, cJSON_CreateString("npu")); /* always recorded */
    if (m->cpu) {
        cJSON_AddItemToArray(c, cJSON_CreateString("cpu"));
    }
    if (m->memory) {
        cJSON_AddItemToArray(c, cJSON_CreateString("memory"));
    }
    if (m->shapes) {
        cJSON_AddItemToArray(c, cJSON_CreateString("shapes"));
    }
    if (m->stack) {
        cJSON_AddItemToArray(c, cJSON_CreateString("stack"));
    }
    cJSON_AddBoolToObject(j, "analysis", true);
    cJSON_AddStringToObject(j, "export_type", m->export_type ? m->export_type : "text");
    cJSON_AddBoolToObject(j, "data_simplification", m->simplification);
    if ((*out = pc_json_text(j)) == NULL) {
        return pc_nomem(pc);
    }
    return 0;
}

static int build(pc_t *pc, yt_node_t *sec, ms_t *m)
{
    yt_node_t *v;
    pp_selector_t sel;
    char *text = NULL;
    const char *tool = m->npu ? "npu" : m->torch ? "torch" : "nsys";
    int rc;

    if (m->end != -1 && m->end <= m->start) {
        if (m->end_at == NULL) { /* the default end: the start is what is wrong */
            pc_val(pc, m->start_at, &v);
            return pc_expected(pc, m->start_at, NULL, v,
                               "a step before profile_step_end (%lld by default)",
                               (long long)m->end);
        }
        pc_val(pc, m->end_at, &v);
        return pc_expected(pc, m->end_at, NULL, v, "-1 or a step after profile_step_start (%lld)",
                           (long long)m->start);
    }
    size_t all = 0;
    for (size_t i = 0; i < m->n; i++) {
        all += m->ranks[i] == -1;
    }
    if (m->n == 0) {
        pc_warn(pc, &pc->warnings, m->ranks_at, "profile_ranks: [] selects no rank; no window");
        return 0;
    }
    if (all > 0 && m->n > all) {
        pc_warn(pc, &pc->warnings, m->ranks_at, "-1 selects every rank; the other ranks are moot");
    }
    if (m->npu) {
        rc = npu_settings(pc, m, &text);
    } else {
        /* Megatron's torch.profiler records shapes and stacks; nsys has no options */
        text = strdup(m->torch ? "{\"contents\":[\"cpu\",\"cuda\",\"shapes\",\"stack\"]}" : "{}");
        rc = text ? 0 : pc_nomem(pc);
    }
    if (rc != 0) {
        return rc;
    }
    pc_spec_begin(pc);
    pc->spec.start = m->start + 1;
    pc->spec.end = m->end == -1 ? -1 : m->end + 1;
    pp_record_init(&pp_desc_selector, &sel);
    sel.all_ranks = all > 0;
    if (!sel.all_ranks) {
        m->n = pc_sort_unique(m->ranks, m->n);
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
    return pc_spec_finish(pc, m->npu ? (m->save_path ? m->save_path : "./profile") : m->save_path);
}

static int run(pc_t *pc, yt_node_t *sec, bool megatron)
{
    ms_t m = {.megatron = megatron};
    yt_node_t *v;
    int rc = pc_val(pc, sec, &v);
    if (rc == 0) {
        check_profile_keys(pc, v);
        rc = read_keys(pc, sec, &m);
    }
    if (rc == 0 && m.enabled) {
        rc = build(pc, sec, &m);
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
    return run(pc, training, false);
}

int pc_megatron(pc_t *pc, yt_node_t *root)
{
    return run(pc, root, true);
}
