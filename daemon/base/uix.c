// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* An index of array positions by hash (see uix.h). */
#include <stdlib.h>

#include "uix.h"

int pd_uix_room(pd_uix_t *x, size_t live, size_t more)
{
    if (x->slot != NULL && 2 * (x->fill + more) <= x->cap) {
        return 0;
    }
    if (live + more >= UINT32_MAX / 4) {
        return -1;
    }
    size_t cap = 64;
    while (cap < 4 * (live + more)) {
        cap *= 2;
    }
    uint32_t *v = calloc(cap, sizeof(*v));
    if (v == NULL) {
        return -1;
    }
    free(x->slot);
    x->slot = v;
    x->cap = cap;
    x->fill = x->n = 0;
    return 1;
}

void pd_uix_put(pd_uix_t *x, uint64_t h, size_t i)
{
    size_t at = pd_uix_first(x, h);
    while (x->slot[at] != 0) {
        at = pd_uix_next(x, at);
    }
    x->slot[at] = (uint32_t)(i + 1);
    x->fill++;
}

void pd_uix_free(pd_uix_t *x)
{
    free(x->slot);
    x->slot = NULL;
    x->cap = x->fill = x->n = 0;
}

uint64_t pd_uix_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    }
    return h;
}
