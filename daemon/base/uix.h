// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * An index of array positions by hash: open addressing with linear
 * probing, each slot a position + 1 (0: empty). The caller owns the array
 * and the keys: it puts position i under its key's hash, and walks a
 * hash's slots comparing its own elements (pd_uix_first / pd_uix_next), so
 * one index serves any key (client ids, paths). Entries are never removed:
 * an element whose key changed is put again under the new hash and its
 * old slot stays (the caller's comparison skips it) until pd_uix_room
 * rebuilds the table. Pure; not thread-safe.
 */
#ifndef PD_UIX_H
#define PD_UIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pd_uix {
    uint32_t *slot;
    size_t cap;  /* a power of two, or 0 before the first pd_uix_room */
    size_t fill; /* entries, stale ones included: at most cap / 2 */
    size_t n;    /* the caller's first n positions are in */
} pd_uix_t;

/* Room for `more` entries besides those in, for an array of `live`
 * elements: 0 (nothing to do), 1 (the table was rebuilt empty: n is 0,
 * put positions 0.. again), -1 (no memory: the table is as it was, or none
 * at all; the caller scans instead). */
int pd_uix_room(pd_uix_t *x, size_t live, size_t more);
/* Position i under hash h; the caller made room first. */
void pd_uix_put(pd_uix_t *x, uint64_t h, size_t i);
void pd_uix_free(pd_uix_t *x);

/* The slots of hash h, in probing order: a walk ends at an empty slot. */
static inline size_t pd_uix_first(const pd_uix_t *x, uint64_t h)
{
    return (size_t)(h ^ (h >> 32)) & (x->cap - 1);
}
static inline size_t pd_uix_next(const pd_uix_t *x, size_t at)
{
    return (at + 1) & (x->cap - 1);
}
/* The position held at slot `at`, or SIZE_MAX for an empty slot. */
static inline size_t pd_uix_at(const pd_uix_t *x, size_t at)
{
    return x->slot[at] ? (size_t)x->slot[at] - 1 : SIZE_MAX;
}

/* FNV-1a of a string; a 64-bit integer spread (Fibonacci hashing). */
uint64_t pd_uix_hash_str(const char *s);
static inline uint64_t pd_uix_hash_i64(int64_t v)
{
    return (uint64_t)v * 0x9E3779B97F4A7C15ULL;
}

#endif
