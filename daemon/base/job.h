// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A file job (gather.h says what each kind does): one small struct per
 * kind, each starting with the fields every job has (PD_JOB_FIELDS, as
 * libuv's requests start with UV_REQ_FIELDS), and what the kinds share on
 * the thread pool -- failing a job with its reason, reading a file while
 * hashing it and writing it elsewhere, the free-disk floor. gather.c runs
 * the capture gathering and queues every kind through a table of the kinds
 * (size, work, what each owns: as nng's ops tables); filejob.c and
 * mergejob.c run the others.
 */
#ifndef PD_JOB_H
#define PD_JOB_H

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
    PD_JOB_CHUNKS, /* several whole files, each a PD_JOB_CHUNK of one chunk, one job */
    PD_JOB_REMOVE, /* remove spool/src, a whole tree; then .trash when it is empty */
    PD_JOB_LINK,   /* link root/<links[i]> as root/dst/<its name> (TensorBoard's run folder) */
    PD_JOB_MERGE,  /* merge the traces merge->inputs into root/dst (tracemerge.h) */
    PD_JOB_DIFF,   /* compare two ranks' traces into diff->out (tracediff.h) */
} pd_job_kind_t;

/* Below the spool: copies waiting for removal (job names never start with a dot). */
#define PD_TRASH ".trash"

/* Where a gathering calls its hook: between a check and the use it
 * guards, where a worker could swap a folder for a symlink. Tests swap it
 * there, so that the race happens every time. */
typedef enum pd_job_at {
    PD_JOB_AT_OPEN,   /* before the capture folder is opened below the spool */
    PD_JOB_AT_FOLDER, /* listing: an entry's status says folder; before it is opened */
    PD_JOB_AT_LISTED, /* listed and checked; before it is moved, copied or checksummed */
} pd_job_at_t;

/* What every kind of job holds first (libuv's UV_REQ_FIELDS): a kind's
 * struct starts with these, so a pd_job_t * reaches any of them and the
 * kind says which it is. */
#define PD_JOB_FIELDS                                                                              \
    uv_work_t work;                                                                                \
    pd_job_kind_t kind;                                                                            \
    char root[PD_PATH_MAX]; /* the save tree (absolute) */                                         \
    char dst[PD_PATH_MAX];  /* destination, relative to root; never followed through               \
                               symlinks */                                                         \
    /* out */                                                                                      \
    int rv; /* 0, PROFD_EPATH, PROFD_EIO, PROFD_ELIMIT */                                          \
    char reason[512];                                                                              \
    /* completion on the loop thread; owns the job (pd_job_free) */                                \
    void (*done)(struct pd_job * j);                                                               \
    void *arg;                                                                                     \
    int64_t window, client; /* the caller's: which window (and rank) it is for */                  \
    size_t cap;

typedef struct pd_job {
    PD_JOB_FIELDS
} pd_job_t;

/* Any kind's job as the pd_job_t it starts with. */
#define PD_JOB(kind_job) ((pd_job_t *)(kind_job))

/* PD_JOB_GATHER: move spool/src -> root/dst, list files. */
typedef struct pd_gather_job {
    PD_JOB_FIELDS
    char spool[PD_PATH_MAX]; /* spool root (absolute) */
    char src[PD_PATH_MAX];   /* capture folder, relative to the spool */
    bool checksum;           /* xxh64 of every file */
    bool list_only;          /* list and checksum in place, move nothing */
    bool drop_empty;         /* a capture left with no file (not complete) is removed from
                                the tree rather than kept as an empty folder */
    bool recover;            /* after a restart: a capture no longer in the spool is listed
                                where a rename put it in the tree; a copy left half done
                                there is made again */
    int64_t owner;           /* uid everything must belong to; -1 any */
    int64_t max_files;       /* files and folders in a capture; 0 = 100000 */
    int64_t min_free;        /* free bytes to keep on the save tree's file system; 0 = none */
    int64_t budget;          /* bytes the window may gather in all; -1 unlimited */
    _Atomic int64_t *used;   /* with budget: bytes the window's captures claimed so far */
    /* room kept for the window's manifest, relative to root ("" none): made
     * at least reserve_base bytes, plus 256 per file the window's captures
     * hold (*reserved counts them, shared by the window's jobs). The
     * manifest's PD_JOB_WRITE writes into that room. */
    char manifest[PD_PATH_MAX];
    int64_t reserve_base;
    _Atomic int64_t *reserved;
    /* out */
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
    /* tests only: called on the worker thread at each pd_job_at_t; NULL */
    void (*hook)(struct pd_gather_job *j, pd_job_at_t at);
    void *hook_arg;
} pd_gather_job_t;

/* PD_JOB_WRITE: `data` to root/dst atomically (manifest.json). */
typedef struct pd_write_job {
    PD_JOB_FIELDS
    char *data; /* owned */
    size_t len;
    /* or, without data: the text written piece by piece as fill hands it to
     * put (a document of megabytes never held whole); len then counts it.
     * fill returns 0 or an error (put's, or its own); fill_arg stays the
     * caller's. */
    int (*fill)(void *arg, int (*put)(void *to, const char *text, size_t len), void *to);
    void *fill_arg;
    bool no_sync;            /* no fsync before the rename (the page cache holds it against a
                                killed process; the caller syncs later) */
    char spool[PD_PATH_MAX]; /* with prune: the spool root (absolute) */
    char prune[PD_PATH_MAX]; /* then remove the empty folders of spool/prune */
} pd_write_job_t;

/* PD_JOB_CHUNK: `data` at `offset` of root/<dst>.part; at `size`, verify
 * and rename. */
typedef struct pd_chunk_job {
    PD_JOB_FIELDS
    char *data; /* owned */
    size_t len;
    int64_t offset, size;
    int64_t min_free; /* free bytes to keep (checked when the file starts); 0 = none */
    char expect[32];  /* "xxh64:..." of the whole file, "" none */
    /* the file's running xxh64 (an XXH64_state_t the caller keeps between
     * the chunks of a file, one job at a time) over its first *hashed
     * bytes: each chunk is hashed as it is written, no second pass over the
     * file (a state that does not reach the chunk's offset, after a
     * restart, is made again from the .part first). NULL: the whole file is
     * read back at its end instead. */
    void *hash;
    int64_t *hashed;
    /* out */
    char got[32];  /* complete: "xxh64:..." of the file written */
    int64_t have;  /* bytes in <dst>.part afterwards */
    bool complete; /* the file is whole, verified and renamed */
    bool mismatch; /* the whole file failed its checksum; the .part is gone */
} pd_chunk_job_t;

/* PD_JOB_CHUNKS: whole files (each item a PD_JOB_CHUNK at offset 0 of
 * its whole size, its outcome in it) written one after another in one
 * job: the save tree opened once, and a folder kept open across the
 * files in it (pd_confine_parent_kept). Each item's `hash` is its own,
 * freed with the job (`hashed` may point into it). */
typedef struct pd_chunks_job {
    PD_JOB_FIELDS
    char *data;             /* owned: every item's bytes, its data pointing into them */
    pd_chunk_job_t **items; /* owned */
    size_t n;
} pd_chunks_job_t;

/* PD_JOB_REMOVE: spool/src, a whole tree; then .trash when it is empty. */
typedef struct pd_remove_job {
    PD_JOB_FIELDS
    char spool[PD_PATH_MAX]; /* spool root (absolute) */
    char src[PD_PATH_MAX];   /* relative to the spool */
} pd_remove_job_t;

/* PD_JOB_LINK: root/<links[i]> as root/dst/<its name>. */
typedef struct pd_link_job {
    PD_JOB_FIELDS
    char **links; /* files relative to root, owned */
    size_t nlinks;
    int64_t have; /* out: links made */
} pd_link_job_t;

/* PD_JOB_MERGE: the traces merge->inputs into root/dst. */
typedef struct pd_merge_job {
    PD_JOB_FIELDS
    struct pd_merge *merge; /* inputs in, counts out; owned */
} pd_merge_job_t;

/* PD_JOB_DIFF: two ranks' traces into diff->out (root is the save tree). */
typedef struct pd_diff_job {
    PD_JOB_FIELDS
    struct pd_diff *diff; /* files in, the diff out; owned */
} pd_diff_job_t;

/* A job of that kind, zeroed, its kind set; NULL without memory. Cast it to
 * the kind's struct to fill it in. (gather.c, with the kinds' table.) */
pd_job_t *pd_job_new(pd_job_kind_t kind);

/* The unit of reads and writes. */
#define PD_IO_CHUNK (1u << 20)

/* Sets j->rv and j->reason; returns rv. */
int pd_job_fail(pd_job_t *j, int rv, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Read `size` bytes of `in`, checksum them (when `checksum`, into *hash)
 * and write them to `out` (-1: checksum only); `buf` holds PD_IO_CHUNK
 * bytes. 0 or the error the job failed with. */
int pd_job_pump(pd_job_t *j, bool checksum, int in, int out, int64_t size, const char *rel,
                char *buf, uint64_t *hash);

/* A copy's write failed (errno): out of space truncates the capture
 * (PROFD_ELIMIT), as the free-disk floor does, rather than fail it. */
int pd_job_write_failed(pd_job_t *j, const char *rel);

/* Would writing `need` bytes on the file system of `fd` leave less than
 * min_free (0: no floor)? 0, or the error the job failed with (its reason
 * names `bytes`, the capture's size). */
int pd_job_floor_check(pd_job_t *j, int64_t min_free, int64_t bytes, int fd, int64_t need);

/* Create a folder and its parents (0755). 0 or PROFD_EIO with errno kept.
 * For the daemon's own folders (run_dir, save_path, spool) only. */
int pd_mkdirs(const char *path, int mode);

#endif
