// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra's grammar functions (see hydra_func.h), Python's conversions
 * included: int() and float() of a string accept what Python's do
 * (blanks around, a sign, '_' between digits; float: inf, infinity, nan),
 * str() of a float is Python's repr, str() of a bool is lower case.
 */
#include "hydra_func.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "omegaconf.h"
#include "profd/errors.h"

typedef struct fn {
    const char *call;
    char *why;
    size_t whylen;
} fn_t;

/* "ValueError while evaluating 'int(x)': MESSAGE" (overrides_visitor.py:
 * 233-238). */
static int fail(fn_t *f, const char *exc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(fn_t *f, const char *exc, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(f->why, f->whylen, "%s while evaluating '%s': %s", exc, f->call, msg);
    return PROFD_ECONFIG;
}

static bool quoted(const yt_node_t *v)
{
    return v->type == YT_STR && (v->flags & YT_F_QSTR);
}

/* type(x).__name__ of the parsed value (QuotedString inside containers:
 * Functions.eval unquotes only the arguments themselves). */
static const char *py_type(const yt_node_t *v)
{
    static const char *const names[] = {"NoneType", "bool", "int", "float", "str", "list", "dict"};
    return quoted(v) ? "QuotedString" : names[v->type];
}

static yt_node_t *scalar(yt_type_t t, const char *text)
{
    yt_node_t *n = yt_scalar(text, strlen(text), false, 0, 0);
    if (n != NULL) {
        n->type = t;
    }
    return n;
}

static yt_node_t *mk_int(int64_t i)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)i);
    yt_node_t *n = scalar(YT_INT, buf);
    if (n != NULL) {
        n->v.i = i;
    }
    return n;
}

static yt_node_t *mk_float(double d)
{
    char buf[64];
    oc_float_repr(d, buf, sizeof(buf));
    yt_node_t *n = scalar(YT_FLOAT, buf);
    if (n != NULL) {
        n->v.f = d;
    }
    return n;
}

static yt_node_t *mk_bool(bool b)
{
    yt_node_t *n = scalar(YT_BOOL, b ? "true" : "false");
    if (n != NULL) {
        n->v.b = b;
    }
    return n;
}

/* Python's int()/float() literal rules: blanks stripped, '_' only between
 * digits (removed in *out). False when the text breaks them. */
static bool py_digits(const char *s, char *out, size_t len, bool *empty)
{
    size_t n = 0;
    while (isspace((unsigned char)*s)) {
        s++;
    }
    size_t e = strlen(s);
    while (e > 0 && isspace((unsigned char)s[e - 1])) {
        e--;
    }
    *empty = e == 0;
    for (size_t i = 0; i < e && n + 1 < len; i++) {
        if (s[i] == '_') {
            if (i == 0 || i + 1 >= e || !isdigit((unsigned char)s[i - 1]) ||
                !isdigit((unsigned char)s[i + 1])) {
                return false;
            }
            continue;
        }
        out[n++] = s[i];
    }
    out[n] = '\0';
    return n + 1 < len || e == 0;
}

static bool py_int_text(const char *s, int64_t *v, bool *range)
{
    char buf[128];
    bool empty;
    *range = false;
    if (!py_digits(s, buf, sizeof(buf), &empty) || empty) {
        return false;
    }
    const char *p = buf + (buf[0] == '+' || buf[0] == '-');
    if (*p == '\0' || strspn(p, "0123456789") != strlen(p)) {
        return false;
    }
    errno = 0;
    long long x = strtoll(buf, NULL, 10);
    *range = errno == ERANGE;
    *v = x;
    return true;
}

static bool py_float_text(const char *s, double *v)
{
    char buf[128];
    bool empty;
    if (!py_digits(s, buf, sizeof(buf), &empty) || empty) {
        return false;
    }
    const char *p = buf + (buf[0] == '+' || buf[0] == '-');
    if (strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0 || strcasecmp(p, "nan") == 0) {
        *v = strtod(buf, NULL);
        return true;
    }
    /* digitpart ['.' [digitpart]] | '.' digitpart, then [eE][+-]digitpart */
    size_t d1 = strspn(p, "0123456789"), d2 = 0;
    const char *q = p + d1;
    if (*q == '.') {
        d2 = strspn(q + 1, "0123456789");
        q += 1 + d2;
    }
    if (d1 + d2 == 0) {
        return false;
    }
    if (*q == 'e' || *q == 'E') {
        q++;
        q += *q == '+' || *q == '-';
        size_t d3 = strspn(q, "0123456789");
        if (d3 == 0) {
            return false;
        }
        q += d3;
    }
    if (*q != '\0') {
        return false;
    }
    *v = strtod(buf, NULL);
    return true;
}

typedef enum { C_INT, C_FLOAT, C_STR, C_BOOL } cast_t;

/* cast_int / cast_float / cast_str / cast_bool (grammar_functions.py:83-163) */
static int cast(fn_t *f, cast_t c, const yt_node_t *v, yt_node_t **out)
{
    *out = NULL;
    if (v->type == YT_SEQ || v->type == YT_MAP) {
        yt_node_t *r = yt_new(v->type, 0, 0);
        for (size_t i = 0; r != NULL && i < v->n; i++) {
            yt_node_t *x;
            int rc = cast(f, c, v->type == YT_SEQ ? v->items[i] : v->pairs[i].value, &x);
            if (rc != 0) {
                yt_free(r);
                return rc;
            }
            rc = v->type == YT_SEQ ? yt_seq_push(r, x) : yt_map_put(r, v->pairs[i].key, 0, 0, x);
            if (rc != 0) {
                yt_free(x);
                yt_free(r);
                return PROFD_ENOMEM;
            }
        }
        *out = r;
        return r ? 0 : PROFD_ENOMEM;
    }
    if (v->type == YT_NULL && c != C_BOOL) {
        return fail(f, "AssertionError", "%s", ""); /* assert isinstance(value, (...)) */
    }
    int64_t i;
    double d;
    bool range;
    switch (c) {
    case C_INT:
        if (v->type == YT_INT) {
            *out = mk_int(v->v.i);
        } else if (v->type == YT_BOOL) {
            *out = mk_int(v->v.b);
        } else if (v->type == YT_FLOAT) {
            if (isinf(v->v.f)) {
                return fail(f, "OverflowError", "cannot convert float infinity to integer");
            }
            if (isnan(v->v.f)) {
                return fail(f, "ValueError", "cannot convert float NaN to integer");
            }
            if (v->v.f >= 9223372036854775808.0 || v->v.f < -9223372036854775808.0) {
                return fail(f, "OverflowError", "%s does not fit in 64 bits", v->text);
            }
            *out = mk_int((int64_t)v->v.f);
        } else if (!py_int_text(v->text, &i, &range)) {
            return fail(f, "ValueError", "invalid literal for int() with base 10: '%s'", v->text);
        } else if (range) {
            return fail(f, "OverflowError", "%s does not fit in 64 bits", v->text);
        } else {
            *out = mk_int(i);
        }
        break;
    case C_FLOAT:
        if (v->type == YT_INT) {
            *out = mk_float((double)v->v.i);
        } else if (v->type == YT_BOOL) {
            *out = mk_float(v->v.b ? 1.0 : 0.0);
        } else if (v->type == YT_FLOAT) {
            *out = mk_float(v->v.f);
        } else if (!py_float_text(v->text, &d)) {
            return fail(f, "ValueError", "could not convert string to float: '%s'", v->text);
        } else {
            *out = mk_float(d);
        }
        break;
    case C_STR:
        if (v->type == YT_BOOL) {
            *out = scalar(YT_STR, v->v.b ? "true" : "false");
        } else if (v->type == YT_INT) {
            char buf[32];
            snprintf(buf, sizeof(buf), "%lld", (long long)v->v.i);
            *out = scalar(YT_STR, buf);
        } else if (v->type == YT_FLOAT) {
            char buf[64];
            oc_float_repr(v->v.f, buf, sizeof(buf));
            *out = scalar(YT_STR, buf);
        } else {
            *out = scalar(YT_STR, v->text);
        }
        break;
    case C_BOOL:
        if (v->type == YT_NULL) {
            *out = mk_bool(false);
        } else if (v->type == YT_BOOL) {
            *out = mk_bool(v->v.b);
        } else if (v->type == YT_INT) {
            *out = mk_bool(v->v.i != 0);
        } else if (v->type == YT_FLOAT) {
            *out = mk_bool(v->v.f != 0.0);
        } else if (strcasecmp(v->text, "true") == 0 || strcasecmp(v->text, "false") == 0) {
            *out = mk_bool(strcasecmp(v->text, "true") == 0);
        } else {
            return fail(f, "ValueError", "Cannot cast '%s' to bool", v->text);
        }
        break;
    }
    return *out ? 0 : PROFD_ENOMEM;
}

/* a < b as Python compares the parsed values; false with *bad set when
 * Python raises TypeError. */
static bool less(const yt_node_t *a, const yt_node_t *b, bool *bad)
{
    bool an = !quoted(a) && (a->type == YT_INT || a->type == YT_FLOAT || a->type == YT_BOOL);
    bool bn = !quoted(b) && (b->type == YT_INT || b->type == YT_FLOAT || b->type == YT_BOOL);
    if (an && bn) {
        double x = a->type == YT_INT ? (double)a->v.i : a->type == YT_BOOL ? a->v.b : a->v.f;
        double y = b->type == YT_INT ? (double)b->v.i : b->type == YT_BOOL ? b->v.b : b->v.f;
        if (a->type != YT_FLOAT && b->type != YT_FLOAT) {
            int64_t p = a->type == YT_INT ? a->v.i : a->v.b,
                    q = b->type == YT_INT ? b->v.i : b->v.b;
            return p < q;
        }
        return x < y;
    }
    if (a->type == YT_STR && b->type == YT_STR && !quoted(a) && !quoted(b)) {
        return strcmp(a->text, b->text) < 0;
    }
    *bad = true;
    return false;
}

/* sorted(list, reverse=...): stable; the first pair Python would fail to
 * compare (pivot < earlier item, as its insertion sort asks) is the one
 * named. */
static int sorted(fn_t *f, const yt_node_t *list, bool reverse, yt_node_t **out)
{
    yt_node_t *r = yt_copy(list);
    if (r == NULL) {
        return PROFD_ENOMEM;
    }
    for (size_t i = 1; i < r->n; i++) {
        yt_node_t *pivot = r->items[i];
        size_t j = i;
        bool bad = false;
        while (j > 0) {
            yt_node_t *prev = r->items[j - 1];
            bool before = reverse ? less(prev, pivot, &bad) : less(pivot, prev, &bad);
            if (bad) {
                const char *ta = py_type(reverse ? prev : pivot),
                           *tb = py_type(reverse ? pivot : prev);
                yt_free(r);
                return fail(f, "TypeError", "'<' not supported between instances of '%s' and '%s'",
                            ta, tb);
            }
            if (!before) {
                break;
            }
            r->items[j] = prev;
            j--;
        }
        r->items[j] = pivot;
    }
    *out = r;
    return 0;
}

static int unexpected(fn_t *f, const char *name)
{
    return fail(f, "TypeError", "got an unexpected keyword argument '%s'", name);
}

int hy_fn_call(const char *name, const char *call, yt_node_t *const *args, const char *const *names,
               size_t n, hy_fn_result_t *kind, yt_node_t **out, char *why, size_t whylen)
{
    fn_t f = {.call = call, .why = why, .whylen = whylen};
    const yt_node_t *pos[HY_FN_MAX_ARGS];
    size_t npos = 0;
    *kind = HY_FN_VALUE;
    *out = NULL;
    for (size_t i = 0; i < n && i < HY_FN_MAX_ARGS; i++) {
        if (names[i] == NULL) {
            pos[npos++] = args[i];
        }
    }
    static const struct {
        const char *name;
        cast_t c;
    } casts[] = {{"int", C_INT}, {"float", C_FLOAT}, {"str", C_STR}, {"bool", C_BOOL}};
    for (size_t k = 0; k < sizeof(casts) / sizeof(casts[0]); k++) {
        if (strcmp(name, casts[k].name) != 0) {
            continue;
        }
        const yt_node_t *value = NULL;
        for (size_t i = 0; i < n; i++) {
            if (names[i] != NULL && strcmp(names[i], "value") != 0) {
                return unexpected(&f, names[i]);
            }
            value = names[i] ? args[i] : value;
        }
        /* _normalize_cast_value (grammar_functions.py:69-80) */
        if (value != NULL && npos > 0) {
            return fail(&f, "TypeError", "cannot use both position and named arguments");
        }
        if (value == NULL && npos == 0) {
            return fail(&f, "TypeError", "No positional args or value specified");
        }
        if (npos > 1) {
            *kind = HY_FN_SIMPLE_SWEEP;
            return 0;
        }
        return cast(&f, casts[k].c, value ? value : pos[0], out);
    }
    if (strcmp(name, "sort") == 0 || strcmp(name, "shuffle") == 0) {
        bool sort = name[1] == 'o', reverse = false;
        const yt_node_t *list = NULL;
        for (size_t i = 0; i < n; i++) {
            if (names[i] == NULL) {
                continue;
            }
            if (strcmp(names[i], "list") == 0) {
                list = args[i];
            } else if (strcmp(names[i], "sweep") == 0) {
                *kind = HY_FN_SWEEP;
                return 0;
            } else if (sort && strcmp(names[i], "reverse") == 0) {
                if (args[i]->type != YT_BOOL || quoted(args[i])) {
                    return fail(&f, "TypeError",
                                "mismatch type argument reverse: %s is incompatible with bool",
                                args[i]->type == YT_STR ? "str" : py_type(args[i]));
                }
                reverse = args[i]->v.b;
            } else {
                return unexpected(&f, names[i]);
            }
        }
        if (list == NULL && npos == 1 && pos[0]->type == YT_SEQ) {
            list = pos[0];
        }
        if (list != NULL) {
            if (list->type != YT_SEQ) {
                return fail(&f, "TypeError",
                            "mismatch type argument list: %s is incompatible "
                            "with Optional[List[Any]]",
                            py_type(list));
            }
            if (sort) {
                return sorted(&f, list, reverse, out);
            }
            if (list->n > 1) { /* random.shuffle (grammar_functions.py:262-264) */
                snprintf(why, whylen,
                         "'%s' shuffles the list at random: the order the job gets cannot be "
                         "known before it runs",
                         call);
                return PROFD_ECONFIG;
            }
            return (*out = yt_copy(list)) ? 0 : PROFD_ENOMEM;
        }
        if (npos == 0) {
            return sort ? fail(&f, "ValueError", "empty sort input")
                        : fail(&f, "TypeError", "No positional args");
        }
        if (npos > 1) {
            *kind = HY_FN_SIMPLE_SWEEP;
            return 0;
        }
        if (sort) { /* a single element is itself (grammar_functions.py:290-291) */
            return (*out = yt_copy(pos[0])) ? 0 : PROFD_ENOMEM;
        }
        yt_node_t *r = yt_new(YT_SEQ, 0, 0), *x = yt_copy(pos[0]);
        if (r == NULL || x == NULL || yt_seq_push(r, x) != 0) {
            yt_free(r);
            yt_free(x);
            return PROFD_ENOMEM;
        }
        *out = r;
        return 0;
    }
    static const char *const sweeps[] = {"choice", "range", "interval", "glob", "tag"};
    for (size_t k = 0; k < sizeof(sweeps) / sizeof(sweeps[0]); k++) {
        if (strcmp(name, sweeps[k]) == 0) {
            *kind = HY_FN_SWEEP;
            return 0;
        }
    }
    /* functions.py:32-37 */
    return fail(&f, "HydraException",
                "Unknown function '%s' Available: bool,choice,float,glob,int,interval,range,"
                "shuffle,sort,str,tag",
                name);
}
