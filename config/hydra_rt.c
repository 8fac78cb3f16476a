// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * HydraConfig as a job sees it (hydra-core 1.3.2): the `hydra` node of the
 * composed config over Hydra's own defaults (hydra/conf/__init__.py
 * HydraConf, hydra/conf/hydra/output/default.yaml), the hydra.* overrides,
 * then what config_loader_impl.py:275-308 and core/utils.py:118-127 set
 * when the job starts (overrides, choices, version, cwd, job name,
 * override_dirname, config_name, output_dir). It is resolved while the
 * whole config is at hand (hydra values may name task keys), then kept
 * apart: the task's config has no `hydra` node, ${hydra:PATH} reads it.
 * And the resolvers themselves (hydra/core/utils.py:210-222).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compose_int.h"
#include "profd/errors.h"

/* The fields of HydraConf a job reads (??? where Hydra sets them). */
static const char defaults_yaml[] = "mode: null\n"
                                    "searchpath: []\n"
                                    "run:\n"
                                    "  dir: outputs/${now:%Y-%m-%d}/${now:%H-%M-%S}\n"
                                    "sweep:\n"
                                    "  dir: multirun/${now:%Y-%m-%d}/${now:%H-%M-%S}\n"
                                    "  subdir: ${hydra.job.num}\n"
                                    "output_subdir: .hydra\n"
                                    "overrides:\n"
                                    "  hydra: []\n"
                                    "  task: []\n"
                                    "job:\n"
                                    "  name: ???\n"
                                    "  chdir: null\n"
                                    "  override_dirname: ???\n"
                                    "  id: ???\n"
                                    "  num: ???\n"
                                    "  config_name: ???\n"
                                    "  env_set: {}\n"
                                    "  env_copy: []\n"
                                    "  config:\n"
                                    "    override_dirname:\n"
                                    "      kv_sep: '='\n"
                                    "      item_sep: ','\n"
                                    "      exclude_keys: []\n"
                                    "runtime:\n"
                                    "  version: 1.3.2\n"
                                    "  version_base: ???\n"
                                    "  cwd: ???\n"
                                    "  config_sources: ???\n"
                                    "  output_dir: ???\n"
                                    "  choices: {}\n"
                                    "verbose: false\n";

/* Hydra's own groups and their defaults (HydraConf.defaults), first in
 * runtime.choices. */
static const char *const hydra_choices[][2] = {
    {"hydra/env", "default"},         {"hydra/callbacks", NULL},
    {"hydra/job_logging", "default"}, {"hydra/hydra_logging", "default"},
    {"hydra/hydra_help", "default"},  {"hydra/help", "default"},
    {"hydra/sweeper", "basic"},       {"hydra/launcher", "basic"},
    {"hydra/output", "default"},
};

static yt_node_t *str_node(const char *s)
{
    return s ? yt_scalar(s, strlen(s), true, 0, 0) : yt_new(YT_NULL, 0, 0);
}

/* node[path] = v (path dotted, every parent a mapping of the defaults). */
static int put(yt_node_t *hydra, const char *path, yt_node_t *v)
{
    char seg[128];
    yt_node_t *m = hydra;
    if (v == NULL) {
        return PROFD_ENOMEM;
    }
    for (;;) {
        size_t n = strcspn(path, ".");
        snprintf(seg, sizeof(seg), "%.*s", (int)n, path);
        if (path[n] == '\0') {
            return yt_map_put(m, seg, 0, 0, v) == 0 ? 0 : PROFD_ENOMEM; /* v freed */
        }
        yt_node_t *next = yt_map_get(m, seg);
        if (next == NULL || next->type != YT_MAP) {
            yt_node_t *k = yt_new(YT_MAP, 0, 0);
            if (k == NULL || yt_map_put(m, seg, 0, 0, k) != 0) {
                yt_free(v);
                return PROFD_ENOMEM;
            }
            next = k;
        }
        m = next;
        path += n + 1;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* get_overrides_dirname (hydra/core/utils.py:181-195): the task overrides
 * as written, minus exclude_keys, sorted, joined by item_sep, '=' replaced
 * by kv_sep. */
static char *override_dirname(hc_t *hc, const yt_node_t *hydra)
{
    const yt_node_t *c =
        yt_map_get(yt_map_get(yt_map_get(hydra, "job"), "config"), "override_dirname");
    const yt_node_t *kv = yt_map_get(c, "kv_sep"), *item = yt_map_get(c, "item_sep");
    const yt_node_t *ex = yt_map_get(c, "exclude_keys");
    const char *kvs = kv && kv->type == YT_STR ? kv->text : "=";
    const char *items = item && item->type == YT_STR ? item->text : ",";
    const char **lines = ar_alloc(&hc->ar, (hc->a->n_overrides + 1) * sizeof(*lines));
    size_t n = 0, len = 1;
    if (lines == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < hc->a->n_overrides; i++) {
        hy_override_t o;
        char why[256];
        const char *text = hc->a->overrides[i];
        if (hy_override_parse(text, &o, why, sizeof(why)) != 0) {
            continue;
        }
        bool skip = hy_override_is_hydra(&o);
        for (size_t j = 0; !skip && ex && ex->type == YT_SEQ && j < ex->n; j++) {
            skip = ex->items[j]->text && strcmp(ex->items[j]->text, o.key) == 0;
        }
        hy_override_fini(&o);
        if (!skip) {
            lines[n++] = text;
            len += strlen(text) * (strlen(kvs) + 1) + strlen(items);
        }
    }
    qsort(lines, n, sizeof(*lines), cmp_str);
    char *out = ar_alloc(&hc->ar, len + 1), *w = out;
    if (out == NULL) {
        return NULL;
    }
    *w = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            w += sprintf(w, "%s", items);
        }
        for (const char *p = lines[i]; *p; p++) {
            w += *p == '=' ? sprintf(w, "%s", kvs) : sprintf(w, "%c", *p);
        }
    }
    return out;
}

/* os.path.abspath: cwd joined, normalized. */
static char *abspath(hc_t *hc, const char *cwd, const char *p)
{
    char *s = p[0] == '/' ? ar_strdup(&hc->ar, p) : ar_printf(&hc->ar, "%s/%s", cwd, p);
    if (s == NULL) {
        return NULL;
    }
    char *out = ar_alloc(&hc->ar, strlen(s) + 2), *w = out;
    if (out == NULL) {
        return NULL;
    }
    for (char *seg = strtok(s, "/"); seg != NULL; seg = strtok(NULL, "/")) {
        if (strcmp(seg, ".") == 0) {
            continue;
        }
        if (strcmp(seg, "..") == 0) {
            while (w > out && *--w != '/') {
            }
            continue;
        }
        w += sprintf(w, "/%s", seg);
    }
    if (w == out) {
        *w++ = '/';
    }
    *w = '\0';
    return out;
}

/* The values of the interpolated leaves (copies; *n of them, at most
 * max); one that cannot be resolved stays as written (an error if the task
 * ever reads it). Replaced only once all are read: values may point at
 * each other until then. */
typedef struct done {
    yt_node_t *leaf, *value;
} done_t;

static int resolve_all(oc_t *oc, yt_node_t *n, done_t *d, size_t *nd, size_t max)
{
    if (n->type == YT_SEQ || n->type == YT_MAP) {
        for (size_t i = 0; i < n->n; i++) {
            int rc =
                resolve_all(oc, n->type == YT_SEQ ? n->items[i] : n->pairs[i].value, d, nd, max);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    }
    yt_node_t *v;
    if (*nd >= max || !oc_is_interp(n) || oc_resolve(oc, n, &v) != 0) {
        return 0;
    }
    if ((d[*nd].value = yt_copy(v)) == NULL) {
        return PROFD_ENOMEM;
    }
    d[*nd].value->flags |= YT_F_FINAL;
    d[(*nd)++].leaf = n;
    return 0;
}

int hc_hydra_config(hc_t *hc, hy_hydra_t *out)
{
    const hy_runtime_t *rt = hc->a->runtime;
    char why[256];
    yt_node_t *h = NULL, *mine = yt_map_get(hc->root, "hydra");
    if (yt_parse("<hydra defaults>", defaults_yaml, strlen(defaults_yaml), &h, why, sizeof(why)) !=
        0) {
        return hc_nomem(hc);
    }
    if (mine != NULL && mine->type == YT_MAP) { /* the configs' own hydra: over the defaults */
        yt_node_t *c = yt_copy(mine);
        if (c == NULL || hy_merge(h, c) != 0) {
            yt_free(h);
            return hc_nomem(hc);
        }
    }
    yt_map_del(hc->root, "hydra");
    if (yt_map_put(hc->root, "hydra", 0, 0, h) != 0) {
        yt_free(h);
        return hc_nomem(hc);
    }
    /* hydra.* overrides: Hydra's schema has the keys, so they set */
    oc_t oc;
    hy_hydra_t self = {.now = rt->now};
    for (size_t i = 0; i < hc->nhvalues; i++) {
        oc_init(&oc, "<config>", hc->root, why, sizeof(why));
        hc->hvalues[i].op = hc->hvalues[i].op == HY_DEL ? HY_DEL : HY_FORCE;
        int rc = hy_override_apply(&oc, &hc->root, &hc->hvalues[i], hc->err, hc->errlen);
        if (rc != 0) {
            return rc == PROFD_ENOMEM ? hc_nomem(hc) : rc;
        }
    }
    self.node = h = yt_map_get(hc->root, "hydra");
    yt_node_t *task = yt_new(YT_SEQ, 0, 0), *hov = yt_new(YT_SEQ, 0, 0);
    yt_node_t *choices = yt_new(YT_MAP, 0, 0);
    int rc = task && hov && choices ? 0 : PROFD_ENOMEM;
    for (size_t i = 0; rc == 0 && i < hc->a->n_overrides; i++) {
        const char *text = hc->a->overrides[i];
        hy_override_t o;
        if (hy_override_parse(text, &o, why, sizeof(why)) != 0) {
            continue;
        }
        yt_node_t *line = str_node(text);
        rc = line ? yt_seq_push(hy_override_is_hydra(&o) ? hov : task, line) : PROFD_ENOMEM;
        hy_override_fini(&o);
    }
    for (size_t i = 0; rc == 0 && i < sizeof(hydra_choices) / sizeof(hydra_choices[0]); i++) {
        rc = yt_map_put(choices, hydra_choices[i][0], 0, 0, str_node(hydra_choices[i][1]));
    }
    for (size_t i = 0; rc == 0 && i < hc->nknown; i++) {
        rc = yt_map_put(choices, hc->known[i].key, 0, 0, str_node(hc->known[i].name));
    }
    if (rc == 0) {
        rc = put(h, "overrides.task", task);
        task = NULL;
    }
    if (rc == 0) {
        rc = put(h, "overrides.hydra", hov);
        hov = NULL;
    }
    if (rc == 0) {
        rc = put(h, "runtime.choices", choices);
        choices = NULL;
    }
    yt_free(task);
    yt_free(hov);
    yt_free(choices);
    const yt_node_t *name = yt_map_get(yt_map_get(h, "job"), "name");
    if (rc == 0 && rt->job_name != NULL && (name == NULL || oc_is_missing(name))) {
        rc = put(h, "job.name", str_node(rt->job_name)); /* config_loader_impl.py:299-300 */
    }
    if (rc == 0 && rt->cwd != NULL) {
        rc = put(h, "runtime.cwd", str_node(rt->cwd));
    }
    char *od = rc == 0 ? override_dirname(hc, h) : NULL;
    if (rc == 0) {
        rc = od ? put(h, "job.override_dirname", str_node(od)) : PROFD_ENOMEM;
    }
    if (rc == 0) {
        char *cn = ar_strdup(&hc->ar, hc->config_name);
        size_t n = cn ? strlen(cn) : 0;
        if (n > 5 && strcmp(cn + n - 5, ".yaml") == 0) {
            cn[n - 5] = '\0';
        }
        rc = cn ? put(h, "job.config_name", str_node(cn)) : PROFD_ENOMEM;
    }
    if (rc != 0) {
        return hc_nomem(hc);
    }
    /* Resolve with the whole config at hand, Hydra's resolvers included. */
    oc_init(&oc, "<config>", hc->root, why, sizeof(why));
    oc.env = hc->a->env;
    oc.env_ctx = hc->a->env_ctx;
    oc.resolvers = hy_hydra_resolvers;
    oc.resolvers_ctx = &self;
    size_t max = yt_count(h), nd = 0;
    done_t *d = ar_alloc(&hc->ar, (max + 1) * sizeof(*d));
    rc = d ? resolve_all(&oc, h, d, &nd, max) : PROFD_ENOMEM;
    oc_forget(hc->root);
    for (size_t i = 0; i < nd; i++) {
        if (rc == 0) {
            yt_replace(d[i].leaf, d[i].value);
        } else {
            yt_free(d[i].value);
        }
    }
    if (rc != 0) {
        return hc_nomem(hc);
    }
    /* core/utils.py:118-127: runtime.output_dir = abspath(hydra.run.dir) */
    const yt_node_t *dir = yt_map_get(yt_map_get(h, "run"), "dir");
    if (rt->cwd != NULL && dir != NULL && dir->type != YT_SEQ && dir->type != YT_MAP &&
        !oc_is_interp(dir) && dir->text != NULL) {
        char *abs = abspath(hc, rt->cwd, dir->text);
        if (abs == NULL || put(h, "runtime.output_dir", str_node(abs)) != 0) {
            return hc_nomem(hc);
        }
    }
    /* detach: the task's config has no hydra node (core/utils.py:131-134) */
    yt_pair_t *p = yt_map_pair(hc->root, "hydra");
    out->node = p->value;
    out->node->parent = NULL;
    p->value = yt_new(YT_NULL, 0, 0);
    out->now = rt->now;
    return p->value ? 0 : hc_nomem(hc);
}

/* ---- the resolvers ------------------------------------------------------------------ */

int hy_hydra_resolvers(void *ctx, const char *name, yt_node_t *const *args, size_t nargs,
                       yt_node_t **out, bool *owned, char *why, size_t whylen)
{
    const hy_hydra_t *hy = ctx;
    *owned = false;
    if (strcmp(name, "now") == 0) {
        /* datetime.now().strftime(pattern), cached per pattern: one time */
        if (hy == NULL || hy->now == 0) {
            snprintf(why, whylen, "unsupported resolver 'now'");
            return PROFD_ECONFIG;
        }
        if (nargs != 1 || args[0]->text == NULL) {
            snprintf(why, whylen, "now takes one pattern");
            return PROFD_ECONFIG;
        }
        char buf[512] = "";
        struct tm tm;
        time_t t = (time_t)hy->now;
        localtime_r(&t, &tm);
        strftime(buf, sizeof(buf), args[0]->text, &tm);
        *out = yt_scalar(buf, strlen(buf), true, 0, 0);
        *owned = true;
        return *out ? 0 : PROFD_ENOMEM;
    }
    if (strcmp(name, "hydra") == 0) {
        /* OmegaConf.select(HydraConfig.get(), path): None when absent or ??? */
        if (hy == NULL || hy->node == NULL) {
            snprintf(why, whylen, "unsupported resolver 'hydra'");
            return PROFD_ECONFIG;
        }
        if (nargs != 1 || args[0]->text == NULL) {
            snprintf(why, whylen, "hydra takes one key");
            return PROFD_ECONFIG;
        }
        const yt_node_t *v = hy->node;
        char seg[128];
        for (const char *p = args[0]->text; v != NULL && *p != '\0';) {
            size_t n = strcspn(p, ".");
            snprintf(seg, sizeof(seg), "%.*s", (int)n, p);
            if (v->type == YT_SEQ) {
                char *end;
                long i = strtol(seg, &end, 10);
                v = *end == '\0' && i >= 0 && (size_t)i < v->n ? v->items[i] : NULL;
            } else {
                v = v->type == YT_MAP ? yt_map_get(v, seg) : NULL;
            }
            p += n + (p[n] == '.');
        }
        if (v == NULL || oc_is_missing(v)) {
            *out = yt_new(YT_NULL, 0, 0);
            *owned = true;
            return *out ? 0 : PROFD_ENOMEM;
        }
        *out = (yt_node_t *)v;
        return 0;
    }
    return PROFD_ENOENT;
}
