// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Gathering captures into the save_path tree (see gather.h), and the
 * thread pool glue every job kind goes through. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "gather.h"
#include "job.h"
#include "pu_buf.h"
#include "text.h"
#include "tracediff.h"
#include "tracemerge.h"

#define MAX_DEPTH         16
#define DEFAULT_MAX_FILES 100000

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

static int add_part(pd_gather_job_t *j, const char *rel)
{
    j->incomplete = true;
    if (j->nparts++ == 0) {
        snprintf(j->part, sizeof(j->part), "%s", rel);
    }
    char **v = realloc(j->parts, (size_t)j->nparts * sizeof(*v));
    if (v == NULL || (v[j->nparts - 1] = strdup(rel)) == NULL) {
        j->parts = v ? v : j->parts;
        j->nparts -= v != NULL;
        return pd_job_fail(PD_JOB(j), PROFD_ENOMEM, "out of memory");
    }
    j->parts = v;
    return 0;
}

static int add_file(pd_gather_job_t *j, const char *rel, int64_t size)
{
    if (is_part(rel)) {
        return add_part(j, rel);
    }
    if (PU_GROW(j->files, j->files_cap, j->nfiles + 1) != 0) {
        return pd_job_fail(PD_JOB(j), PROFD_ENOMEM, "out of memory");
    }
    pp_file_t *f = &j->files[j->nfiles];
    pp_record_init(&pp_desc_file, f);
    if ((f->path = strdup(rel)) == NULL) {
        return pd_job_fail(PD_JOB(j), PROFD_ENOMEM, "out of memory");
    }
    f->bytes = size;
    j->nfiles++;
    j->bytes += size;
    return 0;
}

/* Remove the partial files listed, below the folder descriptor `dir`. */
static void remove_parts(pd_gather_job_t *j, int dir)
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
    pd_gather_job_t *j;
    int64_t entries, max_entries;
} walk_t;

/* One entry of a capture folder, by its status (never followed). */
static int check_entry(walk_t *w, const char *rel, const struct stat *st)
{
    pd_gather_job_t *j = w->j;
    char q[300];
    if (++w->entries > w->max_entries) {
        return pd_job_fail(PD_JOB(j), PROFD_ELIMIT,
                           "more than %lld files and folders in the capture",
                           (long long)w->max_entries);
    }
    pd_quote(q, sizeof(q), rel);
    if (S_ISLNK(st->st_mode)) {
        return pd_job_fail(PD_JOB(j), PROFD_EPATH,
                           "'%s' in the capture is a symlink (not followed)", q);
    }
    if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode)) {
        return pd_job_fail(PD_JOB(j), PROFD_EPATH, "'%s' in the capture is %s", q,
                           kind_name(st->st_mode));
    }
    if (j->owner >= 0 && (int64_t)st->st_uid != j->owner) {
        return pd_job_fail(PD_JOB(j), PROFD_EPATH,
                           "'%s' in the capture belongs to uid %lld, not to the worker that "
                           "reported it (uid %lld)",
                           q, (long long)st->st_uid, (long long)j->owner);
    }
    if (S_ISREG(st->st_mode) && st->st_nlink > 1) {
        return pd_job_fail(PD_JOB(j), PROFD_EPATH, "'%s' in the capture has %llu hard links", q,
                           (unsigned long long)st->st_nlink);
    }
    return 0;
}

/* List a folder without following symlinks; takes fd0. */
static int walk(walk_t *w, int fd0, const char *prefix, int depth)
{
    pd_gather_job_t *j = w->j;
    if (depth > MAX_DEPTH) {
        close(fd0);
        return pd_job_fail(PD_JOB(j), PROFD_EPATH, "capture folders nested deeper than %d",
                           MAX_DEPTH);
    }
    DIR *d = fdopendir(fd0);
    if (d == NULL) {
        close(fd0);
        return pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot read '%s': %s", prefix[0] ? prefix : ".",
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
            rv = pd_job_fail(PD_JOB(j), PROFD_EPATH, "path too long in the capture");
            break;
        }
        if (!name_ok(de->d_name)) {
            pd_quote(q, sizeof(q), rel);
            rv =
                pd_job_fail(PD_JOB(j), PROFD_EPATH,
                            "'%s' in the capture: a name with a control character or not UTF-8", q);
            break;
        }
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            pd_quote(q, sizeof(q), rel);
            rv = pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot stat '%s': %s", q, strerror(errno));
        } else if ((rv = check_entry(w, rel, &st)) != 0) {
            break;
        } else if (S_ISDIR(st.st_mode)) {
            if (j->hook) {
                j->hook(j, PD_JOB_AT_FOLDER);
            }
            int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) {
                pd_quote(q, sizeof(q), rel);
                rv = pd_job_fail(PD_JOB(j),
                                 errno == ELOOP || errno == ENOTDIR ? PROFD_EPATH : PROFD_EIO,
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

static void set_checksum(pp_file_t *f, uint64_t h)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "xxh64:%016llx", (unsigned long long)h);
    free(f->checksum);
    f->checksum = strdup(buf);
}

/* Checksum every listed file below the folder descriptor `dir`. */
static int hash_all(pd_gather_job_t *j, int dir)
{
    char *buf = j->checksum ? malloc(PD_IO_CHUNK) : NULL;
    int rv = 0;
    if (j->checksum && buf == NULL) {
        return pd_job_fail(PD_JOB(j), PROFD_ENOMEM, "out of memory");
    }
    pd_confine_kept_t from; /* the files of a folder, listed together: opened once */
    pd_confine_kept_init(&from);
    for (size_t i = 0; j->checksum && rv == 0 && i < j->nfiles; i++) {
        const char *rel = j->files[i].path, *base;
        char why[400];
        struct stat st;
        uint64_t h = 0;
        int fd, at;
        if ((rv = pd_confine_parent_kept(&from, dir, rel, false, &at, &base, why, sizeof(why))) !=
                0 ||
            (rv = pd_confine_open_in(at, base, rel, &fd, &st, why, sizeof(why))) != 0) {
            pd_job_fail(PD_JOB(j), rv, "%s", why);
            break;
        }
        if ((rv = pd_job_pump(PD_JOB(j), j->checksum, fd, -1, j->files[i].bytes, j->files[i].path,
                              buf, &h)) == 0) {
            set_checksum(&j->files[i], h);
        }
        close(fd);
    }
    pd_confine_kept_close(&from);
    free(buf);
    return rv;
}

/* Copy every listed file from the folder `src` into the new folder `dst`. */
static int copy_all(pd_gather_job_t *j, int src, int dst)
{
    char *buf = malloc(PD_IO_CHUNK);
    int rv = 0;
    if (buf == NULL) {
        return pd_job_fail(PD_JOB(j), PROFD_ENOMEM, "out of memory");
    }
    /* the files of a folder are listed together: each folder is walked to
     * once on each side, its descriptor kept while its files are copied */
    pd_confine_kept_t from, to;
    pd_confine_kept_init(&from);
    pd_confine_kept_init(&to);
    for (size_t i = 0; rv == 0 && i < j->nfiles; i++) {
        const char *rel = j->files[i].path, *base;
        char why[400], part[NAME_MAX + 1];
        struct stat st;
        uint64_t h = 0;
        int in, at, dir, out;
        if ((rv = pd_confine_parent_kept(&from, src, rel, false, &at, &base, why, sizeof(why))) !=
                0 ||
            (rv = pd_confine_open_in(at, base, rel, &in, &st, why, sizeof(why))) != 0) {
            pd_job_fail(PD_JOB(j), rv, "%s", why);
            break;
        }
        if ((rv = pd_confine_parent_kept(&to, dst, rel, true, &dir, &base, why, sizeof(why))) !=
            0) {
            pd_job_fail(PD_JOB(j), rv, "%s", why);
            close(in);
            break;
        }
        if ((size_t)snprintf(part, sizeof(part), "%s.part", base) >= sizeof(part)) {
            rv = pd_job_fail(PD_JOB(j), PROFD_EPATH, "name too long: '%.200s'", rel);

        } else if ((out = openat(dir, part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                 0644)) < 0) {
            rv = pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot create '%s.part': %s", rel,
                             strerror(errno));
        } else {
            rv = pd_job_pump(PD_JOB(j), j->checksum, in, out, j->files[i].bytes, rel, buf, &h);
            if (close(out) != 0 && rv == 0) {
                rv = pd_job_write_failed(PD_JOB(j), rel);
            }
            if (rv == 0 && renameat(dir, part, dir, base) != 0) {
                rv = pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot rename '%s.part': %s", rel,
                                 strerror(errno));
            }
            if (rv != 0) {
                unlinkat(dir, part, 0);
            } else if (j->checksum) {
                set_checksum(&j->files[i], h);
            }
        }
        close(in);
    }
    pd_confine_kept_close(&from);
    pd_confine_kept_close(&to);
    free(buf);
    return rv;
}

/* ---- limits ---- */

/* Claim the capture's bytes from the window's budget, shared by the jobs
 * of the window running at the same time. */
static int budget_claim(pd_gather_job_t *j)
{
    if (j->budget < 0 || j->used == NULL) {
        return 0;
    }
    int64_t cur = atomic_load(j->used);
    do {
        if (cur + j->bytes > j->budget) {
            return pd_job_fail(
                PD_JOB(j), PROFD_ELIMIT,
                "capture of %lld bytes exceeds the window's remaining budget of %lld "
                "bytes (limits.window_byte_budget)",
                (long long)j->bytes, (long long)(j->budget > cur ? j->budget - cur : 0));
        }
    } while (!atomic_compare_exchange_weak(j->used, &cur, cur + j->bytes));
    return 0;
}

static void budget_release(pd_gather_job_t *j)
{
    if (j->budget >= 0 && j->used != NULL) {
        atomic_fetch_sub(j->used, j->bytes);
    }
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
static int gather_open(pd_gather_job_t *j, gather_t *g)
{
    char why[400], q[300];
    int rv;
    pd_quote(q, sizeof(q), j->src);
    if (!pd_confine_rel_ok(j->src)) {
        return pd_job_fail(PD_JOB(j), PROFD_EPATH,
                           "capture folder '%s' is not a plain path in the spool", q);
    }
    if ((rv = pd_confine_root(j->spool, &g->spool, why, sizeof(why))) != 0) {
        return pd_job_fail(PD_JOB(j), rv, "spool: %s", why);
    }
    if (j->hook) {
        j->hook(j, PD_JOB_AT_OPEN);
    }
    if ((rv = pd_confine_parent(g->spool, j->src, false, &g->parent, &g->name, why, sizeof(why))) !=
        0) {
        if (rv == PROFD_EIO && errno == ENOENT) {
            j->missing = true;
            return pd_job_fail(PD_JOB(j), PROFD_EIO, "capture folder '%s' is missing", q);
        }
        return pd_job_fail(PD_JOB(j), rv, "spool: %s", why);
    }
    g->cap = openat(g->parent, g->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (g->cap < 0) {
        if (errno == ENOENT) {
            j->missing = true;
            return pd_job_fail(PD_JOB(j), PROFD_EIO, "capture folder '%s' is missing", q);
        }
        struct stat st;
        if (errno == ELOOP ||
            (fstatat(g->parent, g->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))) {
            return pd_job_fail(PD_JOB(j), PROFD_EPATH,
                               "capture folder '%s' is a symlink (not followed)", q);
        }
        if (errno == ENOTDIR) {
            return pd_job_fail(PD_JOB(j), PROFD_EPATH, "capture folder '%s' is not a folder", q);
        }
        return pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot open capture folder '%s': %s", q,
                           strerror(errno));
    }
    if (fstat(g->cap, &g->st) != 0) {
        return pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot stat capture folder '%s': %s", q,
                           strerror(errno));
    }
    if (j->owner >= 0 && (int64_t)g->st.st_uid != j->owner) {
        return pd_job_fail(PD_JOB(j), PROFD_EPATH,
                           "capture folder '%s' belongs to uid %lld, not to the worker that "
                           "reported it (uid %lld)",
                           q, (long long)g->st.st_uid, (long long)j->owner);
    }
    int fd = fcntl(g->cap, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        return pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot read capture folder '%s': %s", q,
                           strerror(errno));
    }
    walk_t w = {j, 0, j->max_files > 0 ? j->max_files : DEFAULT_MAX_FILES};
    return walk(&w, fd, "", 0);
}

/* Rename the capture into place; true when done (or failed for good). */
static bool gather_rename(pd_gather_job_t *j, gather_t *g, int *err)
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
        pd_job_fail(PD_JOB(j), PROFD_EPATH, "capture folder was replaced while it was gathered");
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
static bool trash_aside(pd_gather_job_t *j, gather_t *g)
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

static void gather_copy(pd_gather_job_t *j, gather_t *g, int why_errno)
{
    int dir;
    if (pd_job_floor_check(PD_JOB(j), j->min_free, j->bytes, g->dparent, j->bytes) != 0) {
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
        pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot create '%s': %s", j->dst, strerror(errno));
        return;
    }
    if ((dir = openat(g->dparent, g->dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot open '%s': %s", j->dst, strerror(errno));
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
static void reserve_manifest(pd_gather_job_t *j, int root)
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
static void recover_in_tree(pd_gather_job_t *j)
{
    char why[400], q[300];
    const char *base;
    int root, parent, cap = -1;
    pd_quote(q, sizeof(q), j->src);
    j->rv = 0;
    j->reason[0] = '\0';
    if (pd_confine_root(j->root, &root, why, sizeof(why)) != 0) {
        pd_job_fail(PD_JOB(j), PROFD_EIO, "capture folder '%s' is missing (and the tree: %s)", q,
                    why);
        return;
    }
    if (pd_confine_parent(root, j->dst, false, &parent, &base, why, sizeof(why)) == 0) {
        cap = openat(parent, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(parent);
    }
    close(root);
    if (cap < 0) {
        pd_job_fail(PD_JOB(j), PROFD_EIO,
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
        pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot read '%s' in the tree: %s", q, strerror(errno));
    }
    close(cap);
}

void pd_gather_run(pd_gather_job_t *j)
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
        pd_job_fail(PD_JOB(j), rv, "save_path tree: %s", why);
    } else {
        struct stat dst;
        bool same = fstat(g.dparent, &dst) == 0 && dst.st_dev == g.st.st_dev;
        if (j->recover && fstatat(g.dparent, g.dname, &dst, AT_SYMLINK_NOFOLLOW) == 0) {
            pd_confine_remove(g.dparent, g.dname); /* a copy a restart cut short */
        }
        reserve_manifest(j, g.root);
        /* a rename takes no space; a copy takes the capture's size */
        if (pd_job_floor_check(PD_JOB(j), j->min_free, j->bytes, g.dparent, same ? 0 : j->bytes) ==
                0 &&
            !gather_rename(j, &g, &e)) {
            if (e == EXDEV || e == EACCES || e == EPERM) {
                gather_copy(j, &g, e);
            } else {
                pd_job_fail(PD_JOB(j), PROFD_EIO, "cannot move the capture to '%s': %s", j->dst,
                            strerror(e));
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

/* ---- the kinds, and the thread pool glue ---- */

static void gather_run(pd_job_t *j)
{
    pd_gather_run((pd_gather_job_t *)j);
}

static void gather_free(pd_job_t *job)
{
    pd_gather_job_t *j = (pd_gather_job_t *)job;
    pp_records_free(&pp_desc_file, j->files, j->nfiles);
    pu_strv_free(j->parts, (size_t)j->nparts);
}

static void write_run(pd_job_t *j)
{
    pd_write_run((pd_write_job_t *)j);
}

static void write_free(pd_job_t *j)
{
    free(((pd_write_job_t *)j)->data);
}

static void chunk_run(pd_job_t *j)
{
    pd_chunk_run((pd_chunk_job_t *)j);
}

static void chunk_free(pd_job_t *j)
{
    free(((pd_chunk_job_t *)j)->data);
}

static void chunks_run(pd_job_t *j)
{
    pd_chunks_run((pd_chunks_job_t *)j);
}

static void chunks_free(pd_job_t *j)
{
    pd_chunks_job_t *b = (pd_chunks_job_t *)j;
    for (size_t i = 0; i < b->n; i++) {
        if (b->items[i]) {
            b->items[i]->data = NULL; /* b->data's */
            free(b->items[i]->hash);  /* its own (a chunk's single job borrows its caller's) */
            pd_job_free(PD_JOB(b->items[i]));
        }
    }
    free(b->items);
    free(b->data);
}

static void remove_run(pd_job_t *j)
{
    pd_remove_run((pd_remove_job_t *)j);
}

static void link_run(pd_job_t *j)
{
    pd_link_run((pd_link_job_t *)j);
}

static void link_free(pd_job_t *job)
{
    pd_link_job_t *j = (pd_link_job_t *)job;
    pu_strv_free(j->links, j->nlinks);
}

static void merge_run(pd_job_t *j)
{
    pd_merge_run((pd_merge_job_t *)j);
}

static void merge_free(pd_job_t *j)
{
    pd_merge_free(((pd_merge_job_t *)j)->merge);
}

static void diff_run(pd_job_t *j)
{
    pd_diff_run((pd_diff_job_t *)j);
}

static void diff_free(pd_job_t *j)
{
    pd_diff_free(((pd_diff_job_t *)j)->diff);
}

/* Each kind: its struct's size, its work, what it owns (NULL: nothing). */
static const struct {
    size_t size;
    void (*run)(pd_job_t *j);
    void (*free)(pd_job_t *j);
} kinds[] = {
    [PD_JOB_GATHER] = {sizeof(pd_gather_job_t), gather_run, gather_free},
    [PD_JOB_WRITE] = {sizeof(pd_write_job_t), write_run, write_free},
    [PD_JOB_CHUNK] = {sizeof(pd_chunk_job_t), chunk_run, chunk_free},
    [PD_JOB_CHUNKS] = {sizeof(pd_chunks_job_t), chunks_run, chunks_free},
    [PD_JOB_REMOVE] = {sizeof(pd_remove_job_t), remove_run, NULL},
    [PD_JOB_LINK] = {sizeof(pd_link_job_t), link_run, link_free},
    [PD_JOB_MERGE] = {sizeof(pd_merge_job_t), merge_run, merge_free},
    [PD_JOB_DIFF] = {sizeof(pd_diff_job_t), diff_run, diff_free},
};

pd_job_t *pd_job_new(pd_job_kind_t kind)
{
    pd_job_t *j = calloc(1, kinds[kind].size);
    if (j != NULL) {
        j->kind = kind;
    }
    return j;
}

void pd_job_run(pd_job_t *j)
{
    kinds[j->kind].run(j);
}

static void job_work(uv_work_t *w)
{
    pd_job_run(w->data);
}

static void job_after(uv_work_t *w, int status)
{
    pd_job_t *j = w->data;
    if (status == UV_ECANCELED && j->rv == 0) {
        pd_job_fail(j, PROFD_ECLOSED, "daemon stopping");
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
    if (kinds[j->kind].free != NULL) {
        kinds[j->kind].free(j);
    }
    free(j);
}
