// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The YAML tree: nodes, their growth, lookups, copies and the texts that
 * name them in messages. The parser is yt_parse.c; plain scalars are typed
 * in yt_plain.c.
 */
#include "yamltree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profd/errors.h"
#include "pu_buf.h"

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
    int rc = c->type == YT_SEQ ? PU_GROW(c->items, c->cap, c->n + 1)
                               : PU_GROW(c->pairs, c->cap, c->n + 1);
    return rc != 0 ? PROFD_ENOMEM : 0;
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
