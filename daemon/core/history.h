// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Step-time history: for every rank this daemon has heard of, the time of
 * each of its recent steps (a ring of `steps` of them) and of each phase of
 * those steps (a ring of `phase_steps`, at most PD_HIST_PHASES phases per
 * rank), where it stands now (the step it is in, since when) and its clock
 * against this daemon's. Fed by the worker endpoint from the step and phase
 * events of local workers, and on a coordinator from its node daemons'
 * summaries. Entries outlive the registry's (a window's report is written
 * after its workers may have left); past `max_ranks` the entry heard from
 * least recently goes.
 *
 * Pure: no clock (times are parameters), no I/O. Step times are the time
 * from a step's begin to its end on the rank's own clock, in microseconds
 * (kept as 32 bits: up to 71 minutes). Loop thread only.
 */
#ifndef PD_HISTORY_H
#define PD_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "intern.h"
#include "profd/proto.h"
#include "uix.h"

#define PD_HIST_PHASES 8 /* distinct phase names kept per rank */
#define PD_HIST_RECENT 8 /* a rank's "recent step time": the median of this many */
/* A rank is stalled when its current step began longer ago than this many
 * times its role's median step time, and at least PD_HIST_STALL_MIN_MS. */
#define PD_HIST_STALL_FACTOR 4
#define PD_HIST_STALL_MIN_MS 2000

/* Who a rank is: the key of its entry is (job, role, rank, host, node). */
typedef struct pd_hist_id {
    const char *job, *role, *host, *node; /* node: NULL or "" for this daemon's own */
    int64_t rank, replica_rank, pid;
} pd_hist_id_t;

/* Where a rank stands: live histories only (a window's record, which only
 * keeps times, has none). */
typedef struct pd_hist_now {
    int64_t cur_step;  /* last step begun, PP_NONE */
    int64_t began_us;  /* cur_step's begin on the rank's clock */
    int64_t began_ms;  /* ... on this daemon's clock */
    int64_t phase_t0;  /* cur_phase's begin, rank's clock */
    int64_t phase_for; /* the step it runs in */
    int64_t reported;  /* node daemon: newest step sent to the coordinator */
    int cur_phase;     /* index into phases, -1 none */
    bool in_step;
} pd_hist_now_t;

/*
 * One allocation holds the entry, its ring of step times (step_us) and, in
 * a live history, where the rank stands (*now). The phases it has seen are
 * one more, grown by one at each new name (rare): their names (phases) then
 * their rings of phase_steps times each.
 */
typedef struct pd_hist_rank {
    /* names: the history's interned copies (never NULL; node "": this
     * daemon's own) */
    const char *job;
    const char *role;
    const char *host;
    const char *node;
    int64_t rank, replica_rank, pid;
    uint64_t hash;

    int64_t last;           /* newest step with a time slot, PP_NONE before any */
    const char **phases;    /* [nphases] interned, then their [phase_steps] rings; NULL: none */
    int nphases;            /* at most PD_HIST_PHASES */
    bool gone;              /* lost or left (kept for reports) */
    bool left;              /* ... it said goodbye: not stalled, out of the live figures */
    int64_t phases_dropped; /* phase names past PD_HIST_PHASES */
    /* section times (PP_SECTIONS x steps, slot step % steps, us + 1; 0
     * unknown), made when the rank first sends one */
    uint32_t *sec_us;
    pd_hist_now_t *now; /* in the same allocation; NULL in a record */
    int64_t seen_ms;

    /* this daemon's clock - the rank's (us), and the bound of its error;
     * err 0: not measured (same host: 0 is right within the tick) */
    int64_t offset_us, offset_err_us;
    uint32_t step_us[]; /* [steps], slot step % steps; 0 unknown */
} pd_hist_rank_t;

typedef struct pd_history {
    pd_hist_rank_t **v; /* entries, unordered */
    size_t n, cap;
    pd_uix_t ix; /* v's positions by key hash; no slots (no memory): a scan */
    int64_t steps, phase_steps;
    size_t max_ranks;
    int64_t evicted;
    pd_intern_t names; /* the entries' names and phase names */
    bool record;       /* a window's record: entries without where they stand (now NULL) */
} pd_history_t;

/* steps: slots per rank (>= 2); phase_steps (>= 1); max_ranks (>= 1). */
void pd_history_init(pd_history_t *h, int64_t steps, int64_t phase_steps, size_t max_ranks);
/* The same for a window's record: its entries keep times only (no `now`;
 * pd_history_events takes nothing, pd_history_where only marks them seen). */
void pd_history_init_record(pd_history_t *h, int64_t steps, int64_t phase_steps, size_t max_ranks);
void pd_history_fini(pd_history_t *h);

/* The entry of `id`, or NULL. */
pd_hist_rank_t *pd_history_find(const pd_history_t *h, const pd_hist_id_t *id);
/* The entry of `id`, made when new (evicting the one heard from least
 * recently when max_ranks are held); identity fields that change (pid,
 * replica rank) are updated, `gone` is cleared. NULL on ENOMEM. */
pd_hist_rank_t *pd_history_get(pd_history_t *h, const pd_hist_id_t *id, int64_t now_ms);

/*
 * Events of a local worker: ev (kind 1 begin | 2 end, step, t_us) triples,
 * pev (kind 1 begin | 2 end, index into names, t_us) triples, on the rank's
 * clock; `offset_us` converts it to this daemon's (began_ms). Malformed
 * triples are skipped. Returns the number of step times recorded.
 */
int pd_history_events(pd_history_t *h, pd_hist_rank_t *r, const int64_t *ev, size_t nev,
                      const int64_t *pev, size_t npev, char *const *names, size_t nnames,
                      int64_t now_ms);

/* Section totals of a local worker: (step, section, us) triples; malformed
 * ones (a section out of range, a negative time) are skipped. Returns the
 * number recorded, or PROFD_ENOMEM. */
int pd_history_sections(pd_history_t *h, pd_hist_rank_t *r, const int64_t *sev, size_t nsev);
/* Section `sec` of `step` (us), -1 when unknown or out of the ring. */
int64_t pd_history_section_us(const pd_history_t *h, const pd_hist_rank_t *r, int sec,
                              int64_t step);

/* Section `sec` of `step` set to `us` (a copy of another history's). */
void pd_history_set_section(pd_history_t *h, pd_hist_rank_t *r, int64_t step, int sec, int64_t us);

/* A step time or a phase time learnt from elsewhere (a node's summary). */
void pd_history_put(pd_history_t *h, pd_hist_rank_t *r, int64_t step, int64_t us);
void pd_history_put_phase(pd_history_t *h, pd_hist_rank_t *r, int64_t step, const char *phase,
                          int64_t us);
/* Phase time of `step` set to `us` (not added to: a copy of another
 * history's). */
void pd_history_set_phase(pd_history_t *h, pd_hist_rank_t *r, int64_t step, const char *phase,
                          int64_t us);
/* Where it stands, from elsewhere: its current step began `age_ms` ago. */
void pd_history_where(pd_hist_rank_t *r, int64_t step, bool in_step, int64_t age_ms,
                      int64_t now_ms);

/* The time of `step` (us), -1 when unknown or out of the ring. */
int64_t pd_history_step_us(const pd_history_t *h, const pd_hist_rank_t *r, int64_t step);
/* Phase `p` (index into r->phases) of `step` (us), -1 when unknown. */
int64_t pd_history_phase_us(const pd_history_t *h, const pd_hist_rank_t *r, int p, int64_t step);
/* The median of the last `n` known step times up to step `upto` (PP_NONE:
 * the newest), 0 when none. */
int64_t pd_history_median(const pd_history_t *h, const pd_hist_rank_t *r, int64_t upto, int n);
/* The oldest step still held. */
int64_t pd_history_first(const pd_history_t *h, const pd_hist_rank_t *r);

/*
 * Per (job, role) summaries for `top`, `status` and metrics (ranks gone,
 * lost or left, are not counted: their processes are over): ranks, newest
 * step, min / median / max of the ranks' recent step times, the `nslow`
 * slowest ranks (ratio to the role's median, slowest first) and the stalled
 * ones; `job` NULL: every job. Roles sorted by job, then role. With `all`,
 * *ranks receives a row per rank (sorted by job, role, rank). Strings are
 * borrowed from the entries; free with pd_history_stats_free(). 0 or
 * PROFD_ENOMEM.
 */
int pd_history_stats(const pd_history_t *h, const char *job, int64_t now_ms, size_t nslow, bool all,
                     pp_role_stats_t **roles, size_t *nroles, pp_rank_stat_t **ranks,
                     size_t *nranks);
void pd_history_stats_free(pp_role_stats_t *roles, size_t nroles, pp_rank_stat_t *ranks);

/* The median of n values (sorted in place); 0 for n == 0. */
int64_t pd_median_i64(int64_t *v, size_t n);

#endif
