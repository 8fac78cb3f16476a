// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A daemon's journal, the one store of both roles: its windows, their
 * members and capture states (reports, captures gathered, files listed),
 * its registered ranks and who it is (instance, plan generation, next
 * window id, the coordinator it knew), so that a restart, even after
 * kill -9, forgets nothing. <save_path>/.profd-<node>.journal. A
 * coordinator's (pd_journal_role_t, docs/store.md) also keeps the node
 * daemons it knew and the files still arriving from them, and no finished
 * window.
 *
 * Design: an append-only file of records (core/jrec.h: one JSON record a
 * line). A change marks what changed (pd_windows_touch, a rank registered
 * or gone); the journal writes the records of what was marked, within
 * 100 ms, or at once where a reply or a plan is about to tell the outside
 * world (pd_journal_sync: a write(2) into the page cache, which a killed
 * process does not lose; fdatasync follows on the thread pool). The cost
 * of a change is the size of its records, not of the state. When the file
 * grows past 4 times its last snapshot (1 MiB at least) a snapshot of the
 * whole state is written aside and replaces it (amortised O(1) per byte of
 * change); the records written meanwhile are appended to it first. Room is
 * allocated ahead of the file's end (1 MiB), so a full disk does not stop
 * the next records; when a write fails they wait in memory for the next.
 *
 * Reading back (pd_journal_open): the records in order, the later of a
 * window, member or rank replacing the earlier; a torn last line (a kill
 * in the middle of a write) is ignored; any other line that does not
 * decode stops the daemon with one line naming the file and line.
 * Restored: the instance (workers and the coordinator see the same daemon),
 * the ranks under their ids (a worker registering again gets its id back;
 * one that does not come back within limits.client_timeout_ms is lost with
 * that reason), the windows and their members. pd_journal_resume() then
 * gathers again the captures whose gathering had not finished (from the
 * spool, or listed where a rename had already put them) and finishes the
 * windows with nothing left to wait for. Loop thread only.
 */
#ifndef PD_JOURNAL_H
#define PD_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jload.h"
#include "node.h"

typedef struct pd_journal pd_journal_t;

/* A coordinator's journal, in save_path (a node daemon's is named after
 * the node). */
#define PD_COORDINATOR_JOURNAL ".profd-coordinator.journal"
/* What coordinators kept before the journal: the whole state (imported). */
#define PD_COORDINATOR_LEGACY ".profd-coordinator.json"

/* Read the journal back into n's registry and window table, the instance
 * (instance_len bytes at most) and n->gen, and open it for writing. 0, or
 * PROFD_ECONFIG / PROFD_EIO / PROFD_ENOMEM with one line in err. */
int pd_journal_open(pd_journal_t **out, pd_node_t *n, char *instance, size_t instance_len,
                    pd_journal_loaded_t *loaded, char *err, size_t errlen);
/* The same for a role (NULL: a node daemon's, as pd_journal_open). */
int pd_journal_open_as(pd_journal_t **out, pd_node_t *n, const pd_journal_role_t *role,
                       char *instance, size_t instance_len, pd_journal_loaded_t *loaded, char *err,
                       size_t errlen);
/* Write within 100 ms of a change from now on (a timer on n->loop). */
void pd_journal_start(pd_journal_t *j);
/* Gather again what a restart interrupted; finish windows with nothing left. */
void pd_journal_resume(pd_journal_t *j);

/* Rank k registered (or registered again, its roles changed). */
void pd_journal_rank(pd_journal_t *j, const pd_rank_t *k);
/* Rank `id` is gone for good. */
void pd_journal_rank_gone(pd_journal_t *j, int64_t id);
/* Node daemon: the coordinator's instance. */
void pd_journal_coordinator(pd_journal_t *j, const char *instance);
/* Coordinator: node `name` joined as `instance`, or went for good. */
void pd_journal_node(pd_journal_t *j, const char *name, const char *instance, bool gone);
/* Windows were marked (pd_windows_touch): written within 100 ms. */
void pd_journal_dirty(pd_journal_t *j);
/* Write what is marked now (before a reply or a plan tells anyone). */
void pd_journal_sync(pd_journal_t *j);
/* Send the reply buf (owned from here) to req once the journal holds what
 * it acknowledges: what is marked is written now, and the reply goes at
 * once when the write succeeded; else the request is parked and the reply
 * held until a write succeeds (tried again every second). A request the
 * endpoint cannot park gets an error (the peer sends it again). NULL j:
 * at once. */
void pd_journal_reply(pd_journal_t *j, pd_req_t *req, char *buf, size_t len);
/* At stop, before the endpoints close: write what is marked; the held
 * replies go unsent (their peers send again to the restarted daemon). */
void pd_journal_drop_replies(pd_journal_t *j);

/* Counters (measurable: records and bytes written, snapshots and their
 * cost). */
typedef struct pd_journal_stats {
    int64_t records, bytes, syncs, snapshots, snapshot_bytes, snapshot_us, write_errors;
    int64_t members;         /* of the records: members' */
    int64_t buffered;        /* encode buffers held between writes (bytes) */
    int64_t snapshot_buffer; /* the largest buffer a snapshot was encoded into (bytes) */
} pd_journal_stats_t;
void pd_journal_stats(const pd_journal_t *j, pd_journal_stats_t *out);

/* At stop: no more timer. After the loop: write what is left, sync, free.
 * NULL is fine. */
void pd_journal_stop(pd_journal_t *j);
void pd_journal_fini(pd_journal_t *j);

#endif
