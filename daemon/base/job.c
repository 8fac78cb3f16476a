// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* What the file jobs share (see job.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <xxhash.h>

#include "hasher.h"
#include "job.h"

int pd_job_fail(pd_job_t *j, int rv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->reason, sizeof(j->reason), fmt, ap);
    va_end(ap);
    j->rv = rv;
    return rv;
}

int pd_mkdirs(const char *path, int mode)
{
    char buf[PD_PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(buf)) {
        errno = ENAMETOOLONG;
        return PROFD_EIO;
    }
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST) {
                return PROFD_EIO;
            }
            *p = '/';
        }
    }
    if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST) {
        return PROFD_EIO;
    }
    return 0;
}

/* ---- reading, hashing and copying, by descriptor ---- */

/* Copies of at least this size hash on a second thread (hasher.h). */
#define HASH_THREAD_MIN (8 * (int64_t)PD_IO_CHUNK)

typedef struct {
    XXH64_state_t *st; /* hashing inline */
    pd_hasher_t *th;   /* or on a thread */
} sum_t;

static int sum_start(sum_t *s, pd_job_t *j, bool checksum, bool thread)
{
    s->st = NULL;
    s->th = NULL;
    if (!checksum || (thread && pd_hasher_start(&s->th) == 0)) {
        return 0;
    }
    if ((s->st = XXH64_createState()) == NULL) {
        return pd_job_fail(j, PROFD_ENOMEM, "out of memory");
    }
    XXH64_reset(s->st, 0);
    return 0;
}

static void sum_update(sum_t *s, const void *buf, size_t len)
{
    if (s->th) {
        pd_hasher_feed(s->th, buf, len);
    } else if (s->st) {
        XXH64_update(s->st, buf, len);
    }
}

static XXH64_hash_t sum_end(sum_t *s)
{
    XXH64_hash_t h = 0;
    if (s->th) {
        h = (XXH64_hash_t)pd_hasher_finish(s->th);
    } else if (s->st) {
        h = XXH64_digest(s->st);
        XXH64_freeState(s->st);
    }
    s->st = NULL;
    s->th = NULL;
    return h;
}

/* A copy's write failed (errno): out of space truncates the capture, as the
 * free-disk floor does, rather than fail it. */
int pd_job_write_failed(pd_job_t *j, const char *rel)
{
    if (errno == ENOSPC || errno == EDQUOT) {
        return pd_job_fail(j, PROFD_ELIMIT,
                           "no space left on the save_path file system to copy '%s' (%s)", rel,
                           strerror(errno));
    }
    return pd_job_fail(j, PROFD_EIO, "cannot write '%s': %s", rel, strerror(errno));
}

/* Read `size` bytes of `in`, checksum them (when `checksum`) and write them to
 * `out` (-1: checksum only). A large copy alternates `buf` and a second
 * buffer while another thread hashes the one just read. */
int pd_job_pump(pd_job_t *j, bool checksum, int in, int out, int64_t size, const char *rel,
                char *buf, uint64_t *hash)
{
    char *bufs[2] = {buf, NULL};
    sum_t sum;
    int64_t left = size;
    int rv = 0, k = 0;
    if (checksum && out >= 0 && size >= HASH_THREAD_MIN) {
        bufs[1] = malloc(PD_IO_CHUNK); /* without it: one buffer, hashed inline */
    }
    if ((rv = sum_start(&sum, j, checksum, bufs[1] != NULL)) != 0) {
        free(bufs[1]);
        return rv;
    }
    while (left > 0 && rv == 0) {
        char *b = bufs[k];
        ssize_t n = read(in, b, left < PD_IO_CHUNK ? (size_t)left : PD_IO_CHUNK);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rv = n < 0 ? pd_job_fail(j, PROFD_EIO, "cannot read '%s': %s", rel, strerror(errno))
                       : pd_job_fail(j, PROFD_EIO, "'%s' shrank while it was gathered", rel);
            break;
        }
        sum_update(&sum, b, (size_t)n);
        for (ssize_t off = 0; out >= 0 && off < n;) {
            ssize_t w = write(out, b + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w < 0) {
                rv = pd_job_write_failed(j, rel);
                break;
            }
            off += w;
        }
        left -= n;
        k = bufs[1] ? !k : 0;
    }
    XXH64_hash_t h = sum_end(&sum); /* waits for the hashing thread */
    free(bufs[1]);
    if (rv == 0 && checksum) {
        *hash = h;
    }
    return rv;
}

/* ---- limits ---- */

/* Would writing `need` bytes on the file system of `fd` leave less than
 * min_free? */
int pd_job_floor_check(pd_job_t *j, int64_t min_free, int64_t bytes, int fd, int64_t need)
{
    struct statvfs vfs;
    if (min_free <= 0) {
        return 0;
    }
    if (fstatvfs(fd, &vfs) != 0) {
        return pd_job_fail(j, PROFD_EIO, "cannot read the free space of the save_path: %s",
                           strerror(errno));
    }
    int64_t avail = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
    if (avail - need < min_free) {
        return pd_job_fail(j, PROFD_ELIMIT,
                           "%lld bytes free on the save_path file system; the capture of %lld "
                           "bytes would leave less than limits.min_free_bytes (%lld)",
                           (long long)avail, (long long)bytes, (long long)min_free);
    }
    return 0;
}
