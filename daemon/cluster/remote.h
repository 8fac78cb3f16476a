// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Coordinator side of remote captures: the plans of node daemons, the
 * results their workers' captures produced, and the files that stream in
 * from their spools (written as .part, checksummed, renamed). Loop thread.
 */
#ifndef PD_REMOTE_H
#define PD_REMOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "node.h"
#include "profd/proto.h"

/* The plan of one node: an entry per (window, selector) with the node's
 * clients. Strings are borrowed from the windows; free with
 * pd_remote_node_plan_free(). */
int pd_remote_node_plan(const pd_node_t *n, const char *node, pp_node_plan_t *out);
void pd_remote_node_plan_free(pp_node_plan_t *p);

/* A node forwarded the captures of one of its workers (remote rank k).
 * shared: the node wrote the files into the shared save_path itself.
 * 0, or PROFD_ENOENT / PROFD_ESTATE with a reason. */
int pd_remote_on_result(pd_node_t *n, const pd_rank_t *k, bool shared, pp_node_result_t *r,
                        char *err, size_t errlen);

/* A streamed file that fails its checksum this many times fails its
 * capture, and its node is told to drop it. */
#define PD_REMOTE_MAX_MISMATCHES 3

/* Chunks of a file held in memory behind the one being written (their
 * requests parked, coordinator.max_node_requests bounding them all): a
 * node keeps up to PD_REMOTE_QUEUE + 1 of a file in flight. */
#define PD_REMOTE_QUEUE 7

/* A piece of a file: replies to `req` now, or once the write is done (a
 * chunk held behind the one being written: once it is written in turn). */
void pd_remote_on_chunk(pd_node_t *n, pd_req_t *req, const pp_chunk_t *c, const void *payload,
                        size_t plen);

/* Whole files in one request (chunks, each item a file of one chunk):
 * the ones expected are written in one job, and one reply, with each
 * item's code and message in order, goes once the journal holds every
 * file it acknowledges. An item's 0: the file arrived (now or before) or
 * was given up (its capture says why): the node forgets it. PROFD_ENOENT /
 * PROFD_EINVAL: refused (not expected, not the whole file). Any other
 * code: not written now (being written, the request pool full, a write
 * that failed): the node sends it again. */
#define PD_REMOTE_BATCH_MAX 256
/* Batches take memory for their files until written (the bytes, and a job
 * per file): a coordinator writes at most PD_REMOTE_BATCH_FILES files or
 * PD_REMOTE_BATCH_BYTES bytes of batches at once. A batch beyond them, with
 * one being written, is answered busy: every item PROFD_ELIMIT and
 * `busy_ms` PD_REMOTE_BUSY_MS, none taken (at 16,384 ranks over 256 nodes,
 * each node's 64 files in one request at a window's end had held every
 * file of the window at once: VmHWM 88-134 MiB). */
#define PD_REMOTE_BATCH_FILES 1024
#define PD_REMOTE_BATCH_BYTES (4 << 20)
#define PD_REMOTE_BUSY_MS     100
/* Whether a batch of `files` files and `bytes` bytes is taken now, with
 * `held_files` files and `held_bytes` bytes of batches being written:
 * always when none is; else when both stay within the limits. */
bool pd_remote_batch_admit(int64_t held_files, int64_t held_bytes, int64_t files, int64_t bytes);
void pd_remote_on_chunks(pd_node_t *n, pd_req_t *req, const pp_chunks_t *b, const void *payload,
                         size_t plen);

/* A node is gone: its files that have not arrived fail the captures. */
void pd_remote_node_lost(pd_node_t *n, const char *node, const char *reason);

#endif
