// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra overrides and OmegaConf interpolations over a yamltree.
 *
 * One small recursive-descent parser reads both grammars: the value of a
 * Hydra override ("keep" mode: `${...}` is kept as text, resolved later like
 * any string of the file) and the inside of an OmegaConf interpolation
 * ("eval" mode: nested interpolations are evaluated as they are read).
 */
#include "omegaconf.h"

#include <limits.h>
#include <math.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hydra_func.h"
#include "profd/errors.h"

/* ---- a growable string ----------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool oom, over;
} sbuf_t;

static void sb_add(sbuf_t *b, const char *s, size_t n)
{
    if (b->oom || b->over) {
        return;
    }
    if (b->n + n + 1 > OC_MAX_STR + 1) {
        b->over = true;
        return;
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) {
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf_t *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_chr(sbuf_t *b, char c)
{
    sb_add(b, &c, 1);
}

/* ---- grammar primitives: INT, FLOAT, BOOL, NULL -------------------------------- */

/* The bytes of the UTF-8 character at s (1 for a stray byte). */
static size_t utf8_len(const char *s, size_t n)
{
    unsigned char c = (unsigned char)s[0];
    size_t k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return k <= n ? k : 1;
}

static bool isdig(char c)
{
    return c >= '0' && c <= '9';
}

/* DIGIT ('_'? DIGIT)* */
static const char *m_digits(const char *p)
{
    if (!isdig(*p)) {
        return NULL;
    }
    for (p++;;) {
        if (isdig(*p)) {
            p++;
        } else if (*p == '_' && isdig(p[1])) {
            p += 2;
        } else {
            return p;
        }
    }
}

/* '0' | [1-9] ('_'? DIGIT)* */
static const char *m_uint(const char *p)
{
    if (*p == '0') {
        return p + 1;
    }
    return (*p >= '1' && *p <= '9') ? m_digits(p) : NULL;
}

/* INT_UNSIGNED '.' | INT_UNSIGNED? '.' DIGIT ('_'? DIGIT)* */
static const char *m_point(const char *p)
{
    const char *q = m_uint(p);
    if (q != NULL && *q == '.') {
        const char *r = m_digits(q + 1);
        return r ? r : q + 1;
    }
    return (q == NULL && *p == '.') ? m_digits(p + 1) : NULL;
}

static bool m_float(const char *s)
{
    if (*s == '+' || *s == '-') {
        s++;
    }
    if (strcasecmp(s, "inf") == 0 || strcasecmp(s, "nan") == 0) {
        return true;
    }
    const char *p = m_point(s);
    const char *e = p ? p : m_uint(s);
    if (e != NULL && (*e == 'e' || *e == 'E')) {
        e++;
        if (*e == '+' || *e == '-') {
            e++;
        }
        e = m_digits(e);
        return e != NULL && *e == '\0';
    }
    return p != NULL && *p == '\0';
}

/* Type a node's text by the grammar (a single INT/FLOAT/BOOL/NULL token). */
static void gram_type(yt_node_t *n)
{
    const char *s = n->text;
    const char *d = s + (*s == '+' || *s == '-');
    const char *e = m_uint(d);
    char buf[128];
    size_t k = 0;

    n->type = YT_STR;
    if (strcasecmp(s, "null") == 0) {
        n->type = YT_NULL;
        return;
    }
    if (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0) {
        n->type = YT_BOOL;
        n->v.b = (s[0] == 't' || s[0] == 'T');
        return;
    }
    if (strlen(s) >= sizeof(buf)) {
        return;
    }
    for (const char *q = s; *q; q++) {
        if (*q != '_') {
            buf[k++] = *q;
        }
    }
    buf[k] = '\0';
    if (e != NULL && *e == '\0') {
        char *end;
        long long v = strtoll(buf, &end, 10);
        if (v != LLONG_MAX && v != LLONG_MIN) {
            n->type = YT_INT;
            n->v.i = v;
            return;
        }
        n->type = YT_FLOAT; /* beyond int64: keep the magnitude */
        n->v.f = strtod(buf, NULL);
        return;
    }
    if (m_float(s)) {
        n->type = YT_FLOAT;
        n->v.f = strtod(buf, NULL);
    }
}

/* ---- Python's str() / repr() of a value (string concatenation) ------------- */

static void py_float(sbuf_t *b, double v)
{
    char buf[64], mant[32];
    int prec, exp10;
    if (isnan(v)) {
        sb_str(b, "nan");
        return;
    }
    if (isinf(v)) {
        sb_str(b, v < 0 ? "-inf" : "inf");
        return;
    }
    for (prec = 1; prec < 17; prec++) { /* shortest text that reads back */
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
        if (strtod(buf, NULL) == v) {
            break;
        }
    }
    snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
    /* buf: [-]d[.ddd]e[+-]XX -> digits and exponent */
    char *e = strchr(buf, 'e');
    exp10 = atoi(e + 1);
    *e = '\0';
    size_t k = 0;
    for (char *q = buf; *q; q++) {
        if (isdig(*q)) {
            mant[k++] = *q;
        }
    }
    mant[k] = '\0';
    if (signbit(v)) {
        sb_chr(b, '-');
    }
    if (exp10 >= -5 + 1 && exp10 < 16) { /* fixed notation, like repr() */
        if (exp10 < 0) {
            sb_str(b, "0.");
            for (int i = -1; i > exp10; i--) {
                sb_chr(b, '0');
            }
            sb_str(b, mant);
        } else {
            for (int i = 0; i <= exp10 || i < (int)k; i++) {
                if (i == exp10 + 1) {
                    sb_chr(b, '.');
                }
                sb_chr(b, i < (int)k ? mant[i] : '0');
            }
            if ((int)k <= exp10 + 1) {
                sb_str(b, ".0");
            }
        }
    } else {
        sb_chr(b, mant[0]);
        if (k > 1) {
            sb_chr(b, '.');
            sb_str(b, mant + 1);
        }
        snprintf(buf, sizeof(buf), "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
        sb_str(b, buf);
    }
}

void oc_float_repr(double v, char *buf, size_t len)
{
    sbuf_t b = {0};
    py_float(&b, v);
    snprintf(buf, len, "%s", b.p && !b.oom ? b.p : "nan");
    free(b.p);
}

static void py_str(sbuf_t *b, const yt_node_t *v, bool repr)
{
    char num[32];
    switch (v->type) {
    case YT_NULL:
        sb_str(b, "None");
        break;
    case YT_BOOL:
        sb_str(b, v->v.b ? "True" : "False");
        break;
    case YT_INT:
        snprintf(num, sizeof(num), "%lld", (long long)v->v.i);
        sb_str(b, num);
        break;
    case YT_FLOAT:
        py_float(b, v->v.f);
        break;
    case YT_STR:
        if (!repr) {
            sb_str(b, v->text);
        } else {
            char q = (strchr(v->text, '\'') && !strchr(v->text, '"')) ? '"' : '\'';
            sb_chr(b, q);
            for (const char *s = v->text; *s; s++) {
                if (*s == q || *s == '\\') {
                    sb_chr(b, '\\');
                }
                sb_chr(b, *s);
            }
            sb_chr(b, q);
        }
        break;
    case YT_SEQ:
        sb_chr(b, '[');
        for (size_t i = 0; i < v->n; i++) {
            sb_str(b, i ? ", " : "");
            py_str(b, v->items[i]->flags & YT_F_REF ? v->items[i]->ref : v->items[i], true);
        }
        sb_chr(b, ']');
        break;
    case YT_MAP:
        sb_chr(b, '{');
        for (size_t i = 0; i < v->n; i++) {
            yt_node_t k = {.type = YT_STR, .text = v->pairs[i].key};
            const yt_node_t *x = v->pairs[i].value;
            sb_str(b, i ? ", " : "");
            py_str(b, &k, true);
            sb_str(b, ": ");
            py_str(b, x->flags & YT_F_REF ? x->ref : x, true);
        }
        sb_chr(b, '}');
        break;
    }
}

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

/* ---- the element parser -------------------------------------------------------- */

typedef struct val {
    yt_node_t *node;
    bool owned;
} val_t;

typedef struct ip {
    oc_t *oc;           /* eval mode; NULL in keep mode */
    yt_node_t *node;    /* eval: the string being resolved */
    const char *origin; /* keep: the override text */
    const char *s;
    size_t i, n;
    int *depth; /* shared with the resolver in eval mode */
    int own_depth;
    bool syntax;   /* `why` is a syntax error of this text */
    char why[512]; /* the reason, when the error is about this text */
    int in_call;   /* keep mode: inside a function's arguments */
} ip_t;

static int why(ip_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int syn(ip_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int why(ip_t *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof(p->why), fmt, ap);
    va_end(ap);
    p->syntax = false;
    return PROFD_ECONFIG;
}

static int syn(ip_t *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof(p->why), fmt, ap);
    va_end(ap);
    p->syntax = true;
    return PROFD_ECONFIG;
}

static int depth_in(ip_t *p)
{
    if (++*p->depth > OC_MAX_DEPTH) {
        --*p->depth;
        return why(p, "interpolations and brackets nested deeper than %d levels", OC_MAX_DEPTH);
    }
    return 0;
}

static void depth_out(ip_t *p)
{
    --*p->depth;
}

static int oom(ip_t *p)
{
    if (p->oc != NULL) {
        snprintf(p->oc->err, p->oc->errlen, "%s: out of memory", p->oc->file);
    }
    p->why[0] = '\0';
    return PROFD_ENOMEM;
}

static void val_drop(val_t *v)
{
    if (v->owned) {
        yt_free(v->node);
    }
    v->node = NULL;
    v->owned = false;
}

static yt_node_t *mk(ip_t *p, yt_type_t t, const char *text, size_t len)
{
    yt_node_t *n;
    if (p->oc != NULL && ++p->oc->created > OC_MAX_NODES) {
        why(p, "more than %d values computed", OC_MAX_NODES);
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
        oom(p);
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

/* nodes failed to build: mk() already set the reason or the OOM message */
static int mk_failed(ip_t *p)
{
    return p->why[0] ? PROFD_ECONFIG : PROFD_ENOMEM;
}

static void skip_ws(ip_t *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t')) {
        p->i++;
    }
}

static int interp(ip_t *p, val_t *out);
static int element(ip_t *p, val_t *out);

static void set_origin_tree(yt_node_t *n, const char *origin)
{
    n->origin = origin;
    for (size_t i = 0; i < n->n; i++) {
        set_origin_tree(n->type == YT_SEQ ? n->items[i] : n->pairs[i].value, origin);
    }
}

/* A value in a container: computed nodes move in, tree nodes are copied. */
static int adopt(ip_t *p, val_t *v, yt_node_t **out)
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
            return why(p, "more than %d values computed", OC_MAX_NODES);
        }
    }
    *out = yt_copy(v->node);
    if (*out == NULL) {
        return oom(p);
    }
    (*out)->flags |= YT_F_FINAL;
    (*out)->line = p->oc ? p->node->line : 0;
    (*out)->col = p->oc ? p->node->col : 0;
    (*out)->origin = p->oc ? p->node->origin : p->origin;
    return 0;
}

/* `[a, b]` (list != NULL) or the arguments of a resolver (args != NULL),
 * up to `close`. Missing elements are empty strings, as in OmegaConf. */
static int sequence(ip_t *p, char close, yt_node_t *list, val_t *args, size_t *nargs, size_t max)
{
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        return 0;
    }
    for (;;) {
        val_t v = {0};
        int rc;
        skip_ws(p);
        if (p->i >= p->n) {
            return syn(p, "missing '%c'", close);
        }
        if (p->s[p->i] == ',' || p->s[p->i] == close) {
            if ((v.node = mk(p, YT_STR, "", 0)) == NULL) {
                return mk_failed(p);
            }
            v.owned = true;
        } else if ((rc = element(p, &v)) != 0) {
            return rc;
        }
        if (list != NULL) {
            yt_node_t *x;
            if ((rc = adopt(p, &v, &x)) != 0) {
                val_drop(&v);
                return rc;
            }
            if (yt_seq_push(list, x) != 0) {
                return oom(p);
            }
        } else {
            if (*nargs >= max) {
                val_drop(&v);
                return why(p, "too many arguments");
            }
            args[(*nargs)++] = v;
        }
        skip_ws(p);
        if (p->i >= p->n) {
            return syn(p, "missing '%c'", close);
        }
        if (p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->s[p->i] == close) {
            p->i++;
            return 0;
        }
        return syn(p, "expected ',' or '%c' at offset %zu", close, p->i);
    }
}

static int dict(ip_t *p, yt_node_t *map)
{
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == '}') {
        p->i++;
        return 0;
    }
    for (;;) {
        skip_ws(p);
        size_t k0 = p->i;
        while (p->i < p->n && !strchr(":,{}[]'\"$", p->s[p->i])) {
            p->i++;
        }
        size_t k1 = p->i;
        while (k1 > k0 && (p->s[k1 - 1] == ' ' || p->s[k1 - 1] == '\t')) {
            k1--;
        }
        if (k1 == k0 || p->i >= p->n || p->s[p->i] != ':') {
            return syn(p, "expected 'key: value' in '{...}'");
        }
        p->i++;
        char key[256];
        snprintf(key, sizeof(key), "%.*s", (int)(k1 - k0), p->s + k0);
        val_t v = {0};
        yt_node_t *x;
        int rc = element(p, &v);
        if (rc == 0 && (rc = adopt(p, &v, &x)) != 0) {
            val_drop(&v);
        }
        if (rc != 0) {
            return rc;
        }
        if (yt_map_put(map, key, 0, 0, x) != 0) {
            return oom(p);
        }
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == '}') {
            p->i++;
            return 0;
        }
        return syn(p, "missing '}'");
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
            rc = syn(p, "missing closing %c", q);
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
                    sb_chr(&b, '\\');
                }
                p->i += k;
                if (k % 2 == 1) {
                    sb_chr(&b, q);
                    p->i++;
                }
            } else {
                sb_add(&b, p->s + p->i, k);
                p->i += k;
            }
        } else if (c == '\\' && p->i + 1 < p->n &&
                   (p->s[p->i + 1] == q || p->s[p->i + 1] == '\\')) {
            sb_chr(&b, p->s[p->i + 1]);
            p->i += 2;
        } else if (c == '$' && p->i + 1 < p->n && p->s[p->i + 1] == '{' && p->oc != NULL) {
            val_t v = {0};
            if ((rc = interp(p, &v)) != 0) {
                break;
            }
            py_str(&b, v.node, false);
            val_drop(&v);
        } else {
            sb_chr(&b, c);
            p->i++;
        }
    }
    if (rc == 0 && (b.oom || b.over)) {
        rc = b.oom ? oom(p) : why(p, "string longer than %d bytes", OC_MAX_STR);
    }
    if (rc == 0) {
        out->node = mk(p, YT_STR, b.p ? b.p : "", b.n);
        out->owned = true;
        if (out->node == NULL) {
            rc = mk_failed(p);
        } else {
            out->node->flags |= YT_F_QUOTED | (p->oc == NULL ? YT_F_QSTR : 0);
        }
    }
    free(b.p);
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
            sb_add(b, p->s + start, p->i - start);
            return 0;
        }
        p->i++;
    }
    return syn(p, "missing '}' of '${'");
}

/* Hydra's override lexer in VALUE_MODE (hydra 1.3.2
 * hydra/grammar/OverrideLexer.g4): an unquoted value is made of letters,
 * digits, `_`, UNQUOTED_CHAR [/-\\+.$%*@?|], ':', blanks, ESC and
 * `${...}`; '=' '(' ')' '[' '{' and quotes are tokens of their own that
 * the parser refuses there; anything else (`~`, `!`, `#`, a non-ASCII
 * character...) matches no token. The messages are Hydra's
 * (core/override_parser/overrides_parser.py:83-99). `len`: the text
 * gathered so far. */
static int hydra_char(ip_t *p, size_t len)
{
    unsigned char c = (unsigned char)p->s[p->i];
    bool top = *p->depth == 1;
    if (c < 0x80 && (isalnum(c) || strchr("_/-\\+.$%*@?|: \t", c) != NULL)) {
        return 0;
    }
    if (c == '=' || c == '(' || c == ')' || c == '[' || c == '{') {
        if (top) {
            return syn(p, "mismatched input '%c' expecting <EOF>", c);
        }
        return syn(p, "no viable alternative at input '%.*s'", (int)(p->i + 1), p->s);
    }
    if (c == '\'' || c == '"') {
        size_t e = p->i + 1, k = 0;
        for (; e < p->n && (p->s[e] != (char)c || k % 2 == 1); e++) {
            k = p->s[e] == '\\' ? k + 1 : 0;
        }
        if (e < p->n && len > 0) {
            return syn(p, "extraneous input '%.*s' expecting %s", (int)(e + 1 - p->i), p->s + p->i,
                       top ? "<EOF>" : "{',', ']', '}'}");
        }
        if (e < p->n) {
            return 0; /* a quoted value: the caller's */
        }
    }
    size_t col = p->origin ? (size_t)(p->s - p->origin) : 0;
    for (size_t j = 0; j < p->i; j++) {
        col += ((unsigned char)p->s[j] & 0xC0) != 0x80; /* characters, not bytes */
    }
    return syn(p, "LexerNoViableAltException: %s (column %zu: '%.*s')",
               p->origin ? p->origin : p->s, col + 1, (int)utf8_len(p->s + p->i, p->n - p->i),
               p->s + p->i);
}

/* The length of `NAME (` at s when a Hydra function call starts there
 * (OverrideParser.g4 function: ID POPEN, POPEN = WS? '(' WS?); 0 if none. */
static size_t hy_function_at(const char *s, size_t n)
{
    size_t i = 0;
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) {
        return 0;
    }
    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-')) {
        i++;
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t')) {
        i++;
    }
    return i < n && s[i] == '(' ? i + 1 : 0;
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
            size_t before = b.n;
            if ((rc = interp(p, &v)) != 0) {
                break;
            }
            ninterp++;
            py_str(&b, v.node, false);
            if (ninterp == 1 && b.p != NULL && strspn(b.p, " \t") >= before) {
                single = v; /* may be the whole value */
                single_at = b.n;
            } else {
                val_drop(&v);
            }
            continue;
        }
        if (c == '\\' && p->i + 1 < p->n && strchr("\\()[]{}:=, \t", p->s[p->i + 1])) {
            sb_chr(&b, p->s[p->i + 1]);
            p->i += 2;
            plain = false;
            continue;
        }
        if (p->oc == NULL && (rc = hydra_char(p, b.n)) != 0) {
            break;
        }
        if (c == '[' || c == '{' || c == '\'' || c == '"') {
            rc = syn(p, "unexpected '%c' at offset %zu", c, p->i);
            break;
        }
        sb_chr(&b, c);
        p->i++;
    }
    if (rc == 0 && (b.oom || b.over)) {
        rc = b.oom ? oom(p) : why(p, "string longer than %d bytes", OC_MAX_STR);
    }
    if (rc == 0 && ninterp == 1 && single.node != NULL && b.p != NULL &&
        strspn(b.p + single_at, " \t") == b.n - single_at) {
        *out = single; /* `${x}` alone keeps the type of x */
        single.node = NULL;
        single.owned = false;
    } else if (rc == 0) {
        size_t s0 = 0, s1 = b.n;
        while (s0 < s1 && (b.p[s0] == ' ' || b.p[s0] == '\t')) {
            s0++;
        }
        while (s1 > s0 && (b.p[s1 - 1] == ' ' || b.p[s1 - 1] == '\t')) {
            s1--;
        }
        out->node = mk(p, YT_STR, b.p ? b.p + s0 : "", s1 - s0);
        out->owned = true;
        if (out->node == NULL) {
            rc = mk_failed(p);
        } else if (plain) {
            gram_type(out->node);
        }
    }
    val_drop(&single);
    free(b.p);
    return rc;
}

/* NAME(ARG, name=ARG...) in an override value (OverrideParser.g4 function),
 * evaluated by hydra_func.c; a sweep is refused as Hydra refuses it
 * without --multirun (config_loader_impl.py:64-83). */
static int hydra_call(ip_t *p, val_t *out)
{
    size_t start = p->i,
           nlen = strspn(p->s + p->i, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                                      "VWXYZ0123456789_-");
    char name[64], names_buf[HY_FN_MAX_ARGS][64], call[200];
    yt_node_t *args[HY_FN_MAX_ARGS];
    const char *names[HY_FN_MAX_ARGS];
    size_t n = 0;
    int rc = 0;
    snprintf(name, sizeof(name), "%.*s", (int)nlen, p->s + p->i);
    p->i += hy_function_at(p->s + p->i, p->n - p->i);
    skip_ws(p);
    bool kw = false;
    while (rc == 0 && p->i < p->n && p->s[p->i] != ')') {
        if (n > 0) {
            if (p->s[p->i] != ',') {
                rc = syn(p, "expected ',' or ')' at offset %zu", p->i);
                break;
            }
            p->i++;
            skip_ws(p);
        }
        if (n >= HY_FN_MAX_ARGS) {
            rc = why(p, "too many arguments");
            break;
        }
        /* argName: ID EQUAL (EQUAL is WS? '=' WS? in VALUE_MODE) */
        size_t k =
            strspn(p->s + p->i, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
        size_t e = p->i + k;
        while (e < p->n && (p->s[e] == ' ' || p->s[e] == '\t')) {
            e++;
        }
        names[n] = NULL;
        if (k > 0 && k < sizeof(names_buf[0]) && !isdigit((unsigned char)p->s[p->i]) && e < p->n &&
            p->s[e] == '=') {
            snprintf(names_buf[n], sizeof(names_buf[n]), "%.*s", (int)k, p->s + p->i);
            names[n] = names_buf[n];
            p->i = e + 1;
            kw = true;
        } else if (kw) { /* overrides_visitor.py:225-226 */
            rc = why(p, "positional argument follows keyword argument");
            break;
        }
        val_t v = {0};
        p->in_call++;
        rc = element(p, &v);
        p->in_call--;
        if (rc == 0 && (rc = adopt(p, &v, &args[n])) != 0) {
            val_drop(&v);
        }
        if (rc == 0) {
            n++;
        }
        skip_ws(p);
    }
    if (rc == 0 && p->i >= p->n) {
        rc = syn(p, "missing ')'");
    }
    hy_fn_result_t kind = HY_FN_VALUE;
    if (rc == 0) {
        p->i++;
        snprintf(call, sizeof(call), "%.*s", (int)(p->i - start), p->s + start);
        char msg[sizeof(p->why)] = "";
        rc = hy_fn_call(name, call, args, names, n, &kind, &out->node, msg, sizeof(msg));
        if (rc == PROFD_ECONFIG) {
            why(p, "%s", msg);
        } else if (rc != 0) {
            rc = oom(p);
        }
    }
    for (size_t i = 0; i < n; i++) {
        yt_free(args[i]);
    }
    if (rc == 0 && kind == HY_FN_SIMPLE_SWEEP) {
        return why(p,
                   "Ambiguous value for argument '%s': 1. To use it as a list, use "
                   "key=[value1,value2] 2. To use it as string, quote the value: "
                   "key=\\'value1,value2\\' 3. To sweep over it, add --multirun to your "
                   "command line",
                   p->origin ? p->origin : p->s);
    }
    if (rc == 0 && kind == HY_FN_SWEEP) {
        return why(p, "Sweep parameters '%s' requires --multirun", p->origin ? p->origin : p->s);
    }
    if (rc == 0) {
        out->owned = true;
        set_origin_tree(out->node, p->origin);
    }
    return rc;
}

static int element(ip_t *p, val_t *out)
{
    int rc;
    skip_ws(p);
    if (p->i >= p->n) {
        return primitive(p, out);
    }
    if ((rc = depth_in(p)) != 0) {
        return rc;
    }
    char c = p->s[p->i];
    if (c == '[' || c == '{') {
        p->i++;
        out->node = mk(p, c == '[' ? YT_SEQ : YT_MAP, NULL, 0);
        if (out->node == NULL) {
            return mk_failed(p);
        }
        out->owned = true;
        rc = c == '[' ? sequence(p, ']', out->node, NULL, NULL, 0) : dict(p, out->node);
        if (rc != 0) {
            val_drop(out);
        }
    } else if (p->oc == NULL && hy_function_at(p->s + p->i, p->n - p->i) > 0) {
        rc = hydra_call(p, out);
    } else if (c == '\'' || c == '"') {
        rc = quoted(p, out);
        size_t end = p->i;
        skip_ws(p);
        if (rc == 0 && p->oc == NULL && *p->depth == 1 && p->i > end && p->i == p->n) {
            /* QUOTED_VALUE is a primitive alone (OverrideParser.g4) */
            val_drop(out);
            return syn(p, "extraneous input '%.*s' expecting <EOF>", (int)(p->i - end), p->s + end);
        }
        if (rc == 0 && p->i < p->n && !strchr(p->in_call > 0 ? ",]})" : ",]}", p->s[p->i])) {
            val_drop(out);
            rc = syn(p, "unexpected text after a quoted string");
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
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && isdig(c));
}

typedef struct kpath {
    int dots;
    size_t n, used;
    char buf[512];
    char *seg[64];
} kpath_t;

/* "a.b[0].c", ".x", "..y" -> kpath */
static int kpath_parse(ip_t *p, const char *s, kpath_t *k)
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
                return syn(p, "missing ']' in key '%s'", s);
            }
            len = (size_t)(e - s - 1);
            s++;
        } else {
            len = strcspn(s, ".[");
        }
        if (len == 0 || k->used + len + 1 > sizeof(k->buf) ||
            k->n >= sizeof(k->seg) / sizeof(k->seg[0])) {
            return syn(p, "malformed key");
        }
        k->seg[k->n] = k->buf + k->used;
        memcpy(k->seg[k->n], s, len);
        k->seg[k->n++][len] = '\0';
        k->used += len + 1;
        s += len + br;
        if (*s == '.') {
            s++;
            if (*s == '\0') {
                return syn(p, "malformed key");
            }
        }
    }
    if (k->n == 0) {
        return syn(p, "empty key");
    }
    return 0;
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

/* Find the raw node a key path names; *raw NULL when missing. */
static int kpath_find(ip_t *p, const kpath_t *k, yt_node_t **raw)
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
            return why(p, "relative key goes above the root");
        }
    }
    for (size_t i = 0; i < k->n; i++) {
        yt_node_t *v;
        if ((rc = oc_resolve(oc, cur, &v)) != 0) {
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

static bool is_missing_marker(const yt_node_t *n)
{
    return oc_is_missing(n);
}

static int resolve_raw(ip_t *p, yt_node_t *raw, val_t *out)
{
    int rc = oc_resolve(p->oc, raw, &out->node);
    if (rc != 0) {
        p->why[0] = '\0'; /* the message is about the target */
        return rc;
    }
    out->owned = false;
    return 0;
}

static int null_value(ip_t *p, val_t *out)
{
    if ((out->node = mk(p, YT_NULL, "null", 4)) == NULL) {
        return mk_failed(p);
    }
    out->owned = true;
    return 0;
}

/* ${oc.select:KEY[,DEFAULT]}: KEY absent gives DEFAULT (null without one);
 * KEY `???` gives null. */
static int oc_select_call(ip_t *p, val_t *args, size_t nargs, val_t *out)
{
    kpath_t k;
    yt_node_t *raw;
    sbuf_t b = {0};
    int rc;
    if (nargs < 1 || nargs > 2) {
        return why(p, "oc.select takes a key and an optional default");
    }
    py_str(&b, args[0].node, false);
    if (b.oom) {
        free(b.p);
        return oom(p);
    }
    rc = kpath_parse(p, b.p ? b.p : "", &k);
    free(b.p);
    if (rc == 0) {
        rc = kpath_find(p, &k, &raw);
    }
    if (rc != 0) {
        return rc;
    }
    if (raw == NULL && nargs == 2) {
        *out = args[1];
        args[1].node = NULL;
        args[1].owned = false;
        return 0;
    }
    if (raw == NULL || is_missing_marker(raw)) {
        return null_value(p, out);
    }
    return resolve_raw(p, raw, out);
}

/* ${oc.env:VAR[,DEFAULT]}: the variable's value (a string), else DEFAULT
 * as str() writes it (null stays null), else an error -- OmegaConf 2.3's
 * resolvers/oc/__init__.py:env. */
static int oc_env_call(ip_t *p, val_t *args, size_t nargs, val_t *out)
{
    sbuf_t name = {0}, def = {0};
    int rc = 0;
    if (p->oc->env == NULL) {
        return why(p, "oc.env is not read here (the daemon's environment is not the job's): "
                      "profctl apply resolves it from the caller's environment");
    }
    if (nargs < 1 || nargs > 2) {
        return why(p, "oc.env takes a variable name and an optional default");
    }
    py_str(&name, args[0].node, false);
    const char *v = name.oom ? NULL : p->oc->env(p->oc->env_ctx, name.p ? name.p : "");
    if (name.oom) {
        rc = oom(p);
    } else if (v != NULL) {
        out->node = mk(p, YT_STR, v, strlen(v));
        rc = out->node ? 0 : mk_failed(p);
        out->owned = true;
    } else if (nargs == 1) {
        rc = why(p, "Environment variable '%s' not found", name.p ? name.p : "");
    } else if (args[1].node->type == YT_NULL) {
        rc = null_value(p, out);
    } else {
        py_str(&def, args[1].node, false);
        out->node = def.oom ? NULL : mk(p, YT_STR, def.p ? def.p : "", def.n);
        rc = out->node ? 0 : def.oom ? oom(p) : mk_failed(p);
        out->owned = true;
    }
    free(name.p);
    free(def.p);
    return rc;
}

/* ${oc.decode:STR}: STR read as one element of the grammar, interpolations
 * resolved; null stays null (OmegaConf 2.3 resolvers/oc/__init__.py:41-58). */
static int oc_decode_call(ip_t *p, val_t *args, size_t nargs, val_t *out)
{
    if (nargs != 1) {
        return why(p, "oc.decode takes one argument");
    }
    const yt_node_t *a = args[0].node;
    if (a->type == YT_NULL) {
        return null_value(p, out);
    }
    if (a->type != YT_STR) {
        return why(p,
                   "TypeError: `oc.decode` can only take strings or None as input, but `%s` is "
                   "of type %s",
                   a->text ? a->text : "",
                   a->type == YT_INT     ? "int"
                   : a->type == YT_FLOAT ? "float"
                   : a->type == YT_BOOL  ? "bool"
                   : a->type == YT_SEQ   ? "ListConfig"
                                         : "DictConfig");
    }
    ip_t d = {.oc = p->oc, .node = p->node, .s = a->text, .n = strlen(a->text), .depth = p->depth};
    int rc = element(&d, out);
    skip_ws(&d);
    if (rc == 0 && d.i < d.n) {
        val_drop(out);
        rc = syn(&d, "oc.decode: unexpected '%c' at offset %zu of '%s'", d.s[d.i], d.i, d.s);
    }
    if (rc != 0 && d.why[0] != '\0') {
        p->syntax = d.syntax;
        snprintf(p->why, sizeof(p->why), "%s", d.why);
    }
    return rc;
}

static int call_resolver(ip_t *p, const char *name, val_t *args, size_t nargs, val_t *out)
{
    if (strcmp(name, "oc.select") == 0) {
        return oc_select_call(p, args, nargs, out);
    }
    if (strcmp(name, "oc.env") == 0) {
        return oc_env_call(p, args, nargs, out);
    }
    if (strcmp(name, "oc.decode") == 0) {
        return oc_decode_call(p, args, nargs, out);
    }
    if (p->oc->resolvers != NULL) {
        yt_node_t *a[8];
        char msg[sizeof(p->why)] = "";
        for (size_t i = 0; i < nargs && i < 8; i++) {
            a[i] = args[i].node;
        }
        int rc = p->oc->resolvers(p->oc->resolvers_ctx, name, a, nargs, &out->node, &out->owned,
                                  msg, sizeof(msg));
        if (rc == PROFD_ECONFIG) {
            return why(p, "%s", msg);
        }
        if (rc == PROFD_ENOMEM) {
            return oom(p);
        }
        if (rc == 0 && !out->owned) {
            return resolve_raw(p, out->node, out); /* a node of the resolver's tree */
        }
        if (rc == 0) {
            if (out->owned) {
                set_origin_tree(out->node, p->node->origin);
                out->node->line = p->node->line;
                out->node->col = p->node->col;
                out->node->flags |= YT_F_FINAL;
            }
            return 0;
        }
    }
    return why(p, "unsupported resolver '%s'", name);
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
        rc = call_resolver(p, name, args, nargs, out);
    }
    for (size_t a = 0; a < nargs; a++) {
        val_drop(&args[a]);
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
            return syn(p, "missing '}'");
        }
        char c = p->s[p->i];
        if (c == '}') {
            p->i++;
            break;
        }
        if (c == ' ' || c == '\t') {
            skip_ws(p);
            if (p->i < p->n && p->s[p->i] != '}') {
                rc = syn(p, "unexpected space in a key");
            }
            continue;
        }
        if (c == '$' && p->i + 1 < p->n && p->s[p->i + 1] == '{') {
            val_t v = {0};
            if ((rc = interp(p, &v)) == 0) {
                py_str(key, v.node, false);
                val_drop(&v);
            }
            continue;
        }
        if (strchr("\\{()'\":", c) != NULL) {
            return syn(p, "unexpected '%c' in a key", c);
        }
        sb_chr(key, c);
        p->i++;
    }
    if (rc == 0 && key->oom) {
        rc = oom(p);
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
        if ((rc = kpath_parse(p, key.p ? key.p : "", &kp)) == 0 &&
            (rc = kpath_find(p, &kp, &raw)) == 0) {
            kpath_text(&kp, txt, sizeof(txt));
            if (raw == NULL) {
                rc = why(p, "key '%s' not found", txt);
            } else if (is_missing_marker(raw)) {
                rc = why(p, "Missing mandatory value: %s", txt);
            } else {
                rc = resolve_raw(p, raw, out);
            }
        }
    }
    free(key.p);
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
    skip_ws(p);
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
                    sb_chr(&b, '\\');
                }
                pieces++;
                if (nb % 2) { /* \${ : a literal "${" */
                    sb_str(&b, "${");
                    p->i = k + 2;
                } else {
                    p->i = k;
                }
                continue;
            }
            sb_add(&b, s + i, k - i);
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
                free(b.p);
                return 0;
            }
            py_str(&b, v.node, false);
            val_drop(&v);
            pieces++;
            continue;
        }
        sb_chr(&b, s[i]);
        pieces++;
        p->i++;
    }
    if (rc == 0 && (b.oom || b.over)) {
        rc = b.oom ? oom(p) : why(p, "string longer than %d bytes", OC_MAX_STR);
    }
    if (rc == 0) {
        out->node = mk(p, YT_STR, b.p ? b.p : "", b.n);
        out->owned = true;
        if (out->node == NULL) {
            rc = mk_failed(p);
        }
    }
    free(b.p);
    return rc;
}

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
    ip_t p = {.oc = oc, .node = n, .s = n->text, .n = strlen(n->text), .depth = &oc->depth};
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
    ip_t p = {.origin = origin, .s = text, .n = strlen(text)};
    p.depth = &p.own_depth;
    val_t v = {0};
    int rc;
    skip_ws(&p);
    if (p.i == p.n) {
        *out = mk(&p, YT_STR, "", 0); /* `key=` sets an empty string */
        return *out ? 0 : PROFD_ENOMEM;
    }
    rc = element(&p, &v);
    if (rc == 0) {
        skip_ws(&p);
        if (p.i < p.n) {
            rc = p.s[p.i] == ','
                     ? why(&p, /* config_loader_impl.py:64-78, from the shell */
                           "Ambiguous value for argument '%s': 1. To use it as a list, use "
                           "key=[value1,value2] 2. To use it as string, quote the value: "
                           "key=\\'value1,value2\\' 3. To sweep over it, add --multirun to "
                           "your command line",
                           origin)
                     : syn(&p, "unexpected '%c' at offset %zu", p.s[p.i], p.i);
            val_drop(&v);
        }
    }
    if (rc != 0) {
        snprintf(reason, reasonlen, "%s", p.why);
        return p.why[0] ? PROFD_ECONFIG : PROFD_ENOMEM;
    }
    set_origin_tree(v.node, origin);
    *out = v.node;
    return 0;
}
