// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The parser's text helpers (omegaconf_int.h): a bounded string, the
 * typing of a grammar primitive (INT, FLOAT, BOOL, NULL), Python's str() and
 * repr() of a value as string concatenation writes it.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "omegaconf_int.h"
#include "profd/errors.h"

/* ---- a string of at most OC_MAX_STR bytes ------------------------------------ */

void ocp_sb_add(sbuf_t *b, const char *s, size_t n)
{
    if (b->s.oom || b->over) {
        return;
    }
    if (b->s.len + n > OC_MAX_STR) {
        b->over = true;
        return;
    }
    pu_sbuf_put(&b->s, s, n);
}

void ocp_sb_str(sbuf_t *b, const char *s)
{
    ocp_sb_add(b, s, strlen(s));
}

void ocp_sb_chr(sbuf_t *b, char c)
{
    ocp_sb_add(b, &c, 1);
}

/* ---- grammar primitives: INT, FLOAT, BOOL, NULL -------------------------------- */

/* The bytes of the UTF-8 character at s (1 for a stray byte). */
size_t ocp_utf8_len(const char *s, size_t n)
{
    unsigned char c = (unsigned char)s[0];
    size_t k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return k <= n ? k : 1;
}

bool ocp_isdig(char c)
{
    return c >= '0' && c <= '9';
}

/* DIGIT ('_'? DIGIT)* */
static const char *m_digits(const char *p)
{
    if (!ocp_isdig(*p)) {
        return NULL;
    }
    for (p++;;) {
        if (ocp_isdig(*p)) {
            p++;
        } else if (*p == '_' && ocp_isdig(p[1])) {
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
void ocp_gram_type(yt_node_t *n)
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
        ocp_sb_str(b, "nan");
        return;
    }
    if (isinf(v)) {
        ocp_sb_str(b, v < 0 ? "-inf" : "inf");
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
        if (ocp_isdig(*q)) {
            mant[k++] = *q;
        }
    }
    mant[k] = '\0';
    if (signbit(v)) {
        ocp_sb_chr(b, '-');
    }
    if (exp10 >= -5 + 1 && exp10 < 16) { /* fixed notation, like repr() */
        if (exp10 < 0) {
            ocp_sb_str(b, "0.");
            for (int i = -1; i > exp10; i--) {
                ocp_sb_chr(b, '0');
            }
            ocp_sb_str(b, mant);
        } else {
            for (int i = 0; i <= exp10 || i < (int)k; i++) {
                if (i == exp10 + 1) {
                    ocp_sb_chr(b, '.');
                }
                ocp_sb_chr(b, i < (int)k ? mant[i] : '0');
            }
            if ((int)k <= exp10 + 1) {
                ocp_sb_str(b, ".0");
            }
        }
    } else {
        ocp_sb_chr(b, mant[0]);
        if (k > 1) {
            ocp_sb_chr(b, '.');
            ocp_sb_str(b, mant + 1);
        }
        snprintf(buf, sizeof(buf), "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
        ocp_sb_str(b, buf);
    }
}

void oc_float_repr(double v, char *buf, size_t len)
{
    sbuf_t b = {0};
    py_float(&b, v);
    snprintf(buf, len, "%s", b.s.p && !b.s.oom ? b.s.p : "nan");
    pu_sbuf_free(&b.s);
}

void ocp_py_str(sbuf_t *b, const yt_node_t *v, bool repr)
{
    char num[32];
    switch (v->type) {
    case YT_NULL:
        ocp_sb_str(b, "None");
        break;
    case YT_BOOL:
        ocp_sb_str(b, v->v.b ? "True" : "False");
        break;
    case YT_INT:
        snprintf(num, sizeof(num), "%lld", (long long)v->v.i);
        ocp_sb_str(b, num);
        break;
    case YT_FLOAT:
        py_float(b, v->v.f);
        break;
    case YT_STR:
        if (!repr) {
            ocp_sb_str(b, v->text);
        } else {
            char q = (strchr(v->text, '\'') && !strchr(v->text, '"')) ? '"' : '\'';
            ocp_sb_chr(b, q);
            for (const char *s = v->text; *s; s++) {
                if (*s == q || *s == '\\') {
                    ocp_sb_chr(b, '\\');
                }
                ocp_sb_chr(b, *s);
            }
            ocp_sb_chr(b, q);
        }
        break;
    case YT_SEQ:
        ocp_sb_chr(b, '[');
        for (size_t i = 0; i < v->n; i++) {
            ocp_sb_str(b, i ? ", " : "");
            ocp_py_str(b, v->items[i]->flags & YT_F_REF ? v->items[i]->ref : v->items[i], true);
        }
        ocp_sb_chr(b, ']');
        break;
    case YT_MAP:
        ocp_sb_chr(b, '{');
        for (size_t i = 0; i < v->n; i++) {
            yt_node_t k = {.type = YT_STR, .text = v->pairs[i].key};
            const yt_node_t *x = v->pairs[i].value;
            ocp_sb_str(b, i ? ", " : "");
            ocp_py_str(b, &k, true);
            ocp_sb_str(b, ": ");
            ocp_py_str(b, x->flags & YT_F_REF ? x->ref : x, true);
        }
        ocp_sb_chr(b, '}');
        break;
    }
}
