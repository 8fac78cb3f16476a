// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* profctl apply --dry-run: the windows a config asks for (see profctl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "profcfg.h"
#include "profctl.h"

static cJSON *i64s(const int64_t *v, size_t n)
{
    if (n == 0) {
        return cJSON_CreateNull();
    }
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    }
    return a;
}

static cJSON *strs(char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    }
    return a;
}

static cJSON *schedule(const pp_schedule_t *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "skip_first", (double)s->skip_first);
    cJSON_AddNumberToObject(o, "wait", (double)s->wait);
    cJSON_AddNumberToObject(o, "warmup", (double)s->warmup);
    cJSON_AddNumberToObject(o, "active", (double)s->active);
    cJSON_AddNumberToObject(o, "repeat", (double)s->repeat);
    return o;
}

static const char *sel_tool(const pp_window_spec_t *w, const pp_selector_t *s)
{
    return s->tool ? s->tool : w->tool;
}

static pp_mode_t sel_mode(const pp_window_spec_t *w, const pp_selector_t *s)
{
    return s->mode != PP_MODE_NONE ? s->mode : w->mode;
}

/* One selector as the corpus compares it: the effective tool, mode and
 * settings of its role. */
static cJSON *role_json(const pp_window_spec_t *w, const pp_selector_t *s)
{
    cJSON *o = cJSON_CreateObject();
    const char *settings = s->settings ? s->settings : w->settings;
    const pp_schedule_t *sch = s->schedule.active > 0 ? &s->schedule : &w->schedule;
    cJSON_AddBoolToObject(o, "all_ranks", s->all_ranks);
    cJSON_AddItemToObject(o, "ranks", i64s(s->ranks, s->ranks_n));
    cJSON_AddItemToObject(o, "replica_ranks", i64s(s->replica_ranks, s->replica_ranks_n));
    cJSON_AddStringToObject(o, "tool", sel_tool(w, s));
    cJSON_AddStringToObject(o, "mode", pp_mode_name(sel_mode(w, s)));
    cJSON *st = settings ? cJSON_Parse(settings) : NULL;
    cJSON_AddItemToObject(o, "settings", st ? st : cJSON_CreateObject());
    cJSON_AddItemToObject(o, "phases", strs(s->phases, s->phases_n));
    if (sch->active > 0) {
        cJSON_AddItemToObject(o, "schedule", schedule(sch));
    }
    return o;
}

/* The roles of one window: a role with several selectors (a torch
 * schedule on the update phase) lists their phases together. */
static cJSON *roles_json(const pp_window_spec_t *w)
{
    cJSON *roles = cJSON_CreateObject();
    for (size_t i = 0; roles && i < w->selectors_n; i++) {
        const pp_selector_t *s = &w->selectors[i];
        const char *name = s->role ? s->role : "*";
        cJSON *have = cJSON_GetObjectItemCaseSensitive(roles, name);
        if (have == NULL) {
            cJSON_AddItemToObject(roles, name, role_json(w, s));
            continue;
        }
        cJSON *ph = cJSON_GetObjectItemCaseSensitive(have, "phases");
        for (size_t k = 0; ph && k < s->phases_n; k++) {
            cJSON_AddItemToArray(ph, cJSON_CreateString(s->phases[k]));
        }
        if (s->schedule.active > 0) {
            cJSON_DeleteItemFromObjectCaseSensitive(have, "schedule");
            cJSON_AddItemToObject(have, "schedule", schedule(&s->schedule));
        }
    }
    return roles;
}

static cJSON *window_json(const pp_window_spec_t *w, const pp_segment_t *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "first_step", (double)g->first);
    if (g->last == PP_NONE) {
        cJSON_AddNullToObject(o, "last_step");
    } else {
        cJSON_AddNumberToObject(o, "last_step", (double)g->last);
    }
    cJSON_AddStringToObject(o, "tool", w->tool);
    cJSON_AddStringToObject(o, "mode", pp_mode_name(w->mode));
    cJSON_AddItemToObject(o, "roles", roles_json(w));
    if (w->save_path) {
        cJSON_AddStringToObject(o, "save_path", w->save_path);
    }
    cJSON_AddItemToObject(o, "warnings", strs(w->warnings, w->warnings_n));
    return o;
}

/* Every window of every request, in order of first step. */
static int windows(const pd_profcfg_t *cfg, cJSON *arr)
{
    for (size_t i = 0; i < cfg->n_specs; i++) {
        pp_segment_t *seg;
        size_t n;
        if (pp_spec_segments(&cfg->specs[i], 1, &seg, &n) != 0) {
            return -1;
        }
        for (size_t k = 0; k < n; k++) {
            cJSON_AddItemToArray(arr, window_json(&cfg->specs[i], &seg[k]));
        }
        free(seg);
    }
    /* in order of first step (stable: requests keep their order) */
    int count = cJSON_GetArraySize(arr);
    for (int a = 1; a < count; a++) {
        for (int b = a; b > 0; b--) {
            cJSON *x = cJSON_GetArrayItem(arr, b - 1), *y = cJSON_GetArrayItem(arr, b);
            double fx = cJSON_GetObjectItem(x, "first_step")->valuedouble;
            double fy = cJSON_GetObjectItem(y, "first_step")->valuedouble;
            if (fx <= fy) {
                break;
            }
            cJSON_DetachItemViaPointer(arr, y);
            cJSON_InsertItemInArray(arr, b - 1, y);
        }
    }
    return 0;
}

static void print_roles(cJSON *roles)
{
    cJSON *r;
    cJSON_ArrayForEach(r, roles)
    {
        char *ranks = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "ranks"));
        char *reps = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "replica_ranks"));
        char *set = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "settings"));
        bool all = cJSON_IsTrue(cJSON_GetObjectItem(r, "all_ranks"));
        printf("    %-8s %-8s %-9s ranks %s", r->string,
               cJSON_GetObjectItem(r, "tool")->valuestring,
               cJSON_GetObjectItem(r, "mode")->valuestring, all ? "all" : ranks);
        if (strcmp(reps, "null") != 0) {
            printf(" replicas %s", reps);
        }
        printf(" %s\n", set);
        free(ranks);
        free(reps);
        free(set);
    }
}

static void print_table(cJSON *doc)
{
    cJSON *w, *x;
    char steps[64];
    printf("config: %s", cJSON_GetObjectItem(doc, "config")->valuestring);
    x = cJSON_GetObjectItem(doc, "framework");
    printf("%s%s%s\n", x ? " (" : "", x ? x->valuestring : "", x ? ")" : "");
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(doc, "windows"))
    {
        cJSON *last = cJSON_GetObjectItem(w, "last_step");
        ctl_fmt_steps(steps, sizeof(steps),
                      (int64_t)cJSON_GetObjectItem(w, "first_step")->valuedouble,
                      cJSON_IsNull(last) ? PP_NONE : (int64_t)last->valuedouble);
        printf("window steps %s: %s %s\n", steps, cJSON_GetObjectItem(w, "tool")->valuestring,
               cJSON_GetObjectItem(w, "mode")->valuestring);
        print_roles(cJSON_GetObjectItem(w, "roles"));
        cJSON_ArrayForEach(x, cJSON_GetObjectItem(w, "warnings"))
        {
            printf("    warning: %s\n", x->valuestring);
        }
    }
    if ((x = cJSON_GetObjectItem(doc, "reason")) != NULL) {
        printf("no window: %s\n", x->valuestring);
    }
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(doc, "warnings"))
    {
        printf("warning: %s\n", x->valuestring);
    }
}

int ctl_dry_run(const ctl_t *c, const char *config, const char *framework, const pd_profcfg_t *cfg)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *arr = cJSON_CreateArray();
    if (doc == NULL || arr == NULL || windows(cfg, arr) != 0) {
        cJSON_Delete(doc);
        cJSON_Delete(arr);
        return ctl_die(1, "out of memory");
    }
    cJSON_AddStringToObject(doc, "result", cfg->n_specs ? "windows" : "no_window");
    cJSON_AddStringToObject(doc, "config", config);
    if (framework != NULL) {
        cJSON_AddStringToObject(doc, "framework", framework);
    }
    cJSON_AddItemToObject(doc, "windows", arr);
    if (cfg->n_specs == 0) {
        cJSON_AddStringToObject(doc, "reason", cfg->no_window ? cfg->no_window : "");
    }
    cJSON_AddItemToObject(doc, "warnings", strs(cfg->warnings, cfg->n_warnings));
    if (c->json) {
        char *s = cJSON_Print(doc);
        printf("%s\n", s ? s : "{}");
        free(s);
    } else {
        print_table(doc);
    }
    cJSON_Delete(doc);
    return 0;
}
