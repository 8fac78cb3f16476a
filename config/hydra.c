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
        if (a->n != b->n) {
            return false;
        }
        for (size_t i = 0; i < a->n; i++) {
            if (!equal(a->items[i], b->items[i])) {
                return false;
            }
        }
        return true;
    case YT_MAP:
        if (a->n != b->n) {
            return false;
        }
        for (size_t i = 0; i < a->n; i++) {
            const yt_node_t *y = yt_map_get(b, a->pairs[i].key);
            if (y == NULL || !equal(a->pairs[i].value, y)) {
                return false;
            }
        }
        return true;
    }
    return false;
}

/* Merge mapping `src` (consumed) into mapping `dst`, like OmegaConf.merge. */
static int merge(yt_node_t *dst, yt_node_t *src)
{
    int rc = 0;
    for (size_t i = 0; i < src->n && rc == 0; i++) {
        yt_pair_t *p = &src->pairs[i];
        yt_node_t *d = yt_map_get(dst, p->key);
        yt_node_t *v = p->value;
        p->value = yt_new(YT_NULL, 0, 0); /* keep src freeable */
        if (p->value == NULL) {
            p->value = v;
            return PROFD_ENOMEM;
        }
        if (d != NULL && d->type == YT_MAP && v->type == YT_MAP) {
            rc = merge(d, v);
        } else if (d != NULL) {
            yt_replace(d, v);
        } else {
            rc = yt_map_put(dst, p->key, 0, 0, v);
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
    return PROFD_ECONFIG;
}

static int apply_one(const char *ov, yt_node_t **root, char *err, size_t errlen)
{
    const char *s = ov;
    enum { SET, ADD, FORCE, DEL } op = SET;
    if (strncmp(s, "++", 2) == 0) {
        op = FORCE;
        s += 2;
    } else if (*s == '+') {
        op = ADD;
        s++;
    } else if (*s == '~') {
        op = DEL;
        s++;
    }
    const char *eq = strchr(s, '=');
    size_t klen = eq ? (size_t)(eq - s) : strlen(s);
    char key[512];
    if (eq == NULL && op != DEL) {
        return ov_fail(err, errlen, ov, "expected KEY=VALUE");
    }
    while (klen > 0 && (s[klen - 1] == ' ' || s[klen - 1] == '\t')) {
        klen--;
    }
    if (klen == 0 || klen >= sizeof(key)) {
        return ov_fail(err, errlen, ov, "missing key");
    }
    memcpy(key, s, klen);
    key[klen] = '\0';
    if (strpbrk(key, "@/") != NULL) {
        return ov_fail(err, errlen, ov, "config group overrides (a/b, a@b) are not supported");
    }
    if (strpbrk(key, " \t'\"[]{}(),$\\") != NULL || key[0] == '.' || key[klen - 1] == '.' ||
        strstr(key, "..") != NULL) {
        return ov_fail(err, errlen, ov, "malformed key '%s'", key);
    }

    yt_node_t *val = NULL;
    int rc;
    if (eq != NULL) {
        char why[200] = "";
        if ((rc = oc_parse_value(ov, eq + 1, &val, why, sizeof(why))) != 0) {
            return rc == PROFD_ECONFIG ? ov_fail(err, errlen, ov, "%s", why) : rc;
        }
    }
    if ((*root)->type != YT_MAP) {
        if ((*root)->type != YT_NULL || op == SET || op == DEL) {
            yt_free(val);
            return ov_fail(err, errlen, ov, "the configuration is not a mapping");
        }
        (*root)->type = YT_MAP;
    }

    /* walk to the parent of the last segment */
    yt_node_t *cur = *root;
    char *seg = key, *dot;
    char done[512]; /* the key up to the current segment, for messages */
    memcpy(done, key, klen + 1);
    while ((dot = strchr(seg, '.')) != NULL) {
        *dot = '\0';
        yt_node_t *next = NULL;
        if (cur->type == YT_MAP) {
            next = yt_map_get(cur, seg);
        } else if (cur->type == YT_SEQ) {
            char *end;
            long idx = strtol(seg, &end, 10);
            next = (*end == '\0' && idx >= 0 && (size_t)idx < cur->n) ? cur->items[idx] : NULL;
        }
        done[dot - key] = '\0';
        if (next == NULL) {
            if ((op != ADD && op != FORCE) || cur->type != YT_MAP) {
                yt_free(val);
                return ov_fail(err, errlen, ov, "key '%s' not found", done);
            }
            next = yt_new(YT_MAP, 0, 0);
            if (next == NULL || yt_map_put(cur, seg, 0, 0, next) != 0) {
                yt_free(val);
                return PROFD_ENOMEM;
            }
            next->origin = ov;
        }
        if (next->type != YT_MAP && next->type != YT_SEQ) {
            yt_free(val);
            return ov_fail(err, errlen, ov, "key '%s' is not a mapping", done);
        }
        cur = next;
        seg = dot + 1;
        done[dot - key] = '.';
    }

    yt_node_t *old = NULL;
    if (cur->type == YT_MAP) {
        old = yt_map_get(cur, seg);
    } else {
        char *end;
        long idx = strtol(seg, &end, 10);
        old = (*end == '\0' && idx >= 0 && (size_t)idx < cur->n) ? cur->items[idx] : NULL;
        if (old == NULL || op == ADD || op == DEL) {
            yt_free(val);
            return ov_fail(err, errlen, ov, "key '%s' is not an item of the list", done);
        }
    }
    switch (op) {
    case DEL:
        if (old == NULL) {
            yt_free(val);
            return ov_fail(err, errlen, ov, "key '%s' not found", done);
        }
        if (val != NULL && !equal(old, val)) {
            yt_free(val);
            return ov_fail(err, errlen, ov, "the value of '%s' differs", done);
        }
        yt_free(val);
        yt_map_del(cur, seg);
        return 0;
    case ADD:
        if (old != NULL) {
            yt_free(val);
            return ov_fail(err, errlen, ov, "key '%s' already exists; use ++%s=... to set it", done,
                           done);
        }
        return yt_map_put(cur, seg, 0, 0, val);
    case SET:
        if (old == NULL) {
            yt_free(val);
            return ov_fail(err, errlen, ov, "key '%s' not found; use +%s=... to add it", done,
                           done);
        }
        /* fall through */
    case FORCE:
        if (old == NULL) {
            return yt_map_put(cur, seg, 0, 0, val);
        }
        if (old->type == YT_MAP && val->type == YT_MAP) {
            return merge(old, val);
        }
        yt_replace(old, val);
        return 0;
    }
    return 0;
}

int hy_apply_overrides(const char *file, yt_node_t **root, char *const *overrides, size_t n,
                       char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        int rc = apply_one(overrides[i], root, err, errlen);
        if (rc == PROFD_ENOMEM) {
            snprintf(err, errlen, "%s: out of memory", file);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
