// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The file jobs (see gather.h): manifests and streamed files written
 * atomically, spool removal, TensorBoard's links. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "confine.h"
#include "gather.h"
#include "job.h"

/* ---- manifests and streamed files ---- */

/* Where a write job's text goes: its .part, at off. */
typedef struct wput {
    int fd;
    size_t off;
    int err; /* errno of a write that failed */
} wput_t;

static int write_put(void *arg, const char *text, size_t len)
{
    wput_t *to = arg;
    for (size_t k = 0; k < len;) {
        ssize_t w = pwrite(to->fd, text + k, len - k, (off_t)(to->off + k));
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            to->err = errno;
            return PROFD_EIO;
        }
        k += (size_t)w;
    }
    to->off += len;
    return 0;
}

void pd_write_run(pd_write_job_t *j)
{
    char why[400], part[NAME_MAX + 1];
    const char *base;
    int root, dir, rv;
    j->rv = 0;
    if ((rv = pd_confine_root(j->root, &root, why, sizeof(why))) != 0) {
        pd_job_fail(PD_JOB(j), rv, "%s", why);
        return;
    }
    rv = pd_confine_parent(root, j->dst, true, &dir, &base, why, sizeof(why));
    close(root);
    if (rv != 0) {
        pd_job_fail(PD_JOB(j), rv, "save_path tree: %s", why);
        return;
    }
    if ((size_t)snprintf(part, sizeof(part), "%s.part", base) >= sizeof(part)) {
        pd_job_fail(PD_JOB(j), PROFD_EPATH, "name too long: %.200s", j->dst);
        close(dir);
        return;
    }
    /* a .part already there is room kept for this file (reserve_manifest):
     * written over from its start, then cut to size */
    int fd = openat(dir, part, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot create %s.part: %s", j->dst, strerror(errno));
        close(dir);
        return;
    }
    wput_t to = {.fd = fd};
    if (j->fill) {
        rv = j->fill(j->fill_arg, write_put, &to);
        j->len = to.off;
    } else {
        rv = write_put(&to, j->data, j->len);
    }
    if (rv != 0) {
        if (to.err) {
            pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot write %s.part: %s", j->dst, strerror(to.err));
        } else {
            pd_job_fail(PD_JOB(j), rv, "cannot encode %s: %s", j->dst, profd_strerror(rv));
        }
        close(fd);
        unlinkat(dir, part, 0);
        close(dir);
        return;
    }
    /* on disk before it replaces the old one: a crash leaves one or the other */
    if (ftruncate(fd, (off_t)j->len) != 0 || (!j->no_sync && fsync(fd) != 0) || close(fd) != 0 ||
        renameat(dir, part, dir, base) != 0) {
        pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot write %s: %s", j->dst, strerror(errno));
        unlinkat(dir, part, 0);
    }
    close(dir);
    if (j->prune[0]) {
        pd_confine_prune_path(j->spool, j->prune);
    }
}

/* Where a batch's files are written (PD_JOB_CHUNKS): the save tree opened
 * once, the folder of the last file kept open (`dir`, below the tree at
 * `rel`) and the folder above it (`up`): the captures of a window lie side
 * by side in one folder, so a file in the next capture's folder is one
 * component away. NULL for a single chunk. */
typedef struct chunk_at {
    int root;
    pd_confine_kept_t up;
    int dir;
    char rel[PATH_MAX];
} chunk_at_t;

/* The folder of the batch's file `dst` (created where missing): the kept
 * one, or reached from the kept folder above it, one component at a time
 * with O_NOFOLLOW as pd_confine_parent does. *dir is the batch's. */
static int chunk_dir_kept(chunk_at_t *at, const char *dst, int *dir, const char **base, char *why,
                          size_t whylen)
{
    const char *slash = strrchr(dst, '/'), *name;
    size_t n = slash ? (size_t)(slash - dst) : 0;
    char folder[PATH_MAX];
    int up, fd, rv;
    if (slash == NULL || n >= sizeof(folder) || !pd_confine_rel_ok(dst)) {
        return pd_confine_parent_kept(&at->up, at->root, dst, true, dir, base, why, whylen);
    }
    if (at->dir < 0 || strlen(at->rel) != n || memcmp(at->rel, dst, n) != 0) {
        memcpy(folder, dst, n);
        folder[n] = '\0';
        if ((rv = pd_confine_parent_kept(&at->up, at->root, folder, true, &up, &name, why,
                                         whylen)) != 0) {
            return rv;
        }
        if (pd_confine_dir(up, name, true, &fd, why, whylen) != 0 &&
            (rv = pd_confine_dir(at->root, folder, true, &fd, why, whylen)) != 0) {
            return rv; /* walked again from the root: the reason names the whole folder */
        }
        if (at->dir >= 0) {
            close(at->dir);
        }
        at->dir = fd;
        memcpy(at->rel, folder, n + 1);
    }
    *dir = at->dir;
    *base = slash + 1;
    return 0;
}

/* A chunk's folder, done with: closed unless a batch keeps it. */
static void chunk_dir_done(const chunk_at_t *at, int dir)
{
    if (at == NULL && dir >= 0) {
        close(dir);
    }
}

/* The folder of a chunk's file and its .part, opened (created at offset
 * 0, after the free-disk check). 0; 1 when the .part does not end where
 * the chunk starts (j->have says where the sender resumes); or the error
 * the job failed with. */
static int chunk_open(pd_chunk_job_t *j, chunk_at_t *at, int *dirp, int *fdp, char *part,
                      size_t partlen, const char **base)
{
    char why[400];
    struct stat st;
    int root, dir, fd, rv;
    if (at) {
        rv = chunk_dir_kept(at, j->dst, &dir, base, why, sizeof(why));
    } else if ((rv = pd_confine_root(j->root, &root, why, sizeof(why))) != 0) {
        return pd_job_fail(PD_JOB(j), rv, "%s", why);
    } else {
        rv = pd_confine_parent(root, j->dst, true, &dir, base, why, sizeof(why));
        close(root);
    }
    if (rv != 0) {
        j->have = 0;
        return pd_job_fail(PD_JOB(j), rv, "save_path tree: %s", why);
    }
    if ((size_t)snprintf(part, partlen, "%s.part", *base) >= partlen) {
        chunk_dir_done(at, dir);
        return pd_job_fail(PD_JOB(j), PROFD_EPATH, "name too long: %.200s", j->dst);
    }
    if (j->offset == 0) {
        if (pd_job_floor_check(PD_JOB(j), j->min_free, 0, dir, j->size) != 0) {
            j->have = 0;
            chunk_dir_done(at, dir);
            return j->rv;
        }
        fd = openat(dir, part, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    } else {
        fd = openat(dir, part, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        j->have = 0; /* nothing usable here: start the file again */
        rv = pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot open %s: %s", part, strerror(errno));
        chunk_dir_done(at, dir);
        return rv;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (j->offset > 0 && st.st_size != j->offset)) {
        j->have = S_ISREG(st.st_mode) ? st.st_size : 0; /* resume from what is really here */
        close(fd);
        chunk_dir_done(at, dir);
        return 1; /* no error: the sender resumes at j->have */
    }
    *dirp = dir;
    *fdp = fd;
    return 0;
}

/* The whole file against the checksum its sender listed; a mismatch drops
 * the .part and the sender starts again from 0. */
static int chunk_verify(pd_chunk_job_t *j, int dir, int fd, const char *part)
{
    char *buf = malloc(PD_IO_CHUNK);
    uint64_t h = 0;
    char got[32];
    int rv = buf == NULL ? pd_job_fail(PD_JOB(j), PROFD_ENOMEM, "out of memory")
             : lseek(fd, 0, SEEK_SET) != 0
                 ? pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot read %s: %s", part, strerror(errno))
                 : pd_job_pump(PD_JOB(j), true, fd, -1, j->size, part, buf, &h);
    free(buf);
    if (rv != 0) {
        return rv;
    }
    snprintf(got, sizeof(got), "xxh64:%016llx", (unsigned long long)h);
    if (strcmp(got, j->expect) != 0) {
        unlinkat(dir, part, 0);
        j->have = 0;
        j->mismatch = true;
        return pd_job_fail(PD_JOB(j), PROFD_EIO, "checksum mismatch: received %s, expected %s", got,
                           j->expect);
    }
    return 0;
}

/* The running hash of a chunk's file up to the chunk's offset: made again
 * from the .part when it stops short (a restart lost it). 0 or the error. */
static int chunk_hash_upto(pd_chunk_job_t *j, int fd, const char *part)
{
    XXH64_state_t *st = j->hash;
    if (*j->hashed == j->offset) {
        return 0;
    }
    char *buf = malloc(PD_IO_CHUNK);
    if (buf == NULL) {
        return pd_job_fail(PD_JOB(j), PROFD_ENOMEM, "out of memory");
    }
    XXH64_reset(st, 0);
    *j->hashed = 0;
    while (*j->hashed < j->offset) {
        int64_t want = j->offset - *j->hashed < PD_IO_CHUNK ? j->offset - *j->hashed : PD_IO_CHUNK;
        ssize_t n = pread(fd, buf, (size_t)want, (off_t)*j->hashed);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            free(buf);
            XXH64_reset(st, 0);
            *j->hashed = 0;
            j->have = 0; /* start the file again */
            return pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot read %s: %s", part,
                               n < 0 ? strerror(errno) : "shorter than received");
        }
        XXH64_update(st, buf, (size_t)n);
        *j->hashed += n;
    }
    free(buf);
    return 0;
}

static void chunk_write(pd_chunk_job_t *j, chunk_at_t *at)
{
    char part[NAME_MAX + 1];
    const char *base;
    int dir = -1, fd = -1;

    j->rv = 0;
    j->got[0] = '\0';
    j->complete = false;
    j->have = j->offset;
    if (chunk_open(j, at, &dir, &fd, part, sizeof(part), &base) != 0) {
        return;
    }
    if (j->hash && chunk_hash_upto(j, fd, part) != 0) {
        close(fd);
        chunk_dir_done(at, dir);
        return;
    }
    for (size_t off = 0; off < j->len;) {
        ssize_t w = pwrite(fd, j->data + off, j->len - off, j->offset + (off_t)off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot write %s: %s", part, strerror(errno));
            close(fd);
            chunk_dir_done(at, dir);
            return;
        }
        off += (size_t)w;
    }
    j->have = j->offset + (int64_t)j->len;
    if (j->hash) { /* hashed as it is written: no second pass */
        XXH64_update(j->hash, j->data, j->len);
        *j->hashed = j->have;
    }
    if (j->have < j->size) {
        if (close(fd) != 0) {
            pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot write %s: %s", part, strerror(errno));
        }
        chunk_dir_done(at, dir);
        return;
    }
    if (j->hash) {
        snprintf(j->got, sizeof(j->got), "xxh64:%016llx",
                 (unsigned long long)XXH64_digest(j->hash));
        if (j->expect[0] && strcmp(j->got, j->expect) != 0) {
            unlinkat(dir, part, 0);
            j->have = 0;
            XXH64_reset(j->hash, 0); /* the file comes again from its start */
            *j->hashed = 0;
            j->mismatch = true;
            pd_job_fail(PD_JOB(j), PROFD_EIO, "checksum mismatch: received %s, expected %s", j->got,
                        j->expect);
            close(fd);
            chunk_dir_done(at, dir);
            return;
        }
    } else if (j->expect[0] && chunk_verify(j, dir, fd, part) != 0) {
        close(fd);
        chunk_dir_done(at, dir);
        return;
    }
    if (close(fd) != 0) {
        pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot write %s: %s", part, strerror(errno));
    } else if (renameat(dir, part, dir, base) != 0) {
        pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot rename %s: %s", part, strerror(errno));
    } else {
        j->complete = true;
    }
    chunk_dir_done(at, dir);
}

void pd_chunk_run(pd_chunk_job_t *j)
{
    chunk_write(j, NULL);
}

void pd_chunks_run(pd_chunks_job_t *b)
{
    char why[400];
    chunk_at_t at;
    int rv = pd_confine_root(b->root, &at.root, why, sizeof(why));
    pd_confine_kept_init(&at.up);
    at.dir = -1;
    for (size_t i = 0; i < b->n; i++) {
        pd_chunk_job_t *j = b->items[i];
        if (rv != 0) {
            j->rv = 0;
            j->complete = false;
            j->have = 0;
            pd_job_fail(PD_JOB(j), rv, "%s", why);
            continue;
        }
        chunk_write(j, &at);
    }
    pd_confine_kept_close(&at.up);
    if (at.dir >= 0) {
        close(at.dir);
    }
    if (rv == 0) {
        close(at.root);
    }
}

/* ---- spool removal ---- */

void pd_remove_run(pd_remove_job_t *j)
{
    char why[400];
    const char *base;
    int spool, dir, rv;
    j->rv = 0;
    if (!pd_confine_rel_ok(j->src)) {
        pd_job_fail(PD_JOB(j), PROFD_EPATH, "not a plain path in the spool: %.200s", j->src);
        return;
    }
    if ((rv = pd_confine_root(j->spool, &spool, why, sizeof(why))) != 0) {
        pd_job_fail(PD_JOB(j), rv, "spool: %s", why);
        return;
    }
    rv = pd_confine_parent(spool, j->src, false, &dir, &base, why, sizeof(why));
    if (rv == 0) {
        if (pd_confine_remove(dir, base) != 0) {
            pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot remove %s from the spool", j->src);
        }
        close(dir);
    } else if (errno != ENOENT) {
        pd_job_fail(PD_JOB(j), rv, "%s", why);
    }
    pd_confine_prune(spool, PD_TRASH); /* gone when nothing else waits there */
    close(spool);
}

/* ---- views and merges ---- */

void pd_link_run(pd_link_job_t *j)
{
    char why[400];
    int root, dir, rv;
    j->rv = 0;
    j->have = 0;
    if ((rv = pd_confine_root(j->root, &root, why, sizeof(why))) != 0) {
        pd_job_fail(PD_JOB(j), rv, "%s", why);
        return;
    }
    if ((rv = pd_confine_dir(root, j->dst, true, &dir, why, sizeof(why))) != 0) {
        pd_job_fail(PD_JOB(j), rv, "save_path tree: %s", why);
        close(root);
        return;
    }
    for (size_t i = 0; i < j->nlinks; i++) {
        const char *base;
        int from;
        if (pd_confine_parent(root, j->links[i], false, &from, &base, why, sizeof(why)) != 0) {
            pd_job_fail(PD_JOB(j), PROFD_EPATH, "%s", why);
            continue;
        }
        struct stat st;
        if (fstatat(from, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
            if (linkat(from, base, dir, base, 0) == 0) {
                j->have++;
            } else if (errno != EEXIST) {
                /* no hard links here: a link by name, relative to the folder */
                char target[PD_PATH_MAX];
                size_t depth = 1;
                for (const char *p = j->dst; *p; p++) {
                    depth += *p == '/';
                }
                size_t off = 0;
                for (size_t d = 0; d < depth && off + 3 < sizeof(target); d++) {
                    off += (size_t)snprintf(target + off, sizeof(target) - off, "../");
                }
                snprintf(target + off, sizeof(target) - off, "%s", j->links[i]);
                if (symlinkat(target, dir, base) == 0) {
                    j->have++;
                } else if (errno != EEXIST) {
                    pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot link %s into %s: %s", j->links[i],
                                j->dst, strerror(errno));
                }
            }
        }
        close(from);
    }
    close(dir);
    close(root);
}
