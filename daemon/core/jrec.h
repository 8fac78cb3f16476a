// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Journal records: a window, one member of a window and a registered rank as
 * the records of proto/messages.def (state_window, state_member, jrank),
 * and back. Pure: no file, no clock (times are parameters); the journal
 * file itself is daemon/node/journal.c. Building borrows the strings of the
 * window or rank (free only what pd_jrec_*_free says); restoring moves the
 * record's strings and arrays into the table or the registry.
 */
#ifndef PD_JREC_H
#define PD_JREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/proto.h"
#include "registry.h"
#include "windows.h"

/* Window w without its members (they are records of their own). */
void pd_jrec_window(const pd_window_t *w, pp_state_window_t *out);
/* Member i of w: 0 or PROFD_ENOMEM; free with pd_jrec_member_free. */
int pd_jrec_member(const pd_window_t *w, size_t i, pp_state_member_t *out);
void pd_jrec_member_free(pp_state_member_t *m);
/* Rank k: 0 or PROFD_ENOMEM; free with pd_jrec_rank_free. */
int pd_jrec_rank(const pd_rank_t *k, pp_jrank_t *out);
void pd_jrec_rank_free(pp_jrank_t *r);

/* Coordinator: incoming file i of w (borrowing its path and checksum). */
void pd_jrec_incoming(const pd_window_t *w, size_t i, pp_state_incoming_t *out);

/* A window from its record (strings moved out of s; its members, if any,
 * too). NULL with the reason in err when the record is not valid. */
pd_window_t *pd_jrec_window_restore(pd_registry_t *reg, pp_state_window_t *s, int64_t now_ms,
                                    char *err, size_t errlen);
/* Member `index` of w from its record (moved out of s), its names
 * interned in reg: replaces the member there, or appends it when index is
 * the next one. 0, PROFD_EINVAL (not valid, or an index past the end),
 * PROFD_ENOMEM. */
int pd_jrec_member_restore(pd_registry_t *reg, pd_window_t *w, size_t index, pp_state_member_t *s);
/* A window's fields from a later record of it, its members kept. */
int pd_jrec_window_update(pd_registry_t *reg, pd_window_t *w, pp_state_window_t *s, char *err,
                          size_t errlen);
/* Incoming file `index` of w from its record: replaces the file there, or
 * appends it when index is the next one; its member and capture must be
 * w's (the path's confinement is the caller's to check). `have` is left
 * 0 (the caller reads the .part). 0, PROFD_EINVAL, PROFD_ENOMEM. */
int pd_jrec_incoming_restore(pd_window_t *w, size_t index, const pp_state_incoming_t *s);
/* Rank r into the registry under its own id, registered again (state
 * active, seen at now_ms, `restored`): the same process registering again
 * gets its id back. 0, PROFD_EINVAL (not valid, or its id taken),
 * PROFD_ENOMEM. */
int pd_jrec_rank_restore(pd_registry_t *reg, const pp_jrank_t *r, const char *node, int64_t now_ms);

#endif
