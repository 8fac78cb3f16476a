// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Confined paths (see confine.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine.h"
#include "profd/errors.h"

#define MAX_DEPTH 64 /* removal and pruning stop below this */

static int fail(int rv, char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(int rv, char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    int e = errno;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    errno = e;
    return rv;
}

bool pd_confine_rel_ok(const char *rel)
{
    if (rel == NULL || rel[0] == '\0' || rel[0] == '/') {
        return false;
    }
    for (const char *p = rel; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
            return false;
        }
        p += n;
        if (*p == '/' && *++p == '\0') {
            return false; /* trailing slash */
        }
    }
    return true;
}

int pd_confine_root(const char *path, int *out, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return fail(PROFD_EIO, why, whylen, "cannot open %s: %s", path, strerror(errno));
    }
    *out = fd;
    return 0;
}

/* Why openat(O_NOFOLLOW) of `name` failed, as a PROFD code and reason. */
static int explain(int at, const char *name, const char *shown, bool want_dir, char *why,
                   size_t whylen)
{
    struct stat st;
    int e = errno;
    if (e == ELOOP ||
        (e == ENOTDIR && fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))) {
        errno = e;
        return fail(PROFD_EPATH, why, whylen, "'%s' is a symlink (not followed)", shown);
    }
    if (e == ENOTDIR && want_dir) {
        errno = e;
        return fail(PROFD_EPATH, why, whylen, "'%s' is not a folder", shown);
    }
    errno = e;
    return fail(PROFD_EIO, why, whylen, "cannot open '%s': %s", shown, strerror(e));
}

int pd_confine_dir(int root, const char *rel, bool create, int *out, char *why, size_t whylen)
{
    char buf[PATH_MAX];
    size_t len = strlen(rel);
    if (len >= sizeof(buf) || (len > 0 && !pd_confine_rel_ok(rel))) {
        errno = EINVAL;
        return fail(PROFD_EPATH, why, whylen, "'%.200s' is not a plain relative path", rel);
    }
    if (len == 0) { /* the root itself: a descriptor of its own */
        int fd = fcntl(root, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) {
            return fail(PROFD_EIO, why, whylen, "cannot open a folder: %s", strerror(errno));
        }
        *out = fd;
        return 0;
    }
    int fd = root; /* walked from, never closed here */
    memcpy(buf, rel, len + 1);
    for (char *p = buf; *p;) {
        char *slash = strchr(p, '/');
        if (slash) {
            *slash = '\0';
        }
        /* opened first: a folder already there (every parent but the
         * newest) costs no mkdirat */
        int next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && create && errno == ENOENT) {
            if (mkdirat(fd, p, 0755) != 0 && errno != EEXIST) {
                int rv =
                    fail(PROFD_EIO, why, whylen, "cannot create '%s': %s", buf, strerror(errno));
                if (fd != root) {
                    close(fd);
                }
                return rv;
            }
            next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            int rv = explain(fd, p, buf, true, why, whylen);
            if (fd != root) {
                close(fd);
            }
            return rv;
        }
        if (fd != root) {
            close(fd);
        }
        fd = next;
        if (slash == NULL) {
            break;
        }
        *slash = '/';
        p = slash + 1;
    }
    *out = fd;
    return 0;
}

int pd_confine_parent(int root, const char *rel, bool create, int *out, const char **base,
                      char *why, size_t whylen)
{
    char parent[PATH_MAX];
    const char *slash = strrchr(rel, '/');
    size_t n = slash ? (size_t)(slash - rel) : 0;
    if (!pd_confine_rel_ok(rel) || n >= sizeof(parent)) {
        errno = EINVAL;
        return fail(PROFD_EPATH, why, whylen, "'%.200s' is not a plain relative path", rel);
    }
    memcpy(parent, rel, n);
    parent[n] = '\0';
    int rv = pd_confine_dir(root, parent, create, out, why, whylen);
    if (rv == 0) {
        *base = slash ? slash + 1 : rel;
    }
    return rv;
}

int pd_confine_open_in(int dir, const char *name, const char *shown, int *out, struct stat *st,
                       char *why, size_t whylen)
{
    /* O_NONBLOCK: a fifo swapped in must not hang the reader */
    int rv, fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        return explain(dir, name, shown, false, why, whylen);
    }
    if (fstat(fd, st) != 0) {
        rv = fail(PROFD_EIO, why, whylen, "cannot stat '%s': %s", shown, strerror(errno));
        close(fd);
        return rv;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        errno = EINVAL;
        return fail(PROFD_EPATH, why, whylen, "'%s' is not a regular file", shown);
    }
    /* back to blocking reads: of the flags F_SETFL sets (append, async,
     * direct, noatime, nonblock) it was opened with O_NONBLOCK alone, so
     * none is the flags less O_NONBLOCK, without an F_GETFL */
    fcntl(fd, F_SETFL, 0);
    *out = fd;
    return 0;
}

int pd_confine_open_file(int root, const char *rel, int *out, struct stat *st, char *why,
                         size_t whylen)
{
    const char *base;
    int dfd, rv = pd_confine_parent(root, rel, false, &dfd, &base, why, whylen);
    if (rv != 0) {
        return rv;
    }
    rv = pd_confine_open_in(dfd, base, rel, out, st, why, whylen);
    close(dfd);
    return rv;
}

int pd_confine_read_file(const char *root, const char *rel, int64_t max_bytes, char **buf,
                         size_t *len, char *why, size_t whylen)
{
    struct stat st;
    int rfd = -1, fd = -1, rv;
    *buf = NULL;
    *len = 0;
    if ((rv = pd_confine_root(root, &rfd, why, whylen)) != 0) {
        return errno == ENOENT ? PROFD_ENOENT : rv;
    }
    rv = pd_confine_open_file(rfd, rel, &fd, &st, why, whylen);
    int e = errno;
    close(rfd);
    if (rv != 0) {
        return rv == PROFD_EIO && e == ENOENT ? PROFD_ENOENT : rv;
    }
    if (st.st_size > max_bytes) {
        close(fd);
        return fail(PROFD_ELIMIT, why, whylen, "'%s' is larger than %lld bytes", rel,
                    (long long)max_bytes);
    }
    size_t size = (size_t)st.st_size, got = 0;
    char *b = malloc(size + 1);
    if (b == NULL) {
        close(fd);
        return fail(PROFD_ENOMEM, why, whylen, "out of memory reading '%s'", rel);
    }
    while (got < size) {
        ssize_t k = read(fd, b + got, size - got);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            rv = fail(PROFD_EIO, why, whylen, "cannot read '%s': %s", rel,
                      k < 0 ? strerror(errno) : "shorter than its size");
            close(fd);
            free(b);
            return rv;
        }
        got += (size_t)k;
    }
    close(fd);
    b[got] = '\0';
    *buf = b;
    *len = got;
    return 0;
}

void pd_confine_kept_init(pd_confine_kept_t *k)
{
    k->fd = -1;
    k->root = -1;
    k->rel[0] = '\0';
}

void pd_confine_kept_close(pd_confine_kept_t *k)
{
    if (k->fd >= 0) {
        close(k->fd);
    }
    pd_confine_kept_init(k);
}

int pd_confine_parent_kept(pd_confine_kept_t *k, int root, const char *rel, bool create, int *dir,
                           const char **base, char *why, size_t whylen)
{
    const char *slash = strrchr(rel, '/');
    size_t n = slash ? (size_t)(slash - rel) : 0;
    if (!pd_confine_rel_ok(rel) || n >= sizeof(k->rel)) {
        errno = EINVAL;
        return fail(PROFD_EPATH, why, whylen, "'%.200s' is not a plain relative path", rel);
    }
    if (k->fd < 0 || k->root != root || strlen(k->rel) != n || memcmp(k->rel, rel, n) != 0) {
        int fd, rv;
        pd_confine_kept_close(k);
        memcpy(k->rel, rel, n);
        k->rel[n] = '\0';
        if ((rv = pd_confine_dir(root, k->rel, create, &fd, why, whylen)) != 0) {
            k->rel[0] = '\0';
            return rv;
        }
        k->fd = fd;
        k->root = root;
    }
    *dir = k->fd;
    *base = slash ? slash + 1 : rel;
    return 0;
}

static int remove_in(int at, const char *name, int depth)
{
    int fd =
        depth < MAX_DEPTH ? openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0) {
        if (errno == ENOTDIR || errno == ELOOP) {
            return unlinkat(at, name, 0) == 0 || errno == ENOENT ? 0 : PROFD_EIO;
        }
        return errno == ENOENT ? 0 : PROFD_EIO;
    }
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return PROFD_EIO;
    }
    struct dirent *de;
    int rv = 0;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        if (remove_in(dirfd(d), de->d_name, depth + 1) != 0) {
            rv = PROFD_EIO;
        }
    }
    closedir(d);
    if (unlinkat(at, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
        rv = PROFD_EIO;
    }
    return rv;
}

int pd_confine_remove(int dirfd, const char *name)
{
    return remove_in(dirfd, name, 0);
}

static bool prune_in(int at, const char *name, int depth)
{
    int fd =
        depth < MAX_DEPTH ? openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0) {
        return false;
    }
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return false;
    }
    struct dirent *de;
    bool empty = true;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        if (!prune_in(dirfd(d), de->d_name, depth + 1)) {
            empty = false;
        }
    }
    closedir(d);
    return empty && unlinkat(at, name, AT_REMOVEDIR) == 0;
}

/* st: name's own status, taken by the caller. */
static void measure_in(int at, const char *name, const struct stat *st, int depth,
                       pd_confine_usage_t *u)
{
    int64_t m = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
    if (m > u->mtime_ms) {
        u->mtime_ms = m;
    }
    if (!S_ISDIR(st->st_mode)) {
        /* what is on disk (allocated blocks: a sparse file's apparent size
         * is anything its writer likes); a file with several links
         * (TensorBoard's run folder links the traces) counts its share at
         * each, its blocks once in all */
        u->bytes += S_ISREG(st->st_mode)
                        ? (int64_t)st->st_blocks * 512 / (st->st_nlink ? st->st_nlink : 1)
                        : 0;
        u->files++;
        return;
    }
    u->folders++;
    int fd =
        depth < MAX_DEPTH ? openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        if (fd >= 0) {
            close(fd);
        }
        return;
    }
    struct dirent *de;
    struct stat cst;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
            fstatat(dirfd(d), de->d_name, &cst, AT_SYMLINK_NOFOLLOW) == 0) {
            measure_in(dirfd(d), de->d_name, &cst, depth + 1, u);
        }
    }
    closedir(d);
}

int pd_confine_measure(int dirfd, const char *name, pd_confine_usage_t *u)
{
    memset(u, 0, sizeof(*u));
    if (fstatat(dirfd, name, &u->st, AT_SYMLINK_NOFOLLOW) != 0) {
        return PROFD_ENOENT;
    }
    measure_in(dirfd, name, &u->st, 0, u);
    return 0;
}

bool pd_confine_prune(int dirfd, const char *name)
{
    return prune_in(dirfd, name, 0);
}

int pd_confine_unlink(const char *root, const char *rel)
{
    char why[256];
    const char *base;
    int rfd = -1, dfd, rv;
    if ((rv = pd_confine_root(root, &rfd, why, sizeof(why))) != 0) {
        return rv;
    }
    rv = pd_confine_parent(rfd, rel, false, &dfd, &base, why, sizeof(why));
    close(rfd);
    if (rv != 0) {
        return rv;
    }
    rv = unlinkat(dfd, base, 0) == 0 ? 0 : PROFD_EIO;
    close(dfd);
    return rv;
}

bool pd_confine_prune_path(const char *root, const char *rel)
{
    char why[256];
    const char *base;
    int rfd = -1, dfd;
    bool gone;
    if (pd_confine_root(root, &rfd, why, sizeof(why)) != 0) {
        return false;
    }
    if (pd_confine_parent(rfd, rel, false, &dfd, &base, why, sizeof(why)) != 0) {
        close(rfd);
        return false;
    }
    gone = pd_confine_prune(dfd, base);
    close(dfd);
    close(rfd);
    return gone;
}

int pd_confine_own_file(const char *what, const char *path, int64_t max_bytes, int *out,
                        struct stat *st, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            return PROFD_ENOENT;
        }
        if (errno == ELOOP) {
            return fail(PROFD_EPATH, err, errlen,
                        "%s %s is a symlink (not followed): remove the link, the daemon writes "
                        "the file itself",
                        what, path);
        }
        return fail(PROFD_EIO, err, errlen, "cannot read the %s %s: %s", what, path,
                    strerror(errno));
    }
    const char *bad = NULL;
    char detail[160] = "";
    if (fstat(fd, st) != 0) {
        int rv =
            fail(PROFD_EIO, err, errlen, "cannot stat the %s %s: %s", what, path, strerror(errno));
        close(fd);
        return rv;
    }
    if (!S_ISREG(st->st_mode)) {
        bad = "is not a regular file";
        snprintf(detail, sizeof(detail), "remove it, the daemon writes the file itself");
    } else if (st->st_uid != geteuid()) {
        bad = "belongs to another user";
        snprintf(detail, sizeof(detail),
                 "uid %u, not the daemon's %u: check who wrote it, then chown it or move it away "
                 "to start afresh",
                 (unsigned)st->st_uid, (unsigned)geteuid());
    } else if ((st->st_mode & 0022) != 0) {
        bad = "is writable by group or others";
        snprintf(detail, sizeof(detail), "mode %04o: check who wrote it, then chmod go-w it",
                 (unsigned)(st->st_mode & 07777));
    } else if (max_bytes > 0 && st->st_size > max_bytes) {
        bad = "is too large";
        snprintf(detail, sizeof(detail), "%lld bytes, over %lld: move it away to start afresh",
                 (long long)st->st_size, (long long)max_bytes);
    }
    if (bad) {
        close(fd);
        errno = EPERM;
        return fail(PROFD_EPATH, err, errlen, "%s %s %s (%s)", what, path, bad, detail);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) {
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    *out = fd;
    return 0;
}

/* Has the text p[0..n) a ".." component? */
static bool dotdot(const char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        while (i + k < n && p[i + k] != '/') {
            k++;
        }
        if (k == 2 && p[i] == '.' && p[i + 1] == '.') {
            return true;
        }
        i += k + 1;
    }
    return false;
}

bool pd_confine_under(const char *root, const char *path)
{
    if (root == NULL || path == NULL || root[0] != '/' || path[0] != '/') {
        return false;
    }
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/') {
        n--;
    }
    if (n == 1) {
        return !dotdot(path, strlen(path)); /* "/" */
    }
    return strncmp(root, path, n) == 0 && (path[n] == '\0' || path[n] == '/') &&
           !dotdot(path + n, strlen(path + n));
}

/* One plain component: not empty, ".", ".." nor with a slash. */
static bool component_ok(const char *c)
{
    return c[0] != '\0' && strchr(c, '/') == NULL && strcmp(c, ".") != 0 && strcmp(c, "..") != 0;
}

bool pd_confine_window_dir(const char *dir, size_t root_len, const char *job, const char *name)
{
    size_t len = strlen(dir), jl = strlen(job);
    return dir[0] == '/' && root_len >= 1 && root_len < len && dir[root_len] == '/' &&
           !dotdot(dir, root_len) && component_ok(job) && component_ok(name) &&
           strncmp(dir + root_len + 1, job, jl) == 0 && dir[root_len + 1 + jl] == '/' &&
           strcmp(dir + root_len + 2 + jl, name) == 0;
}
