// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Confined paths: files and folders below a trusted root folder, reached
 * one component at a time from the root's descriptor with O_NOFOLLOW, so
 * that nothing is ever read, written, moved or removed through a symlink,
 * whatever another user swaps into the tree meanwhile. The root itself (the
 * spool, a save_path) is the administrator's path and is opened normally.
 *
 * Relative paths must be plain: components neither empty, "." nor "..", no
 * leading '/'. Errors are PROFD_EPATH (a bad path, a symlink, not a folder
 * or not a regular file) or PROFD_EIO (any other failure, errno kept), with
 * a one-line reason naming the component in `why`.
 */
#ifndef PD_CONFINE_H
#define PD_CONFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

/* Is `rel` a plain relative path (see above)? */
bool pd_confine_rel_ok(const char *rel);

/* Open the trusted root folder. */
int pd_confine_root(const char *path, int *out, char *why, size_t whylen);

/* Open the folder `rel` below the folder descriptor `root` ("" = root
 * itself). create: make missing folders (mode 0755). *out is a new
 * descriptor on success. */
int pd_confine_dir(int root, const char *rel, bool create, int *out, char *why, size_t whylen);

/* Open the folder holding `rel` and point *base at rel's last component. */
int pd_confine_parent(int root, const char *rel, bool create, int *out, const char **base,
                      char *why, size_t whylen);

/* Open the regular file `rel` below `root` for reading (never blocking on
 * a fifo, never a device). *st receives its status. */
int pd_confine_open_file(int root, const char *rel, int *out, struct stat *st, char *why,
                         size_t whylen);

/* The regular file `rel` below the root folder at the path `root`, read
 * whole into *buf (malloc'ed, NUL-terminated, *len bytes without it) when
 * it is at most max_bytes (>= 0) long. 0, or PROFD_ENOENT (it, or a folder
 * on the way, is not there), PROFD_EPATH (a symlink or what is not a
 * folder on the way, not a regular file, a bad path), PROFD_ELIMIT (larger
 * than max_bytes), PROFD_EIO (cannot be opened or read to its end) or
 * PROFD_ENOMEM, with a one-line reason in `why`; *buf NULL then. */
int pd_confine_read_file(const char *root, const char *rel, int64_t max_bytes, char **buf,
                         size_t *len, char *why, size_t whylen);

/* Open the regular file `name` (one component) in the folder `dir` as
 * pd_confine_open_file does; `shown` names it in `why`. */
int pd_confine_open_in(int dir, const char *name, const char *shown, int *out, struct stat *st,
                       char *why, size_t whylen);

/*
 * A folder kept open across a run of files: pd_confine_parent_kept opens
 * the folder holding `rel` below `root` as pd_confine_parent does, and
 * keeps it, so that the next file in the same folder (same root, same
 * folder text) is opened from it without walking its path again; another
 * folder closes it and opens that one. *dir is borrowed: valid until the
 * next call or pd_confine_kept_close. What lies below the kept folder is
 * still reached one component at a time, never through a symlink.
 */
typedef struct pd_confine_kept {
    int fd;   /* -1: none */
    int root; /* the descriptor it was reached from */
    char rel[PATH_MAX];
} pd_confine_kept_t;

void pd_confine_kept_init(pd_confine_kept_t *k);
void pd_confine_kept_close(pd_confine_kept_t *k);
int pd_confine_parent_kept(pd_confine_kept_t *k, int root, const char *rel, bool create, int *dir,
                           const char **base, char *why, size_t whylen);

/* Remove `name` in the folder `dirfd`: a whole folder tree without
 * following symlinks, or a single entry. Best effort; 0 or PROFD_EIO. */
int pd_confine_remove(int dirfd, const char *name);

/* Remove the empty folders in and including `name` in `dirfd` (never a
 * file); true when `name` itself is gone. */
bool pd_confine_prune(int dirfd, const char *name);

/* The bytes on disk of the regular files in and below `name` in `dirfd`
 * (a folder tree, without following symlinks; allocated blocks, not the
 * apparent size a sparse file claims; a file with n hard links counts 1/n
 * of its blocks at each) and the latest modification time among
 * them and their folders (ms since the epoch); what the walk cost: the
 * entries it looked at (one fstatat each), folders (`name` itself among
 * them) and everything else; and `name`'s own status as the walk began
 * (a caller keeping the figures compares it later: retention.c). 0, or
 * PROFD_ENOENT when `name` is not there (nothing written). */
typedef struct pd_confine_usage {
    int64_t bytes, mtime_ms;
    int64_t files, folders;
    struct stat st;
} pd_confine_usage_t;

int pd_confine_measure(int dirfd, const char *name, pd_confine_usage_t *u);

/* By path: remove the file root/rel; remove the empty folders of root/rel. */
int pd_confine_unlink(const char *root, const char *rel);
bool pd_confine_prune_path(const char *root, const char *rel);

/*
 * The daemon's own persistent file at `path` (its journal, the
 * coordinator's state), read back as untrusted input: opened with
 * O_NOFOLLOW | O_NONBLOCK (a symlink or a fifo put there cannot hang or
 * feed the daemon), and only a regular file owned by the daemon's uid,
 * not writable by group or others, of at most max_bytes. 0 with *fd
 * (blocking again) and *st; PROFD_ENOENT when there is none; else
 * PROFD_EPATH (PROFD_EIO when it cannot be read) with a one-line reason
 * in err naming `what`, the file and the fix.
 */
int pd_confine_own_file(const char *what, const char *path, int64_t max_bytes, int *fd,
                        struct stat *st, char *err, size_t errlen);

/* Does `path` lie in or below the folder `root` (both absolute; compared as
 * text, so `path` may have no ".." component below `root`)? */
bool pd_confine_under(const char *root, const char *path);

/* Is `dir` a window folder as the daemon makes them, <root>/<job>/<name>
 * with root = dir[0..root_len) absolute and without "..", job and name one
 * plain component each? (A restored window's folder is checked with it.) */
bool pd_confine_window_dir(const char *dir, size_t root_len, const char *job, const char *name);

#endif
