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

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "config.h"
#include "profd/proto.h"

typedef enum pd_job_kind {
    PD_JOB_GATHER, /* move spool/src -> root/dst, list files */
    PD_JOB_WRITE,  /* write `data` to root/dst atomically (manifest.json) */
    PD_JOB_CHUNK,  /* write `data` at `offset` of root/<dst>.part; at `size`, verify and rename */
    PD_JOB_REMOVE, /* remove spool/src, a whole tree; then .trash when it is empty */
    PD_JOB_LINK,   /* link root/<links[i]> as root/dst/<its name> (TensorBoard's run folder) */
    PD_JOB_MERGE,  /* merge the traces merge->inputs into root/dst (tracemerge.h) */
    PD_JOB_DIFF,   /* compare two ranks' traces into diff->out (tracediff.h) */
} pd_job_kind_t;

/* Below the spool: copies waiting for removal (job names never start with a dot). */
#define PD_TRASH ".trash"

/* Where a gathering calls pd_job_t.hook: between a check and the use it
 * guards, where a worker could swap a folder for a symlink. Tests swap it
 * there, so that the race happens every time. */
typedef enum pd_job_at {
    PD_JOB_AT_OPEN,   /* before the capture folder is opened below the spool */
    PD_JOB_AT_FOLDER, /* listing: an entry's status says folder; before it is opened */
    PD_JOB_AT_LISTED, /* listed and checked; before it is moved, copied or checksummed */
} pd_job_at_t;

typedef struct pd_job {
    uv_work_t work;
    pd_job_kind_t kind;
    /* in */
    char spool[PD_PATH_MAX]; /* spool root (absolute) */
    char src[PD_PATH_MAX];   /* PD_JOB_GATHER: capture folder, relative to the spool */
    char root[PD_PATH_MAX];  /* the save tree (absolute) */
    char dst[PD_PATH_MAX];   /* destination, relative to root; never followed through symlinks */
    bool checksum;           /* xxh64 of every file */
    bool list_only;          /* PD_JOB_GATHER: list and checksum in place, move nothing */
    bool drop_empty;         /* PD_JOB_GATHER: a capture left with no file (not complete) is
                                removed from the tree rather than kept as an empty folder */
    bool recover;            /* PD_JOB_GATHER after a restart: a capture no longer in the
                                spool is listed where a rename put it in the tree; a copy
                                left half done there is made again */
    int64_t owner;           /* PD_JOB_GATHER: uid everything must belong to; -1 any */
    int64_t max_files;       /* PD_JOB_GATHER: files and folders in a capture; 0 = 100000 */
    int64_t min_free;        /* free bytes to keep on the save tree's file system; 0 = none */
    int64_t budget;          /* bytes the window may gather in all; -1 unlimited */
    _Atomic int64_t *used;   /* with budget: bytes the window's captures claimed so far */
    /* PD_JOB_GATHER: room kept for the window's manifest, relative to root
     * ("" none): made at least reserve_base bytes, plus 256 per file the
     * window's captures hold (*reserved counts them, shared by the window's
     * jobs). PD_JOB_WRITE writes into that room. */
    char manifest[PD_PATH_MAX];
    int64_t reserve_base;
    _Atomic int64_t *reserved;
    char *data;   /* PD_JOB_WRITE: owned */
    bool no_sync; /* PD_JOB_WRITE: no fsync before the rename (the page cache holds it
                     against a killed process; the caller syncs later) */
    size_t len;
    char prune[PD_PATH_MAX]; /* PD_JOB_WRITE: then remove the empty folders of spool/prune */
    int64_t offset, size;    /* PD_JOB_CHUNK */
    char expect[32];         /* PD_JOB_CHUNK: "xxh64:..." of the whole file, "" none */
    /* PD_JOB_CHUNK: the file's running xxh64 (an XXH64_state_t the caller
     * keeps between the chunks of a file, one job at a time) over its first
     * *hashed bytes: each chunk is hashed as it is written, no second pass
     * over the file (a state that does not reach the chunk's offset, after
     * a restart, is made again from the .part first). NULL: the whole file
     * is read back at its end instead. */
    void *hash;
    int64_t *hashed;
    char got[32]; /* PD_JOB_CHUNK, complete: "xxh64:..." of the file written */
    char **links; /* PD_JOB_LINK: files relative to root, owned */
    size_t nlinks;
    struct pd_merge *merge; /* PD_JOB_MERGE: inputs in, counts out; owned */
    struct pd_diff *diff;   /* PD_JOB_DIFF: files in, the diff out; owned */
    /* out */
    int rv;        /* 0, PROFD_EPATH, PROFD_EIO, PROFD_ELIMIT */
    int64_t have;  /* PD_JOB_CHUNK: bytes in <dst>.part afterwards */
    bool complete; /* PD_JOB_CHUNK: the file is whole, verified and renamed */
    bool mismatch; /* PD_JOB_CHUNK: the whole file failed its checksum; the .part is gone */
    char reason[512];
    bool incomplete; /* a .part file was left in the capture (removed, not listed) */
    int nparts;      /* how many */
    char part[256];  /* the first of them */
    char **parts;    /* all of them, relative to the capture */
    bool renamed;    /* moved by rename(2): its files are not read again (moved) */
    bool missing;    /* the capture folder is not in the spool */
    bool dropped;    /* drop_empty: it held no file and is not in the tree */
    bool left;       /* copied, but the spool copy could not be removed (see reason) */
    bool trashed;    /* copied; the spool copy went to .trash/w<window> */
    pp_file_t *files;
    size_t nfiles, files_cap;
    int64_t bytes;
    /* completion on the loop thread; owns the job (pd_job_free) */
    void (*done)(struct pd_job *j);
    void *arg;
    int64_t window, client;
    size_t cap;
    /* tests only: called on the worker thread at each pd_job_at_t; NULL */
    void (*hook)(struct pd_job *j, pd_job_at_t at);
    void *hook_arg;
} pd_job_t;

/* Queue a job. Returns 0, or PROFD_EINTERNAL (done() is then not called). */
int pd_job_submit(uv_loop_t *loop, pd_job_t *j);
void pd_job_free(pd_job_t *j);

/* The work itself, synchronous (used by the job runner and by tests). */
void pd_gather_run(pd_job_t *j);
void pd_write_run(pd_job_t *j);
void pd_chunk_run(pd_job_t *j);
void pd_remove_run(pd_job_t *j);
/* Hard links (a symlink where the file system has none) of regular files
 * into a folder made for them; an existing name is left alone. Counts the
 * links made in `have`. */
void pd_link_run(pd_job_t *j);
/* The merged trace, written as <dst>.part and renamed when complete. */
void pd_merge_run(pd_job_t *j);
/* The trace diff of diff->files into diff->out (tracediff.h). */
void pd_diff_run(pd_job_t *j);

/* Create a folder and its parents (0755). 0 or PROFD_EIO with errno kept.
 * For the daemon's own folders (run_dir, save_path, spool) only. */
int pd_mkdirs(const char *path, int mode);

#endif
