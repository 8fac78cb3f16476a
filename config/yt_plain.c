// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * YAML 1.1 plain scalar typing, as OmegaConf's loader does it (see
 * yamltree.h for the rules).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "yamltree.h"

/* ---- YAML 1.1 plain scalar typing ------------------------------------------ */

static bool in_list(const char *s, const char *const *list)
{
    for (; *list != NULL; list++) {
        if (strcmp(s, *list) == 0) {
            return true;
        }
    }
    return false;
}

static bool isdig(char c)
{
    return c >= '0' && c <= '9';
}

/* Digits (and '_') of `base` from s; at least one digit. Accumulates in
 * `*v` (unsigned, saturating: *ovf set) and `*d` (double). */
static const char *digits(const char *s, int base, uint64_t *v, double *d, bool *ovf)
{
    bool any = false;
    for (;; s++) {
        int x;
        if (*s == '_') {
            continue;
        } else if (isdig(*s)) {
            x = *s - '0';
        } else if (*s >= 'a' && *s <= 'f') {
            x = *s - 'a' + 10;
        } else if (*s >= 'A' && *s <= 'F') {
            x = *s - 'A' + 10;
        } else {
            break;
        }
        if (x >= base) {
            return NULL;
        }
        any = true;
        if (*v > (UINT64_MAX - (uint64_t)x) / (uint64_t)base) {
            *ovf = true;
        }
        *v = *v * (uint64_t)base + (uint64_t)x;
        *d = *d * base + x;
    }
    return any ? s : NULL;
}

/* [-+]?(0b[01_]+ | 0[0-7_]+ | 0 | [1-9][0-9_]* | 0x[0-9a-fA-F_]+ |
 *       [1-9][0-9_]*(:[0-5]?[0-9])+) */
static bool type_int(yt_node_t *n)
{
    const char *s = n->text;
    bool neg = false, ovf = false, dec = false;
    uint64_t v = 0;
    double d = 0;
    if (*s == '-' || *s == '+') {
        neg = *s++ == '-';
    }
    if (s[0] == '0' && s[1] == 'b') {
        s = digits(s + 2, 2, &v, &d, &ovf);
    } else if (s[0] == '0' && s[1] == 'x') {
        s = digits(s + 2, 16, &v, &d, &ovf);
    } else if (s[0] == '0' && s[1] != '\0') {
        s = digits(s + 1, 8, &v, &d, &ovf);
    } else if (s[0] == '0') {
        s++;
    } else if (s[0] >= '1' && s[0] <= '9') {
        s = digits(s, 10, &v, &d, &ovf);
        dec = s != NULL && *s == '\0';
        while (s != NULL && *s == ':') { /* sexagesimal */
            uint64_t part = 0;
            s++;
            if (!isdig(s[0]) || (isdig(s[1]) && (s[0] > '5' || isdig(s[2])))) {
                return false;
            }
            while (isdig(*s)) {
                part = part * 10 + (uint64_t)(*s++ - '0');
            }
            if (v > (UINT64_MAX - part) / 60) {
                ovf = true;
            }
            v = v * 60 + part;
            d = d * 60 + (double)part;
        }
    } else {
        return false;
    }
    if (s == NULL || *s != '\0') {
        return false;
    }
    if (ovf || v > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) {
        n->type = YT_FLOAT; /* beyond int64: keep the magnitude */
        if (dec && strchr(n->text, '_') == NULL) {
            d = fabs(strtod(n->text, NULL)); /* correctly rounded */
        }
        n->v.f = neg ? -d : d;
    } else {
        n->type = YT_INT;
        n->v.i = neg ? (int64_t)(0 - v) : (int64_t)v;
    }
    return true;
}

/* OmegaConf's float pattern (a superset of PyYAML's):
 *   [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+]?[0-9]+)?
 *   [-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
 *   \.[0-9_]+([eE][-+][0-9]+)?
 *   [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
 *   [-+]?\.(inf|Inf|INF)      \.(nan|NaN|NAN) */

/* .inf / .nan forms; true when n was typed. */
static bool float_special(yt_node_t *n, bool sign, bool neg)
{
    static const char *const infs[] = {".inf", ".Inf", ".INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    if (in_list(n->text + sign, infs)) {
        n->type = YT_FLOAT;
        n->v.f = neg ? -INFINITY : INFINITY;
        return true;
    }
    if (!sign && in_list(n->text, nans)) {
        n->type = YT_FLOAT;
        n->v.f = NAN;
        return true;
    }
    return false;
}

/* An exponent at p: e/E, a sign (required when `need_sign`), digits. NULL
 * when malformed; p itself when there is none. */
static const char *float_exp(const char *p, bool need_sign)
{
    if (*p != 'e' && *p != 'E') {
        return p;
    }
    p++;
    if (*p == '-' || *p == '+') {
        p++;
    } else if (need_sign) {
        return NULL;
    }
    if (!isdig(*p)) {
        return NULL;
    }
    while (isdig(*p)) {
        p++;
    }
    return p;
}

/* The digits before the point: [0-9][0-9_]*(:[0-5]?[0-9])*; NULL when
 * malformed. *sexa: base-60 parts were seen. */
static const char *float_int_part(const char *p, bool *sexa)
{
    for (p++; isdig(*p) || *p == '_'; p++) {
    }
    while (*p == ':') {
        *sexa = true;
        p++;
        if (!isdig(*p)) {
            return NULL;
        }
        if (isdig(p[1])) {
            if (*p > '5') {
                return NULL;
            }
            p++;
        }
        p++;
    }
    return p;
}

/* Does the text after the sign match the pattern? *sexa: base 60. */
static bool float_shape(const char *p, bool sign, bool *sexa)
{
    if (*p == '.') {
        if (sign || !(isdig(p[1]) || p[1] == '_')) {
            return false;
        }
        for (p++; isdig(*p) || *p == '_'; p++) {
        }
        p = float_exp(p, true);
    } else if (isdig(*p)) {
        if ((p = float_int_part(p, sexa)) == NULL) {
            return false;
        }
        if (*p == '.') {
            for (p++; isdig(*p) || *p == '_'; p++) {
            }
            p = *sexa ? p : float_exp(p, false);
        } else if (!*sexa && (*p == 'e' || *p == 'E')) {
            p = float_exp(p, false);
        } else {
            return false;
        }
    } else {
        return false;
    }
    return p != NULL && *p == '\0';
}

/* The value of a matched text: '_' dropped, then base-60 parts or strtod. */
static bool float_value(const char *s, bool sign, bool neg, bool sexa, double *out)
{
    char buf[128];
    size_t k = 0;
    for (const char *q = s; *q != '\0' && k + 1 < sizeof(buf); q++) {
        if (*q != '_') {
            buf[k++] = *q;
        }
    }
    buf[k] = '\0';
    double v = 0;
    if (sexa) {
        char *q = buf + sign;
        char *colon;
        while ((colon = strchr(q, ':')) != NULL) {
            *colon = '\0';
            v = v * 60 + strtod(q, NULL);
            q = colon + 1;
        }
        v = v * 60 + strtod(q, NULL);
        v = neg ? -v : v;
    } else {
        char *end;
        errno = 0;
        v = strtod(buf, &end);
        if (*end != '\0') {
            return false;
        }
    }
    *out = v;
    return true;
}

static bool type_float(yt_node_t *n)
{
    const char *s = n->text;
    bool sign = (*s == '-' || *s == '+');
    bool neg = (*s == '-');
    bool sexa = false;
    double v;
    if (float_special(n, sign, neg)) {
        return true;
    }
    if (!float_shape(s + sign, sign, &sexa) || !float_value(s, sign, neg, sexa, &v)) {
        return false;
    }
    n->type = YT_FLOAT;
    n->v.f = v;
    return true;
}

void yt_type_plain(yt_node_t *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", "yes", "Yes",
                                        "YES",  "on",   "On",   "ON",  NULL};
    static const char *const falses[] = {"false", "False", "FALSE", "no",  "No",
                                         "NO",    "off",   "Off",   "OFF", NULL};
    const char *s = n->text;
    n->type = YT_STR;
    if (in_list(s, nulls)) {
        n->type = YT_NULL;
    } else if (in_list(s, trues)) {
        n->type = YT_BOOL;
        n->v.b = true;
    } else if (in_list(s, falses)) {
        n->type = YT_BOOL;
        n->v.b = false;
    } else if (strlen(s) < 100 && (type_int(n) || type_float(n))) {
        return;
    }
}
