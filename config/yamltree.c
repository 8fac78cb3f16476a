// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * YAML -> tree, driven by libyaml's event parser with an explicit stack
 * (no recursion on input depth). See yamltree.h for the typing rules.
 */
#include "yamltree.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "profd/errors.h"

/* ---- nodes ---------------------------------------------------------------- */

yt_node_t *yt_new(yt_type_t type, int line, int col)
{
    yt_node_t *n = calloc(1, sizeof(*n));
    if (n != NULL) {
        n->type = type;
        n->line = line;
        n->col = col;
    }
    return n;
}

yt_node_t *yt_scalar(const char *text, size_t len, bool quoted, int line, int col)
{
    yt_node_t *n = yt_new(YT_STR, line, col);
    if (n == NULL) {
        return NULL;
    }
    n->text = malloc(len + 1);
    if (n->text == NULL) {
        free(n);
        return NULL;
    }
    memcpy(n->text, text, len);
    n->text[len] = '\0';
    if (quoted) {
        n->flags |= YT_F_QUOTED;
    } else {
        yt_type_plain(n);
    }
    return n;
}

static void free_content(yt_node_t *n)
{
    for (size_t i = 0; i < n->n; i++) {
        if (n->type == YT_SEQ) {
            yt_free(n->items[i]);
        } else {
            free(n->pairs[i].key);
            yt_free(n->pairs[i].value);
        }
    }
    free(n->items);
    free(n->pairs);
    free(n->hix);
    free(n->text);
    if ((n->flags & YT_F_REFOWN) && n->ref != NULL) {
        yt_free(n->ref);
    }
}

void yt_free(yt_node_t *n)
{
    if (n == NULL) {
        return;
    }
    free_content(n);
    free(n);
}

static int grow(yt_node_t *c)
{
    if (c->n < c->cap) {
        return 0;
    }
    size_t cap = c->cap ? c->cap * 2 : 4;
    if (c->type == YT_SEQ) {
        yt_node_t **v = realloc(c->items, cap * sizeof(*v));
        if (v == NULL) {
            return PROFD_ENOMEM;
        }
        c->items = v;
    } else {
        yt_pair_t *v = realloc(c->pairs, cap * sizeof(*v));
        if (v == NULL) {
            return PROFD_ENOMEM;
        }
        c->pairs = v;
    }
    c->cap = cap;
    return 0;
}

int yt_seq_push(yt_node_t *seq, yt_node_t *v)
{
    if (grow(seq) != 0) {
        yt_free(v);
        return PROFD_ENOMEM;
    }
    v->parent = seq;
    seq->items[seq->n++] = v;
    return 0;
}

/* ---- a map's index by key: lookups in O(1), not a scan of every pair ---- */

#define HIX_MIN 16 /* maps with fewer pairs are scanned */

static size_t hix_hash(const char *k)
{
    size_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)k; *p; p++) {
        h = (h ^ *p) * 1099511628211ull;
    }
    return h;
}

static void hix_insert(yt_node_t *map, size_t i)
{
    size_t mask = map->hcap - 1, s = hix_hash(map->pairs[i].key) & mask;
    while (map->hix[s] != 0) {
        s = (s + 1) & mask;
    }
    map->hix[s] = (uint32_t)(i + 1);
}

/* The index over every pair, in a table at most half full; false out of
 * memory (lookups then scan). */
static bool hix_build(yt_node_t *map)
{
    size_t cap = 64;
    while (cap < 2 * map->n + 2) {
        cap *= 2;
    }
    if (map->n >= UINT32_MAX / 2) {
        return false;
    }
    uint32_t *t = calloc(cap, sizeof(*t));
    if (t == NULL) {
        return false;
    }
    free(map->hix);
    map->hix = t;
    map->hcap = cap;
    for (size_t i = 0; i < map->n; i++) {
        hix_insert(map, i);
    }
    map->hn = map->n;
    return true;
}

/* Pair i (just appended) into the index, if there is one. */
static void hix_add(yt_node_t *map, size_t i)
{
    if (map->hix == NULL || map->hn != i) {
        return;
    }
    if (2 * (i + 1) + 2 > map->hcap) {
        if (!hix_build(map)) {
            free(map->hix);
            map->hix = NULL;
        }
        return;
    }
    hix_insert(map, i);
    map->hn = i + 1;
}

int yt_map_put(yt_node_t *map, const char *key, int line, int col, yt_node_t *v)
{
    yt_pair_t *p = yt_map_pair(map, key);
    if (p != NULL) {
        yt_free(p->value);
        p->value = v;
        v->parent = map;
        return 0;
    }
    char *k = strdup(key);
    if (k == NULL || grow(map) != 0) {
        free(k);
        yt_free(v);
        return PROFD_ENOMEM;
    }
    v->parent = map;
    map->pairs[map->n++] = (yt_pair_t){.key = k, .line = line, .col = col, .value = v};
    hix_add(map, map->n - 1);
    return 0;
}

yt_pair_t *yt_map_pair(const yt_node_t *map, const char *key)
{
    if (map == NULL || map->type != YT_MAP) {
        return NULL;
    }
    yt_node_t *m = (yt_node_t *)map; /* the index is a cache, not the map's value */
    if (m->n >= HIX_MIN && (m->hix == NULL || m->hn != m->n)) {
        hix_build(m);
    }
    if (m->hix != NULL && m->hn == m->n) {
        size_t mask = m->hcap - 1;
        for (size_t s = hix_hash(key) & mask; m->hix[s] != 0; s = (s + 1) & mask) {
            yt_pair_t *p = &m->pairs[m->hix[s] - 1];
            if (strcmp(p->key, key) == 0) {
                return p;
            }
        }
        return NULL;
    }
    for (size_t i = 0; i < map->n; i++) {
        if (strcmp(map->pairs[i].key, key) == 0) {
            return &map->pairs[i];
        }
    }
    return NULL;
}

yt_node_t *yt_map_get(const yt_node_t *map, const char *key)
{
    yt_pair_t *p = yt_map_pair(map, key);
    return p ? p->value : NULL;
}

bool yt_map_del(yt_node_t *map, const char *key)
{
    yt_pair_t *p = yt_map_pair(map, key);
    if (p == NULL) {
        return false;
    }
    size_t i = (size_t)(p - map->pairs);
    free(p->key);
    yt_free(p->value);
    memmove(&map->pairs[i], &map->pairs[i + 1], (map->n - i - 1) * sizeof(*p));
    map->n--;
    free(map->hix); /* positions moved: made again by the next lookup */
    map->hix = NULL;
    return true;
}

static void reparent(yt_node_t *n)
{
    for (size_t i = 0; i < n->n; i++) {
        if (n->type == YT_SEQ) {
            n->items[i]->parent = n;
        } else {
            n->pairs[i].value->parent = n;
        }
    }
}

void yt_replace(yt_node_t *dst, yt_node_t *src)
{
    yt_node_t *parent = dst->parent;
    free_content(dst);
    *dst = *src;
    dst->parent = parent;
    dst->ref = NULL;
    dst->flags &= ~(YT_F_REF | YT_F_REFOWN | YT_F_BUSY);
    reparent(dst);
    if ((src->flags & YT_F_REFOWN) && src->ref != NULL) {
        yt_free(src->ref);
    }
    free(src);
}

yt_node_t *yt_copy(const yt_node_t *n)
{
    yt_node_t *c = yt_new(n->type, n->line, n->col);
    if (c == NULL) {
        return NULL;
    }
    c->flags = n->flags & (YT_F_QUOTED | YT_F_FINAL | YT_F_QSTR);
    c->origin = n->origin;
    c->src = n->src;
    c->v = n->v;
    if (n->text != NULL && (c->text = strdup(n->text)) == NULL) {
        goto nomem;
    }
    for (size_t i = 0; i < n->n; i++) {
        if (n->type == YT_SEQ) {
            yt_node_t *v = yt_copy(n->items[i]);
            if (v == NULL || yt_seq_push(c, v) != 0) {
                goto nomem;
            }
        } else {
            const yt_pair_t *p = &n->pairs[i];
            yt_node_t *v = yt_copy(p->value);
            if (v == NULL || yt_map_put(c, p->key, p->line, p->col, v) != 0) {
                goto nomem;
            }
        }
    }
    return c;
nomem:
    yt_free(c);
    return NULL;
}

void yt_set_source(yt_node_t *n, const yt_source_t *src)
{
    n->src = src;
    for (size_t i = 0; i < n->n; i++) {
        yt_set_source(n->type == YT_SEQ ? n->items[i] : n->pairs[i].value, src);
    }
}

static int depth_of(const yt_node_t *n)
{
    int d = 0;
    for (size_t i = 0; i < n->n && (n->type == YT_SEQ || n->type == YT_MAP); i++) {
        int c = depth_of(n->type == YT_SEQ ? n->items[i] : n->pairs[i].value);
        d = c > d ? c : d;
    }
    return n->type == YT_SEQ || n->type == YT_MAP ? d + 1 : 0;
}

size_t yt_count(const yt_node_t *n)
{
    size_t c = 1;
    for (size_t i = 0; i < n->n; i++) {
        c += yt_count(n->type == YT_SEQ ? n->items[i] : n->pairs[i].value);
    }
    return c;
}

const char *yt_type_name(yt_type_t t)
{
    static const char *const names[] = {"null",   "bool", "int",    "float",
                                        "string", "list", "mapping"};
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

void yt_describe(const yt_node_t *n, char *buf, size_t len)
{
    if (n == NULL || n->type == YT_NULL) {
        snprintf(buf, len, "null");
    } else if (n->type == YT_SEQ) {
        snprintf(buf, len, "a list");
    } else if (n->type == YT_MAP) {
        snprintf(buf, len, "a mapping");
    } else {
        char t[48];
        size_t i = 0;
        const char *s = n->text ? n->text : "";
        for (; s[i] != '\0' && i < 40; i++) {
            t[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
        }
        t[i] = '\0';
        snprintf(buf, len, "'%s%s'", t, s[i] != '\0' ? "..." : "");
    }
}

void yt_one_line(char *s)
{
    for (; *s != '\0'; s++) {
        if ((unsigned char)*s < 0x20 || *s == 0x7f) {
            *s = '?';
        }
    }
}

void yt_path(const yt_node_t *n, char *buf, size_t len)
{
    /* Collect the steps from n up to the root, then print them in order. */
    const yt_node_t *chain[YT_MAX_DEPTH * 4];
    size_t depth = 0;
    for (const yt_node_t *c = n; c != NULL && depth < sizeof(chain) / sizeof(chain[0]);) {
        if (c->parent == NULL && c->from != NULL) {
            c = c->from;
            continue;
        }
        chain[depth++] = c;
        c = c->parent;
    }
    size_t off = 0;
    buf[0] = '\0';
    for (size_t d = depth; d-- > 0;) {
        const yt_node_t *c = chain[d];
        const yt_node_t *p = c->parent;
        if (p == NULL || off >= len) {
            continue;
        }
        for (size_t i = 0; i < p->n; i++) {
            if (p->type == YT_SEQ && p->items[i] == c) {
                off += (size_t)snprintf(buf + off, len - off, "[%zu]", i);
                break;
            }
            if (p->type == YT_MAP && p->pairs[i].value == c) {
                off +=
                    (size_t)snprintf(buf + off, len - off, "%s%s", off ? "." : "", p->pairs[i].key);
                break;
            }
        }
    }
}

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

/* ---- the parser ------------------------------------------------------------ */

typedef struct frame {
    yt_node_t *node;
    char *key; /* MAP: key waiting for its value */
    int kline, kcol;
    bool kmerge;      /* the pending key is the plain `<<` */
    yt_node_t *merge; /* SEQ of mappings to merge at the end */
} frame_t;

/* An anchor keeps its own copy of the value, made when the value is
 * complete: the node in the tree may be freed (a key, a merge source). */
typedef struct anchor {
    char *name;
    const yt_node_t *open; /* the container still being built, else NULL */
    yt_node_t *copy;
} anchor_t;

typedef struct builder {
    const char *file;
    char *err;
    size_t errlen;
    frame_t stack[YT_MAX_DEPTH + 1];
    int depth;
    yt_node_t *root;
    size_t nodes;
    anchor_t *anchors;
    size_t nanchors, capanchors;
} builder_t;

static int fail(builder_t *b, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(builder_t *b, int line, int col, const char *fmt, ...)
{
    va_list ap;
    int off = snprintf(b->err, b->errlen, "%s:%d:%d: ", b->file, line, col);
    if (off >= 0 && (size_t)off < b->errlen) {
        va_start(ap, fmt);
        vsnprintf(b->err + off, b->errlen - (size_t)off, fmt, ap);
        va_end(ap);
    }
    yt_one_line(b->err);
    return PROFD_ECONFIG;
}

static int nomem(builder_t *b)
{
    snprintf(b->err, b->errlen, "%s: out of memory", b->file);
    return PROFD_ENOMEM;
}

static int count_nodes(builder_t *b, size_t k, int line, int col)
{
    b->nodes += k;
    if (b->nodes > YT_MAX_NODES) {
        return fail(b, line, col, "more than %d nodes (aliases count as copies)", YT_MAX_NODES);
    }
    return 0;
}

static int anchor_copy(builder_t *b, anchor_t *a, const yt_node_t *node)
{
    int rc = count_nodes(b, yt_count(node), node->line, node->col);
    if (rc != 0) {
        return rc;
    }
    if ((a->copy = yt_copy(node)) == NULL) {
        return nomem(b);
    }
    a->open = NULL;
    return 0;
}

/* A container's anchor is completed by anchor_close(); a scalar's now. */
static int anchor_add(builder_t *b, const yaml_char_t *name, yt_node_t *node, bool open)
{
    if (name == NULL) {
        return 0;
    }
    if (b->nanchors == b->capanchors) {
        size_t cap = b->capanchors ? b->capanchors * 2 : 8;
        anchor_t *v = realloc(b->anchors, cap * sizeof(*v));
        if (v == NULL) {
            return nomem(b);
        }
        b->anchors = v;
        b->capanchors = cap;
    }
    char *str = strdup((const char *)name);
    if (str == NULL) {
        return nomem(b);
    }
    anchor_t *a = &b->anchors[b->nanchors++];
    *a = (anchor_t){.name = str, .open = node};
    return open ? 0 : anchor_copy(b, a, node);
}

static anchor_t *anchor_find(builder_t *b, const char *name)
{
    for (size_t i = b->nanchors; i-- > 0;) {
        if (strcmp(b->anchors[i].name, name) == 0) {
            return &b->anchors[i];
        }
    }
    return NULL;
}

static int anchor_close(builder_t *b, const yt_node_t *node)
{
    for (size_t i = b->nanchors; i-- > 0;) {
        if (b->anchors[i].open == node) {
            return anchor_copy(b, &b->anchors[i], node);
        }
    }
    return 0;
}

/* Attach a finished value to the container on top of the stack (or make it
 * the root). Takes ownership of v. */
static int attach(builder_t *b, yt_node_t *v)
{
    if (b->depth == 0) {
        b->root = v;
        return 0;
    }
    frame_t *f = &b->stack[b->depth - 1];
    if (f->node->type == YT_SEQ) {
        return yt_seq_push(f->node, v) ? nomem(b) : 0;
    }
    if (f->key == NULL) { /* v is a key */
        int line = v->line, col = v->col;
        if (v->type == YT_SEQ || v->type == YT_MAP) {
            yt_free(v);
            return fail(b, line, col, "complex mapping keys are not supported");
        }
        if (v->text == NULL || v->text[0] == '\0') {
            yt_free(v);
            return fail(b, line, col, "empty mapping key");
        }
        f->kmerge = !(v->flags & YT_F_QUOTED) && strcmp(v->text, "<<") == 0;
        if (!f->kmerge && yt_map_pair(f->node, v->text) != NULL) {
            int rc = fail(b, line, col, "duplicate key '%s'", v->text);
            yt_free(v);
            return rc;
        }
        f->key = v->text;
        v->text = NULL;
        f->kline = line;
        f->kcol = col;
        yt_free(v);
        return 0;
    }
    char *key = f->key;
    f->key = NULL;
    if (f->kmerge) {
        free(key);
        if (v->type == YT_MAP) {
            if (f->merge == NULL && (f->merge = yt_new(YT_SEQ, 0, 0)) == NULL) {
                yt_free(v);
                return nomem(b);
            }
            return yt_seq_push(f->merge, v) ? nomem(b) : 0;
        }
        if (v->type == YT_SEQ) {
            for (size_t i = 0; i < v->n; i++) {
                if (v->items[i]->type != YT_MAP) {
                    int rc = fail(b, v->items[i]->line, v->items[i]->col,
                                  "merge key '<<' needs a mapping or a list of mappings");
                    yt_free(v);
                    return rc;
                }
            }
            if (f->merge == NULL) {
                f->merge = v;
                return 0;
            }
            while (v->n > 0) {
                yt_node_t *m = v->items[0];
                memmove(&v->items[0], &v->items[1], (v->n - 1) * sizeof(*v->items));
                v->n--;
                if (yt_seq_push(f->merge, m) != 0) {
                    yt_free(v);
                    return nomem(b);
                }
            }
            yt_free(v);
            return 0;
        }
        int rc = fail(b, v->line, v->col, "merge key '<<' needs a mapping or a list of mappings");
        yt_free(v);
        return rc;
    }
    int rc = yt_map_put(f->node, key, f->kline, f->kcol, v) ? nomem(b) : 0;
    free(key);
    return rc;
}

/* `<<` merges: keys written in the mapping win, then earlier sources. */
static int apply_merges(builder_t *b, frame_t *f)
{
    if (f->merge == NULL) {
        return 0;
    }
    for (size_t s = 0; s < f->merge->n; s++) {
        const yt_node_t *src = f->merge->items[s];
        for (size_t i = 0; i < src->n; i++) {
            const yt_pair_t *p = &src->pairs[i];
            if (yt_map_pair(f->node, p->key) != NULL) {
                continue;
            }
            yt_node_t *c = yt_copy(p->value);
            if (c == NULL || yt_map_put(f->node, p->key, p->line, p->col, c) != 0) {
                return nomem(b);
            }
        }
    }
    return 0;
}

static bool tag_is(const yaml_char_t *tag, const char *name)
{
    return tag != NULL && strcmp((const char *)tag, name) == 0;
}

static int on_scalar(builder_t *b, const yaml_event_t *ev)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    const yaml_char_t *tag = ev->data.scalar.tag;
    bool quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    int rc = count_nodes(b, 1, line, col);
    if (rc != 0) {
        return rc;
    }
    if (tag != NULL && !tag_is(tag, "!") && strncmp((const char *)tag, "tag:yaml.org,2002:", 18)) {
        return fail(b, line, col, "unsupported tag '%s'", (const char *)tag);
    }
    bool as_str = quoted || tag_is(tag, "!") || tag_is(tag, YAML_STR_TAG);
    yt_node_t *n =
        yt_scalar((const char *)ev->data.scalar.value, ev->data.scalar.length, as_str, line, col);
    if (n == NULL) {
        return nomem(b);
    }
    if (tag != NULL && !as_str) {
        static const struct {
            const char *tag;
            yt_type_t type;
        } std[] = {{YAML_NULL_TAG, YT_NULL},
                   {YAML_BOOL_TAG, YT_BOOL},
                   {YAML_INT_TAG, YT_INT},
                   {YAML_FLOAT_TAG, YT_FLOAT}};
        bool ok = false;
        for (size_t i = 0; i < sizeof(std) / sizeof(std[0]); i++) {
            if (tag_is(tag, std[i].tag)) {
                ok = n->type == std[i].type;
                if (std[i].type == YT_FLOAT && n->type == YT_INT) {
                    n->type = YT_FLOAT;
                    n->v.f = (double)n->v.i;
                    ok = true;
                }
                break;
            }
        }
        if (!ok) {
            rc = fail(b, line, col, "value '%s' does not match tag '%s'", n->text,
                      (const char *)tag);
            yt_free(n);
            return rc;
        }
    }
    if (strlen(n->text) != ev->data.scalar.length) {
        yt_free(n);
        return fail(b, line, col, "NUL character in a scalar");
    }
    rc = anchor_add(b, ev->data.scalar.anchor, n, false);
    if (rc != 0) {
        yt_free(n);
        return rc;
    }
    return attach(b, n);
}

static int on_start(builder_t *b, const yaml_event_t *ev, yt_type_t type)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    const yaml_char_t *tag =
        type == YT_MAP ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    const yaml_char_t *anchor =
        type == YT_MAP ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    if (tag != NULL && !tag_is(tag, "!") &&
        !tag_is(tag, type == YT_MAP ? YAML_MAP_TAG : YAML_SEQ_TAG)) {
        return fail(b, line, col, "unsupported tag '%s'", (const char *)tag);
    }
    if (b->depth >= YT_MAX_DEPTH) {
        return fail(b, line, col, "nesting deeper than %d levels", YT_MAX_DEPTH);
    }
    int rc = count_nodes(b, 1, line, col);
    if (rc != 0) {
        return rc;
    }
    yt_node_t *n = yt_new(type, line, col);
    if (n == NULL) {
        return nomem(b);
    }
    if ((rc = anchor_add(b, anchor, n, true)) != 0) {
        yt_free(n);
        return rc;
    }
    b->stack[b->depth++] = (frame_t){.node = n};
    return 0;
}

static int on_end(builder_t *b)
{
    frame_t f = b->stack[--b->depth];
    int rc = apply_merges(b, &f);
    yt_free(f.merge);
    free(f.key);
    if (rc == 0) {
        rc = anchor_close(b, f.node);
    }
    if (rc != 0) {
        yt_free(f.node);
        return rc;
    }
    return attach(b, f.node);
}

static int on_alias(builder_t *b, const yaml_event_t *ev)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    const char *name = (const char *)ev->data.alias.anchor;
    anchor_t *a = anchor_find(b, name);
    if (a == NULL) {
        return fail(b, line, col, "unknown alias '*%s'", name);
    }
    if (a->copy == NULL) {
        return fail(b, line, col, "recursive alias '*%s'", name);
    }
    if (b->depth + depth_of(a->copy) > YT_MAX_DEPTH) {
        return fail(b, line, col, "nesting deeper than %d levels", YT_MAX_DEPTH);
    }
    int rc = count_nodes(b, yt_count(a->copy), line, col);
    if (rc != 0) {
        return rc;
    }
    yt_node_t *c = yt_copy(a->copy);
    if (c == NULL) {
        return nomem(b);
    }
    c->line = line;
    c->col = col;
    return attach(b, c);
}

static void builder_fini(builder_t *b)
{
    while (b->depth > 0) {
        frame_t *f = &b->stack[--b->depth];
        yt_free(f->node);
        yt_free(f->merge);
        free(f->key);
    }
    for (size_t i = 0; i < b->nanchors; i++) {
        free(b->anchors[i].name);
        yt_free(b->anchors[i].copy);
    }
    free(b->anchors);
    yt_free(b->root);
}

int yt_parse(const char *file, const char *text, size_t len, yt_node_t **out, char *err,
             size_t errlen)
{
    builder_t b = {.file = file, .err = err, .errlen = errlen};
    yaml_parser_t parser;
    yaml_event_t ev;
    int rc = 0, docs = 0;
    bool done = false;

    if (len > YT_MAX_INPUT) {
        snprintf(err, errlen, "%s: YAML text of %zu bytes exceeds the limit of %u bytes", file, len,
                 (unsigned)YT_MAX_INPUT);
        return PROFD_ECONFIG;
    }
    if (!yaml_parser_initialize(&parser)) {
        return nomem(&b);
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (rc == 0 && !done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            if (parser.error == YAML_MEMORY_ERROR) {
                rc = nomem(&b);
            } else {
                int line = (int)parser.problem_mark.line + 1;
                int col = (int)parser.problem_mark.column + 1;
                if (parser.error == YAML_READER_ERROR) { /* only a byte offset is known */
                    line = col = 1;
                    for (size_t i = 0; i < parser.problem_offset && i < len; i++) {
                        line += text[i] == '\n';
                        col = text[i] == '\n' ? 1 : col + 1;
                    }
                }
                rc = fail(&b, line, col, "YAML syntax error: %s",
                          parser.problem ? parser.problem : "invalid");
            }
            break;
        }
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                rc = fail(&b, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
                          "more than one YAML document");
            }
            break;
        case YAML_SCALAR_EVENT:
            rc = on_scalar(&b, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            rc = on_start(&b, &ev, YT_SEQ);
            break;
        case YAML_MAPPING_START_EVENT:
            rc = on_start(&b, &ev, YT_MAP);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            rc = on_end(&b);
            break;
        case YAML_ALIAS_EVENT:
            rc = on_alias(&b, &ev);
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    if (rc == 0 && b.root == NULL && (b.root = yt_new(YT_NULL, 1, 1)) == NULL) {
        rc = nomem(&b);
    }
    if (rc == 0) {
        *out = b.root;
        b.root = NULL;
    }
    builder_fini(&b);
    return rc;
}
