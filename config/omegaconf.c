// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra overrides and OmegaConf interpolations over a yamltree.
 *
 * One small recursive-descent parser reads both grammars: the value of a
 * Hydra override ("keep" mode: `${...}` is kept as text, resolved later like
 * any string of the file) and the inside of an OmegaConf interpolation
 * ("eval" mode: nested interpolations are evaluated as they are read).
 * Here: the element parser, interpolations, resolution and override values;
 * oc_resolvers.c, oc_hydra.c, oc_util.c and oc_text.c hold the rest
 * (omegaconf_int.h).
 */
#include "omegaconf.h"
#include "omegaconf_int.h"

#include <limits.h>
#include <math.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "profd/errors.h"

/* ---- the element parser -------------------------------------------------------- */

static int depth_in(ip_t *p)
{
    if (++*p->depth > OC_MAX_DEPTH) {
        --*p->depth;
        return ocp_why(p, "interpolations and brackets nested deeper than %d levels", OC_MAX_DEPTH);
    }
    return 0;
}

static void depth_out(ip_t *p)
{
    --*p->depth;
}

static int interp(ip_t *p, val_t *out);

/* `[a, b]` (list != NULL) or the arguments of a resolver (args != NULL),
 * up to `close`. Missing elements are empty strings, as in OmegaConf. */
static int sequence(ip_t *p, char close, yt_node_t *list, val_t *args, size_t *nargs, size_t max)
{
    ocp_skip_ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        return 0;
    }
    for (;;) {
        val_t v = {0};
        int rc;
        ocp_skip_ws(p);
        if (p->i >= p->n) {
            return ocp_syn(p, "missing '%c'", close);
        }
        if (p->s[p->i] == ',' || p->s[p->i] == close) {
            if ((v.node = ocp_mk(p, YT_STR, "", 0)) == NULL) {
                return ocp_mk_failed(p);
            }
            v.owned = true;
        } else if ((rc = ocp_element(p, &v)) != 0) {
            return rc;
        }
        if (list != NULL) {
            yt_node_t *x;
            if ((rc = ocp_adopt(p, &v, &x)) != 0) {
                ocp_val_drop(&v);
                return rc;
            }
            if (yt_seq_push(list, x) != 0) {
                return ocp_oom(p);
            }
        } else {
            if (*nargs >= max) {
                ocp_val_drop(&v);
                return ocp_why(p, "too many arguments");
            }
            args[(*nargs)++] = v;
        }
        ocp_skip_ws(p);
        if (p->i >= p->n) {
            return ocp_syn(p, "missing '%c'", close);
        }
        if (p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->s[p->i] == close) {
            p->i++;
            return 0;
        }
        return ocp_syn(p, "expected ',' or '%c' at offset %zu", close, p->i);
    }
}

static int dict(ip_t *p, yt_node_t *map)
{
    ocp_skip_ws(p);
    if (p->i < p->n && p->s[p->i] == '}') {
        p->i++;
        return 0;
    }
    for (;;) {
        ocp_skip_ws(p);
        size_t k0 = p->i;
        while (p->i < p->n && !strchr(":,{}[]'\"$", p->s[p->i])) {
            p->i++;
        }
        size_t k1 = p->i;
        while (k1 > k0 && (p->s[k1 - 1] == ' ' || p->s[k1 - 1] == '\t')) {
            k1--;
        }
        if (k1 == k0 || p->i >= p->n || p->s[p->i] != ':') {
            return ocp_syn(p, "expected 'key: value' in '{...}'");
        }
        p->i++;
        char key[256];
        snprintf(key, sizeof(key), "%.*s", (int)(k1 - k0), p->s + k0);
        val_t v = {0};
        yt_node_t *x;
        int rc = ocp_element(p, &v);
        if (rc == 0 && (rc = ocp_adopt(p, &v, &x)) != 0) {
            ocp_val_drop(&v);
        }
        if (rc != 0) {
            return rc;
        }
        if (yt_map_put(map, key, 0, 0, x) != 0) {
            return ocp_oom(p);
        }
        ocp_skip_ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == '}') {
            p->i++;
            return 0;
        }
        return ocp_syn(p, "missing '}'");
    }
}

/* 'text' or "text"; interpolations inside are resolved (eval) or kept. */
static int quoted(ip_t *p, val_t *out)
{
    char q = p->s[p->i++];
    sbuf_t b = {0};
    int rc = 0;
    for (;;) {
        if (p->i >= p->n) {
            rc = ocp_syn(p, "missing closing %c", q);
            break;
        }
        char c = p->s[p->i];
        if (c == q) {
            p->i++;
            break;
        }
        if (c == '\\' && p->oc == NULL) {
            /* Hydra (OverrideLexer.g4 QUOTED_VALUE, overrides_visitor.py
             * _unescape_quoted_string): only backslashes before a quote
             * escape: k of them and the quote are k/2 backslashes then,
             * k odd, the quote itself; other backslashes are kept. */
            size_t k = strspn(p->s + p->i, "\\");
            if (p->i + k < p->n && p->s[p->i + k] == q) {
                for (size_t j = 0; j < k / 2; j++) {
                    ocp_sb_chr(&b, '\\');
                }
                p->i += k;
                if (k % 2 == 1) {
                    ocp_sb_chr(&b, q);
                    p->i++;
                }
            } else {
                ocp_sb_add(&b, p->s + p->i, k);
                p->i += k;
            }
        } else if (c == '\\' && p->i + 1 < p->n &&
                   (p->s[p->i + 1] == q || p->s[p->i + 1] == '\\')) {
            ocp_sb_chr(&b, p->s[p->i + 1]);
            p->i += 2;
        } else if (c == '$' && p->i + 1 < p->n && p->s[p->i + 1] == '{' && p->oc != NULL) {
            val_t v = {0};
            if ((rc = interp(p, &v)) != 0) {
                break;
            }
            ocp_py_str(&b, v.node, false);
            ocp_val_drop(&v);
        } else {
            ocp_sb_chr(&b, c);
            p->i++;
        }
    }
    if (rc == 0 && (rc = ocp_sb_check(p, &b)) == 0 && (rc = ocp_sb_node(p, &b, out)) == 0) {
        out->node->flags |= YT_F_QUOTED | (p->oc == NULL ? YT_F_QSTR : 0);
    }
    pu_sbuf_free(&b.s);
    return rc;
}

/* Copy a balanced `${...}` verbatim (keep mode). */
static int keep_interp(ip_t *p, sbuf_t *b)
{
    int level = 0;
    size_t start = p->i;
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == '{') {
            level++;
        } else if (c == '}' && --level == 0) {
            p->i++;
            ocp_sb_add(b, p->s + start, p->i - start);
            return 0;
        }
        p->i++;
    }
    return ocp_syn(p, "missing '}' of '${'");
}

/* A primitive: everything up to , ] } (unescaped). Typed when it is one
 * INT/FLOAT/BOOL/NULL token; the value itself when it is one interpolation. */
static int primitive(ip_t *p, val_t *out)
{
    sbuf_t b = {0};
    val_t single = {0};
    int ninterp = 0, rc = 0;
    bool plain = true; /* no escape, no interpolation: may be typed */
    size_t single_at = 0;

    while (p->i < p->n && rc == 0) {
        char c = p->s[p->i];
        if (c == ',' || c == ']' || c == '}' || (c == ')' && p->in_call > 0)) {
            break;
        }
        if (c == '$' && p->i + 1 < p->n && p->s[p->i + 1] == '{') {
            plain = false;
            if (p->oc == NULL) {
                rc = keep_interp(p, &b);
                continue;
            }
            val_t v = {0};
            size_t before = b.s.len;
            if ((rc = interp(p, &v)) != 0) {
                break;
            }
            ninterp++;
            ocp_py_str(&b, v.node, false);
            if (ninterp == 1 && b.s.p != NULL && strspn(b.s.p, " \t") >= before) {
                single = v; /* may be the whole value */
                single_at = b.s.len;
            } else {
                ocp_val_drop(&v);
            }
            continue;
        }
        if (c == '\\' && p->i + 1 < p->n && strchr("\\()[]{}:=, \t", p->s[p->i + 1])) {
            ocp_sb_chr(&b, p->s[p->i + 1]);
            p->i += 2;
            plain = false;
            continue;
        }
        if (p->oc == NULL && (rc = ocp_hydra_char(p, b.s.len)) != 0) {
            break;
        }
        if (c == '[' || c == '{' || c == '\'' || c == '"') {
            rc = ocp_syn(p, "unexpected '%c' at offset %zu", c, p->i);
            break;
        }
        ocp_sb_chr(&b, c);
        p->i++;
    }
    if (rc == 0) {
        rc = ocp_sb_check(p, &b);
    }
    if (rc == 0 && ninterp == 1 && single.node != NULL && b.s.p != NULL &&
        strspn(b.s.p + single_at, " \t") == b.s.len - single_at) {
        *out = single; /* `${x}` alone keeps the type of x */
        single.node = NULL;
        single.owned = false;
    } else if (rc == 0) {
        size_t s0 = 0, s1 = b.s.len;
        while (s0 < s1 && (b.s.p[s0] == ' ' || b.s.p[s0] == '\t')) {
            s0++;
        }
        while (s1 > s0 && (b.s.p[s1 - 1] == ' ' || b.s.p[s1 - 1] == '\t')) {
            s1--;
        }
        out->node = ocp_mk(p, YT_STR, b.s.p ? b.s.p + s0 : "", s1 - s0);
        out->owned = true;
        if (out->node == NULL) {
            rc = ocp_mk_failed(p);
        } else if (plain) {
            ocp_gram_type(out->node);
        }
    }
    ocp_val_drop(&single);
    pu_sbuf_free(&b.s);
    return rc;
}

int ocp_element(ip_t *p, val_t *out)
{
    int rc;
    ocp_skip_ws(p);
    if (p->i >= p->n) {
        return primitive(p, out);
    }
    if ((rc = depth_in(p)) != 0) {
        return rc;
    }
    char c = p->s[p->i];
    if (c == '[' || c == '{') {
        p->i++;
        out->node = ocp_mk(p, c == '[' ? YT_SEQ : YT_MAP, NULL, 0);
        if (out->node == NULL) {
            return ocp_mk_failed(p);
        }
        out->owned = true;
        rc = c == '[' ? sequence(p, ']', out->node, NULL, NULL, 0) : dict(p, out->node);
        if (rc != 0) {
            ocp_val_drop(out);
        }
    } else if (p->oc == NULL && ocp_hy_function_at(p->s + p->i, p->n - p->i) > 0) {
        rc = ocp_hydra_call(p, out);
    } else if (c == '\'' || c == '"') {
        rc = quoted(p, out);
        size_t end = p->i;
        ocp_skip_ws(p);
        if (rc == 0 && p->oc == NULL && *p->depth == 1 && p->i > end && p->i == p->n) {
            /* QUOTED_VALUE is a primitive alone (OverrideParser.g4) */
            ocp_val_drop(out);
            return ocp_syn(p, "extraneous input '%.*s' expecting <EOF>", (int)(p->i - end),
                           p->s + end);
        }
        if (rc == 0 && p->i < p->n && !strchr(p->in_call > 0 ? ",]})" : ",]}", p->s[p->i])) {
            ocp_val_drop(out);
            rc = ocp_syn(p, "unexpected text after a quoted string");
        }
    } else {
        rc = primitive(p, out);
    }
    depth_out(p);
    return rc;
}

/* ---- interpolations ------------------------------------------------------------ */

static bool idchar(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && ocp_isdig(c));
}

static void kpath_text(const kpath_t *k, char *buf, size_t len)
{
    size_t off = 0;
    for (int d = 0; d < k->dots && off + 1 < len; d++) {
        buf[off++] = '.';
    }
    buf[off] = '\0';
    for (size_t i = 0; i < k->n && off < len; i++) {
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "." : "", k->seg[i]);
    }
}

/* The length of a resolver name at p->i (ID(.ID)*) when a ':' follows it;
 * 0 when this is a node interpolation. *colon: the ':' position. */
static size_t resolver_name(const ip_t *p, size_t *colon)
{
    size_t j = p->i;
    while (j < p->n && idchar(p->s[j], j == p->i || p->s[j - 1] == '.')) {
        j++;
        if (j < p->n && p->s[j] == '.' && j + 1 < p->n && idchar(p->s[j + 1], true)) {
            j++;
        }
    }
    size_t k = j;
    while (k < p->n && (p->s[k] == ' ' || p->s[k] == '\t')) {
        k++;
    }
    *colon = k;
    return (j > p->i && k < p->n && p->s[k] == ':') ? j - p->i : 0;
}

/* `NAME: args }` after "${": call the resolver. */
static int resolver_call(ip_t *p, size_t nlen, size_t colon, val_t *out)
{
    char name[64];
    val_t args[8] = {{0}};
    size_t nargs = 0;
    snprintf(name, sizeof(name), "%.*s", (int)nlen, p->s + p->i);
    p->i = colon + 1;
    int rc = sequence(p, '}', NULL, args, &nargs, sizeof(args) / sizeof(args[0]));
    if (rc == 0) {
        rc = ocp_call_resolver(p, name, args, nargs, out);
    }
    for (size_t a = 0; a < nargs; a++) {
        ocp_val_drop(&args[a]);
    }
    return rc;
}

/* The key text of a node interpolation up to its '}' (nested ${...}
 * evaluated into it). */
static int interp_key(ip_t *p, sbuf_t *key)
{
    int rc = 0;
    while (rc == 0) {
        if (p->i >= p->n) {
            return ocp_syn(p, "missing '}'");
        }
        char c = p->s[p->i];
        if (c == '}') {
            p->i++;
            break;
        }
        if (c == ' ' || c == '\t') {
            ocp_skip_ws(p);
            if (p->i < p->n && p->s[p->i] != '}') {
                rc = ocp_syn(p, "unexpected space in a key");
            }
            continue;
        }
        if (c == '$' && p->i + 1 < p->n && p->s[p->i + 1] == '{') {
            val_t v = {0};
            if ((rc = interp(p, &v)) == 0) {
                ocp_py_str(key, v.node, false);
                ocp_val_drop(&v);
            }
            continue;
        }
        if (strchr("\\{()'\":", c) != NULL) {
            return ocp_syn(p, "unexpected '%c' in a key", c);
        }
        ocp_sb_chr(key, c);
        p->i++;
    }
    if (rc == 0 && key->s.oom) {
        rc = ocp_oom(p);
    }
    return rc;
}

/* `${KEY}`: the value KEY names. */
static int node_interp(ip_t *p, val_t *out)
{
    sbuf_t key = {0};
    int rc = interp_key(p, &key);
    if (rc == 0) {
        kpath_t kp;
        yt_node_t *raw;
        char txt[256];
        if ((rc = ocp_kpath_parse(p, key.s.p ? key.s.p : "", &kp)) == 0 &&
            (rc = ocp_kpath_find(p, &kp, &raw)) == 0) {
            kpath_text(&kp, txt, sizeof(txt));
            if (raw == NULL) {
                rc = ocp_why(p, "key '%s' not found", txt);
            } else if (ocp_is_missing_marker(raw)) {
                rc = ocp_why(p, "Missing mandatory value: %s", txt);
            } else {
                rc = ocp_resolve_raw(p, raw, out);
            }
        }
    }
    pu_sbuf_free(&key.s);
    return rc;
}

/* At "${": a node interpolation or a resolver call. */
static int interp(ip_t *p, val_t *out)
{
    int rc = depth_in(p);
    if (rc != 0) {
        return rc;
    }
    p->i += 2;
    ocp_skip_ws(p);
    size_t colon, nlen = resolver_name(p, &colon);
    rc = nlen > 0 ? resolver_call(p, nlen, colon, out) : node_interp(p, out);
    depth_out(p);
    return rc;
}

/* The text of a string node: literal parts and interpolations. */
static int config_value(ip_t *p, val_t *out)
{
    sbuf_t b = {0};
    int pieces = 0, rc = 0;
    while (p->i < p->n && rc == 0) {
        const char *s = p->s;
        size_t i = p->i;
        if (s[i] == '\\') {
            size_t k = i;
            while (k < p->n && s[k] == '\\') {
                k++;
            }
            if (k + 1 < p->n && s[k] == '$' && s[k + 1] == '{') {
                size_t nb = k - i;
                for (size_t x = 0; x < nb / 2; x++) {
                    ocp_sb_chr(&b, '\\');
                }
                pieces++;
                if (nb % 2) { /* \${ : a literal "${" */
                    ocp_sb_str(&b, "${");
                    p->i = k + 2;
                } else {
                    p->i = k;
                }
                continue;
            }
            ocp_sb_add(&b, s + i, k - i);
            pieces++;
            p->i = k;
            continue;
        }
        if (s[i] == '$' && i + 1 < p->n && s[i + 1] == '{') {
            val_t v = {0};
            if ((rc = interp(p, &v)) != 0) {
                break;
            }
            if (pieces == 0 && p->i == p->n) {
                *out = v; /* the whole string is one interpolation */
                pu_sbuf_free(&b.s);
                return 0;
            }
            ocp_py_str(&b, v.node, false);
            ocp_val_drop(&v);
            pieces++;
            continue;
        }
        ocp_sb_chr(&b, s[i]);
        pieces++;
        p->i++;
    }
    if (rc == 0 && (rc = ocp_sb_check(p, &b)) == 0) {
        rc = ocp_sb_node(p, &b, out);
    }
    pu_sbuf_free(&b.s);
    return rc;
}

/* What the helpers below the parser (oc_resolvers.c, oc_hydra.c, oc_util.c)
 * call back: they reach the parser only through this table. */
static const ocp_ops_t ops = {.element = ocp_element, .resolve = oc_resolve};

/* ---- public: resolution ------------------------------------------------------ */

void oc_init(oc_t *oc, const char *file, yt_node_t *root, char *err, size_t errlen)
{
    *oc = (oc_t){.file = file, .root = root, .err = err, .errlen = errlen};
}

static void interp_error(oc_t *oc, yt_node_t *n, const char *prefix, const char *reason)
{
    char where[300], path[256], text[72];
    oc->err_src = n->src;
    oc_where(oc->file, n, where, sizeof(where));
    yt_path(n, path, sizeof(path));
    snprintf(text, sizeof(text), "%.60s%s", n->text, strlen(n->text) > 60 ? "..." : "");
    snprintf(oc->err, oc->errlen, "%s: key '%s': %sinterpolation '%s'%s%s", where, path, prefix,
             text, reason[0] ? ": " : "", reason);
}

int oc_resolve(oc_t *oc, yt_node_t *n, yt_node_t **out)
{
    if (n->flags & YT_F_REF) {
        *out = n->ref;
        return 0;
    }
    if (!oc_is_interp(n)) {
        *out = n;
        return 0;
    }
    if (n->flags & YT_F_BUSY) {
        interp_error(oc, n, "circular ", "");
        return PROFD_ECONFIG;
    }
    if (oc->depth >= OC_MAX_DEPTH) {
        interp_error(oc, n, "", "interpolations and brackets nested deeper than 64 levels");
        return PROFD_ECONFIG;
    }
    ip_t p = {
        .oc = oc, .ops = &ops, .node = n, .s = n->text, .n = strlen(n->text), .depth = &oc->depth};
    val_t v = {0};
    n->flags |= YT_F_BUSY;
    oc->depth++;
    int rc = config_value(&p, &v);
    oc->depth--;
    n->flags &= ~YT_F_BUSY;
    if (rc != 0) {
        if (p.why[0] != '\0') {
            interp_error(oc, n, p.syntax ? "malformed " : "", p.why);
        }
        return rc;
    }
    if (v.owned) {
        v.node->from = n;
    }
    n->ref = v.node;
    n->flags |= YT_F_REF | (v.owned ? YT_F_REFOWN : 0);
    *out = v.node;
    return 0;
}

int oc_child(oc_t *oc, yt_node_t *map, const char *key, yt_node_t **raw)
{
    yt_node_t *v;
    int rc = oc_resolve(oc, map, &v);
    if (rc != 0) {
        return rc;
    }
    *raw = yt_map_get(v, key);
    return 0;
}

int oc_lookup(oc_t *oc, yt_node_t *base, const char *path, yt_node_t **raw)
{
    yt_node_t *cur = base ? base : oc->root;
    char seg[128];
    while (*path != '\0' && cur != NULL) {
        size_t len = strcspn(path, ".");
        if (len >= sizeof(seg)) {
            *raw = NULL;
            return 0;
        }
        memcpy(seg, path, len);
        seg[len] = '\0';
        int rc = oc_child(oc, cur, seg, &cur);
        if (rc != 0) {
            return rc;
        }
        path += len + (path[len] == '.');
    }
    *raw = cur;
    return 0;
}

int oc_select(oc_t *oc, const char *path, yt_node_t **val)
{
    yt_node_t *raw = NULL, *v = NULL;
    int rc = oc_lookup(oc, NULL, path, &raw);
    if (rc == 0 && raw != NULL && !oc_is_missing(raw)) {
        rc = oc_resolve(oc, raw, &v);
        if (rc == 0 && oc_is_missing(v)) {
            v = NULL;
        }
    }
    *val = rc == 0 ? v : NULL;
    return rc;
}

void oc_forget(yt_node_t *n)
{
    if ((n->flags & YT_F_REFOWN) && n->ref != NULL) {
        yt_free(n->ref);
    }
    n->ref = NULL;
    n->flags &= ~(YT_F_REF | YT_F_REFOWN | YT_F_BUSY);
    for (size_t i = 0; i < n->n; i++) {
        oc_forget(n->type == YT_SEQ ? n->items[i] : n->pairs[i].value);
    }
}

/* ---- public: override values ---------------------------------------------------- */

int oc_parse_value(const char *origin, const char *text, yt_node_t **out, char *reason,
                   size_t reasonlen)
{
    ip_t p = {.ops = &ops, .origin = origin, .s = text, .n = strlen(text)};
    p.depth = &p.own_depth;
    val_t v = {0};
    int rc;
    ocp_skip_ws(&p);
    if (p.i == p.n) {
        *out = ocp_mk(&p, YT_STR, "", 0); /* `key=` sets an empty string */
        return *out ? 0 : PROFD_ENOMEM;
    }
    rc = ocp_element(&p, &v);
    if (rc == 0) {
        ocp_skip_ws(&p);
        if (p.i < p.n) {
            rc = p.s[p.i] == ','
                     ? ocp_why(&p, /* config_loader_impl.py:64-78, from the shell */
                               "Ambiguous value for argument '%s': 1. To use it as a list, use "
                               "key=[value1,value2] 2. To use it as string, quote the value: "
                               "key=\\'value1,value2\\' 3. To sweep over it, add --multirun to "
                               "your command line",
                               origin)
                     : ocp_syn(&p, "unexpected '%c' at offset %zu", p.s[p.i], p.i);
            ocp_val_drop(&v);
        }
    }
    if (rc != 0) {
        snprintf(reason, reasonlen, "%s", p.why);
        return p.why[0] ? PROFD_ECONFIG : PROFD_ENOMEM;
    }
    ocp_set_origin_tree(v.node, origin);
    *out = v.node;
    return 0;
}
