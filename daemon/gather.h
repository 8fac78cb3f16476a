/*
 * Gathering: moves a finished capture folder from the spool into the
 * save_path tree, lists its files with sizes and checksums, and writes
 * manifests — on libuv's thread pool, never on the loop thread.
 *
 * Same file system: one rename(2) of the folder, O(1) in bytes. Otherwise a
 * copy (each file written as .part, then renamed) and the spool copy removed.
 * Confinement: only folders inside the spool are read; symlinks and special
 * files inside a capture reject it (PROFD_EPATH) and nothing is read through
 * them.
 */
#ifndef PD_GATHER_H
#define PD_GATHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "config.h"
#include "profd/proto.h"

typedef enum pd_job_kind {
    PD_JOB_GATHER, /* move src -> dst, list files */
    PD_JOB_WRITE,  /* write `data` to dst atomically (manifest.json) */
    PD_JOB_CHUNK,  /* write `data` at `offset` of <dst>.part; at `size`, verify and rename */
} pd_job_kind_t;

typedef struct pd_job {
    uv_work_t work;
    pd_job_kind_t kind;
    /* in */
    char spool[PD_PATH_MAX]; /* spool root (absolute) */
    char src[PD_PATH_MAX];   /* capture folder in the spool (absolute) */
    char dst[PD_PATH_MAX];   /* destination (absolute) */
    bool checksum;           /* xxh64 of every file */
    bool list_only;          /* PD_JOB_GATHER: list and checksum in place, move nothing */
    int64_t budget;          /* bytes this capture may add; -1 unlimited */
    char *data;              /* PD_JOB_WRITE: owned */
    size_t len;
    char prune[PD_PATH_MAX]; /* PD_JOB_WRITE: then remove the empty folders below */
    int64_t offset, size; /* PD_JOB_CHUNK */
    char expect[32];      /* PD_JOB_CHUNK: "xxh64:..." of the whole file, "" none */
    /* out */
    int rv; /* 0, PROFD_EPATH, PROFD_EIO, PROFD_ELIMIT */
    int64_t have; /* PD_JOB_CHUNK: bytes in <dst>.part afterwards */
    bool complete; /* PD_JOB_CHUNK: the file is whole, verified and renamed */
    char reason[512];
    bool incomplete; /* a .part file was left in the capture */
    bool renamed;    /* moved by rename(2) */
    pp_file_t *files;
    size_t nfiles, files_cap;
    int64_t bytes;
    /* completion on the loop thread; owns the job (pd_job_free) */
    void (*done)(struct pd_job *j);
    void *arg;
    int64_t window, client;
    size_t cap;
} pd_job_t;

/* Queue a job. Returns 0, or PROFD_EINTERNAL (done() is then not called). */
int pd_job_submit(uv_loop_t *loop, pd_job_t *j);
void pd_job_free(pd_job_t *j);

/* The work itself, synchronous (used by the job runner and by tests). */
void pd_gather_run(pd_job_t *j);
void pd_write_run(pd_job_t *j);
void pd_chunk_run(pd_job_t *j);

/* out = a + sep + b; PROFD_EINVAL (out untouched) when it does not fit. */
int pd_path_join(char *out, size_t len, const char *a, const char *sep, const char *b);

/* Remove the empty folders below and including `path` (never a file);
 * true when `path` itself is gone. */
bool pd_prune_empty(const char *path);

/* Create a folder and its parents (0755). 0 or PROFD_EIO with errno kept. */
int pd_mkdirs(const char *path, int mode);

#endif
