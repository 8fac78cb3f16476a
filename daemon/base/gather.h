// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Gathering: moves a finished capture folder from the spool into the
 * save_path tree, lists its files with sizes and checksums, and writes
 * manifests — on libuv's thread pool, never on the loop thread.
 *
 * Same file system: one rename(2) of the folder, O(1) in bytes: the files
 * are not read again (listed as moved, without checksum). Otherwise
 * (another file system, or a folder of another user that this daemon may
 * not move) a copy, each file written as .part and then renamed; the
 * spool copy then goes aside into <spool>/.trash/w<window>/ (one rename on
 * the spool's file system) and is removed once the window's manifest is
 * written (PD_JOB_REMOVE): unlinking GiB files takes a while on some file
 * systems, and nobody waits for it. A daemon that starts empties .trash.
 * Checksums are computed where bytes travel, in the same pass: while
 * copying; a node streaming to its coordinator only lists (link.c hashes
 * each file as it reads it to send it, the coordinator as it writes it).
 *
 * Partial files: a profiler's <name>.part left in a capture is removed
 * (the capture is truncated, saying so), never gathered. A copy that runs
 * out of space truncates the capture. Room for the window's manifest is
 * kept (manifest.json.part, allocated as captures are gathered) so that a
 * disk filling up meanwhile cannot stop the manifest.
 *
 * Confinement: everything is reached from the spool's and the save tree's
 * descriptors one component at a time without following symlinks (see
 * confine.h), so a folder swapped for a symlink between the report and the
 * gathering is refused, not followed. A capture is refused (PROFD_EPATH)
 * when it or anything in it is a symlink, a fifo, a socket, a device, a
 * file with several hard links, a name with control characters or not
 * UTF-8, folders nested too deep, or something not owned by the worker
 * that reported it; nothing is read through such an entry. Limits
 * (PROFD_ELIMIT: files per capture, the window's byte budget, the free-disk
 * floor) remove the capture from the spool.
 */
#ifndef PD_GATHER_H
#define PD_GATHER_H

#include "job.h"

/* Queue a job (pd_job_new, filled in as its kind). Returns 0, or
 * PROFD_EINTERNAL (done() is then not called). */
int pd_job_submit(uv_loop_t *loop, pd_job_t *j);
void pd_job_free(pd_job_t *j);

/* The job's work, by its kind, synchronous: what the thread pool runs, and
 * what a caller runs itself when the pool is gone (stopping). */
void pd_job_run(pd_job_t *j);

/* The work itself, synchronous (used by the job runner and by tests). */
void pd_gather_run(pd_gather_job_t *j);
void pd_write_run(pd_write_job_t *j);
void pd_chunk_run(pd_chunk_job_t *j);
void pd_chunks_run(pd_chunks_job_t *j);
void pd_remove_run(pd_remove_job_t *j);
/* Hard links (a symlink where the file system has none) of regular files
 * into a folder made for them; an existing name is left alone. Counts the
 * links made in `have`. */
void pd_link_run(pd_link_job_t *j);
/* The merged trace, written as <dst>.part and renamed when complete. */
void pd_merge_run(pd_merge_job_t *j);
/* The trace diff of diff->files into diff->out (tracediff.h). */
void pd_diff_run(pd_diff_job_t *j);

#endif
