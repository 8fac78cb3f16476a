// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Below the OmegaConf / Hydra value parser: where a node was written, what
 * a string is (missing, interpolated), and the parser's helpers (messages,
 * computed nodes, key paths) that omegaconf.c, oc_resolvers.c and
 * oc_hydra.c share. The parser itself is reached through ip_t.ops only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omegaconf.h"
#include "omegaconf_int.h"
#include "profd/errors.h"

/* ---- messages ---------------------------------------------------------------- */

void oc_where(const char *file, const yt_node_t *n, char *buf, size_t len)
{
    while (n->parent == NULL && n->from != NULL) {
        n = n->from;
    }
    if (n->origin != NULL) {
        snprintf(buf, len, "%s '%s'", n->origin[0] == '-' ? "argument" : "override", n->origin);
    } else {
        snprintf(buf, len, "%s:%d:%d", n->src ? n->src->name : file, n->line, n->col);
    }
}

bool oc_is_missing(const yt_node_t *n)
{
    return n != NULL && n->type == YT_STR && strcmp(n->text, "???") == 0;
}

bool oc_is_interp(const yt_node_t *n)
{
    return n->type == YT_STR && !(n->flags & YT_F_FINAL) && strstr(n->text, "${") != NULL;
}

/* ---- the parser's helpers ----------------------------------------------------- */

int ocp_fail(ip_t *p, bool syntax, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof(p->why), fmt, ap);
    va_end(ap);
    p->syntax = syntax;
    return PROFD_ECONFIG;
}

int ocp_oom(ip_t *p)
{
    if (p->oc != NULL) {
        snprintf(p->oc->err, p->oc->errlen, "%s: out of memory", p->oc->file);
    }
    p->why[0] = '\0';
    return PROFD_ENOMEM;
}

void ocp_val_drop(val_t *v)
{
    if (v->owned) {
        yt_free(v->node);
    }
    v->node = NULL;
    v->owned = false;
}

yt_node_t *ocp_mk(ip_t *p, yt_type_t t, const char *text, size_t len)
{
    yt_node_t *n;
    if (p->oc != NULL && ++p->oc->created > OC_MAX_NODES) {
        ocp_why(p, "more than %d values computed", OC_MAX_NODES);
        return NULL;
    }
    if (text != NULL) {
        n = yt_scalar(text, len, true, 0, 0);
        if (n != NULL) {
            n->type = t;
        }
    } else {
        n = yt_new(t, 0, 0);
    }
    if (n == NULL) {
        ocp_oom(p);
        return NULL;
    }
    if (p->oc != NULL) { /* placed where the interpolation is written */
        n->line = p->node->line;
        n->col = p->node->col;
        n->origin = p->node->origin;
        n->flags |= YT_F_FINAL;
    } else {
        n->origin = p->origin;
    }
    return n;
}

int ocp_sb_check(ip_t *p, const sbuf_t *b)
{
    if (b->s.oom || b->over) {
        return b->s.oom ? ocp_oom(p) : ocp_why(p, "string longer than %d bytes", OC_MAX_STR);
    }
    return 0;
}

int ocp_sb_node(ip_t *p, const sbuf_t *b, val_t *out)
{
    out->node = ocp_mk(p, YT_STR, b->s.p ? b->s.p : "", b->s.len);
    out->owned = true;
    return out->node != NULL ? 0 : ocp_mk_failed(p);
}

/* nodes failed to build: ocp_mk() already set the reason or the OOM message */
int ocp_mk_failed(ip_t *p)
{
    return p->why[0] ? PROFD_ECONFIG : PROFD_ENOMEM;
}

void ocp_skip_ws(ip_t *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t')) {
        p->i++;
    }
}

void ocp_set_origin_tree(yt_node_t *n, const char *origin)
{
    n->origin = origin;
    for (size_t i = 0; i < n->n; i++) {
        ocp_set_origin_tree(n->type == YT_SEQ ? n->items[i] : n->pairs[i].value, origin);
    }
}

/* A value in a container: computed nodes move in, tree nodes are copied. */
int ocp_adopt(ip_t *p, val_t *v, yt_node_t **out)
{
    if (v->owned) {
        *out = v->node;
        v->owned = false;
        v->node = NULL;
        return 0;
    }
    if (p->oc != NULL) {
        p->oc->created += yt_count(v->node);
        if (p->oc->created > OC_MAX_NODES) {
            return ocp_why(p, "more than %d values computed", OC_MAX_NODES);
        }
    }
    *out = yt_copy(v->node);
    if (*out == NULL) {
        return ocp_oom(p);
    }
    (*out)->flags |= YT_F_FINAL;
    (*out)->line = p->oc ? p->node->line : 0;
    (*out)->col = p->oc ? p->node->col : 0;
    (*out)->origin = p->oc ? p->node->origin : p->origin;
    return 0;
}

/* "a.b[0].c", ".x", "..y" -> kpath */
int ocp_kpath_parse(ip_t *p, const char *s, kpath_t *k)
{
    k->dots = 0;
    k->n = 0;
    k->used = 0;
    while (*s == '.') {
        k->dots++;
        s++;
    }
    while (*s != '\0') {
        size_t len;
        bool br = (*s == '[');
        if (br) {
            const char *e = strchr(s, ']');
            if (e == NULL) {
                return ocp_syn(p, "missing ']' in key '%s'", s);
            }
            len = (size_t)(e - s - 1);
            s++;
        } else {
            len = strcspn(s, ".[");
        }
        if (len == 0 || k->used + len + 1 > sizeof(k->buf) ||
            k->n >= sizeof(k->seg) / sizeof(k->seg[0])) {
            return ocp_syn(p, "malformed key");
        }
        k->seg[k->n] = k->buf + k->used;
        memcpy(k->seg[k->n], s, len);
        k->seg[k->n++][len] = '\0';
        k->used += len + 1;
        s += len + br;
        if (*s == '.') {
            s++;
            if (*s == '\0') {
                return ocp_syn(p, "malformed key");
            }
        }
    }
    if (k->n == 0) {
        return ocp_syn(p, "empty key");
    }
    return 0;
}

/* Find the raw node a key path names; *raw NULL when missing. */
int ocp_kpath_find(ip_t *p, const kpath_t *k, yt_node_t **raw)
{
    oc_t *oc = p->oc;
    yt_node_t *cur = oc->root;
    int rc;
    *raw = NULL;
    if (k->dots > 0) {
        cur = p->node->parent;
        for (int d = 1; d < k->dots && cur != NULL; d++) {
            cur = cur->parent;
        }
        if (cur == NULL) {
            return ocp_why(p, "relative key goes above the root");
        }
    }
    for (size_t i = 0; i < k->n; i++) {
        yt_node_t *v;
        if ((rc = p->ops->resolve(oc, cur, &v)) != 0) {
            p->why[0] = '\0';
            return rc;
        }
        if (v->type == YT_MAP) {
            cur = yt_map_get(v, k->seg[i]);
        } else if (v->type == YT_SEQ) {
            char *end;
            long idx = strtol(k->seg[i], &end, 10);
            cur = (*end == '\0' && idx >= 0 && (size_t)idx < v->n) ? v->items[idx] : NULL;
        } else {
            cur = NULL;
        }
        if (cur == NULL) {
            return 0;
        }
    }
    *raw = cur;
    return 0;
}

bool ocp_is_missing_marker(const yt_node_t *n)
{
    return oc_is_missing(n);
}

int ocp_resolve_raw(ip_t *p, yt_node_t *raw, val_t *out)
{
    int rc = p->ops->resolve(p->oc, raw, &out->node);
    if (rc != 0) {
        p->why[0] = '\0'; /* the message is about the target */
        return rc;
    }
    out->owned = false;
    return 0;
}

int ocp_null_value(ip_t *p, val_t *out)
{
    if ((out->node = ocp_mk(p, YT_NULL, "null", 4)) == NULL) {
        return ocp_mk_failed(p);
    }
    out->owned = true;
    return 0;
}
