// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Retention of the save_path tree and the free-disk floor (retention.*,
 * limits.min_free_bytes). A pass measures the folders of the finished
 * windows on the thread pool, decides on the loop (core/prune.h) and
 * removes the chosen folders on the thread pool again; a window whose
 * folder is gone is kept in the table as pruned, with the reason
 * (pd_window_t.pruned), which the journal keeps. Never a window still
 * capturing or gathering, nor one whose after-window hook runs. A pass
 * runs every minute and when asked (a window finished, SIGHUP). A
 * finished window's folder tree is walked once: later passes reuse that
 * walk's figures while nothing works on the window and its folder's own
 * status (inode, mtime) is unchanged, for 10 minutes at most (a file put
 * by hand deep in the tree). Loop thread only.
 */
#ifndef PD_RETENTION_H
#define PD_RETENTION_H

#include <stddef.h>

#include "node.h"

typedef struct pd_retention pd_retention_t;

/* Retention for node n: its timer started. 0 with *out, or PROFD_ENOMEM. */
int pd_retention_init(pd_retention_t **out, pd_node_t *n);
/* A pass soon (after the one running, if any). NULL is fine. */
void pd_retention_kick(pd_retention_t *r);
/* The daemon stops: no pass after the one running; the timer closed. */
void pd_retention_stop(pd_retention_t *r);
/* After the loop ran out. NULL is fine. */
void pd_retention_fini(pd_retention_t *r);

/* What the passes cost since the start (the metrics endpoint). */
typedef struct pd_retention_stats {
    int64_t passes;         /* measuring passes ended (their removals too) */
    int64_t walked_windows; /* windows measured by walking their folder tree */
    int64_t reused_windows; /* windows whose last measure was kept: folder unchanged */
    int64_t walked_files;   /* the entries those walks looked at: not folders, */
    int64_t walked_folders; /* folders (each window's own among them) */
} pd_retention_stats_t;

/* r's counters; zeros for NULL (no retention). */
void pd_retention_stats(const pd_retention_t *r, pd_retention_stats_t *out);

/* The free-disk floor before a window starts below `root`: 0, or
 * PROFD_ELIMIT with the reason in err when its file system has less than
 * limits.min_free_bytes free (PROFD_EIO when it cannot be asked). */
int pd_retention_floor(const pd_node_t *n, const char *root, char *err, size_t errlen);

#endif
