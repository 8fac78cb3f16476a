// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Hydra's command-line overrides over a yamltree (see hydra.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hydra.h"
#include "omegaconf.h"
#include "profd/errors.h"

static bool equal(const yt_node_t *a, const yt_node_t *b)
{
    if (a->type != b->type) {
        if ((a->type == YT_INT || a->type == YT_FLOAT) &&
            (b->type == YT_INT || b->type == YT_FLOAT)) {
            double x = a->type == YT_INT ? (double)a->v.i : a->v.f;
            double y = b->type == YT_INT ? (double)b->v.i : b->v.f;
            return x == y;
        }
        return false;
    }
    switch (a->type) {
    case YT_NULL:
        return true;
    case YT_BOOL:
        return a->v.b == b->v.b;
    case YT_INT:
        return a->v.i == b->v.i;
    case YT_FLOAT:
        return a->v.f == b->v.f;
    case YT_STR:
        return strcmp(a->text, b->text) == 0;
    case YT_SEQ:
    case YT_MAP:
        if (a->n != b->n) {
            return false;
        }
        for (size_t i = 0; i < a->n; i++) {
            const yt_node_t *y = a->type == YT_SEQ ? b->items[i] : yt_map_get(b, a->pairs[i].key);
            if (y == NULL || !equal(a->type == YT_SEQ ? a->items[i] : a->pairs[i].value, y)) {
                return false;
            }
        }
        return true;
    }
    return false;
}

/*
 * Merge mapping `src` (consumed) into mapping `dst` like OmegaConf's merge:
 * mappings merge, anything else replaces, and a `???` in src leaves a value
 * dst has in place.
 */
int hy_merge(yt_node_t *dst, yt_node_t *src)
{
    int rc = 0;
    for (size_t i = 0; i < src->n && rc == 0; i++) {
        yt_pair_t *p = &src->pairs[i];
        yt_node_t *d = yt_map_get(dst, p->key);
        yt_node_t *v = p->value;
        if (d != NULL && oc_is_missing(v)) {
            continue;
        }
        p->value = yt_new(YT_NULL, 0, 0); /* keep src freeable */
        if (p->value == NULL) {
            p->value = v;
            return PROFD_ENOMEM;
        }
        if (d != NULL && d->type == YT_MAP && v->type == YT_MAP) {
            rc = hy_merge(d, v);
        } else if (d != NULL) {
            yt_replace(d, v);
        } else {
            rc = yt_map_put(dst, p->key, p->line, p->col, v);
        }
    }
    yt_free(src);
    return rc;
}

static int ov_fail(char *err, size_t errlen, const char *ov, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int ov_fail(char *err, size_t errlen, const char *ov, const char *fmt, ...)
{
    va_list ap;
    int off = snprintf(err, errlen, "override '%s': ", ov);
    if (off >= 0 && (size_t)off < errlen) {
        va_start(ap, fmt);
        vsnprintf(err + off, errlen - (size_t)off, fmt, ap);
        va_end(ap);
    }
    yt_one_line(err);
    return PROFD_ECONFIG;
}

/* ---- parsing ---------------------------------------------------------------- */

static bool keychar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '$';
}

/* Segments of keychars separated by one of `seps`; not empty. */
static bool key_ok(const char *k, const char *seps)
{
    bool seg = false;
    for (; *k != '\0'; k++) {
        if (keychar(*k)) {
            seg = true;
        } else if (strchr(seps, *k) != NULL && seg) {
            seg = false;
        } else {
            return false;
        }
    }
    return seg;
}

int hy_override_parse(const char *text, hy_override_t *o, char *err, size_t errlen)
{
    const char *s = text;
    memset(o, 0, sizeof(*o));
    o->text = text;
    if (strncmp(s, "++", 2) == 0) {
        o->op = HY_FORCE;
        s += 2;
    } else if (*s == '+' || *s == '~') {
        o->op = *s == '+' ? HY_ADD : HY_DEL;
        s++;
    }
    const char *eq = strchr(s, '=');
    size_t klen = eq ? (size_t)(eq - s) : strlen(s);
    if (eq == NULL && o->op != HY_DEL) {
        return ov_fail(err, errlen, text, "expected KEY=VALUE");
    }
    while (klen > 0 && (s[klen - 1] == ' ' || s[klen - 1] == '\t')) {
        klen--;
    }
    const char *at = memchr(s, '@', klen);
    size_t glen = at ? (size_t)(at - s) : klen;
    if (glen == 0 || glen >= sizeof(o->key) || (at && klen - glen - 1 >= sizeof(o->package))) {
        return ov_fail(err, errlen, text, "missing key");
    }
    memcpy(o->key, s, glen);
    if (at != NULL) {
        o->has_package = true;
        memcpy(o->package, at + 1, klen - glen - 1);
    }
    bool group = strchr(o->key, '/') != NULL;
    if (!key_ok(o->key, group ? "/" : ".") ||
        (o->has_package && o->package[0] != '\0' && !key_ok(o->package, "."))) {
        return ov_fail(err, errlen, text, "malformed key '%.*s'", (int)klen, s);
    }
    if (eq != NULL) {
        char why[512] = "";
        o->value = eq + 1;
        int rc = oc_parse_value(text, eq + 1, &o->val, why, sizeof(why));
        if (rc != 0) {
            o->value = NULL;
            return rc == PROFD_ECONFIG ? ov_fail(err, errlen, text, "%s", why) : rc;
        }
    }
    return 0;
}

void hy_override_fini(hy_override_t *o)
{
    yt_free(o->val);
    o->val = NULL;
}

bool hy_override_is_hydra(const hy_override_t *o)
{
    return strcmp(o->key, "hydra") == 0 || strncmp(o->key, "hydra.", 6) == 0 ||
           strncmp(o->key, "hydra/", 6) == 0;
}

bool hy_override_is_container(const hy_override_t *o)
{
    return o->val != NULL && (o->val->type == YT_SEQ || o->val->type == YT_MAP);
}

/* ---- OmegaConf.update ----------------------------------------------------------- */

/* The child `seg` of a container; NULL when absent. */
static yt_node_t *child(yt_node_t *cur, const char *seg)
{
    if (cur->type == YT_MAP) {
        return yt_map_get(cur, seg);
    }
    if (cur->type == YT_SEQ) {
        char *end;
        long idx = strtol(seg, &end, 10);
        return (*end == '\0' && idx >= 0 && (size_t)idx < cur->n) ? cur->items[idx] : NULL;
    }
    return NULL;
}

enum { UPD_OK = 0, UPD_KEY = 1, UPD_MERGE = 2 };

/* Walk to the container of the last segment as OmegaConf.update does: a
 * missing mapping is made when force_add (else the key is missing), and a
 * value that is not a container (null, a scalar, an interpolation) is
 * replaced by an empty mapping. */
static int update_walk(yt_node_t *root, char *key, bool force, const char *ov, yt_node_t **out,
                       char **last)
{
    yt_node_t *cur = root;
    char *seg = key, *dot;
    while ((dot = strchr(seg, '.')) != NULL) {
        *dot = '\0';
        yt_node_t *next = child(cur, seg);
        if (next == NULL) {
            if (!force || cur->type != YT_MAP) {
                return UPD_KEY;
            }
            if ((next = yt_new(YT_MAP, 0, 0)) == NULL || yt_map_put(cur, seg, 0, 0, next) != 0) {
                return PROFD_ENOMEM;
            }
            next->origin = ov;
        } else if (next->type != YT_MAP && next->type != YT_SEQ) {
            yt_node_t *m = yt_new(YT_MAP, 0, 0);
            if (m == NULL) {
                return PROFD_ENOMEM;
            }
            m->origin = ov;
            yt_replace(next, m);
        }
        cur = next;
        seg = dot + 1;
    }
    *out = cur;
    *last = seg;
    return UPD_OK;
}

/* OmegaConf.update(cfg, key, value, merge=True, force_add). val consumed. */
static int update(yt_node_t *root, const char *path, yt_node_t *val, bool force, const char *ov)
{
    char key[256];
    yt_node_t *cur, *old;
    char *last;
    snprintf(key, sizeof(key), "%s", path);
    int rc = update_walk(root, key, force, ov, &cur, &last);
    if (rc != UPD_OK) {
        yt_free(val);
        return rc;
    }
    old = child(cur, last);
    if (old != NULL && (val->type == YT_MAP || val->type == YT_SEQ) &&
        (old->type == YT_MAP || old->type == YT_SEQ)) {
        if (old->type != val->type) {
            yt_free(val);
            return UPD_MERGE;
        }
        if (old->type == YT_MAP) {
            return hy_merge(old, val);
        }
        yt_replace(old, val); /* a list merged into a list is replaced */
        return 0;
    }
    if (old != NULL) {
        yt_replace(old, val);
        return 0;
    }
    if (cur->type == YT_SEQ) { /* an index out of range: not a missing key */
        yt_free(val);
        return UPD_MERGE;
    }
    if (!force) {
        yt_free(val);
        return UPD_KEY;
    }
    return yt_map_put(cur, last, 0, 0, val);
}

/* ---- the rules ------------------------------------------------------------------ */

/* An interpolation failed while selecting: its reason, after the override. */
static int sel_fail(oc_t *oc, const hy_override_t *o, int rc, char *err, size_t errlen)
{
    char why[512];
    if (rc == PROFD_ECONFIG) {
        snprintf(why, sizeof(why), "%s", oc->err);
        snprintf(err, errlen, "override '%s': %s", o->text, why);
    }
    return rc;
}

static int do_delete(oc_t *oc, yt_node_t *root, hy_override_t *o, char *err, size_t errlen)
{
    yt_node_t *cur, *parent = root;
    int rc = oc_select(oc, o->key, &cur);
    if (rc != 0) {
        return sel_fail(oc, o, rc, err, errlen);
    }
    if (cur == NULL || cur->type == YT_NULL) {
        return ov_fail(err, errlen, o->text, "Could not delete from config. '%s' does not exist.",
                       o->key);
    }
    if (o->val != NULL && !equal(cur, o->val)) {
        char have[64];
        if (cur->type == YT_SEQ || cur->type == YT_MAP || cur->text == NULL) {
            yt_describe(cur, have, sizeof(have));
        } else { /* as Python prints the value */
            snprintf(have, sizeof(have), "%s", cur->text);
        }
        return ov_fail(err, errlen, o->text,
                       "Could not delete from config. The value of '%s' is %s and not %s.", o->key,
                       have, o->value);
    }
    const char *dot = strrchr(o->key, '.');
    if (dot != NULL) {
        char pk[256];
        snprintf(pk, sizeof(pk), "%.*s", (int)(dot - o->key), o->key);
        if ((rc = oc_select(oc, pk, &parent)) != 0) {
            return sel_fail(oc, o, rc, err, errlen);
        }
        if (parent == NULL) {
            return ov_fail(err, errlen, o->text, "'%s' does not exist.", pk);
        }
    }
    if (!yt_map_del(parent, dot ? dot + 1 : o->key)) {
        return ov_fail(err, errlen, o->text,
                       "Could not delete from config. '%s' is not an item of a mapping.", o->key);
    }
    return 0;
}

static int do_add_check(oc_t *oc, hy_override_t *o, char *err, size_t errlen)
{
    yt_node_t *cur;
    int rc = oc_select(oc, o->key, &cur);
    if (rc != 0) {
        return sel_fail(oc, o, rc, err, errlen);
    }
    if (cur != NULL && cur->type != YT_NULL && !hy_override_is_container(o)) {
        return ov_fail(err, errlen, o->text,
                       "Could not append to config. An item is already at '%s'. Either remove + "
                       "prefix: '%s' Or add a second + to add or override '%s': '+%s'",
                       o->key, o->text + 1, o->key, o->text);
    }
    return 0;
}

int hy_override_apply(oc_t *oc, yt_node_t **root, hy_override_t *o, char *err, size_t errlen)
{
    int rc = 0;
    if (o->has_package) {
        return ov_fail(err, errlen, o->text,
                       "Override %s looks like a config group override, but config group '%s' "
                       "does not exist.",
                       o->text, o->key);
    }
    if ((*root)->type == YT_NULL) {
        (*root)->type = YT_MAP;
    }
    if ((*root)->type != YT_MAP) {
        return ov_fail(err, errlen, o->text, "the configuration is not a mapping");
    }
    oc->root = *root;
    if (o->op == HY_DEL) {
        rc = do_delete(oc, *root, o, err, errlen);
    } else if (o->op == HY_ADD) {
        rc = do_add_check(oc, o, err, errlen);
    }
    oc_forget(*root);
    if (rc != 0 || o->op == HY_DEL) {
        return rc;
    }
    yt_node_t *val = o->val;
    o->val = NULL;
    rc = update(*root, o->key, val, o->op != HY_SET, o->text);
    if (rc == UPD_KEY) {
        return ov_fail(err, errlen, o->text,
                       "Could not override '%s'. To append to your config use +%s", o->key,
                       o->text);
    }
    if (rc == UPD_MERGE) {
        return ov_fail(err, errlen, o->text, "Error merging override %s", o->text);
    }
    return rc;
}

int hy_apply_overrides(const char *file, yt_node_t **root, char *const *overrides, size_t n,
                       char *err, size_t errlen)
{
    oc_t oc;
    for (size_t i = 0; i < n; i++) {
        hy_override_t o;
        int rc = hy_override_parse(overrides[i], &o, err, errlen);
        if (rc == 0 && (strchr(o.key, '/') != NULL || o.has_package)) {
            rc = ov_fail(err, errlen, o.text,
                         "config group overrides need the config's folder: profctl apply "
                         "composes them");
        }
        oc_init(&oc, file, *root, err, errlen);
        if (rc == 0) {
            rc = hy_override_apply(&oc, root, &o, err, errlen);
        }
        hy_override_fini(&o);
        if (rc == PROFD_ENOMEM) {
            snprintf(err, errlen, "%s: out of memory", file);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
