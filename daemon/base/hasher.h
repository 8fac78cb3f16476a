// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * xxh64 on a second thread, for copies: the thread that moves the bytes
 * hands each buffer over and goes on writing it and reading the next one
 * into another buffer, so the checksum costs no time on the copy's path.
 * One handoff slot: pd_hasher_feed() returns once the previous buffer is
 * hashed, so a caller alternating two buffers never overwrites one being
 * read. Used by one thread at a time (a gather job).
 */
#ifndef PD_HASHER_H
#define PD_HASHER_H

#include <stddef.h>
#include <stdint.h>

typedef struct pd_hasher pd_hasher_t;

/* 0, or PROFD_ENOMEM / PROFD_EINTERNAL (no thread: hash inline instead). */
int pd_hasher_start(pd_hasher_t **out);
/* Hash `len` bytes of `buf` next; `buf` must stay unchanged until the next
 * pd_hasher_feed() or pd_hasher_finish() returns. */
void pd_hasher_feed(pd_hasher_t *h, const void *buf, size_t len);
/* Wait for the last buffer, stop the thread, free; the digest of all fed. */
uint64_t pd_hasher_finish(pd_hasher_t *h);

#endif
