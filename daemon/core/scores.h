// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Section scores: where each rank's step time goes and how it compares, per
 * role and per section, as NVIDIA's straggler detector (nvidia-resiliency-ext,
 * attribution/straggler/reporting.py, ReportGenerator) scores its sections:
 *
 *  - a section's time of a rank is the median of its last `recent` steps
 *    (torch.median: the lower of the two middle values for an even count);
 *  - relative score = the smallest such median over the role's ranks (the
 *    fastest rank) / this rank's median;
 *  - individual score = the rank's own recent best (the smallest median of
 *    the blocks of `recent` steps its history holds, the newest block
 *    included) / this median.
 * Both lie in (0, 1]; 0.5 means twice as slow as the reference.
 *
 * Sections are those the workers send (data, forward, backward, optimizer,
 * comm) and two made here: compute = forward + backward + optimizer, and
 * other = the step's time outside every section sent.
 *
 * The synchronous straggler: in data-parallel training every rank waits for
 * the slowest one in the gradient all-reduce, so step times are equal; the
 * straggler is the rank whose compute is slow while its peers wait for it.
 * pd_scores_straggler names it when, for `consecutive` steps in a row, its
 * compute relative score is the role's lowest and below `threshold`, and
 * the role's other ranks wait (comm, which must have been measured) longer
 * than it by at least half its compute's excess over theirs (their
 * median), no rank of the role waiting less than it (it arrives last),
 * that excess being at least 5 % of their compute and over PD_SCORES_MADS
 * times the median absolute deviation of their computes.
 * Pure: fed by the history. Loop thread only.
 */
#ifndef PD_SCORES_H
#define PD_SCORES_H

#define PD_SCORES_MADS 4 /* a straggler's excess: over this many MADs of the others' compute */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"

enum {
    PD_SEC_DATA = 0,
    PD_SEC_FORWARD,
    PD_SEC_BACKWARD,
    PD_SEC_OPTIMIZER,
    PD_SEC_COMM,
    PD_SEC_COMPUTE, /* forward + backward + optimizer */
    PD_SEC_OTHER,   /* the step outside every section */
    PD_SECS
};

/* "data", ..., "compute", "other"; NULL out of range. */
const char *pd_sec_name(int sec);

typedef struct pd_score_rank {
    const pd_hist_rank_t *r;
    int64_t med_us[PD_SECS];  /* median of the last `recent` steps; -1 unknown */
    int64_t best_us[PD_SECS]; /* its own recent best; -1 unknown */
    double rel[PD_SECS];      /* relative score; -1 unknown (0 when the fastest took 0) */
    double ind[PD_SECS];      /* individual score; -1 unknown */
    int64_t step_us;          /* median step time of those steps; -1 unknown */
} pd_score_rank_t;

typedef struct pd_score_role {
    const char *job, *role; /* borrowed from the history */
    pd_score_rank_t *ranks; /* sorted by rank */
    size_t n;
    int64_t min_us[PD_SECS]; /* the fastest rank's median; -1 unknown */
} pd_score_role_t;

/*
 * The scores of every role (of `job`; NULL: every job) whose ranks sent
 * sections, over the steps up to `upto_back` steps before each rank's newest
 * complete step (0: up to it), the ranks gone and left excluded. Roles
 * sorted by job and role. 0 or PROFD_ENOMEM; free with pd_scores_free.
 */
int pd_scores_compute(const pd_history_t *h, const char *job, int recent, int64_t upto_back,
                      pd_score_role_t **roles, size_t *nroles);
void pd_scores_free(pd_score_role_t *roles, size_t nroles);

/*
 * Rows for `top` and the metrics: per role (of `job`, NULL every job), the
 * `per_role` ranks with the lowest compute relative score (0: every rank),
 * lowest first; times the medians of the last `recent` steps. Strings
 * borrowed from the history. 0 or PROFD_ENOMEM; free(*out).
 */
int pd_scores_rows(const pd_history_t *h, const char *job, int recent, size_t per_role,
                   pp_rank_sections_t **out, size_t *n);

typedef struct pd_score_hit {
    const pd_hist_rank_t *slow, *peer;
    double rel;              /* the straggler's compute relative score (newest) */
    int64_t slow_compute_us; /* its compute */
    int64_t peer_compute_us;
    int64_t slow_comm_us; /* its wait */
    int64_t peer_comm_us; /* the others' wait (their median) */
} pd_score_hit_t;

/*
 * The synchronous straggler of the roles of `h` (job, roles filtered by
 * `watched`, NULL: all): see above. `recent` steps per median. true with
 * *hit filled (the peer: the other rank whose compute is nearest the
 * others' median).
 */
typedef bool (*pd_score_watch_fn)(const pd_hist_rank_t *r, void *arg);
bool pd_scores_straggler(const pd_history_t *h, int recent, double threshold, int64_t consecutive,
                         pd_score_watch_fn watched, void *arg, pd_score_hit_t *hit);

#endif
