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
 * them and their folders (ms since the epoch). 0, or PROFD_ENOENT when
 * `name` is not there (nothing written). */
int pd_confine_measure(int dirfd, const char *name, int64_t *bytes, int64_t *mtime_ms);

/* By path: remove the file root/rel; remove the empty folders of root/rel. */
int pd_confine_unlink(const char *root, const char *rel);
bool pd_confine_prune_path(const char *root, const char *rel);

#endif
