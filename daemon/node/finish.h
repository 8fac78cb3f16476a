// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Finishing windows on this daemon: the reported captures gathered from
 * the spool into the save_path tree (gather.h jobs on the thread pool), and
 * the manifest of a window with nothing left to wait for. The composition
 * root installs pd_finish_gather and pd_finish_manifest as the window
 * table's gather and complete hooks. Loop thread only.
 */
#ifndef PD_FINISH_H
#define PD_FINISH_H

#include <stdint.h>

#include "node.h"

/* Gather capture `ci` of member m (its folder below the spool) into the
 * tree; w->pending counts it until it is done. owner: the uid its files
 * must belong to (-1 any). On a node daemon of a coordinator without a
 * shared save_path the files are only listed and checksummed in place (the
 * link streams them). */
void pd_finish_gather(pd_node_t *n, pd_window_t *w, pd_member_t *m, size_t ci, int64_t owner);

/* Write w's manifest: state gathering until it is written, then done. A
 * window is done only once its manifest exists: one that cannot be written
 * for now (a full disk) stays gathering with the reason and is tried again
 * (pd_finish_retry); one that can never be where it belongs (a symlink in
 * the tree) fails. */
void pd_finish_manifest(pd_node_t *n, pd_window_t *w);
/* Periodic: write the manifests whose retry is due. */
void pd_finish_retry(pd_node_t *n, int64_t now_ms);

/* After a restart (journal.h): gather again the captures whose gathering
 * had not finished, and finish the windows with nothing left to wait for. */
void pd_finish_resume(pd_node_t *n);

/* Remove spool/rel (a whole tree) on the thread pool; nobody waits for it. */
void pd_finish_remove_spool(pd_node_t *n, const char *rel);

#endif
