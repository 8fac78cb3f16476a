// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Retention of the save_path tree: which finished windows to prune, given
 * each window's age and size on disk and the limits (a maximum age, a
 * maximum total). Pure: no clock (now is a parameter), no I/O; the scan
 * and the deletion are daemon/node/retention.c's.
 */
#ifndef PD_PRUNE_H
#define PD_PRUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One window with a folder in the tree. */
typedef struct pd_prune_item {
    int64_t id;
    int64_t finished_ms; /* when it was last written (wall clock, ms since the epoch) */
    int64_t bytes;       /* its size on disk */
    bool final;          /* done, failed or cancelled: may be pruned */
    bool busy;           /* its after-window hook runs: kept for now */
    /* whom its bytes are charged to: the job and the uid that own it (NULL
     * and 0 alike: one owner) */
    const char *job;
    int64_t uid;
} pd_prune_item_t;

typedef struct pd_prune_limits {
    int64_t max_age_ms; /* older than this is pruned; 0 = no limit */
    int64_t max_bytes;  /* the windows together at most; 0 = no limit */
    /* how the size limit is named in the reasons ("100GiB", "50% of the
     * file system (126GiB)"); NULL: max_bytes in binary units */
    const char *max_bytes_label;
} pd_prune_limits_t;

typedef struct pd_prune_verdict {
    size_t index;     /* into the items */
    char reason[128]; /* "older than 30d", "save_path over 100GiB" */
} pd_prune_verdict_t;

/*
 * The windows to prune, oldest first: every final, not busy window older
 * than max_age_ms at now_ms; then, while all the items together (busy and
 * unfinished ones too) exceed max_bytes, the oldest final, not busy ones
 * left (ties: the lower id first) of an owner (job and uid) holding more
 * than its share: max_bytes divided by the number of owners. An owner
 * within its share never loses a window because of another's bytes; when
 * only owners within their share have windows left to prune, the total
 * stays over. out has room for n verdicts; returns how many it wrote.
 * Windows still gathering or whose hook runs are never chosen.
 */
size_t pd_prune_decide(const pd_prune_item_t *items, size_t n, const pd_prune_limits_t *lim,
                       int64_t now_ms, pd_prune_verdict_t *out);

/* "30d", "12h", "90s", "1500ms": a duration in its largest exact unit. */
void pd_prune_fmt_age(int64_t ms, char *buf, size_t len);

#endif
