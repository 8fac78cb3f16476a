// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The straggler trigger's detector: when a rank's step time exceeds
 * `factor` x the median of the other ranks of its role for `consecutive`
 * steps in a row, it names that rank and one healthy peer of the same role
 * (the one whose recent step time is closest to the role's median). At
 * most one hit every `interval_ms`, none while the window of the previous
 * hit is still running, none once the windows it caused have gathered
 * `max_bytes`; with no job configured, the interval and the budget hold
 * per job. The caller opens the window (for the next `steps` steps) and
 * says so with pd_straggler_fired().
 *
 * "The role's median" is the median of the other ranks' recent step times
 * (each the median of its last PD_HIST_RECENT steps), so that a role of two
 * ranks works and the straggler does not pull the median towards itself.
 * Pure: fed by the history, time a parameter. Loop thread only.
 */
#ifndef PD_STRAGGLER_H
#define PD_STRAGGLER_H

#include <stdbool.h>
#include <stdint.h>

#include "history.h"
#include "profd/proto.h"

#define PD_STRAGGLER_ROLES 16

typedef struct pd_straggler_cfg {
    char job[PP_MAX_NAME + 1]; /* "" = any job */
    char roles[PD_STRAGGLER_ROLES][PP_MAX_NAME + 1];
    int nroles; /* 0 = every role */
    double factor;
    double score; /* compute relative score threshold (scores.h); 0 = off */
    int64_t consecutive;
    int64_t steps;
    int64_t interval_ms;
    int64_t max_bytes; /* 0 = no limit */
    char tool[PP_MAX_NAME + 1];
} pd_straggler_cfg_t;

/* With no job configured, the rate limit and the byte budget hold per job
 * (the jobs last fired for, the oldest forgotten past this many), so that
 * one job's straggler (another user's, reporting slow steps on purpose)
 * cannot take every window the trigger opens nor its whole budget. */
#define PD_STRAGGLER_JOBS 32

typedef struct pd_straggler_job {
    char job[PP_MAX_NAME + 1];
    int64_t last_ms; /* its last hit */
    int64_t bytes;   /* gathered by its windows */
} pd_straggler_job_t;

typedef struct pd_straggler {
    pd_straggler_cfg_t cfg;
    pd_straggler_job_t jobs[PD_STRAGGLER_JOBS];
    int njobs;
    char last_job[PP_MAX_NAME + 1]; /* the job of last_window */
    bool armed;
    int64_t fired;       /* windows opened */
    int64_t last_ms;     /* time of the last hit; PP_NONE none */
    int64_t last_window; /* its window, PP_NONE none */
    bool live;           /* that window is still running */
    int64_t bytes;       /* gathered by the windows it opened */
    char last_reason[320];
} pd_straggler_t;

typedef struct pd_straggler_hit {
    const pd_hist_rank_t *slow, *peer;
    int64_t slow_us; /* the smallest of its `consecutive` step times */
    int64_t peer_us; /* the peer's recent step time */
    int64_t p50_us;  /* the median of the other ranks of the role */
    char reason[320];
} pd_straggler_hit_t;

/* Disarmed, with `cfg` (checked by the caller: factor > 1, consecutive,
 * steps >= 1). */
void pd_straggler_init(pd_straggler_t *s, const pd_straggler_cfg_t *cfg, bool armed);
/* Arm with a new configuration: the counts start again. */
void pd_straggler_arm(pd_straggler_t *s, const pd_straggler_cfg_t *cfg);
void pd_straggler_disarm(pd_straggler_t *s);

/* Look for a straggler. true with *hit filled when one is found and the
 * rate limit and the byte budget allow a window now. */
bool pd_straggler_check(const pd_straggler_t *s, const pd_history_t *h, int64_t now_ms,
                        pd_straggler_hit_t *hit);
/* A hit was acted on: `window` opened (PP_NONE: none could be), which
 * counts against the rate limit either way. */
void pd_straggler_fired(pd_straggler_t *s, const pd_straggler_hit_t *hit, int64_t window,
                        int64_t now_ms);
/* A window finished with `bytes` gathered: if it is the trigger's, count
 * them and let the next hit come. */
void pd_straggler_window_done(pd_straggler_t *s, int64_t window, int64_t bytes);

/* The trigger as the `straggler` reply shows it (strings borrowed; free
 * out->roles only). */
void pd_straggler_info(const pd_straggler_t *s, pp_straggler_t *out);

#endif
