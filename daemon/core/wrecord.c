// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A window's record of step times (see wrecord.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stepdoc.h"
#include "wrecord.h"

void pd_wrecords_init(pd_wrecords_t *s)
{
    memset(s, 0, sizeof(*s));
    s->gen = -1;
}

static void record_free(pd_wrecord_t *r)
{
    pd_history_fini(&r->h);
    free(r);
}

void pd_wrecords_fini(pd_wrecords_t *s)
{
    while (s->head) {
        pd_wrecord_t *r = s->head;
        s->head = r->next;
        record_free(r);
    }
    s->n = 0;
}

pd_wrecord_t *pd_wrecords_get(const pd_wrecords_t *s, int64_t id)
{
    for (pd_wrecord_t *r = s->head; r; r = r->next) {
        if (r->window == id) {
            return r;
        }
    }
    return NULL;
}

/* src said goodbye in `live`: its record will take no more steps. */
static bool left_live(const pd_history_t *live, const pd_hist_rank_t *src)
{
    pd_hist_id_t id = {src->job,  src->role,         src->host, src->node[0] ? src->node : NULL,
                       src->rank, src->replica_rank, src->pid};
    const pd_hist_rank_t *l = live ? pd_history_find(live, &id) : NULL;
    return l != NULL && l->left;
}

bool pd_wrecord_complete(const pd_wrecord_t *r, const pd_history_t *live)
{
    if (r->hi == INT64_MAX || !r->taken) {
        return false;
    }
    for (size_t i = 0; i < r->h.n; i++) {
        const pd_hist_rank_t *v = r->h.v[i];
        if ((v->last == PP_NONE || v->last < r->hi) && !left_live(live, v)) {
            return false;
        }
    }
    return true;
}

void pd_wrecords_drop(pd_wrecords_t *s, int64_t id)
{
    for (pd_wrecord_t **p = &s->head; *p; p = &(*p)->next) {
        if ((*p)->window == id) {
            pd_wrecord_t *r = *p;
            *p = r->next;
            record_free(r);
            s->n--;
            return;
        }
    }
}

/* Copy rank src's times within the record's steps that `live` still holds,
 * from a little before where the record's copy stands (a phase of the
 * newest step may have grown since). */
static void copy_rank(pd_wrecord_t *rec, const pd_history_t *live, const pd_hist_rank_t *src)
{
    pd_hist_id_t id = {src->job,  src->role,         src->host, src->node[0] ? src->node : NULL,
                       src->rank, src->replica_rank, src->pid};
    pd_hist_rank_t *dst = pd_history_find(&rec->h, &id);
    if (dst == NULL && (dst = pd_history_get(&rec->h, &id, src->seen_ms)) == NULL) {
        return; /* out of memory: the report shows this rank without times */
    }
    dst->offset_us = src->offset_us;
    dst->offset_err_us = src->offset_err_us;
    if (src->last == PP_NONE) {
        return;
    }
    int64_t from = pd_history_first(live, src), to = src->last < rec->hi ? src->last : rec->hi;
    if (dst->last != PP_NONE && dst->last - 2 > from) {
        from = dst->last - 2;
    }
    if (from < rec->lo) {
        from = rec->lo;
    }
    for (int64_t st = from; st <= to; st++) {
        int64_t us = pd_history_step_us(live, src, st);
        if (us > 0) {
            pd_history_put(&rec->h, dst, st, us);
        }
        for (int p = 0; p < src->nphases; p++) {
            int64_t pu = pd_history_phase_us(live, src, p, st);
            if (pu > 0) {
                pd_history_set_phase(&rec->h, dst, st, src->phases[p], pu);
            }
        }
        for (int k = 0; src->sec_us != NULL && k < PP_SECTIONS; k++) {
            int64_t su = pd_history_section_us(live, src, k, st);
            if (su >= 0) {
                pd_history_set_section(&rec->h, dst, st, k, su);
            }
        }
    }
}

/* Rank src is half the live ring past the record's first step: the live
 * history still holds every step of the record it has (a summary brings a
 * few steps, not half a ring), and will not for long. */
static bool far_enough(const pd_wrecord_t *r, const pd_history_t *live, const pd_hist_rank_t *src)
{
    int64_t ring = live->steps < live->phase_steps ? live->steps : live->phase_steps;
    return src->last != PP_NONE && src->last >= r->lo + ring / 2;
}

void pd_wrecord_take(pd_wrecord_t *r, const pd_history_t *live)
{
    if (r->taken) {
        return;
    }
    r->taken = true;
    for (size_t i = 0; i < live->n; i++) {
        if (strcmp(live->v[i]->job, r->job) == 0) {
            copy_rank(r, live, live->v[i]);
        }
    }
}

void pd_wrecords_take_all(pd_wrecords_t *s, const pd_history_t *live)
{
    for (pd_wrecord_t *r = s->head; r; r = r->next) {
        pd_wrecord_take(r, live);
    }
}

static pd_wrecord_t *record_new(const pd_window_t *w, const pd_history_t *live)
{
    pd_wrecord_t *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return NULL;
    }
    r->window = w->id;
    snprintf(r->job, sizeof(r->job), "%s", w->job);
    r->lo = w->first - PD_STEPDOC_CONTEXT < 0 ? 0 : w->first - PD_STEPDOC_CONTEXT;
    int64_t steps;
    if (w->last != PP_NONE) {
        r->hi = w->last + PD_STEPDOC_CONTEXT;
        steps = r->hi - r->lo + 1;
    } else {
        r->hi = INT64_MAX;
        steps = PD_STEPDOC_MAX_STEPS;
    }
    if (steps > PD_STEPDOC_MAX_STEPS + 2 * PD_STEPDOC_CONTEXT) {
        steps = PD_STEPDOC_MAX_STEPS + 2 * PD_STEPDOC_CONTEXT; /* the newest: the end wins */
    }
    pd_history_init_record(&r->h, steps < 2 ? 2 : steps, steps, live->max_ranks);
    for (size_t i = 0; i < live->n && !r->taken; i++) {
        if (strcmp(live->v[i]->job, r->job) == 0 && far_enough(r, live, live->v[i])) {
            pd_wrecord_take(r, live);
        }
    }
    return r;
}

void pd_wrecords_sync(pd_wrecords_t *s, const pd_windows_t *ws, const pd_history_t *live,
                      int64_t gen)
{
    if (gen == s->gen) {
        return;
    }
    s->gen = gen;
    for (pd_wrecord_t **p = &s->head; *p;) {
        const pd_window_t *w = pd_windows_get(ws, (*p)->window);
        if (w == NULL || w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED) {
            pd_wrecord_t *r = *p;
            *p = r->next;
            record_free(r);
            s->n--;
        } else {
            p = &(*p)->next;
        }
    }
    if (ws->follower) {
        return;
    }
    for (const pd_window_t *w = ws->head; w; w = w->next) {
        if (pd_windows_running(w) && w->first != PP_NONE && pd_wrecords_get(s, w->id) == NULL) {
            pd_wrecord_t *r = record_new(w, live);
            if (r != NULL) {
                r->next = s->head;
                s->head = r;
                s->n++;
            }
        }
    }
}

void pd_wrecords_feed(pd_wrecords_t *s, const pd_history_t *live, const pd_hist_rank_t *r)
{
    for (pd_wrecord_t *rec = s->head; rec; rec = rec->next) {
        if (strcmp(rec->job, r->job) != 0) {
            continue;
        }
        if (rec->taken) {
            copy_rank(rec, live, r);
        } else if (far_enough(rec, live, r)) {
            pd_wrecord_take(rec, live); /* r with them */
        }
    }
}
