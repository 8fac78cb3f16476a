// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The merge and diff jobs (see gather.h): tracemerge's streaming merger
 * over the capture's gzip'd traces into one file, tracediff's comparison. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "confine.h"
#include "gather.h"
#include "job.h"
#include "tracediff.h"
#include "tracemerge.h"

/* The merged trace goes out through a buffer. */
typedef struct mout {
    int fd;
    char *buf;
    size_t len;
    int64_t bytes;
    int64_t max; /* 0 = no bound */
    bool over;   /* a write would have passed max */
} mout_t;

static int mout_flush(mout_t *o)
{
    for (size_t off = 0; off < o->len;) {
        ssize_t w = write(o->fd, o->buf + off, o->len - off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return -1;
        }
        off += (size_t)w;
    }
    o->bytes += (int64_t)o->len;
    o->len = 0;
    return 0;
}

static int mout_write(void *arg, const char *p, size_t n)
{
    mout_t *o = arg;
    if (o->max > 0 && o->bytes + (int64_t)o->len + (int64_t)n > o->max) {
        o->over = true;
        errno = EFBIG;
        return -1;
    }
    if (o->len + n > (1u << 20) && mout_flush(o) != 0) {
        return -1;
    }
    if (n > (1u << 20)) { /* larger than the buffer: straight out */
        for (size_t off = 0; off < n;) {
            ssize_t w = write(o->fd, p + off, n - off);
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w < 0) {
                return -1;
            }
            off += (size_t)w;
        }
        o->bytes += (int64_t)n;
        return 0;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    return 0;
}

/* An input, decompressed up to `limit` bytes (0 = no bound). */
typedef struct min {
    gzFile gz;
    int64_t got, limit;
    bool over;
} min_t;

static long gz_read(void *arg, char *buf, size_t len)
{
    min_t *r = arg;
    int n = gzread(r->gz, buf, (unsigned)len);
    if (n > 0 && r->limit > 0 && (r->got += n) > r->limit) {
        r->over = true;
        return -1;
    }
    return n;
}

static int gz_rewind(void *arg)
{
    min_t *r = arg;
    r->got = 0;
    return gzrewind(r->gz);
}

static void merge_warn(pd_merge_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void merge_warn(pd_merge_t *m, const char *fmt, ...)
{
    va_list ap;
    if (m->nwarnings == 4) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(m->warnings[m->nwarnings++], sizeof(m->warnings[0]), fmt, ap);
    va_end(ap);
}

void pd_merge_run(pd_merge_job_t *j)
{
    pd_merge_t *m = j->merge;
    char why[400], part[NAME_MAX + 1];
    const char *base;
    int root, dir, rv;
    mout_t o = {-1, NULL, 0, 0, m->max_bytes, false};
    bool first = true;
    j->rv = 0;
    if ((rv = pd_confine_root(j->root, &root, why, sizeof(why))) != 0) {
        pd_job_fail(PD_JOB(j), rv, "%s", why);
        return;
    }
    if ((rv = pd_confine_parent(root, j->dst, false, &dir, &base, why, sizeof(why))) != 0) {
        pd_job_fail(PD_JOB(j), rv, "save_path tree: %s", why);
        close(root);
        return;
    }
    snprintf(part, sizeof(part), "%.200s.part", base);
    o.fd = openat(dir, part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    o.buf = malloc(1u << 20);
    if (o.fd < 0 || o.buf == NULL) {
        pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot create %s.part: %s", j->dst, strerror(errno));
        goto out;
    }
    mout_write(&o, "{\"traceEvents\":[\n", strlen("{\"traceEvents\":[\n"));
    for (size_t i = 0; i < m->ninputs; i++) {
        pd_merge_input_t *in = &m->inputs[i];
        struct stat st;
        int fd;
        bool aligned;
        if (pd_confine_open_file(root, in->path, &fd, &st, why, sizeof(why)) != 0) {
            m->skipped++;
            merge_warn(m, "%s: %s", in->path, why);
            continue;
        }
        gzFile gz = gzdopen(fd, "rb");
        if (gz == NULL) {
            close(fd);
            m->skipped++;
            continue;
        }
        gzbuffer(gz, 1u << 17);
        /* a file smaller than 4 KiB may still expand to max_ratio x 4 KiB */
        int64_t disk = st.st_size > 4096 ? (int64_t)st.st_size : 4096;
        min_t r = {gz, 0, m->max_ratio > 0 ? m->max_ratio * disk : 0, false};
        int64_t n = pd_trace_merge_one(gz_read, &r, gz_rewind, mout_write, &o, in, i, &first,
                                       &aligned, why, sizeof(why));
        gzclose(gz);
        if (n == -2 && o.over) {
            pd_job_fail(
                PD_JOB(j), PROFD_ELIMIT,
                "the merged timeline would pass %lld bytes (the window's byte budget, or the "
                "free space above limits.min_free_bytes): not written",
                (long long)o.max);
            goto out;
        }
        if (n == -2) {
            pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot write %s.part: %s", j->dst, strerror(errno));
            goto out;
        }
        if (n < 0 && r.over) {
            snprintf(why, sizeof(why), "decompresses to more than %lld times its %lld bytes",
                     (long long)m->max_ratio, (long long)st.st_size);
        }
        if (n < 0) {
            m->skipped++;
            merge_warn(m, "%s: %s", in->path, why);
            continue;
        }
        m->files++;
        m->events += n;
        if (!aligned) {
            m->unaligned++;
            merge_warn(m, "%s: no profd clock marker: kept on its own clock", in->path);
        } else if (in->err_us > m->err_us) {
            m->err_us = in->err_us;
        }
    }
    /* what the merge did, for whoever reads the file */
    char tail[1024];
    int k = snprintf(tail, sizeof(tail),
                     "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"profd\":{\"job\":\"%s\","
                     "\"window\":\"%s\",\"clock\":\"CLOCK_MONOTONIC of %s, microseconds\","
                     "\"files\":%lld,\"events\":%lld,\"unaligned\":%lld,\"skipped\":%lld,"
                     "\"clock_err_us\":%lld}}}\n",
                     m->job, m->window, m->clock, (long long)m->files, (long long)m->events,
                     (long long)m->unaligned, (long long)m->skipped, (long long)m->err_us);
    if (mout_write(&o, tail, (size_t)k) != 0 || mout_flush(&o) != 0 || fsync(o.fd) != 0 ||
        renameat(dir, part, dir, base) != 0) {
        pd_job_fail(PD_JOB(j), o.over ? PROFD_ELIMIT : PROFD_EIO, "cannot write %s: %s", j->dst,
                    o.over ? "over the window's byte budget" : strerror(errno));
        goto out;
    }
    m->bytes = o.bytes;
out:
    if (o.fd >= 0) {
        close(o.fd);
        if (j->rv != 0) {
            unlinkat(dir, part, 0);
        }
    }
    free(o.buf);
    close(dir);
    close(root);
}

void pd_diff_run(pd_diff_job_t *j)
{
    j->rv = pd_diff_run_files(j->root, j->diff, j->reason, sizeof(j->reason));
}
