// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Gathering captures into the save_path tree (see gather.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <xxhash.h>
#include <zlib.h>

#include "confine.h"
#include "gather.h"
#include "hasher.h"
#include "text.h"
#include "tracediff.h"
#include "tracemerge.h"

#define MAX_DEPTH         16
#define DEFAULT_MAX_FILES 100000
#define IO_CHUNK          (1u << 20)

static int job_fail(pd_job_t *j, int rv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int job_fail(pd_job_t *j, int rv, const char *fmt, ...)
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

/* ---- listing ---- */

/* A name fit for a manifest: no control character, valid UTF-8. */
static bool name_ok(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        size_t n;
        unsigned min;
        if (c < 0x20 || c == 0x7f) {
            return false;
        }
        if (c < 0x80) {
            p++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            n = 1, min = 0x80, c &= 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2, min = 0x800, c &= 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3, min = 0x10000, c &= 0x07;
        } else {
            return false;
        }
        for (size_t i = 1; i <= n; i++) {
            if ((p[i] & 0xc0) != 0x80) {
                return false;
            }
            c = (c << 6) | (p[i] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
            return false;
        }
        p += n + 1;
    }
    return true;
}

static const char *kind_name(mode_t m)
{
    return S_ISFIFO(m)   ? "a fifo"
           : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
                         : "not a regular file";
}

/* A profiler's partial file: removed, not gathered (the caller keeps its
 * path to remove it). */
static bool is_part(const char *rel)
{
    size_t len = strlen(rel);
    return len > 5 && strcmp(rel + len - 5, ".part") == 0;
}

static int add_part(pd_job_t *j, const char *rel)
{
    j->incomplete = true;
    if (j->nparts++ == 0) {
        snprintf(j->part, sizeof(j->part), "%s", rel);
    }
    char **v = realloc(j->parts, (size_t)j->nparts * sizeof(*v));
    if (v == NULL || (v[j->nparts - 1] = strdup(rel)) == NULL) {
        j->parts = v ? v : j->parts;
        j->nparts -= v != NULL;
        return job_fail(j, PROFD_ENOMEM, "out of memory");
    }
    j->parts = v;
    return 0;
}

static int add_file(pd_job_t *j, const char *rel, int64_t size)
{
    if (is_part(rel)) {
        return add_part(j, rel);
    }
    if (j->nfiles == j->files_cap) {
        size_t n = j->files_cap ? j->files_cap * 2 : 8;
        pp_file_t *v = realloc(j->files, n * sizeof(*v));
        if (v == NULL) {
            return job_fail(j, PROFD_ENOMEM, "out of memory");
        }
        j->files = v;
        j->files_cap = n;
    }
    pp_file_t *f = &j->files[j->nfiles];
    pp_record_init(&pp_desc_file, f);
    if ((f->path = strdup(rel)) == NULL) {
        return job_fail(j, PROFD_ENOMEM, "out of memory");
    }
    f->bytes = size;
    j->nfiles++;
    j->bytes += size;
    return 0;
}

/* Remove the partial files listed, below the folder descriptor `dir`. */
static void remove_parts(pd_job_t *j, int dir)
{
    for (int i = 0; i < j->nparts; i++) {
        char why[400];
        const char *base;
        int parent;
        if (pd_confine_parent(dir, j->parts[i], false, &parent, &base, why, sizeof(why)) == 0) {
            unlinkat(parent, base, 0);
            close(parent);
        }
    }
}

typedef struct walk {
    pd_job_t *j;
    int64_t entries, max_entries;
} walk_t;

/* One entry of a capture folder, by its status (never followed). */
static int check_entry(walk_t *w, const char *rel, const struct stat *st)
{
    pd_job_t *j = w->j;
    char q[300];
    if (++w->entries > w->max_entries) {
        return job_fail(j, PROFD_ELIMIT, "more than %lld files and folders in the capture",
                        (long long)w->max_entries);
    }
    pd_quote(q, sizeof(q), rel);
    if (S_ISLNK(st->st_mode)) {
        return job_fail(j, PROFD_EPATH, "'%s' in the capture is a symlink (not followed)", q);
    }
    if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode)) {
        return job_fail(j, PROFD_EPATH, "'%s' in the capture is %s", q, kind_name(st->st_mode));
    }
    if (j->owner >= 0 && (int64_t)st->st_uid != j->owner) {
        return job_fail(j, PROFD_EPATH,
                        "'%s' in the capture belongs to uid %lld, not to the worker that "
                        "reported it (uid %lld)",
                        q, (long long)st->st_uid, (long long)j->owner);
    }
    if (S_ISREG(st->st_mode) && st->st_nlink > 1) {
        return job_fail(j, PROFD_EPATH, "'%s' in the capture has %llu hard links", q,
                        (unsigned long long)st->st_nlink);
    }
    return 0;
}

/* List a folder without following symlinks; takes fd0. */
static int walk(walk_t *w, int fd0, const char *prefix, int depth)
{
    pd_job_t *j = w->j;
    if (depth > MAX_DEPTH) {
        close(fd0);
        return job_fail(j, PROFD_EPATH, "capture folders nested deeper than %d", MAX_DEPTH);
    }
    DIR *d = fdopendir(fd0);
    if (d == NULL) {
        close(fd0);
        return job_fail(j, PROFD_EIO, "cannot read '%s': %s", prefix[0] ? prefix : ".",
                        strerror(errno));
    }
    struct dirent *de;
    int rv = 0;
    while (rv == 0 && (de = readdir(d)) != NULL) {
        char rel[PATH_MAX], q[300];
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        int n = snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "", de->d_name);
        if (n < 0 || (size_t)n >= sizeof(rel)) {
            rv = job_fail(j, PROFD_EPATH, "path too long in the capture");
            break;
        }
        if (!name_ok(de->d_name)) {
            pd_quote(q, sizeof(q), rel);
            rv = job_fail(j, PROFD_EPATH,
                          "'%s' in the capture: a name with a control character or not UTF-8", q);
            break;
        }
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            pd_quote(q, sizeof(q), rel);
            rv = job_fail(j, PROFD_EIO, "cannot stat '%s': %s", q, strerror(errno));
        } else if ((rv = check_entry(w, rel, &st)) != 0) {
            break;
        } else if (S_ISDIR(st.st_mode)) {
            if (j->hook) {
                j->hook(j, PD_JOB_AT_FOLDER);
            }
            int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) {
                pd_quote(q, sizeof(q), rel);
                rv = job_fail(j, errno == ELOOP || errno == ENOTDIR ? PROFD_EPATH : PROFD_EIO,
                              "cannot open '%s' in the capture: %s", q, strerror(errno));
            } else {
                rv = walk(w, fd, rel, depth + 1);
            }
        } else {
            rv = add_file(j, rel, (int64_t)st.st_size);
        }
    }
    closedir(d);
    return rv;
}

/* ---- reading and copying, by descriptor ---- */

/* Read exactly `size` bytes of `in` (hashing them), writing them to `out`
 * when out >= 0. */
/* Copies of at least this size hash on a second thread (hasher.h). */
#define HASH_THREAD_MIN (8 * (int64_t)IO_CHUNK)

typedef struct {
    XXH64_state_t *st; /* hashing inline */
    pd_hasher_t *th;   /* or on a thread */
} sum_t;

static int sum_start(sum_t *s, pd_job_t *j, bool thread)
{
    s->st = NULL;
    s->th = NULL;
    if (!j->checksum || (thread && pd_hasher_start(&s->th) == 0)) {
        return 0;
    }
    if ((s->st = XXH64_createState()) == NULL) {
        return job_fail(j, PROFD_ENOMEM, "out of memory");
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
static int write_failed(pd_job_t *j, const char *rel)
{
    if (errno == ENOSPC || errno == EDQUOT) {
        return job_fail(j, PROFD_ELIMIT,
                        "no space left on the save_path file system to copy '%s' (%s)", rel,
                        strerror(errno));
    }
    return job_fail(j, PROFD_EIO, "cannot write '%s': %s", rel, strerror(errno));
}

/* Read `size` bytes of `in`, checksum them (j->checksum) and write them to
 * `out` (-1: checksum only). A large copy alternates `buf` and a second
 * buffer while another thread hashes the one just read. */
static int pump(pd_job_t *j, int in, int out, int64_t size, const char *rel, char *buf,
                XXH64_hash_t *hash)
{
    char *bufs[2] = {buf, NULL};
    sum_t sum;
    int64_t left = size;
    int rv = 0, k = 0;
    if (j->checksum && out >= 0 && size >= HASH_THREAD_MIN) {
        bufs[1] = malloc(IO_CHUNK); /* without it: one buffer, hashed inline */
    }
    if ((rv = sum_start(&sum, j, bufs[1] != NULL)) != 0) {
        free(bufs[1]);
        return rv;
    }
    while (left > 0 && rv == 0) {
        char *b = bufs[k];
        ssize_t n = read(in, b, left < IO_CHUNK ? (size_t)left : IO_CHUNK);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rv = n < 0 ? job_fail(j, PROFD_EIO, "cannot read '%s': %s", rel, strerror(errno))
                       : job_fail(j, PROFD_EIO, "'%s' shrank while it was gathered", rel);
            break;
        }
        sum_update(&sum, b, (size_t)n);
        for (ssize_t off = 0; out >= 0 && off < n;) {
            ssize_t w = write(out, b + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w < 0) {
                rv = write_failed(j, rel);
                break;
            }
            off += w;
        }
        left -= n;
        k = bufs[1] ? !k : 0;
    }
    XXH64_hash_t h = sum_end(&sum); /* waits for the hashing thread */
    free(bufs[1]);
    if (rv == 0 && j->checksum) {
        *hash = h;
    }
    return rv;
}

static void set_checksum(pp_file_t *f, XXH64_hash_t h)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "xxh64:%016llx", (unsigned long long)h);
    free(f->checksum);
    f->checksum = strdup(buf);
}

/* Checksum every listed file below the folder descriptor `dir`. */
static int hash_all(pd_job_t *j, int dir)
{
    char *buf = j->checksum ? malloc(IO_CHUNK) : NULL;
    int rv = 0;
    if (j->checksum && buf == NULL) {
        return job_fail(j, PROFD_ENOMEM, "out of memory");
    }
    for (size_t i = 0; j->checksum && rv == 0 && i < j->nfiles; i++) {
        char why[400];
        struct stat st;
        XXH64_hash_t h = 0;
        int fd;
        if ((rv = pd_confine_open_file(dir, j->files[i].path, &fd, &st, why, sizeof(why))) != 0) {
            job_fail(j, rv, "%s", why);
            break;
        }
        if ((rv = pump(j, fd, -1, j->files[i].bytes, j->files[i].path, buf, &h)) == 0) {
            set_checksum(&j->files[i], h);
        }
        close(fd);
    }
    free(buf);
    return rv;
}

/* Copy every listed file from the folder `src` into the new folder `dst`. */
static int copy_all(pd_job_t *j, int src, int dst)
{
    char *buf = malloc(IO_CHUNK);
    int rv = 0;
    if (buf == NULL) {
        return job_fail(j, PROFD_ENOMEM, "out of memory");
    }
    for (size_t i = 0; rv == 0 && i < j->nfiles; i++) {
        const char *rel = j->files[i].path, *base;
        char why[400], part[NAME_MAX + 1];
        struct stat st;
        XXH64_hash_t h = 0;
        int in, dir, out;
        if ((rv = pd_confine_open_file(src, rel, &in, &st, why, sizeof(why))) != 0) {
            job_fail(j, rv, "%s", why);
            break;
        }
        if ((rv = pd_confine_parent(dst, rel, true, &dir, &base, why, sizeof(why))) != 0) {
            job_fail(j, rv, "%s", why);
            close(in);
            break;
        }
        if ((size_t)snprintf(part, sizeof(part), "%s.part", base) >= sizeof(part)) {
            rv = job_fail(j, PROFD_EPATH, "name too long: '%.200s'", rel);

        } else if ((out = openat(dir, part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                 0644)) < 0) {
            rv = job_fail(j, PROFD_EIO, "cannot create '%s.part': %s", rel, strerror(errno));
        } else {
            rv = pump(j, in, out, j->files[i].bytes, rel, buf, &h);
            if (close(out) != 0 && rv == 0) {
                rv = write_failed(j, rel);
            }
            if (rv == 0 && renameat(dir, part, dir, base) != 0) {
                rv = job_fail(j, PROFD_EIO, "cannot rename '%s.part': %s", rel, strerror(errno));
            }
            if (rv != 0) {
                unlinkat(dir, part, 0);
            } else if (j->checksum) {
                set_checksum(&j->files[i], h);
            }
        }
        close(dir);
        close(in);
    }
    free(buf);
    return rv;
}

/* ---- limits ---- */

/* Claim the capture's bytes from the window's budget, shared by the jobs
 * of the window running at the same time. */
static int budget_claim(pd_job_t *j)
{
    if (j->budget < 0 || j->used == NULL) {
        return 0;
    }
    int64_t cur = atomic_load(j->used);
    do {
        if (cur + j->bytes > j->budget) {
            return job_fail(j, PROFD_ELIMIT,
                            "capture of %lld bytes exceeds the window's remaining budget of %lld "
                            "bytes (limits.window_byte_budget)",
                            (long long)j->bytes,
                            (long long)(j->budget > cur ? j->budget - cur : 0));
        }
    } while (!atomic_compare_exchange_weak(j->used, &cur, cur + j->bytes));
    return 0;
}

static void budget_release(pd_job_t *j)
{
    if (j->budget >= 0 && j->used != NULL) {
        atomic_fetch_sub(j->used, j->bytes);
    }
}

/* Would writing `need` bytes on the file system of `fd` leave less than
 * min_free? */
static int floor_check(pd_job_t *j, int fd, int64_t need)
{
    struct statvfs vfs;
    if (j->min_free <= 0) {
        return 0;
    }
    if (fstatvfs(fd, &vfs) != 0) {
        return job_fail(j, PROFD_EIO, "cannot read the free space of the save_path: %s",
                        strerror(errno));
    }
    int64_t avail = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
    if (avail - need < j->min_free) {
        return job_fail(j, PROFD_ELIMIT,
                        "%lld bytes free on the save_path file system; the capture of %lld "
                        "bytes would leave less than limits.min_free_bytes (%lld)",
                        (long long)avail, (long long)j->bytes, (long long)j->min_free);
    }
    return 0;
}

/* ---- gathering ---- */

typedef struct gather {
    int spool, parent, cap; /* spool root, the capture's folder and the capture */
    const char *name;       /* the capture in `parent` */
    struct stat st;         /* of the capture */
    int root, dparent;      /* save tree root, the destination's folder */
    const char *dname;      /* the destination in `dparent` */
} gather_t;

static void gather_close(gather_t *g)
{
    int *fds[] = {&g->spool, &g->parent, &g->cap, &g->root, &g->dparent};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
    }
}

/* Open the capture folder below the spool, and list it. */
static int gather_open(pd_job_t *j, gather_t *g)
{
    char why[400], q[300];
    int rv;
    pd_quote(q, sizeof(q), j->src);
    if (!pd_confine_rel_ok(j->src)) {
        return job_fail(j, PROFD_EPATH, "capture folder '%s' is not a plain path in the spool", q);
    }
    if ((rv = pd_confine_root(j->spool, &g->spool, why, sizeof(why))) != 0) {
        return job_fail(j, rv, "spool: %s", why);
    }
    if (j->hook) {
        j->hook(j, PD_JOB_AT_OPEN);
    }
    if ((rv = pd_confine_parent(g->spool, j->src, false, &g->parent, &g->name, why, sizeof(why))) !=
        0) {
        if (rv == PROFD_EIO && errno == ENOENT) {
            j->missing = true;
            return job_fail(j, PROFD_EIO, "capture folder '%s' is missing", q);
        }
        return job_fail(j, rv, "spool: %s", why);
    }
    g->cap = openat(g->parent, g->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (g->cap < 0) {
        if (errno == ENOENT) {
            j->missing = true;
            return job_fail(j, PROFD_EIO, "capture folder '%s' is missing", q);
        }
        struct stat st;
        if (errno == ELOOP ||
            (fstatat(g->parent, g->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))) {
            return job_fail(j, PROFD_EPATH, "capture folder '%s' is a symlink (not followed)", q);
        }
        if (errno == ENOTDIR) {
            return job_fail(j, PROFD_EPATH, "capture folder '%s' is not a folder", q);
        }
        return job_fail(j, PROFD_EIO, "cannot open capture folder '%s': %s", q, strerror(errno));
    }
    if (fstat(g->cap, &g->st) != 0) {
        return job_fail(j, PROFD_EIO, "cannot stat capture folder '%s': %s", q, strerror(errno));
    }
    if (j->owner >= 0 && (int64_t)g->st.st_uid != j->owner) {
        return job_fail(j, PROFD_EPATH,
                        "capture folder '%s' belongs to uid %lld, not to the worker that "
                        "reported it (uid %lld)",
                        q, (long long)g->st.st_uid, (long long)j->owner);
    }
    int fd = fcntl(g->cap, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        return job_fail(j, PROFD_EIO, "cannot read capture folder '%s': %s", q, strerror(errno));
    }
    walk_t w = {j, 0, j->max_files > 0 ? j->max_files : DEFAULT_MAX_FILES};
    return walk(&w, fd, "", 0);
}

/* Rename the capture into place; true when done (or failed for good). */
static bool gather_rename(pd_job_t *j, gather_t *g, int *err)
{
    struct stat st;
    if (renameat(g->parent, g->name, g->dparent, g->dname) != 0) {
        *err = errno;
        return false;
    }
    /* what moved must be what was listed: not something swapped in since */
    if (fstatat(g->dparent, g->dname, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != g->st.st_dev ||
        st.st_ino != g->st.st_ino) {
        if (renameat(g->dparent, g->dname, g->parent, g->name) != 0) {
            pd_confine_remove(g->dparent, g->dname);
        }
        job_fail(j, PROFD_EPATH, "capture folder was replaced while it was gathered");
        return true;
    }
    /* moved, not read again: O(1) in bytes (the files are listed as moved,
     * without checksum); the profiler's partial files go */
    j->renamed = true;
    remove_parts(j, g->cap);
    if (j->nfiles == 0 && j->drop_empty) {
        pd_confine_remove(g->dparent, g->dname); /* nothing left in it: not a tree entry */
        j->dropped = true;
        return true;
    }
    for (size_t i = 0; i < j->nfiles; i++) {
        j->files[i].moved = true;
    }
    return true;
}

/* Open (making it) the folder `name` in `at`, which must be this daemon's
 * and writable by nobody else: the spool is writable by every worker. */
static int own_dir(int at, const char *name)
{
    struct stat st;
    int fd;
    if (mkdirat(at, name, 0700) != 0 && errno != EEXIST) {
        return -1;
    }
    if ((fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        return -1;
    }
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 0022) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Move the copied capture to .trash/w<window>/ in the spool; false when it
 * cannot go there (then it is removed at once). */
static bool trash_aside(pd_job_t *j, gather_t *g)
{
    char wdir[32], name[48];
    int t, w;
    bool ok = false;
    snprintf(wdir, sizeof(wdir), "w%lld", (long long)j->window);
    snprintf(name, sizeof(name), "c%lld-%zu", (long long)j->client, j->cap);
    if ((t = own_dir(g->spool, PD_TRASH)) < 0) {
        return false;
    }
    if ((w = own_dir(t, wdir)) >= 0) {
        ok = renameat(g->parent, g->name, w, name) == 0;
        close(w);
    }
    close(t);
    return ok;
}

static void gather_copy(pd_job_t *j, gather_t *g, int why_errno)
{
    int dir;
    if (floor_check(j, g->dparent, j->bytes) != 0) {
        return;
    }
    if (j->nfiles == 0 && j->drop_empty) {
        j->dropped = true; /* nothing to copy: not a tree entry; the spool copy goes */
        if (why_errno == EXDEV && !(j->trashed = trash_aside(j, g))) {
            pd_confine_remove(g->parent, g->name);
        }
        return;
    }
    if (mkdirat(g->dparent, g->dname, 0755) != 0) {
        job_fail(j, PROFD_EIO, "cannot create '%s': %s", j->dst, strerror(errno));
        return;
    }
    if ((dir = openat(g->dparent, g->dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        job_fail(j, PROFD_EIO, "cannot open '%s': %s", j->dst, strerror(errno));
        return;
    }
    int rv = copy_all(j, g->cap, dir);
    close(dir);
    if (rv != 0) {
        pd_confine_remove(g->dparent, g->dname);
        return;
    }
    if (why_errno == EXDEV) {
        /* moved: the spool copy goes, after the manifest when it can */
        if (!(j->trashed = trash_aside(j, g))) {
            pd_confine_remove(g->parent, g->name);
        }
    } else {
        /* not ours to move (another user's folder in the sticky spool) */
        j->left = true;
        snprintf(j->reason, sizeof(j->reason),
                 "copied: the daemon may not move the capture folder (%s); the original stays "
                 "in the spool",
                 strerror(why_errno));
    }
}

/* Keep room for the window's manifest: its .part, allocated to the room
 * the captures gathered so far need. Best effort: a disk already full
 * leaves the manifest to be written once there is room. */
static void reserve_manifest(pd_job_t *j, int root)
{
    char why[400], part[NAME_MAX + 1];
    const char *base;
    int dir;
    struct stat st;
    if (j->manifest[0] == '\0' || j->reserved == NULL) {
        return;
    }
    int64_t need = j->reserve_base + atomic_fetch_add(j->reserved, 256 * (int64_t)j->nfiles) +
                   256 * (int64_t)j->nfiles;
    if (pd_confine_parent(root, j->manifest, true, &dir, &base, why, sizeof(why)) != 0) {
        return;
    }
    if ((size_t)snprintf(part, sizeof(part), "%s.part", base) < sizeof(part)) {
        int fd = openat(dir, part, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < need) {
                posix_fallocate(fd, 0, (off_t)need);
            }
            close(fd);
        }
    }
    close(dir);
}

/* After a restart: a capture no longer in the spool was renamed into the
 * tree before the daemon stopped: list it there. */
static void recover_in_tree(pd_job_t *j)
{
    char why[400], q[300];
    const char *base;
    int root, parent, cap = -1;
    pd_quote(q, sizeof(q), j->src);
    j->rv = 0;
    j->reason[0] = '\0';
    if (pd_confine_root(j->root, &root, why, sizeof(why)) != 0) {
        job_fail(j, PROFD_EIO, "capture folder '%s' is missing (and the tree: %s)", q, why);
        return;
    }
    if (pd_confine_parent(root, j->dst, false, &parent, &base, why, sizeof(why)) == 0) {
        cap = openat(parent, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(parent);
    }
    close(root);
    if (cap < 0) {
        job_fail(j, PROFD_EIO,
                 "capture folder '%s' is missing: neither in the spool nor in the tree after "
                 "the daemon restarted",
                 q);
        return;
    }
    int fd = fcntl(cap, F_DUPFD_CLOEXEC, 0);
    walk_t w = {j, 0, j->max_files > 0 ? j->max_files : DEFAULT_MAX_FILES};
    if (fd >= 0 && walk(&w, fd, "", 0) == 0) {
        j->renamed = true;
        remove_parts(j, cap);
        for (size_t i = 0; i < j->nfiles; i++) {
            j->files[i].moved = true;
        }
    } else if (fd < 0) {
        job_fail(j, PROFD_EIO, "cannot read '%s' in the tree: %s", q, strerror(errno));
    }
    close(cap);
}

void pd_gather_run(pd_job_t *j)
{
    gather_t g = {-1, -1, -1, NULL, {0}, -1, -1, NULL};
    char why[400];
    int rv, e = 0;

    j->rv = 0;
    if ((rv = gather_open(j, &g)) != 0 && j->recover && j->missing && !j->list_only) {
        gather_close(&g);
        recover_in_tree(j);
        return;
    }
    if (rv != 0) {
        if (rv == PROFD_ELIMIT && g.parent >= 0) {
            pd_confine_remove(g.parent, g.name);
        }
        gather_close(&g);
        return;
    }
    if (j->hook) {
        j->hook(j, PD_JOB_AT_LISTED);
    }
    if (j->list_only) {
        remove_parts(j, g.cap);
        hash_all(j, g.cap);
        gather_close(&g);
        return;
    }
    if (budget_claim(j) != 0) {
        pd_confine_remove(g.parent, g.name);
        gather_close(&g);
        return;
    }
    if ((rv = pd_confine_root(j->root, &g.root, why, sizeof(why))) != 0 ||
        (rv = pd_confine_parent(g.root, j->dst, true, &g.dparent, &g.dname, why, sizeof(why))) !=
            0) {
        job_fail(j, rv, "save_path tree: %s", why);
    } else {
        struct stat dst;
        bool same = fstat(g.dparent, &dst) == 0 && dst.st_dev == g.st.st_dev;
        if (j->recover && fstatat(g.dparent, g.dname, &dst, AT_SYMLINK_NOFOLLOW) == 0) {
            pd_confine_remove(g.dparent, g.dname); /* a copy a restart cut short */
        }
        reserve_manifest(j, g.root);
        /* a rename takes no space; a copy takes the capture's size */
        if (floor_check(j, g.dparent, same ? 0 : j->bytes) == 0 && !gather_rename(j, &g, &e)) {
            if (e == EXDEV || e == EACCES || e == EPERM) {
                gather_copy(j, &g, e);
            } else {
                job_fail(j, PROFD_EIO, "cannot move the capture to '%s': %s", j->dst, strerror(e));
            }
        }
    }
    if (j->rv != 0) {
        budget_release(j);
        if (j->rv == PROFD_ELIMIT) {
            pd_confine_remove(g.parent, g.name);
        }
    }
    gather_close(&g);
}

/* ---- manifests and streamed files ---- */

void pd_write_run(pd_job_t *j)
{
    char why[400], part[NAME_MAX + 1];
    const char *base;
    int root, dir, rv;
    j->rv = 0;
    if ((rv = pd_confine_root(j->root, &root, why, sizeof(why))) != 0) {
        job_fail(j, rv, "%s", why);
        return;
    }
    rv = pd_confine_parent(root, j->dst, true, &dir, &base, why, sizeof(why));
    close(root);
    if (rv != 0) {
        job_fail(j, rv, "save_path tree: %s", why);
        return;
    }
    if ((size_t)snprintf(part, sizeof(part), "%s.part", base) >= sizeof(part)) {
        job_fail(j, PROFD_EPATH, "name too long: %.200s", j->dst);
        close(dir);
        return;
    }
    /* a .part already there is room kept for this file (reserve_manifest):
     * written over from its start, then cut to size */
    int fd = openat(dir, part, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        job_fail(j, PROFD_EIO, "cannot create %s.part: %s", j->dst, strerror(errno));
        close(dir);
        return;
    }
    for (size_t off = 0; off < j->len;) {
        ssize_t w = pwrite(fd, j->data + off, j->len - off, (off_t)off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            job_fail(j, PROFD_EIO, "cannot write %s.part: %s", j->dst, strerror(errno));
            close(fd);
            unlinkat(dir, part, 0);
            close(dir);
            return;
        }
        off += (size_t)w;
    }
    /* on disk before it replaces the old one: a crash leaves one or the other */
    if (ftruncate(fd, (off_t)j->len) != 0 || (!j->no_sync && fsync(fd) != 0) || close(fd) != 0 ||
        renameat(dir, part, dir, base) != 0) {
        job_fail(j, PROFD_EIO, "cannot write %s: %s", j->dst, strerror(errno));
        unlinkat(dir, part, 0);
    }
    close(dir);
    if (j->prune[0]) {
        pd_confine_prune_path(j->spool, j->prune);
    }
}

/* The folder of a chunk's file and its .part, opened (created at offset
 * 0, after the free-disk check). 0; 1 when the .part does not end where
 * the chunk starts (j->have says where the sender resumes); or the error
 * the job failed with. */
static int chunk_open(pd_job_t *j, int *dirp, int *fdp, char *part, size_t partlen,
                      const char **base)
{
    char why[400];
    struct stat st;
    int root, dir, fd, rv;
    if ((rv = pd_confine_root(j->root, &root, why, sizeof(why))) != 0) {
        return job_fail(j, rv, "%s", why);
    }
    rv = pd_confine_parent(root, j->dst, true, &dir, base, why, sizeof(why));
    close(root);
    if (rv != 0) {
        j->have = 0;
        return job_fail(j, rv, "save_path tree: %s", why);
    }
    if ((size_t)snprintf(part, partlen, "%s.part", *base) >= partlen) {
        close(dir);
        return job_fail(j, PROFD_EPATH, "name too long: %.200s", j->dst);
    }
    if (j->offset == 0) {
        if (floor_check(j, dir, j->size) != 0) {
            j->have = 0;
            close(dir);
            return j->rv;
        }
        fd = openat(dir, part, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    } else {
        fd = openat(dir, part, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        j->have = 0; /* nothing usable here: start the file again */
        rv = job_fail(j, PROFD_EIO, "cannot open %s: %s", part, strerror(errno));
        close(dir);
        return rv;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (j->offset > 0 && st.st_size != j->offset)) {
        j->have = S_ISREG(st.st_mode) ? st.st_size : 0; /* resume from what is really here */
        close(fd);
        close(dir);
        return 1; /* no error: the sender resumes at j->have */
    }
    *dirp = dir;
    *fdp = fd;
    return 0;
}

/* The whole file against the checksum its sender listed; a mismatch drops
 * the .part and the sender starts again from 0. */
static int chunk_verify(pd_job_t *j, int dir, int fd, const char *part)
{
    char *buf = malloc(IO_CHUNK);
    XXH64_hash_t h = 0;
    char got[32];
    bool sum = j->checksum;
    j->checksum = true;
    int rv = buf == NULL ? job_fail(j, PROFD_ENOMEM, "out of memory")
             : lseek(fd, 0, SEEK_SET) != 0
                 ? job_fail(j, PROFD_EIO, "cannot read %s: %s", part, strerror(errno))
                 : pump(j, fd, -1, j->size, part, buf, &h);
    j->checksum = sum;
    free(buf);
    if (rv != 0) {
        return rv;
    }
    snprintf(got, sizeof(got), "xxh64:%016llx", (unsigned long long)h);
    if (strcmp(got, j->expect) != 0) {
        unlinkat(dir, part, 0);
        j->have = 0;
        j->mismatch = true;
        return job_fail(j, PROFD_EIO, "checksum mismatch: received %s, expected %s", got,
                        j->expect);
    }
    return 0;
}

/* The running hash of a chunk's file up to the chunk's offset: made again
 * from the .part when it stops short (a restart lost it). 0 or the error. */
static int chunk_hash_upto(pd_job_t *j, int fd, const char *part)
{
    XXH64_state_t *st = j->hash;
    if (*j->hashed == j->offset) {
        return 0;
    }
    char *buf = malloc(IO_CHUNK);
    if (buf == NULL) {
        return job_fail(j, PROFD_ENOMEM, "out of memory");
    }
    XXH64_reset(st, 0);
    *j->hashed = 0;
    while (*j->hashed < j->offset) {
        int64_t want = j->offset - *j->hashed < IO_CHUNK ? j->offset - *j->hashed : IO_CHUNK;
        ssize_t n = pread(fd, buf, (size_t)want, (off_t)*j->hashed);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            free(buf);
            XXH64_reset(st, 0);
            *j->hashed = 0;
            j->have = 0; /* start the file again */
            return job_fail(j, PROFD_EIO, "cannot read %s: %s", part,
                            n < 0 ? strerror(errno) : "shorter than received");
        }
        XXH64_update(st, buf, (size_t)n);
        *j->hashed += n;
    }
    free(buf);
    return 0;
}

void pd_chunk_run(pd_job_t *j)
{
    char part[NAME_MAX + 1];
    const char *base;
    int dir = -1, fd = -1;

    j->rv = 0;
    j->got[0] = '\0';
    j->complete = false;
    j->have = j->offset;
    if (chunk_open(j, &dir, &fd, part, sizeof(part), &base) != 0) {
        return;
    }
    if (j->hash && chunk_hash_upto(j, fd, part) != 0) {
        close(fd);
        close(dir);
        return;
    }
    for (size_t off = 0; off < j->len;) {
        ssize_t w = pwrite(fd, j->data + off, j->len - off, j->offset + (off_t)off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            job_fail(j, PROFD_EIO, "cannot write %s: %s", part, strerror(errno));
            close(fd);
            close(dir);
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
            job_fail(j, PROFD_EIO, "cannot write %s: %s", part, strerror(errno));
        }
        close(dir);
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
            job_fail(j, PROFD_EIO, "checksum mismatch: received %s, expected %s", j->got,
                     j->expect);
            close(fd);
            close(dir);
            return;
        }
    } else if (j->expect[0] && chunk_verify(j, dir, fd, part) != 0) {
        close(fd);
        close(dir);
        return;
    }
    if (close(fd) != 0) {
        job_fail(j, PROFD_EIO, "cannot write %s: %s", part, strerror(errno));
    } else if (renameat(dir, part, dir, base) != 0) {
        job_fail(j, PROFD_EIO, "cannot rename %s: %s", part, strerror(errno));
    } else {
        j->complete = true;
    }
    close(dir);
}

/* ---- spool removal ---- */

void pd_remove_run(pd_job_t *j)
{
    char why[400];
    const char *base;
    int spool, dir, rv;
    j->rv = 0;
    if (!pd_confine_rel_ok(j->src)) {
        job_fail(j, PROFD_EPATH, "not a plain path in the spool: %.200s", j->src);
        return;
    }
    if ((rv = pd_confine_root(j->spool, &spool, why, sizeof(why))) != 0) {
        job_fail(j, rv, "spool: %s", why);
        return;
    }
    rv = pd_confine_parent(spool, j->src, false, &dir, &base, why, sizeof(why));
    if (rv == 0) {
        if (pd_confine_remove(dir, base) != 0) {
            job_fail(j, PROFD_EIO, "cannot remove %s from the spool", j->src);
        }
        close(dir);
    } else if (errno != ENOENT) {
        job_fail(j, rv, "%s", why);
    }
    pd_confine_prune(spool, PD_TRASH); /* gone when nothing else waits there */
    close(spool);
}

/* ---- views and merges ---- */

void pd_link_run(pd_job_t *j)
{
    char why[400];
    int root, dir, rv;
    j->rv = 0;
    j->have = 0;
    if ((rv = pd_confine_root(j->root, &root, why, sizeof(why))) != 0) {
        job_fail(j, rv, "%s", why);
        return;
    }
    if ((rv = pd_confine_dir(root, j->dst, true, &dir, why, sizeof(why))) != 0) {
        job_fail(j, rv, "save_path tree: %s", why);
        close(root);
        return;
    }
    for (size_t i = 0; i < j->nlinks; i++) {
        const char *base;
        int from;
        if (pd_confine_parent(root, j->links[i], false, &from, &base, why, sizeof(why)) != 0) {
            job_fail(j, PROFD_EPATH, "%s", why);
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
                    job_fail(j, PROFD_EIO, "cannot link %s into %s: %s", j->links[i], j->dst,
                             strerror(errno));
                }
            }
        }
        close(from);
    }
    close(dir);
    close(root);
}

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

void pd_merge_run(pd_job_t *j)
{
    pd_merge_t *m = j->merge;
    char why[400], part[NAME_MAX + 1];
    const char *base;
    int root, dir, rv;
    mout_t o = {-1, NULL, 0, 0, m->max_bytes, false};
    bool first = true;
    j->rv = 0;
    if ((rv = pd_confine_root(j->root, &root, why, sizeof(why))) != 0) {
        job_fail(j, rv, "%s", why);
        return;
    }
    if ((rv = pd_confine_parent(root, j->dst, false, &dir, &base, why, sizeof(why))) != 0) {
        job_fail(j, rv, "save_path tree: %s", why);
        close(root);
        return;
    }
    snprintf(part, sizeof(part), "%.200s.part", base);
    o.fd = openat(dir, part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    o.buf = malloc(1u << 20);
    if (o.fd < 0 || o.buf == NULL) {
        job_fail(j, PROFD_EIO, "cannot create %s.part: %s", j->dst, strerror(errno));
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
            job_fail(j, PROFD_ELIMIT,
                     "the merged timeline would pass %lld bytes (the window's byte budget, or the "
                     "free space above limits.min_free_bytes): not written",
                     (long long)o.max);
            goto out;
        }
        if (n == -2) {
            job_fail(j, PROFD_EIO, "cannot write %s.part: %s", j->dst, strerror(errno));
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
        job_fail(j, o.over ? PROFD_ELIMIT : PROFD_EIO, "cannot write %s: %s", j->dst,
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

/* ---- thread pool glue ---- */

static void job_work(uv_work_t *w)
{
    pd_job_t *j = w->data;
    if (j->kind == PD_JOB_GATHER) {
        pd_gather_run(j);
    } else if (j->kind == PD_JOB_CHUNK) {
        pd_chunk_run(j);
    } else if (j->kind == PD_JOB_REMOVE) {
        pd_remove_run(j);
    } else if (j->kind == PD_JOB_LINK) {
        pd_link_run(j);
    } else if (j->kind == PD_JOB_MERGE) {
        pd_merge_run(j);
    } else if (j->kind == PD_JOB_DIFF) {
        pd_diff_run(j);
    } else {
        pd_write_run(j);
    }
}

static void job_after(uv_work_t *w, int status)
{
    pd_job_t *j = w->data;
    if (status == UV_ECANCELED && j->rv == 0) {
        job_fail(j, PROFD_ECLOSED, "daemon stopping");
    }
    j->done(j);
}

int pd_job_submit(uv_loop_t *loop, pd_job_t *j)
{
    j->work.data = j;
    return uv_queue_work(loop, &j->work, job_work, job_after) == 0 ? 0 : PROFD_EINTERNAL;
}

void pd_diff_run(pd_job_t *j)
{
    j->rv = pd_diff_run_files(j->root, j->diff, j->reason, sizeof(j->reason));
}

void pd_job_free(pd_job_t *j)
{
    if (j == NULL) {
        return;
    }
    for (size_t i = 0; i < j->nfiles; i++) {
        pp_record_free(&pp_desc_file, &j->files[i]);
    }
    free(j->files);
    for (int i = 0; i < j->nparts; i++) {
        free(j->parts[i]);
    }
    free(j->parts);
    free(j->data);
    for (size_t i = 0; i < j->nlinks; i++) {
        free(j->links[i]);
    }
    free(j->links);
    pd_merge_free(j->merge);
    pd_diff_free(j->diff);
    free(j);
}
