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
 * runs every minute and when asked (a window finished). Loop thread only.
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

/* The free-disk floor before a window starts below `root`: 0, or
 * PROFD_ELIMIT with the reason in err when its file system has less than
 * limits.min_free_bytes free (PROFD_EIO when it cannot be asked). */
int pd_retention_floor(const pd_node_t *n, const char *root, char *err, size_t errlen);

#endif
