// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A window's record: the step and phase times of every rank of its job over
 * the window's steps and PD_STEPDOC_CONTEXT steps on either side, taken
 * from the live history (history.h) while the window runs, as they come, so
 * that the report at the window's end holds them however far the ranks have
 * moved on since (the live history keeps its last `steps` per rank: a rank
 * far ahead of a straggler has long dropped the window's steps by the time
 * the straggler reaches them). Each record is a history of its own, whose
 * ring spans exactly the record's steps; steps.json is built from it.
 *
 * A record takes nothing while the live history still holds all it would
 * (`taken` false: its history is empty, no memory): it takes what the live
 * history has of its steps once a rank of its job is half the live ring
 * (the shorter of `steps` and `phase_steps`) past the record's first step,
 * before the live history would evict a rank (pd_wrecords_take_all), or when
 * it is read (pd_wrecord_take: the report at the window's end), and is fed
 * from then on. The times it ends with are those of a record fed from the
 * window's start; at 16,384 ranks a record is megabytes, and the next
 * window's, made as it starts, had been held beside the one before's last
 * write.
 *
 * A side table keyed by window id (the window table does not know it).
 * Pure: no clock, no I/O. Loop thread only.
 */
#ifndef PD_WRECORD_H
#define PD_WRECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "history.h"
#include "windows.h"

typedef struct pd_wrecord {
    int64_t window;
    char job[PP_MAX_NAME + 1];
    int64_t lo, hi; /* the steps kept, inclusive; hi INT64_MAX: open-ended (the newest kept) */
    pd_history_t h; /* empty until taken */
    bool taken;
    /* the window has ended and its report is written: the record waits for
     * the steps after it (pd_wrecord_complete) until close_by_ms at most,
     * then the report is written once more and the record is kept as is */
    bool closing;
    int64_t close_by_ms;
    struct pd_wrecord *next;
} pd_wrecord_t;

typedef struct pd_wrecords {
    pd_wrecord_t *head;
    size_t n;
    int64_t gen; /* the plan generation last synced with */
} pd_wrecords_t;

void pd_wrecords_init(pd_wrecords_t *s);
void pd_wrecords_fini(pd_wrecords_t *s);

/*
 * The windows changed (plan generation `gen`; nothing is done when it is
 * the one last seen): a record for each pending or active window that has
 * none (taking what `live` holds of its steps once a rank of its job is
 * far enough past them, see above); the records of
 * windows gone, cancelled or failed dropped. A follower's windows (a node
 * daemon of a coordinator, which writes no report) get none.
 */
void pd_wrecords_sync(pd_wrecords_t *s, const pd_windows_t *ws, const pd_history_t *live,
                      int64_t gen);
/* Rank r's entry of `live` took new times: into the records of its job
 * that have taken theirs; a record not yet taken takes them now when r is
 * half the live ring past its first step. */
void pd_wrecords_feed(pd_wrecords_t *s, const pd_history_t *live, const pd_hist_rank_t *r);
/* Record r takes what `live` holds of its steps, if it has not yet. */
void pd_wrecord_take(pd_wrecord_t *r, const pd_history_t *live);
/* Every record takes what `live` holds (it is about to evict a rank). */
void pd_wrecords_take_all(pd_wrecords_t *s, const pd_history_t *live);
/* The record of window `id`, or NULL. */
pd_wrecord_t *pd_wrecords_get(const pd_wrecords_t *s, int64_t id);
/* Every rank of the record has reached its last step (hi) or has said
 * goodbye (`left` in `live`, NULL: none has): no step it lacks is still
 * to come. An open-ended record never is, nor one not taken yet. */
bool pd_wrecord_complete(const pd_wrecord_t *r, const pd_history_t *live);
/* Forget window `id`'s record (its report is written). */
void pd_wrecords_drop(pd_wrecords_t *s, int64_t id);

#endif
