// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Scratch memory for the configuration library's composer and launch-line
 * reader: allocations chained on one list, freed together. Not a public
 * header.
 */
#ifndef PD_ARENA_H
#define PD_ARENA_H

#include <stddef.h>

typedef struct ar_block ar_block_t;

/* n zeroed bytes, freed with the arena; NULL when out of memory. */
void *ar_alloc(ar_block_t **ar, size_t n);
char *ar_strdup(ar_block_t **ar, const char *s);
char *ar_printf(ar_block_t **ar, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ar_free(ar_block_t *ar);

#endif
