// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The containers every part of profd uses (daemon, client library, config,
 * profctl): a growing array and a growing string buffer. Pure: no I/O, no
 * state beyond what the caller holds, allocation by malloc/realloc only.
 *
 *   item_t *v = NULL; size_t n = 0, cap = 0;
 *   if (PU_GROW(v, cap, n + 1) != 0) return PROFD_ENOMEM;
 *   v[n++] = x;
 *
 *   pu_sbuf_t b = {0};
 *   pu_sbuf_fmt(&b, "%d ranks", n);
 *   char *s = pu_sbuf_take(&b, &len);      NULL once an append failed
 */
#ifndef PU_BUF_H
#define PU_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Grows the array *items of *cap elements of elem bytes so that it holds at
 * least need: the capacity doubles (from 8), or becomes need if that is
 * more. 0, or -1 when the size overflows or memory runs out (the array is
 * then as it was). */
int pu_grow(void **items, size_t *cap, size_t need, size_t elem);
#define PU_GROW(arr, cap, need) pu_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Frees a list of n malloc'ed strings (NULL ones too) and the list. */
void pu_strv_free(char **v, size_t n);

/* A string buffer: appends never fail on their own; the first allocation
 * failure sticks in `oom` and later appends do nothing. p is NUL-terminated
 * once anything was appended (NULL before). */
typedef struct pu_sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} pu_sbuf_t;

void pu_sbuf_put(pu_sbuf_t *b, const char *s, size_t n);
void pu_sbuf_str(pu_sbuf_t *b, const char *s);
void pu_sbuf_ch(pu_sbuf_t *b, char c);
void pu_sbuf_fmt(pu_sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Makes room for n more bytes (not counting the NUL) and returns where they
 * go, or NULL (oom); the caller then adds what it wrote with pu_sbuf_commit. */
char *pu_sbuf_reserve(pu_sbuf_t *b, size_t n);
void pu_sbuf_commit(pu_sbuf_t *b, size_t n);
/* Keeps the first len bytes (len <= b->len). */
void pu_sbuf_truncate(pu_sbuf_t *b, size_t len);
/* The text, owned by the caller from now on ("" when empty), and its length;
 * NULL (and the buffer freed) when an append failed. The buffer is empty
 * again after. Over PU_SBUF_SLACK bytes (and a quarter of the text) of
 * unused room are given back. */
#define PU_SBUF_SLACK (64 * 1024)
char *pu_sbuf_take(pu_sbuf_t *b, size_t *len);
void pu_sbuf_free(pu_sbuf_t *b);

/* A byte count as the configuration writes it: the largest of KiB, MiB,
 * GiB, TiB, PiB that divides it ("1MiB", "1536KiB", "1000"). */
void pu_fmt_bytes(int64_t v, char *buf, size_t len);

#endif
