// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Interned names (see intern.h). */
#include <stdlib.h>
#include <string.h>

#include "intern.h"

static const char *find(const pd_intern_t *t, const char *s, uint64_t h)
{
    if (t->ix.cap == 0 || t->ix.n != t->n) { /* no index: a scan */
        for (size_t i = 0; i < t->n; i++) {
            if (strcmp(t->v[i], s) == 0) {
                return t->v[i];
            }
        }
        return NULL;
    }
    for (size_t at = pd_uix_first(&t->ix, h);; at = pd_uix_next(&t->ix, at)) {
        size_t i = pd_uix_at(&t->ix, at);
        if (i == SIZE_MAX) {
            return NULL;
        }
        if (strcmp(t->v[i], s) == 0) {
            return t->v[i];
        }
    }
}

const char *pd_intern(pd_intern_t *t, const char *s)
{
    s = s ? s : "";
    uint64_t h = pd_uix_hash_str(s);
    const char *have = find(t, s, h);
    if (have != NULL) {
        return have;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        char **v = realloc(t->v, cap * sizeof(*v));
        if (v == NULL) {
            return NULL;
        }
        t->v = v;
        t->cap = cap;
    }
    char *copy = strdup(s);
    if (copy == NULL) {
        return NULL;
    }
    t->v[t->n++] = copy;
    /* index it, or every name again after a rebuild; without memory the
     * index is dropped (lookups scan) until a rebuild succeeds */
    int room = pd_uix_room(&t->ix, t->n - 1, 1);
    if (room == 1) {
        for (size_t i = 0; i + 1 < t->n; i++) {
            pd_uix_put(&t->ix, pd_uix_hash_str(t->v[i]), i);
        }
    }
    if (room >= 0) {
        pd_uix_put(&t->ix, h, t->n - 1);
        t->ix.n = t->n;
    } else {
        pd_uix_free(&t->ix);
    }
    return copy;
}

void pd_intern_fini(pd_intern_t *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i]);
    }
    free(t->v);
    pd_uix_free(&t->ix);
    memset(t, 0, sizeof(*t));
}
