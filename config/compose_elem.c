// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The composer's defaults-list elements (hydra/core/default_element.py:
 * group paths, config paths, packages, override keys) and its config
 * repository (hydra/_internal/config_repository.py, the file config
 * source: search folders, `.yaml` names, `# @package` headers, the
 * `defaults` items and their keywords).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compose_int.h"
#include "profd/errors.h"

/* ---- elements -------------------------------------------------------------------- */

elem_t *hc_elem_new(hc_t *hc)
{
    return ar_alloc(&hc->ar, sizeof(elem_t));
}

void hc_elem_parent(elem_t *e, const char *pbase, const char *ppkg)
{
    e->pbase = pbase;
    e->ppkg = ppkg;
}

const char *hc_elem_name(hc_t *hc, const elem_t *e)
{
    (void)hc;
    if (e->is_group) {
        return e->is_list ? NULL : e->value;
    }
    const char *slash = strrchr(e->path, '/');
    return slash ? slash + 1 : e->path;
}

/* `dir/name` or `name`; "" joins to the other. */
static const char *join(hc_t *hc, const char *a, const char *b)
{
    if (a == NULL || b == NULL) {
        return NULL;
    }
    if (a[0] == '\0') {
        return b;
    }
    if (b[0] == '\0') {
        return a;
    }
    return ar_printf(&hc->ar, "%s/%s", a, b);
}

const char *hc_elem_group_path(hc_t *hc, const elem_t *e)
{
    const char *pb = e->pbase ? e->pbase : "";
    if (e->is_group) {
        return e->grp[0] == '/' ? e->grp + 1 : join(hc, pb, e->grp);
    }
    bool absolute = e->path[0] == '/';
    const char *path = e->path + absolute;
    const char *slash = strrchr(path, '/');
    const char *group = slash ? ar_printf(&hc->ar, "%.*s", (int)(slash - path), path) : "";
    return absolute ? group : join(hc, pb, group);
}

const char *hc_elem_config_path(hc_t *hc, const elem_t *e)
{
    if (e->is_group) {
        const char *g = hc_elem_group_path(hc, e);
        return g ? ar_printf(&hc->ar, "%s/%s", g, e->value ? e->value : "None") : NULL;
    }
    if (e->path[0] == '/') {
        return e->path + 1;
    }
    return join(hc, e->pbase ? e->pbase : "", e->path);
}

/* _relative_group_path */
static const char *rel_group(hc_t *hc, const elem_t *e)
{
    if (e->is_group) {
        return e->grp[0] == '/' ? e->grp + 1 : e->grp;
    }
    const char *path = e->path + (e->path[0] == '/');
    const char *slash = strrchr(path, '/');
    return slash ? ar_printf(&hc->ar, "%.*s", (int)(slash - path), path) : "";
}

const char *hc_elem_package(const elem_t *e, bool header_ok)
{
    return e->pkg != NULL ? e->pkg : header_ok ? e->header : NULL;
}

static char *dots(hc_t *hc, const char *s)
{
    char *d = ar_strdup(&hc->ar, s);
    for (char *p = d; p != NULL && *p != '\0'; p++) {
        *p = *p == '/' ? '.' : *p;
    }
    return d;
}

/* _get_final_package: relative to the parent's package, reset by the last
 * `_global_`. */
const char *hc_elem_final_package(hc_t *hc, const elem_t *e, bool header_ok)
{
    const char *pkg = hc_elem_package(e, header_ok);
    const char *parent = e->ppkg ? e->ppkg : "";
    const char *ret;
    if (pkg == NULL) {
        const char *rg = rel_group(hc, e);
        pkg = rg ? dots(hc, rg) : NULL;
    }
    if (pkg == NULL) {
        return NULL;
    }
    if (parent[0] == '\0') {
        ret = pkg;
    } else if (pkg[0] == '\0') {
        ret = parent;
    } else {
        ret = ar_printf(&hc->ar, "%s.%s", parent, pkg);
    }
    const char *g = NULL;
    for (const char *p = ret ? strstr(ret, "_global_") : NULL; p != NULL;
         p = strstr(p + 1, "_global_")) {
        g = p;
    }
    if (g == NULL) {
        return ret;
    }
    g += strlen("_global_");
    return *g == '\0' ? "" : g + 1;
}

const char *hc_elem_override_key(hc_t *hc, const elem_t *e)
{
    const char *group = hc_elem_group_path(hc, e);
    const char *final = hc_elem_final_package(hc, e, false);
    const char *dflt = group ? dots(hc, group) : NULL;
    if (group == NULL || final == NULL || dflt == NULL) {
        return NULL;
    }
    if (strcmp(dflt, final) == 0) {
        return group;
    }
    return ar_printf(&hc->ar, "%s@%s", group, final[0] ? final : "_global_");
}

bool hc_elem_is_interp(hc_t *hc, const elem_t *e)
{
    if (e->is_group) {
        return !e->is_list && e->value != NULL && strstr(e->value, "${") != NULL;
    }
    const char *p = hc_elem_config_path(hc, e);
    return p != NULL && strstr(p, "${") != NULL;
}

bool hc_elem_is_missing(hc_t *hc, const elem_t *e)
{
    const char *n = hc_elem_name(hc, e);
    return n != NULL && strcmp(n, "???") == 0;
}

/* ---- the defaults items (ConfigRepository._create_defaults_list) ---------------------- */

/* _split_group: "group@pkg" (a ":pkg2" rename part is dropped). */
static void split_group(hc_t *hc, const char *s, const char **group, const char **pkg)
{
    const char *at = strchr(s, '@');
    *group = at ? ar_printf(&hc->ar, "%.*s", (int)(at - s), s) : s;
    *pkg = NULL;
    if (at != NULL) {
        const char *colon = strchr(at + 1, ':');
        *pkg = colon ? ar_printf(&hc->ar, "%.*s", (int)(colon - at - 1), at + 1)
                     : ar_strdup(&hc->ar, at + 1);
    }
    if (*pkg != NULL && strcmp(*pkg, "_here_") == 0) {
        *pkg = "";
    }
}

static int item_fail(hc_t *hc, const cfgfile_t *cf, const yt_node_t *at, const char *fmt,
                     const char *what)
{
    elem_t e = {.at = at};
    (void)cf;
    return hc_fail(hc, NULL, &e, fmt, what);
}

/* `- name`, `- dir/name@pkg`, `- _self_` */
static int config_item(hc_t *hc, const cfgfile_t *cf, const yt_node_t *it, elem_t *e)
{
    split_group(hc, it->text, &e->path, &e->pkg);
    e->self = strcmp(e->path, "_self_") == 0;
    if (e->self && e->pkg != NULL) {
        return item_fail(hc, cf, it, "In '%s': _self_@PACKAGE is not supported", cf->path);
    }
    return 0;
}

/* `[optional] [override] group[@pkg]: value` */
static int group_key(hc_t *hc, const char *key, elem_t *e)
{
    const char *last = strrchr(key, ' ');
    const char *gp = last ? last + 1 : key;
    for (const char *w = key; last != NULL && w < last;) {
        const char *sp = strchr(w, ' ');
        size_t n = (size_t)(sp - w);
        if (n == 8 && strncmp(w, "optional", 8) == 0) {
            e->optional = true;
        } else if (n == 8 && strncmp(w, "override", 8) == 0) {
            e->override = true;
        } else {
            break;
        }
        w = sp + 1;
    }
    split_group(hc, gp, &e->grp, &e->pkg);
    return e->grp && e->grp[0] ? 0 : -1;
}

static int group_value(hc_t *hc, const cfgfile_t *cf, const yt_node_t *v, elem_t *e)
{
    if (v->type == YT_NULL) {
        return 0;
    }
    if (v->type == YT_STR) {
        e->value = v->text;
        return 0;
    }
    if (v->type != YT_SEQ) {
        return item_fail(hc, cf, v,
                         "Unsupported item value in defaults : %s. Supported: string or list",
                         yt_type_name(v->type));
    }
    e->is_list = true;
    e->nopts = v->n;
    e->opts = ar_alloc(&hc->ar, (v->n + 1) * sizeof(*e->opts));
    if (e->opts == NULL) {
        return hc_nomem(hc);
    }
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i]->type != YT_STR) {
            return item_fail(hc, cf, v->items[i],
                             "Unsupported item value in defaults : %s, nested list items must "
                             "be strings",
                             yt_type_name(v->items[i]->type));
        }
        e->opts[i] = v->items[i]->text;
    }
    return 0;
}

static int parse_item(hc_t *hc, const cfgfile_t *cf, const yt_node_t *it, elem_t *e)
{
    e->at = it;
    if (it->type == YT_STR) {
        return config_item(hc, cf, it, e);
    }
    if (it->type != YT_MAP) {
        return item_fail(hc, cf, it, "Unsupported type in defaults : %s", yt_type_name(it->type));
    }
    if (it->n != 1) {
        return item_fail(hc, cf, it,
                         it->n ? "In '%s': Too many keys in default item"
                               : "In '%s': Missing group name in default item",
                         cf->path);
    }
    e->is_group = true;
    if (group_key(hc, it->pairs[0].key, e) != 0) {
        return item_fail(hc, cf, it, "In '%s': Missing group name in default item", cf->path);
    }
    return group_value(hc, cf, it->pairs[0].value, e);
}

/* The `defaults` list of a loaded file, taken out of its content. */
static int parse_defaults(hc_t *hc, cfgfile_t *cf)
{
    yt_pair_t *p = cf->tree->type == YT_MAP ? yt_map_pair(cf->tree, "defaults") : NULL;
    if (p == NULL) {
        return 0;
    }
    cf->dlist = p->value;
    p->value = NULL;
    yt_map_del(cf->tree, "defaults");
    if (cf->dlist->type != YT_SEQ) {
        return item_fail(hc, cf, cf->dlist,
                         "Invalid defaults list in '%s', defaults must be a list", cf->path);
    }
    if (cf->dlist->n > HY_MAX_DEFAULTS) {
        return item_fail(hc, cf, cf->dlist, "defaults list of '%s' too long", cf->path);
    }
    cf->ndefaults = cf->dlist->n;
    cf->defaults = ar_alloc(&hc->ar, (cf->ndefaults + 1) * sizeof(*cf->defaults));
    if (cf->defaults == NULL) {
        return hc_nomem(hc);
    }
    for (size_t i = 0; i < cf->ndefaults; i++) {
        int rc = parse_item(hc, cf, cf->dlist->items[i], &cf->defaults[i]);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int hc_copy_defaults(hc_t *hc, const cfgfile_t *cf, elem_t ***list, size_t *n)
{
    *list = ar_alloc(&hc->ar, (cf->ndefaults + hc->nappends + 2) * sizeof(**list));
    if (*list == NULL) {
        return hc_nomem(hc);
    }
    for (size_t i = 0; i < cf->ndefaults; i++) {
        elem_t *e = hc_elem_new(hc);
        if (e == NULL) {
            return hc_nomem(hc);
        }
        *e = cf->defaults[i];
        (*list)[i] = e;
    }
    *n = cf->ndefaults;
    return 0;
}

/* ---- headers (ConfigSource._get_header_dict) --------------------------------------- */

/* The `# @package X` of the first 512 bytes: header lines are `# @KEY
 * VALUE`; blank lines are skipped; any other line ends the header. */
static int read_header(hc_t *hc, cfgfile_t *cf, const char *text, size_t len)
{
    size_t lim = len < 512 ? len : 512;
    for (size_t i = 0; i < lim;) {
        size_t e = i;
        while (e < lim && text[e] != '\n') {
            e++;
        }
        char line[520];
        size_t a = i, b = e;
        while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r')) {
            a++;
        }
        while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r')) {
            b--;
        }
        i = e + 1;
        if (a == b) {
            continue;
        }
        snprintf(line, sizeof(line), "%.*s", (int)(b - a), text + a);
        char *p = line + 1;
        p += strspn(p, " \t");
        if (line[0] != '#' || *p != '@') {
            break;
        }
        char k[64], v[400], x[8];
        int got = sscanf(p, "%63s %399s %7s", k, v, x);
        if (got != 2) {
            snprintf(hc->err, hc->errlen, "%s: %s '%s'", cf->name,
                     got < 2 ? "Expected header format: KEY VALUE, got" : "Too many components in",
                     p);
            return PROFD_ECONFIG;
        }
        if (strcmp(k, "@package") == 0 && (cf->header = ar_strdup(&hc->ar, v)) == NULL) {
            return hc_nomem(hc);
        }
    }
    return 0;
}

/* ---- the repository ------------------------------------------------------------------ */

/* `a/../b/./c` -> `b/c`; NULL when it leaves the folder. */
static const char *normalize(hc_t *hc, const char *path)
{
    char *out = ar_alloc(&hc->ar, strlen(path) + 1);
    size_t n = 0;
    if (out == NULL) {
        return NULL;
    }
    for (const char *s = path; *s != '\0';) {
        size_t len = strcspn(s, "/");
        if (len == 2 && strncmp(s, "..", 2) == 0) {
            if (n == 0) {
                return NULL;
            }
            while (n > 0 && out[n - 1] != '/') {
                n--;
            }
            n = n > 0 ? n - 1 : 0;
        } else if (len > 0 && !(len == 1 && s[0] == '.')) {
            if (n > 0) {
                out[n++] = '/';
            }
            memcpy(out + n, s, len);
            n += len;
        }
        s += len + (s[len] == '/');
    }
    out[n] = '\0';
    return out;
}

static const char *display(hc_t *hc, const char *dir, const char *rel)
{
    if (dir[0] == '\0' || strcmp(dir, ".") == 0) {
        return ar_strdup(&hc->keep, rel);
    }
    return ar_printf(&hc->keep, "%s/%s", dir, rel);
}

/* Read and parse one file found at dir/rel. */
static int load_file(hc_t *hc, const char *dir, const char *key, const char *rel, char *text,
                     size_t len, cfgfile_t **out)
{
    cfgfile_t *cf = ar_alloc(&hc->ar, sizeof(*cf));
    int rc;
    if (cf == NULL || (cf->name = display(hc, dir, rel)) == NULL) {
        return hc_nomem(hc);
    }
    cf->path = key;
    cf->src.name = cf->name;
    if ((rc = read_header(hc, cf, text, len)) != 0 ||
        (rc = yt_parse(cf->name, text, len, &cf->tree, hc->err, hc->errlen)) != 0) {
        return rc;
    }
    yt_set_source(cf->tree, &cf->src);
    hc->files[hc->nfiles++] = cf; /* freed with the composer from here on */
    if ((rc = parse_defaults(hc, cf)) != 0) {
        return rc;
    }
    *out = cf;
    return 0;
}

static bool was_missing(hc_t *hc, const char *key)
{
    for (size_t i = 0; i < hc->nmissing; i++) {
        if (strcmp(hc->missing[i], key) == 0) {
            return true;
        }
    }
    return false;
}

/* One candidate file: PROFD_ENOENT when absent. */
static int try_file(hc_t *hc, const char *dir, const char *key, const char *rel, cfgfile_t **out)
{
    const char *full = ar_printf(&hc->ar, "%s/%s", dir, rel);
    char *text = NULL;
    size_t len = 0;
    int rc = full ? hc->a->loader->read(hc->a->loader->ctx, full, &text, &len) : PROFD_ENOMEM;
    if (rc == PROFD_ENOENT) {
        return rc;
    }
    if (rc != 0) {
        snprintf(hc->err, hc->errlen, "%s: %s", full ? full : rel, profd_strerror(rc));
        return rc;
    }
    rc = load_file(hc, dir, key, rel, text, len, out);
    free(text);
    return rc;
}

int hc_repo_load(hc_t *hc, const char *path, cfgfile_t **out)
{
    const char *key = normalize(hc, path);
    *out = NULL;
    if (key == NULL) {
        return 0; /* above the search folder: no such config */
    }
    size_t klen = strlen(key);
    if (klen > 5 && strcmp(key + klen - 5, ".yaml") == 0 &&
        (key = ar_printf(&hc->ar, "%.*s", (int)(klen - 5), key)) == NULL) {
        return hc_nomem(hc);
    }
    for (size_t i = 0; i < hc->nfiles; i++) {
        if (strcmp(hc->files[i]->path, key) == 0) {
            *out = hc->files[i];
            return 0;
        }
    }
    if (was_missing(hc, key)) {
        return 0;
    }
    if (hc->nfiles >= HY_MAX_FILES || hc->nmissing >= HY_MAX_FILES) {
        return hc_fail(hc, NULL, NULL, "more than %d configs in one composition", HY_MAX_FILES);
    }
    /* NAME.yaml; the primary given by its own name first (profctl apply
     * config.yml: the file named, whatever its extension) */
    const char *rels[2] = {strcmp(path, hc->config_name) == 0 ? key : NULL,
                           ar_printf(&hc->ar, "%s.yaml", key)};
    if (rels[1] == NULL) {
        return hc_nomem(hc);
    }
    for (size_t i = 0; i < hc->nsearch; i++) {
        for (int r = 0; r < 2; r++) {
            int rc = rels[r] ? try_file(hc, hc->search[i], key, rels[r], out) : PROFD_ENOENT;
            if (rc != PROFD_ENOENT) {
                return rc;
            }
        }
    }
    hc->missing[hc->nmissing++] = key;
    return 0;
}

static void ignore_entry(void *arg, const char *name, bool is_dir)
{
    (void)arg;
    (void)name;
    (void)is_dir;
}

bool hc_repo_group_exists(hc_t *hc, const char *group)
{
    const char *g = normalize(hc, group);
    for (size_t i = 0; g != NULL && i < hc->nsearch; i++) {
        const char *full = ar_printf(&hc->ar, "%s/%s", hc->search[i], g);
        if (full && hc->a->loader->list(hc->a->loader->ctx, full, ignore_entry, NULL) == 0) {
            return true;
        }
    }
    return false;
}

typedef struct optlist {
    hc_t *hc;
    const char *v[256];
    size_t n;
} optlist_t;

static void add_option(void *arg, const char *name, bool is_dir)
{
    optlist_t *o = arg;
    size_t len = strlen(name);
    if (is_dir || len <= 5 || strcmp(name + len - 5, ".yaml") != 0 || o->n >= 256) {
        return;
    }
    const char *opt = ar_printf(&o->hc->ar, "%.*s", (int)(len - 5), name);
    for (size_t i = 0; opt != NULL && i < o->n; i++) {
        if (strcmp(o->v[i], opt) == 0) {
            return;
        }
    }
    if (opt != NULL) {
        o->v[o->n++] = opt;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *hc_repo_options(hc_t *hc, const char *group)
{
    optlist_t o = {.hc = hc};
    const char *g = normalize(hc, group);
    for (size_t i = 0; g != NULL && i < hc->nsearch; i++) {
        const char *full = ar_printf(&hc->ar, "%s/%s", hc->search[i], g);
        if (full != NULL) {
            hc->a->loader->list(hc->a->loader->ctx, full, add_option, &o);
        }
    }
    qsort(o.v, o.n, sizeof(o.v[0]), cmp_str);
    const char *s = "";
    for (size_t i = 0; s != NULL && i < o.n; i++) {
        s = ar_printf(&hc->ar, "%s%s%s", s, i ? ", " : "", o.v[i]);
    }
    return s ? s : "";
}

/* ---- checks around loading ---------------------------------------------------------- */

/* update_package_header: an absolute `_global_...` package from the file. */
int hc_update_header(hc_t *hc, tnode_t *t, elem_t *e)
{
    cfgfile_t *cf;
    (void)t;
    if (e->header_set || hc_elem_is_missing(hc, e) || hc_elem_name(hc, e) == NULL) {
        return 0;
    }
    const char *path = hc_elem_config_path(hc, e);
    int rc = path ? hc_repo_load(hc, path, &cf) : hc_nomem(hc);
    if (rc != 0 || cf == NULL || cf->header == NULL) {
        return rc;
    }
    e->header_set = true;
    if (strcmp(cf->header, "_global_") == 0 || strncmp(cf->header, "_global_.", 9) == 0) {
        e->header = cf->header;
    } else {
        e->header = cf->header[0] ? ar_printf(&hc->ar, "_global_.%s", cf->header) : "_global_";
    }
    return e->header ? 0 : hc_nomem(hc);
}

static const char *search_text(hc_t *hc)
{
    const char *s = "";
    for (size_t i = 0; s != NULL && i < hc->nsearch; i++) {
        s = ar_printf(&hc->ar, "%s%s%s", s, i ? ", " : "", hc->search[i]);
    }
    return s ? s : "";
}

int hc_primary_exists(hc_t *hc, const elem_t *primary)
{
    cfgfile_t *cf;
    int rc = hc_repo_load(hc, primary->path, &cf);
    if (rc == 0 && cf == NULL) {
        snprintf(hc->err, hc->errlen,
                 "Cannot find primary config '%s'. Check that it's in your config search path "
                 "(%s)",
                 primary->path, search_text(hc));
        return PROFD_ECONFIG;
    }
    return rc;
}

/* config_not_found_error */
int hc_not_found(hc_t *hc, const tnode_t *t)
{
    const elem_t *e = t->node;
    const char *path = hc_elem_config_path(hc, e);
    const char *parent =
        t->parent && t->parent->node ? hc_elem_config_path(hc, t->parent->node) : "<root>";
    if (!e->is_group) {
        return hc_fail(hc, t->parent, e, "In '%s': Could not load '%s'", parent, path);
    }
    const char *group = hc_elem_group_path(hc, e);
    const char *opts = hc_repo_options(hc, group);
    if (opts[0] == '\0') {
        return hc_fail(hc, t->parent, e, "In '%s': Could not find '%s' (search path: %s)", parent,
                       path, search_text(hc));
    }
    return hc_fail(hc, t->parent, e, "In '%s': Could not find '%s'; available options in '%s': %s",
                   parent, path, group, opts);
}

/* _check_not_missing: a `???` choice nobody made. */
int hc_check_missing(hc_t *hc, const tnode_t *t, const elem_t *e)
{
    if (!hc_elem_is_missing(hc, e)) {
        return 0;
    }
    if (!e->is_group) {
        return hc_fail(hc, t->parent, e, "Missing ConfigDefault is not supported : %s",
                       hc_elem_config_path(hc, e));
    }
    const char *key = hc_elem_override_key(hc, e);
    return hc_fail(hc, t->parent, e,
                   "You must specify '%s', e.g, %s=<OPTION>; available options: %s", key, key,
                   hc_repo_options(hc, hc_elem_group_path(hc, e)));
}
