// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * What every profiling-config reader uses: messages (warnings, errors, the
 * reason for no window), typed reads of raw nodes, JSON output and the
 * request builder. Below profcfg.c (entry, schema detection) and the
 * schema readers; calls nothing of theirs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "profcfg_int.h"
#include "pu_buf.h"

const char *const pc_levels[] = {"level_none", "level0", "level1", "level2", NULL};

/* ---- small helpers ------------------------------------------------------------ */

int pc_nomem(pc_t *pc)
{
    snprintf(pc->err, pc->errlen, "%s: out of memory", pc->file);
    return PROFD_ENOMEM;
}

int pc_strdup(pc_t *pc, const char *s, char **out)
{
    *out = NULL;
    if (s != NULL && (*out = strdup(s)) == NULL) {
        return pc_nomem(pc);
    }
    return 0;
}

void pc_strv_free(strv_t *v)
{
    pu_strv_free(v->v, v->n);
    v->v = NULL;
    v->n = 0;
}

/* Identical lines are kept once (a value inherited by several roles). */
static void strv_add(strv_t *v, const char *s)
{
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(v->v[i], s) == 0) {
            return;
        }
    }
    size_t cap = v->n; /* the list keeps no capacity: it may be handed on */
    if (PU_GROW(v->v, cap, v->n + 1) != 0) {
        return;
    }
    if ((v->v[v->n] = strdup(s)) != NULL) {
        yt_one_line(v->v[v->n++]);
    }
}

void pc_list_of(const char *const *choices, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "a list of ");
    for (const char *const *c = choices; *c != NULL && off < len; c++) {
        off += (size_t)snprintf(buf + off, len - off, "%s%s", *c, c[1] ? ", " : "");
    }
}

void pc_choices(const char *const *choices, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "one of ");
    for (const char *const *c = choices; *c != NULL && off < len; c++) {
        off += (size_t)snprintf(buf + off, len - off, "%s%s", *c, c[1] ? ", " : "");
    }
}

const char *pc_file_of(const pc_t *pc, const yt_node_t *n)
{
    while (n != NULL && n->parent == NULL && n->from != NULL) {
        n = n->from;
    }
    return n != NULL && n->src != NULL ? n->src->name : pc->file;
}

void pc_no_window(pc_t *pc, const char *fmt, ...)
{
    va_list ap;
    if (pc->no_window[0] != '\0') {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(pc->no_window, sizeof(pc->no_window), fmt, ap);
    va_end(ap);
    yt_one_line(pc->no_window);
}

static void prefix(pc_t *pc, const yt_node_t *at, const yt_node_t *key, char *buf, size_t len)
{
    char where[400], path[256];
    const yt_node_t *p = at->parent;
    oc_where(pc->file, at, where, sizeof(where));
    /* a section (mapping) is placed at its key, not at its first entry */
    for (size_t i = 0;
         at->type == YT_MAP && at->origin == NULL && p != NULL && p->type == YT_MAP && i < p->n;
         i++) {
        if (p->pairs[i].value == at) {
            snprintf(where, sizeof(where), "%s:%d:%d", pc_file_of(pc, at), p->pairs[i].line,
                     p->pairs[i].col);
        }
    }
    yt_path(key ? key : at, path, sizeof(path));
    if (path[0] != '\0') {
        snprintf(buf, len, "%s: key '%s': ", where, path);
    } else {
        snprintf(buf, len, "%s: ", where);
    }
}

void pc_warn(pc_t *pc, strv_t *to, const yt_node_t *at, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    prefix(pc, at, NULL, line, sizeof(line));
    size_t off = strlen(line);
    va_start(ap, fmt);
    vsnprintf(line + off, sizeof(line) - off, fmt, ap);
    va_end(ap);
    strv_add(to, line);
}

int pc_expected(pc_t *pc, const yt_node_t *at, const yt_node_t *key, const yt_node_t *found,
                const char *fmt, ...)
{
    char what[512], f[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    yt_describe(found, f, sizeof(f));
    prefix(pc, at, key, pc->err, pc->errlen);
    pc->oc.err_src = at->src;
    size_t off = strlen(pc->err);
    snprintf(pc->err + off, pc->errlen - off, "expected %s, found %s", what, f);
    return PROFD_ECONFIG;
}

int pc_error(pc_t *pc, const yt_node_t *at, const char *fmt, ...)
{
    va_list ap;
    prefix(pc, at, NULL, pc->err, pc->errlen);
    pc->oc.err_src = at->src;
    size_t off = strlen(pc->err);
    va_start(ap, fmt);
    vsnprintf(pc->err + off, pc->errlen - off, fmt, ap);
    va_end(ap);
    return PROFD_ECONFIG;
}

void pc_unknown(pc_t *pc, const yt_pair_t *p)
{
    char where[400], path[256], line[800];
    if (p->value->origin != NULL) {
        oc_where(pc->file, p->value, where, sizeof(where));
    } else {
        snprintf(where, sizeof(where), "%s:%d:%d", pc_file_of(pc, p->value), p->line, p->col);
    }
    yt_path(p->value, path, sizeof(path));
    snprintf(line, sizeof(line), "%s: key '%s': unknown key, ignored", where, path);
    strv_add(&pc->warnings, line);
}

void pc_check_keys(pc_t *pc, const yt_node_t *map, const kspec_t *spec)
{
    if (map == NULL || map->type != YT_MAP) {
        return;
    }
    for (size_t i = 0; i < map->n; i++) {
        const yt_pair_t *p = &map->pairs[i];
        const kspec_t *k = spec;
        while (k->name != NULL && strcmp(k->name, p->key) != 0) {
            k++;
        }
        if (k->name == NULL) {
            pc_unknown(pc, p);
        } else if (k->sub != NULL && !(k->flags & KS_ANY)) {
            pc_check_keys(pc, p->value, k->sub);
        }
    }
}

bool pc_in(const char *s, const char *const *list)
{
    for (; list != NULL && *list != NULL; list++) {
        if (strcmp(s, *list) == 0) {
            return true;
        }
    }
    return false;
}

/* ---- typed reads ------------------------------------------------------------------ */

int pc_val(pc_t *pc, yt_node_t *raw, yt_node_t **val)
{
    if (raw == NULL) {
        *val = NULL;
        return 0;
    }
    int rc = oc_resolve(&pc->oc, raw, val);
    if (rc == 0 && oc_is_missing(*val)) {
        char path[256];
        yt_path(raw, path, sizeof(path));
        return pc_error(pc, raw, "Missing mandatory value: %s", path);
    }
    return rc;
}

int pc_val_opt(pc_t *pc, yt_node_t *raw, yt_node_t **val)
{
    *val = NULL;
    if (raw == NULL || oc_is_missing(raw)) {
        return 0;
    }
    int rc = oc_resolve(&pc->oc, raw, val);
    if (rc == 0 && oc_is_missing(*val)) {
        *val = NULL;
    }
    return rc;
}

int pc_get(pc_t *pc, yt_node_t *base, const char *path, yt_node_t **raw)
{
    return oc_lookup(&pc->oc, base, path, raw);
}

/* The resolved value; *v NULL when absent or null. */
static int present(pc_t *pc, yt_node_t *raw, yt_node_t **v)
{
    int rc = pc_val(pc, raw, v);
    if (rc == 0 && *v != NULL && (*v)->type == YT_NULL) {
        *v = NULL;
    }
    return rc;
}

int pc_bool(pc_t *pc, yt_node_t *raw, bool def, bool *out)
{
    /* Strings and 0/1 as OmegaConf converts them for a bool field. */
    static const char *const yes[] = {"true", "yes", "on", "y", "1", NULL};
    static const char *const no[] = {"false", "no", "off", "n", "0", NULL};
    yt_node_t *v;
    int rc = present(pc, raw, &v);
    if (rc != 0) {
        return rc;
    }
    if (v == NULL) {
        *out = def;
        return 0;
    }
    if (v->type == YT_BOOL) {
        *out = v->v.b;
        return 0;
    }
    if (v->type == YT_INT && (v->v.i == 0 || v->v.i == 1)) {
        *out = v->v.i == 1;
        return 0;
    }
    if (v->type == YT_STR) {
        for (int i = 0; yes[i] != NULL; i++) {
            if (strcasecmp(v->text, yes[i]) == 0 || strcasecmp(v->text, no[i]) == 0) {
                *out = strcasecmp(v->text, yes[i]) == 0;
                return 0;
            }
        }
    }
    return pc_expected(pc, raw, NULL, v, "true or false");
}

int pc_int(pc_t *pc, yt_node_t *raw, int64_t min, int64_t max, int64_t def, int64_t *out)
{
    yt_node_t *v;
    int rc = present(pc, raw, &v);
    if (rc == 0 && v == NULL) {
        *out = def;
    }
    if (rc != 0 || v == NULL) {
        return rc;
    }
    if (v->type != YT_INT || v->v.i < min || v->v.i > max) {
        if (max == INT64_MAX) {
            return pc_expected(pc, raw, NULL, v, "an integer >= %lld", (long long)min);
        }
        return pc_expected(pc, raw, NULL, v, "an integer %lld..%lld", (long long)min,
                           (long long)max);
    }
    *out = v->v.i;
    return 0;
}

int pc_str(pc_t *pc, yt_node_t *raw, const char *const *choices, const char *what, const char **out)
{
    yt_node_t *v;
    int rc = present(pc, raw, &v);
    *out = NULL;
    if (rc != 0 || v == NULL) {
        return rc;
    }
    if (v->type == YT_SEQ || v->type == YT_MAP || (choices != NULL && v->type != YT_STR)) {
        return pc_expected(pc, raw, NULL, v, "%s", what);
    }
    if (choices != NULL) {
        const char *const *c = choices;
        while (*c != NULL && strcmp(*c, v->text) != 0) {
            c++;
        }
        if (*c == NULL) {
            return pc_expected(pc, raw, NULL, v, "%s", what);
        }
    }
    *out = v->text;
    return 0;
}

int pc_ints(pc_t *pc, yt_node_t *raw, int64_t min, int64_t max, const char *what, int64_t **out,
            size_t *n, bool *isnull)
{
    yt_node_t *v;
    int rc = present(pc, raw, &v);
    *out = NULL;
    *n = 0;
    *isnull = true;
    if (rc != 0 || v == NULL) {
        return rc;
    }
    if (v->type != YT_SEQ) {
        return pc_expected(pc, raw, NULL, v, "%s", what);
    }
    *isnull = false;
    if (v->n == 0) {
        return 0;
    }
    int64_t *a = malloc(v->n * sizeof(*a));
    if (a == NULL) {
        return pc_nomem(pc);
    }
    for (size_t i = 0; i < v->n; i++) {
        yt_node_t *e;
        if ((rc = pc_val(pc, v->items[i], &e)) != 0) {
            free(a);
            return rc;
        }
        if (e->type != YT_INT || e->v.i < min || e->v.i > max) {
            free(a);
            return pc_expected(pc, v->items[i], raw, e, "%s", what);
        }
        a[i] = e->v.i;
    }
    *out = a;
    *n = v->n;
    return 0;
}

int pc_names(pc_t *pc, yt_node_t *raw, const char *const *choices, const char *what)
{
    yt_node_t *v, *e;
    int rc = present(pc, raw, &v);
    if (rc != 0 || v == NULL) {
        return rc;
    }
    if (v->type != YT_SEQ) {
        return pc_expected(pc, raw, NULL, v, "%s", what);
    }
    for (size_t i = 0; i < v->n; i++) {
        if ((rc = pc_val(pc, v->items[i], &e)) != 0) {
            return rc;
        }
        if (e->type != YT_STR || !pc_in(e->text, choices)) {
            return pc_expected(pc, v->items[i], raw, e, "%s", what);
        }
    }
    return 0;
}

/* ---- output ---------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

size_t pc_sort_unique(int64_t *v, size_t n)
{
    size_t k = 0;
    if (n == 0) {
        return 0;
    }
    qsort(v, n, sizeof(*v), cmp_i64);
    for (size_t i = 1; i < n; i++) {
        if (v[i] != v[k]) {
            v[++k] = v[i];
        }
    }
    return k + 1;
}

static bool known(const char *k, const kspec_t *keep)
{
    for (; keep != NULL && keep->name != NULL; keep++) {
        if (strcmp(k, keep->name) == 0) {
            return true;
        }
    }
    return keep == NULL;
}

static int to_json(pc_t *pc, yt_node_t *raw, const char *const *drop, const kspec_t *keep,
                   int depth, cJSON **out)
{
    yt_node_t *v;
    int rc = pc_val(pc, raw, &v);
    cJSON *j = NULL;
    if (rc != 0) {
        return rc;
    }
    if (depth > YT_MAX_DEPTH) {
        return pc_error(pc, raw, "value nested deeper than %d levels (a cycle?)", YT_MAX_DEPTH);
    }
    switch (v->type) {
    case YT_NULL:
        j = cJSON_CreateNull();
        break;
    case YT_BOOL:
        j = cJSON_CreateBool(v->v.b);
        break;
    case YT_INT:
        j = cJSON_CreateNumber((double)v->v.i);
        break;
    case YT_FLOAT:
        j = cJSON_CreateNumber(v->v.f);
        break;
    case YT_STR:
        j = cJSON_CreateString(v->text);
        break;
    case YT_SEQ:
    case YT_MAP:
        j = v->type == YT_SEQ ? cJSON_CreateArray() : cJSON_CreateObject();
        for (size_t i = 0; j != NULL && i < v->n; i++) {
            cJSON *c;
            if (v->type == YT_MAP &&
                (strcmp(v->pairs[i].key, "_target_") == 0 || pc_in(v->pairs[i].key, drop) ||
                 !known(v->pairs[i].key, keep))) {
                continue;
            }
            yt_node_t *child = v->type == YT_SEQ ? v->items[i] : v->pairs[i].value;
            if ((rc = to_json(pc, child, NULL, NULL, depth + 1, &c)) != 0) {
                cJSON_Delete(j);
                return rc;
            }
            if (v->type == YT_SEQ) {
                cJSON_AddItemToArray(j, c);
            } else {
                cJSON_AddItemToObject(j, v->pairs[i].key, c);
            }
        }
        break;
    }
    if (j == NULL) {
        return pc_nomem(pc);
    }
    *out = j;
    return 0;
}

int pc_json(pc_t *pc, yt_node_t *raw, const char *const *drop, const kspec_t *keep, cJSON **out)
{
    if (raw == NULL) {
        *out = cJSON_CreateObject();
        return *out ? 0 : pc_nomem(pc);
    }
    return to_json(pc, raw, drop, keep, 0, out);
}

char *pc_json_text(cJSON *obj)
{
    char *s = obj ? cJSON_PrintUnformatted(obj) : NULL;
    cJSON_Delete(obj);
    return s;
}

int pc_json_out(pc_t *pc, cJSON *obj, char **out)
{
    return (*out = pc_json_text(obj)) != NULL ? 0 : pc_nomem(pc);
}

void pc_spec_begin(pc_t *pc)
{
    pp_record_init(&pp_desc_window_spec, &pc->spec);
    pc->have_spec = true;
}

int pc_add_selector(pc_t *pc, pp_selector_t *sel)
{
    pp_window_spec_t *s = &pc->spec;
    size_t cap = s->selectors_n; /* a record keeps no capacity */
    if (PU_GROW(s->selectors, cap, s->selectors_n + 1) != 0) {
        pp_record_free(&pp_desc_selector, sel);
        return pc_nomem(pc);
    }
    s->selectors[s->selectors_n++] = *sel;
    pp_record_init(&pp_desc_selector, sel);
    return 0;
}

static bool json_equal(const char *a, const char *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    cJSON *x = cJSON_Parse(a), *y = cJSON_Parse(b);
    bool eq = x != NULL && y != NULL && cJSON_Compare(x, y, true);
    cJSON_Delete(x);
    cJSON_Delete(y);
    return eq;
}

static bool str_equal(const char *a, const char *b)
{
    return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

static void take(char **dst, char **src)
{
    *dst = *src;
    *src = NULL;
}

int pc_spec_finish(pc_t *pc, const char *save_path)
{
    pp_window_spec_t *s = &pc->spec;
    pp_selector_t *first = &s->selectors[0];
    bool common = true;

    take(&s->tool, &first->tool);
    s->mode = first->mode;
    first->mode = PP_MODE_NONE;
    take(&s->settings, &first->settings);
    for (size_t i = 1; i < s->selectors_n; i++) {
        pp_selector_t *x = &s->selectors[i];
        if (str_equal(x->tool, s->tool)) {
            free(x->tool);
            x->tool = NULL;
        }
        if (x->mode == s->mode) {
            x->mode = PP_MODE_NONE;
        }
        if (json_equal(x->settings, s->settings)) {
            free(x->settings);
            x->settings = NULL;
        }
        if (memcmp(&x->schedule, &first->schedule, sizeof(x->schedule)) != 0) {
            common = false;
        }
    }
    if (common) { /* one schedule for every selector: the request's */
        s->schedule = first->schedule;
        for (size_t i = 0; i < s->selectors_n; i++) {
            pp_record_init(&pp_desc_schedule, &s->selectors[i].schedule);
        }
    }
    if (pc_strdup(pc, save_path, &s->save_path) || pc_strdup(pc, pc->file, &s->source)) {
        return PROFD_ENOMEM;
    }
    s->warnings = pc->spec_warnings.v;
    s->warnings_n = pc->spec_warnings.n;
    pc->spec_warnings.v = NULL;
    pc->spec_warnings.n = 0;
    return 0;
}

int pc_spec_push(pc_t *pc)
{
    if (pc->ndone >= sizeof(pc->done) / sizeof(pc->done[0])) {
        return pc_error(pc, pc->oc.root, "too many window requests in one configuration");
    }
    pc->done[pc->ndone++] = pc->spec;
    pc->have_spec = false;
    memset(&pc->spec, 0, sizeof(pc->spec));
    return 0;
}
