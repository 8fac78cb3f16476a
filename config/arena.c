// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Scratch memory (see arena.h). */
#include "arena.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ar_block {
    struct ar_block *next;
    max_align_t data[];
};

void *ar_alloc(ar_block_t **ar, size_t n)
{
    ar_block_t *b = calloc(1, sizeof(*b) + n);
    if (b == NULL) {
        return NULL;
    }
    b->next = *ar;
    *ar = b;
    return b->data;
}

char *ar_strdup(ar_block_t **ar, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ar_alloc(ar, n);
    if (d != NULL) {
        memcpy(d, s, n);
    }
    return d;
}

char *ar_printf(ar_block_t **ar, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *d = n < 0 ? NULL : ar_alloc(ar, (size_t)n + 1);
    if (d != NULL) {
        va_start(ap, fmt);
        vsnprintf(d, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return d;
}

void ar_free(ar_block_t *ar)
{
    while (ar != NULL) {
        ar_block_t *n = ar->next;
        free(ar);
        ar = n;
    }
}
