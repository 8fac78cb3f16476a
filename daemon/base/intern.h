// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Interned names: one copy of each distinct string (a host, a role, a
 * node, a job, a phase), which every record naming it points to, rather
 * than a fixed buffer in each of 16,384 rank records. Owned by the table
 * whose records use it (the registry, the step history); a name stays
 * until the table is freed: the distinct names a daemon hears of, not its
 * records, are what it costs. Pure; not thread-safe.
 */
#ifndef PD_INTERN_H
#define PD_INTERN_H

#include <stddef.h>

#include "uix.h"

typedef struct pd_intern {
    char **v; /* the names, in the order first seen */
    size_t n, cap;
    pd_uix_t ix; /* v's positions by hash; none (no memory): a scan */
} pd_intern_t;

/* The table's copy of s (NULL: ""), the same pointer for equal strings;
 * NULL without memory. */
const char *pd_intern(pd_intern_t *t, const char *s);
void pd_intern_fini(pd_intern_t *t);

#endif
