// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The composer's overrides: the command line split into group overrides
 * and value overrides (defaults_list.py Overrides.__init__), in-file
 * `override` items (_update_overrides), deletions, known choices and the
 * interpolated choices they resolve, `_self_` (_validate_self), the search
 * path (`hydra.searchpath`), and after composition the merge of each config
 * and the value overrides (config_loader_impl.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compose_int.h"
#include "profd/errors.h"

/* ---- known choices and deletions --------------------------------------------------- */

static choice_t *find_choice(hc_t *hc, const char *key)
{
    for (size_t i = 0; key != NULL && i < hc->nchoices; i++) {
        if (strcmp(hc->choices[i].key, key) == 0) {
            return &hc->choices[i];
        }
    }
    return NULL;
}

bool hc_is_deleted(hc_t *hc, elem_t *e)
{
    if (!e->is_group) {
        return false;
    }
    const char *key = hc_elem_override_key(hc, e);
    const char *name = hc_elem_name(hc, e);
    for (size_t i = 0; key != NULL && i < hc->ndels; i++) {
        deletion_t *d = &hc->dels[i];
        if (strcmp(d->key, key) == 0 &&
            (d->name == NULL || (name != NULL && strcmp(d->name, name) == 0))) {
            d->used = true;
            e->deleted = true;
            return true;
        }
    }
    return false;
}

/* set_known_choice */
int hc_known_choice(hc_t *hc, const tnode_t *t, const elem_t *e)
{
    if (!e->is_group) {
        return 0;
    }
    const char *key = hc_elem_override_key(hc, e);
    const char *name = hc_elem_name(hc, e);
    const char *group = hc_elem_group_path(hc, e);
    if (key == NULL || group == NULL) {
        return hc_nomem(hc);
    }
    for (size_t i = 0; i < hc->nknown; i++) {
        known_t *k = &hc->known[i];
        if (strcmp(k->key, key) != 0) {
            continue;
        }
        if ((k->name == NULL) != (name == NULL) || (name != NULL && strcmp(k->name, name) != 0)) {
            return hc_fail(hc, t->parent, e,
                           "Multiple values for %s. To override a value use 'override %s: %s'", key,
                           key, k->name ? k->name : "null");
        }
        return 0;
    }
    if (hc->nknown >= sizeof(hc->known) / sizeof(hc->known[0])) {
        return hc_fail(hc, t->parent, e, "too many config group choices");
    }
    hc->known[hc->nknown++] = (known_t){.key = key, .name = name, .group = group};
    return 0;
}

void hc_override_default(hc_t *hc, elem_t *e)
{
    if (!e->is_group) {
        return;
    }
    choice_t *c = find_choice(hc, hc_elem_override_key(hc, e));
    if (c == NULL) {
        return;
    }
    e->is_list = c->is_list;
    e->value = c->value;
    e->opts = c->opts;
    e->nopts = c->nopts;
    c->used = true;
    if (c->external) {
        e->origin = c->origin;
    }
}

/* ---- _self_ and in-file overrides ---------------------------------------------------- */

static bool has_content(const yt_node_t *cfg)
{
    for (size_t i = 0; cfg->type == YT_MAP && i < cfg->n; i++) {
        if (!oc_is_missing(cfg->pairs[i].value)) {
            return true;
        }
    }
    return false;
}

int hc_validate_self(hc_t *hc, const tnode_t *t, elem_t **list, size_t *n, bool *self_added)
{
    bool has_self = false, non_override = false;
    for (size_t i = 0; i < *n; i++) {
        non_override |= !list[i]->override;
        if (list[i]->self && has_self) {
            return hc_fail(hc, t, list[i], "Duplicate _self_ defined in %s",
                           hc_elem_config_path(hc, t->node));
        }
        has_self |= list[i]->self;
    }
    *self_added = !has_self;
    if ((has_self || !non_override) && *n > 0) {
        return 0;
    }
    if (t->node->primary && non_override && has_content(t->cf->tree)) {
        hc_warn(hc,
                "%s: In '%s': Defaults list is missing `_self_`: the file's own values are "
                "merged after its defaults (Hydra 1.1+)",
                t->cf->name, hc_elem_config_path(hc, t->node));
    }
    elem_t *self = hc_elem_new(hc);
    if (self == NULL) {
        return hc_nomem(hc);
    }
    self->self = true;
    self->path = "_self_";
    list[(*n)++] = self;
    return 0;
}

/* Overrides.add_override: the command line's choice wins. */
static int add_override(hc_t *hc, const tnode_t *t, elem_t *d)
{
    const char *key = hc_elem_override_key(hc, d);
    if (key == NULL) {
        return hc_nomem(hc);
    }
    if (find_choice(hc, key) != NULL) {
        return 0;
    }
    if (hc->nchoices >= sizeof(hc->choices) / sizeof(hc->choices[0])) {
        return hc_fail(hc, t, d, "too many config group overrides");
    }
    hc->choices[hc->nchoices++] = (choice_t){.key = key,
                                             .value = d->value,
                                             .opts = d->opts,
                                             .nopts = d->nopts,
                                             .is_list = d->is_list,
                                             .in_path = hc_elem_config_path(hc, t->node)};
    return 0;
}

int hc_update_overrides(hc_t *hc, const tnode_t *t, elem_t **list, size_t n, bool interpolated)
{
    elem_t *parent = t->node, *last = NULL;
    const char *ppath = hc_elem_config_path(hc, parent);
    for (size_t i = 0; i < n; i++) {
        elem_t *d = list[i];
        if (d->self) {
            continue;
        }
        hc_elem_parent(d, hc_elem_group_path(hc, parent), hc_elem_final_package(hc, parent, true));
        if (last != NULL && !d->override && !d->external) {
            return hc_fail(hc, t, d,
                           "In %s: Override '%s : %s' is defined before '%s: %s'. Overrides must "
                           "be at the end of the defaults list",
                           ppath, hc_elem_override_key(hc, last), hc_elem_name(hc, last),
                           d->is_group ? hc_elem_override_key(hc, d) : d->path,
                           hc_elem_name(hc, d));
        }
        if (!d->is_group || !d->override) {
            continue;
        }
        last = d;
        if (interpolated) {
            return hc_fail(hc, t, d,
                           "%s: Default List Overrides are not allowed in the subtree of an in "
                           "interpolated config group (override %s=%s).",
                           ppath, hc_elem_override_key(hc, d), hc_elem_name(hc, d));
        }
        int rc = add_override(hc, t, d);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- interpolated choices ----------------------------------------------------------- */

static const char *known_keys(hc_t *hc)
{
    const char *s = "";
    for (size_t i = 0; s != NULL && i < hc->nknown; i++) {
        s = ar_printf(&hc->ar, "%s%s%s", s, i ? ", " : "", hc->known[i].key);
    }
    return s ? s : "";
}

static const known_t *find_known(hc_t *hc, const char *key, size_t len)
{
    for (size_t i = 0; i < hc->nknown; i++) {
        if (strlen(hc->known[i].key) == len && strncmp(hc->known[i].key, key, len) == 0) {
            return &hc->known[i];
        }
    }
    return NULL;
}

/* `${a}_x` against the known choices (only `${KEY}` forms). */
int hc_resolve_choice(hc_t *hc, const tnode_t *t, elem_t *e, elem_t **list, size_t n,
                      bool self_added)
{
    const char *text = e->is_group ? e->value : e->path;
    const char *out = "";
    (void)list;
    (void)n;
    (void)self_added;
    if (strncmp(text, "${defaults.", 11) == 0) {
        return hc_fail(hc, t, e,
                       "Defaults list element '%s=%s' is using a deprecated interpolation form.",
                       hc_elem_override_key(hc, e), text);
    }
    for (const char *p = text; *p != '\0' && out != NULL;) {
        const char *s = strstr(p, "${");
        if (s == NULL) {
            out = ar_printf(&hc->ar, "%s%s", out, p);
            break;
        }
        const char *end = strchr(s, '}');
        const known_t *k = end ? find_known(hc, s + 2, (size_t)(end - s - 2)) : NULL;
        if (k == NULL) {
            const char *keys = known_keys(hc);
            return hc_fail(hc, t, e, "Error resolving interpolation '%s'%s%s", text,
                           keys[0] ? ", possible interpolation keys: " : "", keys);
        }
        out = ar_printf(&hc->ar, "%s%.*s%s", out, (int)(s - p), p, k->name ? k->name : "None");
        p = end + 1;
    }
    if (out == NULL) {
        return hc_nomem(hc);
    }
    if (e->is_group) {
        e->value = out;
    } else {
        e->path = out;
    }
    return 0;
}

/* ---- unused overrides (ensure_overrides_used, ensure_deletions_used) ------------------ */

static int choice_unused(hc_t *hc, const choice_t *c)
{
    size_t glen = strcspn(c->key, "@");
    const char *alts = "";
    size_t nalts = 0;
    for (size_t i = 0; alts != NULL && i < hc->nknown; i++) {
        if (strlen(hc->known[i].group) == glen && strncmp(hc->known[i].group, c->key, glen) == 0) {
            alts = ar_printf(&hc->ar, "%s%s%s", alts, nalts++ ? ", " : "", hc->known[i].key);
        }
    }
    const char *msg =
        nalts > 1
            ? ar_printf(&hc->ar, "Could not override '%s'. Did you mean to override one of %s?",
                        c->key, alts)
        : nalts == 1
            ? ar_printf(&hc->ar, "Could not override '%s'. Did you mean to override %s?", c->key,
                        alts)
            : ar_printf(&hc->ar, "Could not override '%s'. No match in the defaults list.", c->key);
    if (msg == NULL) {
        return hc_nomem(hc);
    }
    if (c->external) {
        return hc_fail(hc, NULL, &(elem_t){.origin = c->origin},
                       "%s To append to your default list use +%s=%s", msg, c->key,
                       c->value ? c->value : "[...]");
    }
    return hc_fail(hc, NULL, NULL, "In '%s': %s", c->in_path, msg);
}

int hc_overrides_used(hc_t *hc)
{
    for (size_t i = 0; i < hc->nchoices; i++) {
        if (!hc->choices[i].used) {
            return choice_unused(hc, &hc->choices[i]);
        }
    }
    for (size_t i = 0; i < hc->ndels; i++) {
        const deletion_t *d = &hc->dels[i];
        if (!d->used) {
            return hc_fail(hc, NULL, &(elem_t){.origin = d->origin},
                           "Could not delete '%s%s%s'. No match in the defaults list", d->key,
                           d->name ? "=" : "", d->name ? d->name : "");
        }
    }
    return 0;
}

/* ---- the command line (Overrides.__init__) -------------------------------------------- */

static const char *py_type(const yt_node_t *v)
{
    static const char *const names[] = {"NoneType", "bool", "int", "float", "str", "list", "dict"};
    return names[v->type];
}

static int group_override(hc_t *hc, hy_override_t *o)
{
    elem_t at = {.origin = o->text};
    const char *key = o->has_package ? ar_printf(&hc->ar, "%s@%s", o->key, o->package)
                                     : ar_strdup(&hc->ar, o->key);
    const char *group = ar_strdup(&hc->ar, o->key);
    const char *pkg = o->has_package ? ar_strdup(&hc->ar, o->package) : NULL;
    const char *text = o->val && o->val->type == YT_STR ? ar_strdup(&hc->ar, o->val->text) : NULL;
    if (key == NULL || group == NULL || (o->has_package && pkg == NULL) ||
        (o->val && o->val->type == YT_STR && text == NULL)) {
        return hc_nomem(hc);
    }
    if (o->op == HY_FORCE) {
        return hc_fail(hc, NULL, &at, "force-add of config groups is not supported: '%s'", o->text);
    }
    if (o->op == HY_DEL) {
        if (o->val != NULL && o->val->type != YT_STR) {
            return hc_fail(hc, NULL, &at,
                           "Config group override deletion value must be a string : %s", o->text);
        }
        if (hc->ndels >= sizeof(hc->dels) / sizeof(hc->dels[0])) {
            return hc_fail(hc, NULL, &at, "too many deletions");
        }
        hc->dels[hc->ndels++] = (deletion_t){.key = key, .name = text, .origin = o->text};
        return 0;
    }
    bool list = o->val->type == YT_SEQ;
    if (o->val->type != YT_STR && !list) {
        return hc_fail(hc, NULL, &at, "Config group override must be a string or a list. Got %s",
                       py_type(o->val));
    }
    const char **opts = list ? ar_alloc(&hc->ar, (o->val->n + 1) * sizeof(*opts)) : NULL;
    for (size_t i = 0; list && opts && i < o->val->n; i++) {
        if (o->val->items[i]->type != YT_STR) {
            return hc_fail(hc, NULL, &at, "config group options must be strings");
        }
        if ((opts[i] = ar_strdup(&hc->ar, o->val->items[i]->text)) == NULL) {
            return hc_nomem(hc);
        }
    }
    if (list && opts == NULL) {
        return hc_nomem(hc);
    }
    if (o->op == HY_ADD) {
        elem_t *e = hc_elem_new(hc);
        if (e == NULL || hc->nappends >= sizeof(hc->appends) / sizeof(hc->appends[0])) {
            return e ? hc_fail(hc, NULL, &at, "too many appended defaults") : hc_nomem(hc);
        }
        *e = (elem_t){.is_group = true,
                      .grp = group,
                      .pkg = pkg,
                      .value = text,
                      .opts = opts,
                      .nopts = list ? o->val->n : 0,
                      .is_list = list,
                      .external = true,
                      .origin = o->text};
        hc->appends[hc->nappends++] = e;
        return 0;
    }
    if (hc->nchoices >= sizeof(hc->choices) / sizeof(hc->choices[0])) {
        return hc_fail(hc, NULL, &at, "too many config group overrides");
    }
    hc->choices[hc->nchoices++] = (choice_t){.key = key,
                                             .value = text,
                                             .opts = opts,
                                             .nopts = list ? o->val->n : 0,
                                             .is_list = list,
                                             .external = true,
                                             .origin = o->text};
    return 0;
}

/* Sort the parsed overrides into group overrides and value overrides. */
static int classify(hc_t *hc, hy_override_t *all, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        hy_override_t *o = &all[i];
        if (hy_override_is_hydra(o)) {
            if (strchr(o->key, '/') == NULL && !o->has_package) { /* not hydra/launcher=x */
                hc->hvalues[hc->nhvalues++] = *o;
                memset(o, 0, sizeof(*o));
            }
            continue;
        }
        bool dict = o->val != NULL && o->val->type == YT_MAP;
        if (dict || !hc_repo_group_exists(hc, o->key)) {
            hc->values[hc->nvalues++] = *o;
            memset(o, 0, sizeof(*o));
            continue;
        }
        int rc = group_override(hc, o);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- the search path (_process_config_searchpath) ------------------------------------ */

static void no_content(void *arg, const char *name, bool is_dir)
{
    (void)is_dir;
    *(bool *)arg |= strcmp(name, "__init__.py") == 0;
}

/* A `pkg://a.b` entry: the package folder a/b on the Python path
 * (importlib_resources_config_source.py:22-25 turns '/' into '.'; :62-67:
 * available when the package holds an __init__.py). NULL: not available. */
static const char *pkg_folder(hc_t *hc, const char *module)
{
    const hy_compose_args_t *a = hc->a;
    char *rel = ar_strdup(&hc->ar, module);
    size_t len = rel ? strlen(rel) : 0;
    while (len > 0 && (rel[len - 1] == '.' || rel[len - 1] == '/')) {
        rel[--len] = '\0';
    }
    for (char *p = rel; p && *p; p++) {
        *p = *p == '.' ? '/' : *p;
    }
    if (rel == NULL || rel[0] == '\0') {
        return NULL;
    }
    const char *const *path = a->pypath;
    size_t n = a->n_pypath;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            const char *d = ar_printf(&hc->ar, "%s/%s", path[i][0] ? path[i] : ".", rel);
            bool init = false;
            if (d != NULL && a->loader->list(a->loader->ctx, d, no_content, &init) == 0 && init) {
                return d;
            }
        }
        if (pass > 0 || a->syspath == NULL ||
            a->syspath(a->syspath_ctx, a->python ? a->python : "python3", &path, &n) != 0) {
            break;
        }
    }
    return NULL;
}

static int add_search(hc_t *hc, const yt_node_t *entry, const char *from)
{
    if (entry->type != YT_STR) {
        return hc_fail(hc, NULL, NULL, "hydra.searchpath must be a list of strings (%s)", from);
    }
    const char *s = entry->text;
    if (strncmp(s, "structured://", 13) == 0) {
        hc_warn(hc, "hydra.searchpath entry '%s' (%s) is not available to profctl; skipped", s,
                from);
        return 0;
    }
    if (strncmp(s, "pkg://", 6) == 0) {
        if ((s = pkg_folder(hc, s + 6)) == NULL) {
            /* config_loader_impl.py:214-221 */
            hc_warn(hc, "provider=hydra.searchpath in %s, path=%s is not available.",
                    strcmp(from, "the command line") == 0 ? "command-line" : "main", entry->text);
            return 0;
        }
    }
    if (strncmp(s, "file://", 7) == 0) {
        s += 7;
    }
    if (hc->nsearch >= HY_MAX_SEARCH) {
        return hc_fail(hc, NULL, NULL, "more than %d search path entries", HY_MAX_SEARCH);
    }
    /* A command-line entry lives in the parsed override, freed at the end
     * of hc_setup; the folder is looked up until the composition ends. */
    if ((s = ar_strdup(&hc->ar, s)) == NULL) {
        return hc_nomem(hc);
    }
    hc->search[hc->nsearch++] = s;
    return 0;
}

static int searchpath(hc_t *hc, hy_override_t *all, size_t n)
{
    const yt_node_t *list = NULL;
    const char *from = "the command line";
    cfgfile_t *primary;
    /* config_loader_impl.py:178-182: the first such override wins. */
    for (size_t i = 0; i < n && list == NULL; i++) {
        if (strcmp(all[i].key, "hydra.searchpath") == 0 && all[i].val != NULL) {
            list = all[i].val;
        }
    }
    int rc = hc_repo_load(hc, hc->config_name, &primary);
    if (rc != 0 || primary == NULL) {
        return rc;
    }
    if (list == NULL) {
        const yt_node_t *h = yt_map_get(primary->tree, "hydra");
        list = h ? yt_map_get(h, "searchpath") : NULL;
        from = primary->name;
    }
    if (list == NULL) {
        return 0;
    }
    if (list->type != YT_SEQ) {
        return hc_fail(hc, NULL, NULL, "hydra.searchpath must be a list of strings (%s)", from);
    }
    for (size_t i = 0; i < list->n; i++) {
        if ((rc = add_search(hc, list->items[i], from)) != 0) {
            return rc;
        }
    }
    hc->nmissing = 0; /* looked up again with the new entries */
    return 0;
}

int hc_setup(hc_t *hc)
{
    const hy_compose_args_t *a = hc->a;
    size_t n = a->n_overrides;
    int rc = 0;
    if (a->n_search == 0 || a->n_search > HY_MAX_SEARCH || n > HY_MAX_OVERRIDES) {
        snprintf(hc->err, hc->errlen, "%s",
                 a->n_search == 0 ? "no config folder to search"
                                  : "too many search folders or overrides");
        return PROFD_ECONFIG;
    }
    for (size_t i = 0; i < a->n_search; i++) {
        hc->search[hc->nsearch++] = a->search[i];
    }
    hc->config_name = a->config_name;
    hy_override_t *all = calloc(n + 1, sizeof(*all));
    hc->values = calloc(n + 1, sizeof(*hc->values));
    hc->hvalues = calloc(n + 1, sizeof(*hc->hvalues));
    if (all == NULL || hc->values == NULL || hc->hvalues == NULL) {
        free(all);
        return hc_nomem(hc);
    }
    size_t parsed = 0;
    for (; parsed < n && rc == 0; parsed++) {
        rc = hy_override_parse(a->overrides[parsed], &all[parsed], hc->err, hc->errlen);
    }
    if (rc == 0) {
        rc = searchpath(hc, all, n);
    }
    if (rc == 0) {
        rc = classify(hc, all, n);
    }
    for (size_t i = 0; i < parsed; i++) {
        hy_override_fini(&all[i]);
    }
    free(all);
    return rc;
}

void hc_teardown(hc_t *hc, bool failed)
{
    for (size_t i = 0; i < hc->nfiles; i++) {
        yt_free(hc->files[i]->tree);
        yt_free(hc->files[i]->dlist);
    }
    for (size_t i = 0; i < hc->nvalues; i++) {
        hy_override_fini(&hc->values[i]);
    }
    free(hc->values);
    for (size_t i = 0; i < hc->nhvalues; i++) {
        hy_override_fini(&hc->hvalues[i]);
    }
    free(hc->hvalues);
    yt_free(hc->root);
    ar_free(hc->ar);
    if (failed) {
        ar_free(hc->keep);
    }
}

/* ---- the merge and the value overrides ------------------------------------------------ */

/* The config's content placed at a dotted package (OmegaConf.update with
 * merge=False on an empty config). */
static yt_node_t *embed(yt_node_t *v, const char *pkg)
{
    char seg[256];
    const char *end = pkg + strlen(pkg);
    while (v != NULL && end > pkg) {
        const char *dot = end;
        while (dot > pkg && dot[-1] != '.') {
            dot--;
        }
        snprintf(seg, sizeof(seg), "%.*s", (int)(end - dot), dot);
        yt_node_t *m = yt_new(YT_MAP, v->line, v->col);
        if (m == NULL || yt_map_put(m, seg, v->line, v->col, v) != 0) {
            yt_free(m);
            return NULL;
        }
        m->src = v->src;
        v = m;
        end = dot > pkg ? dot - 1 : pkg;
    }
    return v;
}

int hc_merge_config(hc_t *hc, const char *path, const char *pkg, const char *chain)
{
    cfgfile_t *cf;
    int rc = hc_repo_load(hc, path, &cf);
    if (rc != 0 || cf == NULL) {
        return rc;
    }
    yt_source_t *src = ar_alloc(&hc->keep, sizeof(*src));
    yt_node_t *v = src ? yt_copy(cf->tree) : NULL;
    if (v == NULL) {
        return hc_nomem(hc);
    }
    src->name = cf->name;
    src->chain = chain;
    yt_set_source(v, src);
    if (v->type == YT_NULL && pkg[0] == '\0') {
        yt_free(v);
        return 0;
    }
    if ((v = embed(v, pkg)) == NULL) {
        return hc_nomem(hc);
    }
    if (v->type != YT_MAP) {
        yt_free(v);
        return hc_fail(hc, NULL, NULL, "In '%s': the config is not a mapping", cf->name);
    }
    return hy_merge(hc->root, v);
}

int hc_apply_values(hc_t *hc)
{
    char why[1024];
    oc_t oc;
    for (size_t i = 0; i < hc->nvalues; i++) {
        oc_init(&oc, "<config>", hc->root, why, sizeof(why));
        oc.env = hc->a->env;
        oc.env_ctx = hc->a->env_ctx;
        int rc = hy_override_apply(&oc, &hc->root, &hc->values[i], hc->err, hc->errlen);
        if (rc != 0) {
            return rc == PROFD_ENOMEM ? hc_nomem(hc) : rc;
        }
    }
    return 0;
}

int hc_result(hc_t *hc, hy_config_t *out)
{
    cfgfile_t *primary;
    hy_config_t r = {0};
    int rc = hc->a->runtime ? hc_hydra_config(hc, &r.hydra) : 0;
    if (rc != 0) {
        return rc;
    }
    yt_map_del(hc->root, "hydra");
    if (hc_repo_load(hc, hc->config_name, &primary) != 0 || primary == NULL ||
        (r.primary = strdup(primary->name)) == NULL ||
        (hc->nwarn && (r.warnings = calloc(hc->nwarn, sizeof(char *))) == NULL)) {
        free(r.primary);
        yt_free(r.hydra.node);
        return hc_nomem(hc);
    }
    for (size_t i = 0; i < hc->nwarn; i++) {
        if ((r.warnings[r.n_warnings] = strdup(hc->warn[i])) != NULL) {
            r.n_warnings++;
        }
    }
    r.root = hc->root;
    r.n_configs = hc->nfiles;
    r.sources = hc->keep;
    hc->root = NULL;
    hc->keep = NULL;
    *out = r;
    return 0;
}
