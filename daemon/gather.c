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
#include <unistd.h>

#include <xxhash.h>

#include "gather.h"

#define MAX_DEPTH 16
#define MAX_FILES 100000
#define IO_CHUNK (1u << 20)

static int job_fail(pd_job_t *j, int rv, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int job_fail(pd_job_t *j, int rv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->reason, sizeof(j->reason), fmt, ap);
    va_end(ap);
    j->rv = rv;
    return rv;
}

int pd_path_join(char *out, size_t len, const char *a, const char *sep, const char *b)
{
    size_t la = strlen(a), ls = strlen(sep), lb = strlen(b);
    if (la + ls + lb >= len) {
        return PROFD_EINVAL;
    }
    memmove(out, a, la);
    memcpy(out + la, sep, ls);
    memcpy(out + la + ls, b, lb + 1);
    return 0;
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

static int add_file(pd_job_t *j, const char *rel, int64_t size)
{
    if (j->nfiles >= MAX_FILES) {
        return job_fail(j, PROFD_ELIMIT, "more than %d files in the capture", MAX_FILES);
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
    size_t len = strlen(rel);
    if (len > 5 && strcmp(rel + len - 5, ".part") == 0) {
        j->incomplete = true;
    }
    return 0;
}

/* Walk a folder without following symlinks; reject anything but folders and
 * regular files. */
static int walk(pd_job_t *j, int fd0, const char *prefix, int depth)
{
    if (depth > MAX_DEPTH) {
        return job_fail(j, PROFD_EPATH, "capture folders nested deeper than %d", MAX_DEPTH);
    }
    DIR *d = fdopendir(fd0);
    if (d == NULL) {
        close(fd0);
        return job_fail(j, PROFD_EIO, "cannot read %s: %s", prefix[0] ? prefix : ".",
                        strerror(errno));
    }
    struct dirent *de;
    int rv = 0;
    while (rv == 0 && (de = readdir(d)) != NULL) {
        char rel[PATH_MAX];
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        int n = snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "", de->d_name);
        if (n < 0 || (size_t)n >= sizeof(rel)) {
            rv = job_fail(j, PROFD_EPATH, "path too long in the capture");
            break;
        }
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rv = job_fail(j, PROFD_EIO, "cannot stat %s: %s", rel, strerror(errno));
        } else if (S_ISLNK(st.st_mode)) {
            rv = job_fail(j, PROFD_EPATH, "symlink %s in the capture (not followed)", rel);
        } else if (S_ISDIR(st.st_mode)) {
            int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (fd < 0) {
                rv = job_fail(j, PROFD_EIO, "cannot open %s: %s", rel, strerror(errno));
            } else {
                rv = walk(j, fd, rel, depth + 1);
            }
        } else if (S_ISREG(st.st_mode)) {
            rv = add_file(j, rel, (int64_t)st.st_size);
        } else {
            rv = job_fail(j, PROFD_EPATH, "%s is not a regular file", rel);
        }
    }
    closedir(d);
    return rv;
}

/* ---- copy across file systems ---- */

static int copy_file(pd_job_t *j, const char *src, const char *dst, XXH64_hash_t *hash)
{
    char part[PATH_MAX];
    char *buf = malloc(IO_CHUNK);
    int in = -1, out = -1, rv = 0;
    XXH64_state_t *st = j->checksum ? XXH64_createState() : NULL;

    if (pd_path_join(part, sizeof(part), dst, "", ".part") != 0) {
        free(buf);
        XXH64_freeState(st);
        return job_fail(j, PROFD_EPATH, "path too long: %.200s", dst);
    }
    if (buf == NULL || (j->checksum && st == NULL)) {
        rv = job_fail(j, PROFD_ENOMEM, "out of memory");
        goto out;
    }
    if (st) {
        XXH64_reset(st, 0);
    }
    if ((in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        rv = job_fail(j, PROFD_EIO, "cannot open %s: %s", src, strerror(errno));
        goto out;
    }
    if ((out = open(part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
        rv = job_fail(j, PROFD_EIO, "cannot create %s: %s", part, strerror(errno));
        goto out;
    }
    for (;;) {
        ssize_t n = read(in, buf, IO_CHUNK);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            rv = job_fail(j, PROFD_EIO, "cannot read %s: %s", src, strerror(errno));
            goto out;
        }
        if (n == 0) {
            break;
        }
        if (st) {
            XXH64_update(st, buf, (size_t)n);
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w < 0) {
                rv = job_fail(j, PROFD_EIO, "cannot write %s: %s", part, strerror(errno));
                goto out;
            }
            off += w;
        }
    }
    if (close(out) != 0) {
        out = -1;
        rv = job_fail(j, PROFD_EIO, "cannot write %s: %s", part, strerror(errno));
        goto out;
    }
    out = -1;
    if (rename(part, dst) != 0) {
        rv = job_fail(j, PROFD_EIO, "cannot rename %s: %s", part, strerror(errno));
        goto out;
    }
    if (st) {
        *hash = XXH64_digest(st);
    }
out:
    if (in >= 0) {
        close(in);
    }
    if (out >= 0) {
        close(out);
        unlink(part);
    }
    XXH64_freeState(st);
    free(buf);
    return rv;
}

static int hash_file(pd_job_t *j, const char *path, XXH64_hash_t *hash)
{
    char *buf = malloc(IO_CHUNK);
    XXH64_state_t *st = XXH64_createState();
    int fd = -1, rv = 0;
    if (buf == NULL || st == NULL) {
        rv = job_fail(j, PROFD_ENOMEM, "out of memory");
        goto out;
    }
    XXH64_reset(st, 0);
    if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        rv = job_fail(j, PROFD_EIO, "cannot open %s: %s", path, strerror(errno));
        goto out;
    }
    for (;;) {
        ssize_t n = read(fd, buf, IO_CHUNK);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            rv = job_fail(j, PROFD_EIO, "cannot read %s: %s", path, strerror(errno));
            goto out;
        }
        if (n == 0) {
            break;
        }
        XXH64_update(st, buf, (size_t)n);
    }
    *hash = XXH64_digest(st);
out:
    if (fd >= 0) {
        close(fd);
    }
    XXH64_freeState(st);
    free(buf);
    return rv;
}

static void set_checksum(pp_file_t *f, XXH64_hash_t h)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "xxh64:%016llx", (unsigned long long)h);
    free(f->checksum);
    f->checksum = strdup(buf);
}

static void remove_tree(const char *path, int depth)
{
    DIR *d = depth < MAX_DEPTH + 2 ? opendir(path) : NULL;
    struct dirent *de;
    if (d == NULL) {
        unlink(path);
        return;
    }
    while ((de = readdir(d)) != NULL) {
        char p[PATH_MAX];
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        if (pd_path_join(p, sizeof(p), path, "/", de->d_name) != 0) {
            continue;
        }
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            remove_tree(p, depth + 1);
        } else {
            unlink(p);
        }
    }
    closedir(d);
    rmdir(path);
}

static bool inside(const char *root, const char *path)
{
    size_t n = strlen(root);
    return strncmp(root, path, n) == 0 && path[n] == '/';
}

void pd_gather_run(pd_job_t *j)
{
    char real_spool[PATH_MAX], real_src[PATH_MAX], parent[sizeof(j->dst)];
    struct stat st;

    j->rv = 0;
    if (realpath(j->spool, real_spool) == NULL) {
        job_fail(j, PROFD_EIO, "spool %s: %s", j->spool, strerror(errno));
        return;
    }
    if (lstat(j->src, &st) != 0) {
        job_fail(j, PROFD_EIO, "capture folder %s is missing", j->src);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        job_fail(j, PROFD_EPATH, "capture folder %s is not a folder", j->src);
        return;
    }
    if (realpath(j->src, real_src) == NULL || !inside(real_spool, real_src)) {
        job_fail(j, PROFD_EPATH, "capture folder %s resolves outside the spool", j->src);
        return;
    }
    int fd = open(real_src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        job_fail(j, PROFD_EIO, "cannot open %s: %s", real_src, strerror(errno));
        return;
    }
    if (walk(j, fd, "", 0) != 0) {
        return;
    }
    if (j->list_only) {
        for (size_t i = 0; j->checksum && i < j->nfiles; i++) {
            char p[PATH_MAX];
            XXH64_hash_t h = 0;
            if (pd_path_join(p, sizeof(p), real_src, "/", j->files[i].path) != 0) {
                job_fail(j, PROFD_EPATH, "path too long: %.200s", j->files[i].path);
                return;
            }
            if (hash_file(j, p, &h) != 0) {
                return;
            }
            set_checksum(&j->files[i], h);
        }
        return;
    }
    if (j->budget >= 0 && j->bytes > j->budget) {
        job_fail(j, PROFD_ELIMIT,
                 "capture of %lld bytes exceeds the window's remaining budget of %lld bytes",
                 (long long)j->bytes, (long long)j->budget);
        remove_tree(real_src, 0);
        return;
    }

    memcpy(parent, j->dst, sizeof(parent));
    char *slash = strrchr(parent, '/');
    if (slash) {
        *slash = '\0';
        if (pd_mkdirs(parent, 0755) != 0) {
            job_fail(j, PROFD_EIO, "cannot create %s: %s", parent, strerror(errno));
            return;
        }
    }
    if (rename(real_src, j->dst) == 0) {
        j->renamed = true;
        for (size_t i = 0; j->checksum && i < j->nfiles; i++) {
            char p[PATH_MAX];
            XXH64_hash_t h = 0;
            if (pd_path_join(p, sizeof(p), j->dst, "/", j->files[i].path) != 0) {
                job_fail(j, PROFD_EPATH, "path too long: %.200s", j->files[i].path);
                return;
            }
            if (hash_file(j, p, &h) != 0) {
                return;
            }
            set_checksum(&j->files[i], h);
        }
        return;
    }
    if (errno != EXDEV) {
        job_fail(j, PROFD_EIO, "cannot move %s to %s: %s", real_src, j->dst, strerror(errno));
        return;
    }
    /* another file system: copy, then drop the spool copy */
    if (pd_mkdirs(j->dst, 0755) != 0) {
        job_fail(j, PROFD_EIO, "cannot create %s: %s", j->dst, strerror(errno));
        return;
    }
    for (size_t i = 0; i < j->nfiles; i++) {
        char s[PATH_MAX], d[PATH_MAX];
        XXH64_hash_t h = 0;
        if (pd_path_join(s, sizeof(s), real_src, "/", j->files[i].path) != 0 ||
            pd_path_join(d, sizeof(d), j->dst, "/", j->files[i].path) != 0) {
            job_fail(j, PROFD_EPATH, "path too long: %.200s", j->files[i].path);
            return;
        }
        char *ds = strrchr(d, '/');
        *ds = '\0';
        if (pd_mkdirs(d, 0755) != 0) {
            job_fail(j, PROFD_EIO, "cannot create %s: %s", d, strerror(errno));
            return;
        }
        *ds = '/';
        if (copy_file(j, s, d, &h) != 0) {
            return;
        }
        if (j->checksum) {
            set_checksum(&j->files[i], h);
        }
    }
    remove_tree(real_src, 0);
}

static bool prune_empty(const char *path, int depth);

bool pd_prune_empty(const char *path)
{
    return prune_empty(path, 0);
}

/* Remove empty folders below and including `path` (never files). */
static bool prune_empty(const char *path, int depth)
{
    DIR *d = depth <= MAX_DEPTH ? opendir(path) : NULL;
    struct dirent *de;
    bool empty = true;
    if (d == NULL) {
        return false;
    }
    while ((de = readdir(d)) != NULL) {
        char p[PATH_MAX];
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        if (pd_path_join(p, sizeof(p), path, "/", de->d_name) != 0 || lstat(p, &st) != 0 ||
            !S_ISDIR(st.st_mode) || !prune_empty(p, depth + 1)) {
            empty = false;
        }
    }
    closedir(d);
    return empty && rmdir(path) == 0;
}

void pd_write_run(pd_job_t *j)
{
    char part[PATH_MAX];
    j->rv = 0;
    if (pd_path_join(part, sizeof(part), j->dst, "", ".part") != 0) {
        job_fail(j, PROFD_EPATH, "path too long: %.200s", j->dst);
        return;
    }
    int fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        job_fail(j, PROFD_EIO, "cannot create %s: %s", part, strerror(errno));
        return;
    }
    for (size_t off = 0; off < j->len;) {
        ssize_t w = write(fd, j->data + off, j->len - off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            job_fail(j, PROFD_EIO, "cannot write %s: %s", part, strerror(errno));
            close(fd);
            unlink(part);
            return;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0 || rename(part, j->dst) != 0) {
        job_fail(j, PROFD_EIO, "cannot write %s: %s", j->dst, strerror(errno));
        unlink(part);
    }
    if (j->prune[0]) {
        prune_empty(j->prune, 0);
    }
}

void pd_chunk_run(pd_job_t *j)
{
    char part[PATH_MAX], parent[PATH_MAX];
    struct stat st;
    int fd;

    j->rv = 0;
    j->complete = false;
    j->have = j->offset;
    if (pd_path_join(part, sizeof(part), j->dst, "", ".part") != 0) {
        job_fail(j, PROFD_EPATH, "path too long: %.200s", j->dst);
        return;
    }
    memcpy(parent, j->dst, strlen(j->dst) + 1);
    char *slash = strrchr(parent, '/');
    if (slash) {
        *slash = '\0';
        if (pd_mkdirs(parent, 0755) != 0) {
            job_fail(j, PROFD_EIO, "cannot create %s: %s", parent, strerror(errno));
            return;
        }
    }
    if (j->offset == 0) {
        fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    } else {
        fd = open(part, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        j->have = 0; /* nothing usable here: start the file again */
        job_fail(j, PROFD_EIO, "cannot open %s: %s", part, strerror(errno));
        return;
    }
    if (fstat(fd, &st) != 0 || (j->offset > 0 && st.st_size != j->offset)) {
        j->have = st.st_size; /* resume from what is really here */
        close(fd);
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
            return;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0) {
        job_fail(j, PROFD_EIO, "cannot write %s: %s", part, strerror(errno));
        return;
    }
    j->have = j->offset + (int64_t)j->len;
    if (j->have < j->size) {
        return;
    }
    if (j->expect[0]) {
        XXH64_hash_t h = 0;
        char got[32];
        if (hash_file(j, part, &h) != 0) {
            return;
        }
        snprintf(got, sizeof(got), "xxh64:%016llx", (unsigned long long)h);
        if (strcmp(got, j->expect) != 0) {
            unlink(part);
            j->have = 0;
            job_fail(j, PROFD_EIO, "checksum mismatch: received %s, expected %s", got, j->expect);
            return;
        }
    }
    if (rename(part, j->dst) != 0) {
        job_fail(j, PROFD_EIO, "cannot rename %s: %s", part, strerror(errno));
        return;
    }
    j->complete = true;
}

/* ---- thread pool glue ---- */

static void job_work(uv_work_t *w)
{
    pd_job_t *j = w->data;
    if (j->kind == PD_JOB_GATHER) {
        pd_gather_run(j);
    } else if (j->kind == PD_JOB_CHUNK) {
        pd_chunk_run(j);
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

void pd_job_free(pd_job_t *j)
{
    if (j == NULL) {
        return;
    }
    for (size_t i = 0; i < j->nfiles; i++) {
        pp_record_free(&pp_desc_file, &j->files[i]);
    }
    free(j->files);
    free(j->data);
    free(j);
}
