// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Step-time history (see history.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

#define U32_MAX_US 4294967295LL

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t pd_median_i64(int64_t *v, size_t n)
{
    if (n == 0) {
        return 0;
    }
    qsort(v, n, sizeof(*v), cmp_i64);
    return v[n / 2];
}

/* ---- the table ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ s[i]) * 1099511628211ULL;
    }
    return h;
}

static uint64_t key_hash(const pd_hist_id_t *id)
{
    uint64_t h = 14695981039346656037ULL;
    const char *node = id->node ? id->node : "";
    h = fnv(h, id->job, strlen(id->job) + 1);
    h = fnv(h, id->role, strlen(id->role) + 1);
    h = fnv(h, id->host, strlen(id->host) + 1);
    h = fnv(h, node, strlen(node) + 1);
    return fnv(h, &id->rank, sizeof(id->rank));
}

static bool key_eq(const pd_hist_rank_t *r, const pd_hist_id_t *id, uint64_t hash)
{
    return r->hash == hash && r->rank == id->rank && strcmp(r->job, id->job) == 0 &&
           strcmp(r->role, id->role) == 0 && strcmp(r->host, id->host) == 0 &&
           strcmp(r->node, id->node ? id->node : "") == 0;
}

/* Position i, holding its entry now, in the index; without memory, no
 * index (pd_history_find scans until the next rebuild). */
static void index_put(pd_history_t *h, size_t i)
{
    int rv = pd_uix_room(&h->ix, h->n, 1);
    if (rv < 0) {
        pd_uix_free(&h->ix);
    } else if (rv == 1) {
        for (size_t k = 0; k < h->n; k++) { /* rebuilt empty: every position again */
            pd_uix_put(&h->ix, h->v[k]->hash, k);
        }
    } else {
        pd_uix_put(&h->ix, h->v[i]->hash, i);
    }
}

void pd_history_init(pd_history_t *h, int64_t steps, int64_t phase_steps, size_t max_ranks)
{
    memset(h, 0, sizeof(*h));
    h->steps = steps >= 2 ? steps : 2;
    h->phase_steps = phase_steps >= 1 ? phase_steps : 1;
    h->max_ranks = max_ranks ? max_ranks : 1;
}

void pd_history_init_record(pd_history_t *h, int64_t steps, int64_t phase_steps, size_t max_ranks)
{
    pd_history_init(h, steps, phase_steps, max_ranks);
    h->record = true;
}

static void entry_free(pd_hist_rank_t *r)
{
    if (r) {
        free(r->sec_us);
        free(r->phases);
        free(r);
    }
}

/* Where `now` starts in an entry of `steps` slots: after the ring, aligned. */
static size_t now_at(int64_t steps)
{
    size_t a = _Alignof(pd_hist_now_t);
    return (sizeof(pd_hist_rank_t) + (size_t)steps * sizeof(uint32_t) + a - 1) / a * a;
}

/* Phase p's ring. */
static uint32_t *phase_ring(const pd_history_t *h, const pd_hist_rank_t *r, int p)
{
    return (uint32_t *)(void *)(r->phases + r->nphases) + (size_t)p * (size_t)h->phase_steps;
}

void pd_history_fini(pd_history_t *h)
{
    for (size_t i = 0; i < h->n; i++) {
        entry_free(h->v[i]);
    }
    free(h->v);
    pd_uix_free(&h->ix);
    pd_intern_fini(&h->names);
    memset(h, 0, sizeof(*h));
}

pd_hist_rank_t *pd_history_find(const pd_history_t *h, const pd_hist_id_t *id)
{
    uint64_t hash = key_hash(id);
    if (h->ix.slot == NULL) {
        for (size_t i = 0; i < h->n; i++) {
            if (key_eq(h->v[i], id, hash)) {
                return h->v[i];
            }
        }
        return NULL;
    }
    /* a slot may be stale (its position since refilled, or past n): each
     * hit is compared */
    for (size_t at = pd_uix_first(&h->ix, hash); h->ix.slot[at]; at = pd_uix_next(&h->ix, at)) {
        size_t i = pd_uix_at(&h->ix, at);
        if (i < h->n && key_eq(h->v[i], id, hash)) {
            return h->v[i];
        }
    }
    return NULL;
}

/* Make room for one more: grow, or drop the entry heard from least recently
 * (the ones gone first). */
static int make_room(pd_history_t *h)
{
    if (h->n < h->max_ranks) {
        if (h->n == h->cap) {
            size_t cap = h->cap ? h->cap * 2 : 16;
            if (cap > h->max_ranks) {
                cap = h->max_ranks;
            }
            pd_hist_rank_t **v = realloc(h->v, cap * sizeof(*v));
            if (v == NULL) {
                return PROFD_ENOMEM;
            }
            h->v = v;
            h->cap = cap;
        }
        return 0;
    }
    size_t old = 0;
    for (size_t i = 1; i < h->n; i++) {
        const pd_hist_rank_t *a = h->v[i], *b = h->v[old];
        if (a->gone != b->gone ? a->gone : a->seen_ms < b->seen_ms) {
            old = i;
        }
    }
    entry_free(h->v[old]);
    h->v[old] = h->v[--h->n];
    h->evicted++;
    if (old < h->n) {
        index_put(h, old); /* the last entry, moved there */
    }
    return 0;
}

pd_hist_rank_t *pd_history_get(pd_history_t *h, const pd_hist_id_t *id, int64_t now_ms)
{
    pd_hist_rank_t *r = pd_history_find(h, id);
    if (r == NULL) {
        if (!pp_ident_ok(id->job) || !pp_ident_ok(id->role) || strlen(id->host) > PP_MAX_NAME ||
            (id->node && strlen(id->node) > PP_MAX_NAME) || make_room(h) != 0) {
            return NULL;
        }
        const char *job = pd_intern(&h->names, id->job);
        const char *role = pd_intern(&h->names, id->role);
        const char *host = pd_intern(&h->names, id->host);
        const char *node = pd_intern(&h->names, id->node);
        if (!job || !role || !host || !node) {
            return NULL;
        }
        size_t at = now_at(h->steps);
        r = calloc(1, h->record ? at : at + sizeof(pd_hist_now_t));
        if (r == NULL) {
            return NULL;
        }
        r->job = job;
        r->role = role;
        r->host = host;
        r->node = node;
        r->rank = id->rank;
        r->hash = key_hash(id);
        r->last = PP_NONE;
        if (!h->record) {
            r->now = (pd_hist_now_t *)(void *)((char *)r + at);
            r->now->cur_step = PP_NONE;
            r->now->cur_phase = -1;
            r->now->reported = PP_NONE;
            r->now->began_ms = now_ms;
        }
        h->v[h->n++] = r;
        index_put(h, h->n - 1);
    }
    r->replica_rank = id->replica_rank;
    r->pid = id->pid;
    r->seen_ms = now_ms;
    r->gone = false;
    r->left = false;
    return r;
}

/* ---- steps ---- */

/* Slot of `step` in a ring of `len`, moving `last` forward (clearing the
 * slots skipped); -1 when the step is older than the ring holds. */
static int64_t slot_for(pd_history_t *h, pd_hist_rank_t *r, int64_t step)
{
    if (step < 0) {
        return -1;
    }
    if (r->last == PP_NONE || step > r->last) {
        int64_t from =
            r->last == PP_NONE || step - r->last > h->steps ? step - h->steps + 1 : r->last + 1;
        for (int64_t s = from; s <= step; s++) {
            if (s >= 0) {
                r->step_us[s % h->steps] = 0;
                for (int k = 0; r->sec_us && k < PP_SECTIONS; k++) {
                    r->sec_us[k * h->steps + s % h->steps] = 0;
                }
                for (int p = 0; p < r->nphases && s > step - h->phase_steps; p++) {
                    phase_ring(h, r, p)[s % h->phase_steps] = 0;
                }
            }
        }
        r->last = step;
    }
    return step > r->last - h->steps ? step % h->steps : -1;
}

static uint32_t clamp_us(int64_t us)
{
    return us <= 0 ? 1 : us > U32_MAX_US ? (uint32_t)U32_MAX_US : (uint32_t)us;
}

void pd_history_put(pd_history_t *h, pd_hist_rank_t *r, int64_t step, int64_t us)
{
    int64_t slot = slot_for(h, r, step);
    if (slot >= 0 && us >= 0) {
        r->step_us[slot] = clamp_us(us);
    }
}

int64_t pd_history_step_us(const pd_history_t *h, const pd_hist_rank_t *r, int64_t step)
{
    if (r->last == PP_NONE || step > r->last || step <= r->last - h->steps || step < 0) {
        return -1;
    }
    uint32_t v = r->step_us[step % h->steps];
    return v ? (int64_t)v : -1;
}

int64_t pd_history_first(const pd_history_t *h, const pd_hist_rank_t *r)
{
    if (r->last == PP_NONE) {
        return PP_NONE;
    }
    int64_t f = r->last - h->steps + 1;
    return f < 0 ? 0 : f;
}

int64_t pd_history_median(const pd_history_t *h, const pd_hist_rank_t *r, int64_t upto, int n)
{
    int64_t v[64];
    size_t k = 0;
    if (r->last == PP_NONE) {
        return 0;
    }
    if (upto == PP_NONE || upto > r->last) {
        upto = r->last;
    }
    if (n > 64) {
        n = 64;
    }
    for (int64_t s = upto; s > r->last - h->steps && s >= 0 && (int)k < n; s--) {
        int64_t us = pd_history_step_us(h, r, s);
        if (us > 0) {
            v[k++] = us;
        }
    }
    return pd_median_i64(v, k);
}

/* ---- sections ---- */

int pd_history_sections(pd_history_t *h, pd_hist_rank_t *r, const int64_t *sev, size_t nsev)
{
    int n = 0;
    if (nsev < 3) {
        return 0;
    }
    if (r->sec_us == NULL &&
        (r->sec_us = calloc((size_t)PP_SECTIONS * (size_t)h->steps, sizeof(uint32_t))) == NULL) {
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i + 3 <= nsev; i += 3) {
        int64_t step = sev[i], sec = sev[i + 1], us = sev[i + 2];
        if (sec < 0 || sec >= PP_SECTIONS || us < 0 || us >= U32_MAX_US) {
            continue;
        }
        int64_t slot = slot_for(h, r, step);
        if (slot >= 0) { /* a section may come in parts (timed and added) */
            uint32_t *v = &r->sec_us[sec * h->steps + slot];
            int64_t sum = *v ? (int64_t)*v + us : us + 1;
            *v = (uint32_t)(sum < U32_MAX_US ? sum : U32_MAX_US);
            n++;
        }
    }
    return n;
}

int64_t pd_history_section_us(const pd_history_t *h, const pd_hist_rank_t *r, int sec, int64_t step)
{
    if (r->sec_us == NULL || sec < 0 || sec >= PP_SECTIONS || r->last == PP_NONE ||
        step > r->last || step <= r->last - h->steps || step < 0) {
        return -1;
    }
    uint32_t v = r->sec_us[sec * h->steps + step % h->steps];
    return v ? (int64_t)v - 1 : -1;
}

void pd_history_set_section(pd_history_t *h, pd_hist_rank_t *r, int64_t step, int sec, int64_t us)
{
    if (sec < 0 || sec >= PP_SECTIONS || us < 0 || us >= U32_MAX_US) {
        return;
    }
    if (r->sec_us == NULL &&
        (r->sec_us = calloc((size_t)PP_SECTIONS * (size_t)h->steps, sizeof(uint32_t))) == NULL) {
        return;
    }
    int64_t slot = slot_for(h, r, step);
    if (slot >= 0) {
        r->sec_us[sec * h->steps + slot] = (uint32_t)(us + 1);
    }
}

/* ---- phases ---- */

/* A phase name: an identifier, or role.phase (a phase of another role of a
 * process hosting several). */
static bool phase_name_ok(const char *name)
{
    char a[PP_MAX_NAME + 1];
    const char *dot = strchr(name, '.');
    if (dot == NULL) {
        return pp_ident_ok(name);
    }
    size_t n = (size_t)(dot - name);
    if (n == 0 || n > PP_MAX_NAME) {
        return false;
    }
    memcpy(a, name, n);
    a[n] = '\0';
    return pp_ident_ok(a) && pp_ident_ok(dot + 1);
}

static int phase_index(pd_history_t *h, pd_hist_rank_t *r, const char *name)
{
    for (int i = 0; i < r->nphases; i++) {
        if (strcmp(r->phases[i], name) == 0) {
            return i;
        }
    }
    if (!phase_name_ok(name) || strlen(name) > PP_MAX_NAME) {
        return -1;
    }
    if (r->nphases == PD_HIST_PHASES) {
        r->phases_dropped++;
        return -1;
    }
    const char *interned = pd_intern(&h->names, name);
    /* one more name and ring: the names, then the rings, copied over */
    int n = r->nphases;
    size_t ring = (size_t)h->phase_steps * sizeof(uint32_t);
    const char **v = interned ? calloc(1, (size_t)(n + 1) * (sizeof(*v) + ring)) : NULL;
    if (v == NULL) {
        return -1;
    }
    if (n > 0) {
        memcpy(v, r->phases, (size_t)n * sizeof(*v));
        memcpy(v + n + 1, r->phases + n, (size_t)n * ring);
    }
    v[n] = interned;
    free(r->phases);
    r->phases = v;
    return r->nphases++;
}

/* Add `us` to phase p of `step` (a phase may run several times a step). */
static void phase_add(pd_history_t *h, pd_hist_rank_t *r, int p, int64_t step, int64_t us)
{
    if (p < 0 || us < 0) {
        return;
    }
    if (slot_for(h, r, step) < 0 || step <= r->last - h->phase_steps) {
        return;
    }
    uint32_t *c = &phase_ring(h, r, p)[step % h->phase_steps];
    int64_t sum = (int64_t)*c + (us > 0 ? us : 1);
    *c = clamp_us(sum);
}

void pd_history_put_phase(pd_history_t *h, pd_hist_rank_t *r, int64_t step, const char *phase,
                          int64_t us)
{
    phase_add(h, r, phase_index(h, r, phase), step, us);
}

void pd_history_set_phase(pd_history_t *h, pd_hist_rank_t *r, int64_t step, const char *phase,
                          int64_t us)
{
    int p = phase_index(h, r, phase);
    if (p < 0 || us < 0 || slot_for(h, r, step) < 0 || step <= r->last - h->phase_steps) {
        return;
    }
    phase_ring(h, r, p)[step % h->phase_steps] = clamp_us(us);
}

int64_t pd_history_phase_us(const pd_history_t *h, const pd_hist_rank_t *r, int p, int64_t step)
{
    if (p < 0 || p >= r->nphases || r->last == PP_NONE || step > r->last ||
        step <= r->last - h->phase_steps || step < 0) {
        return -1;
    }
    uint32_t v = phase_ring(h, r, p)[step % h->phase_steps];
    return v ? (int64_t)v : -1;
}

static void phase_close(pd_history_t *h, pd_hist_rank_t *r, int64_t t)
{
    pd_hist_now_t *w = r->now;
    if (w->cur_phase >= 0 && t >= w->phase_t0) {
        phase_add(h, r, w->cur_phase, w->phase_for, t - w->phase_t0);
    }
    w->cur_phase = -1;
}

/* ---- events ---- */

void pd_history_where(pd_hist_rank_t *r, int64_t step, bool in_step, int64_t age_ms, int64_t now_ms)
{
    pd_hist_now_t *w = r->now;
    r->seen_ms = now_ms;
    if (w == NULL) {
        return;
    }
    if (step != w->cur_step) {
        w->began_ms = now_ms - (age_ms > 0 ? age_ms : 0);
    }
    w->cur_step = step;
    w->in_step = in_step;
}

int pd_history_events(pd_history_t *h, pd_hist_rank_t *r, const int64_t *ev, size_t nev,
                      const int64_t *pev, size_t npev, char *const *names, size_t nnames,
                      int64_t now_ms)
{
    int recorded = 0;
    size_t i = 0, j = 0;
    pd_hist_now_t *w = r->now;
    r->seen_ms = now_ms;
    if (w == NULL) {
        return 0;
    }
    /* both lists are in time order: merge them */
    while (i + 3 <= nev || j + 3 <= npev) {
        bool step_ev = j + 3 > npev || (i + 3 <= nev && ev[i + 2] <= pev[j + 2]);
        if (step_ev) {
            int64_t kind = ev[i], step = ev[i + 1], t = ev[i + 2];
            i += 3;
            if (kind == 1) {
                phase_close(h, r, t);
                if (w->in_step && w->cur_step != PP_NONE && step > w->cur_step &&
                    t >= w->began_us) {
                    /* the previous step's end was never marked: begin to begin */
                    pd_history_put(h, r, w->cur_step, (t - w->began_us) / (step - w->cur_step));
                    recorded++;
                }
                if (w->cur_step == PP_NONE || step >= w->cur_step) {
                    w->cur_step = step;
                    w->in_step = true;
                    w->began_us = t;
                    w->began_ms = (t + r->offset_us) / 1000;
                    if (w->began_ms > now_ms) {
                        w->began_ms = now_ms;
                    }
                }
            } else if (kind == 2) {
                phase_close(h, r, t);
                if (w->in_step && step == w->cur_step && t >= w->began_us) {
                    pd_history_put(h, r, step, t - w->began_us);
                    recorded++;
                    w->in_step = false;
                }
            }
        } else {
            int64_t kind = pev[j], idx = pev[j + 1], t = pev[j + 2];
            j += 3;
            if (kind == 1 && idx >= 0 && (size_t)idx < nnames && names[idx]) {
                phase_close(h, r, t);
                if (w->cur_step != PP_NONE) {
                    w->cur_phase = phase_index(h, r, names[idx]);
                    w->phase_t0 = t;
                    w->phase_for = w->cur_step;
                }
            } else if (kind == 2) {
                phase_close(h, r, t);
            }
        }
    }
    return recorded;
}

/* ---- summaries ---- */

typedef struct row {
    pd_hist_rank_t *r;
    int64_t us; /* recent step time, 0 unknown */
} row_t;

static int cmp_row(const void *a, const void *b)
{
    const pd_hist_rank_t *x = ((const row_t *)a)->r, *y = ((const row_t *)b)->r;
    int c = strcmp(x->job, y->job);
    if (c == 0) {
        c = strcmp(x->role, y->role);
    }
    if (c == 0) {
        c = (x->rank > y->rank) - (x->rank < y->rank);
    }
    if (c == 0) {
        c = strcmp(x->node, y->node);
    }
    return c;
}

static void stat_fill(const row_t *w, int64_t p50, int64_t now_ms, pp_rank_stat_t *o)
{
    const pd_hist_rank_t *r = w->r;
    int64_t stall = PD_HIST_STALL_FACTOR * p50 / 1000;
    pp_record_init(&pp_desc_rank_stat, o);
    o->role = (char *)r->role;
    o->job = (char *)r->job;
    o->rank = r->rank;
    o->replica_rank = r->replica_rank;
    o->host = (char *)r->host;
    o->node = r->node[0] ? (char *)r->node : NULL;
    int64_t cur = r->now ? r->now->cur_step : PP_NONE, began = r->now ? r->now->began_ms : now_ms;
    o->step = cur;
    o->step_ms = (double)w->us / 1000.0;
    o->ratio = p50 > 0 && w->us > 0 ? (double)w->us / (double)p50 : 0.0;
    o->in_step_ms = cur != PP_NONE ? (double)(now_ms - began) : 0.0;
    o->stalled = (cur != PP_NONE &&
                  now_ms - began > (stall > PD_HIST_STALL_MIN_MS ? stall : PD_HIST_STALL_MIN_MS));
}

static int cmp_slow(const void *a, const void *b)
{
    const pp_rank_stat_t *x = a, *y = b;
    if (x->step_ms != y->step_ms) {
        return x->step_ms < y->step_ms ? 1 : -1;
    }
    return (x->rank > y->rank) - (x->rank < y->rank);
}

void pd_history_stats_free(pp_role_stats_t *roles, size_t nroles, pp_rank_stat_t *ranks)
{
    for (size_t i = 0; roles && i < nroles; i++) {
        free(roles[i].slowest);
        free(roles[i].stalled);
        free(roles[i].phases);
        free(roles[i].phase_us);
        free(roles[i].nodes);
    }
    free(roles);
    free(ranks);
}

/* One role: rows [a, b) of `rows`. */
static int role_fill(const pd_history_t *h, row_t *rows, size_t a, size_t b, int64_t now_ms,
                     size_t nslow, pp_role_stats_t *o)
{
    size_t n = b - a, k = 0;
    int64_t *v = malloc((n ? n : 1) * sizeof(*v));
    pp_rank_stat_t *all = calloc(n ? n : 1, sizeof(*all));
    if (v == NULL || all == NULL) {
        free(v);
        free(all);
        return PROFD_ENOMEM;
    }
    pp_record_init(&pp_desc_role_stats, o);
    o->job = (char *)rows[a].r->job;
    o->role = (char *)rows[a].r->role;
    o->ranks = (int64_t)n;
    for (size_t i = a; i < b; i++) {
        int64_t cur = rows[i].r->now ? rows[i].r->now->cur_step : PP_NONE;
        if (cur != PP_NONE && (o->step == PP_NONE || cur > o->step)) {
            o->step = cur;
        }
        if (rows[i].us > 0) {
            v[k++] = rows[i].us;
        }
    }
    int64_t p50 = pd_median_i64(v, k);
    o->min_ms = k ? (double)v[0] / 1000.0 : 0.0;
    o->p50_ms = (double)p50 / 1000.0;
    o->max_ms = k ? (double)v[k - 1] / 1000.0 : 0.0;
    size_t nst = 0;
    for (size_t i = a; i < b; i++) {
        stat_fill(&rows[i], p50, now_ms, &all[i - a]);
        nst += all[i - a].stalled;
    }
    /* stalled: in rank order; slowest: by step time */
    o->stalled = nst ? calloc(nst, sizeof(*o->stalled)) : NULL;
    for (size_t i = 0, j = 0; o->stalled && i < n; i++) {
        if (all[i].stalled) {
            o->stalled[j++] = all[i];
        }
    }
    o->stalled_n = o->stalled ? nst : 0;
    qsort(all, n, sizeof(*all), cmp_slow);
    size_t ns = 0;
    while (ns < n && ns < nslow && all[ns].step_ms > 0) {
        ns++;
    }
    o->slowest = all;
    o->slowest_n = ns;
    if (ns == 0) {
        free(all);
        o->slowest = NULL;
    }
    /* phases: the median over ranks of each phase's median over recent steps */
    char **names = calloc(PD_HIST_PHASES * 2, sizeof(*names));
    int64_t *pus = calloc(PD_HIST_PHASES * 2, sizeof(*pus));
    size_t np = 0;
    for (size_t i = a; names && pus && i < b; i++) {
        const pd_hist_rank_t *r = rows[i].r;
        for (int p = 0; p < r->nphases && np < PD_HIST_PHASES * 2; p++) {
            size_t q;
            for (q = 0; q < np && strcmp(names[q], r->phases[p]) != 0; q++) {
            }
            if (q == np) {
                names[np++] = (char *)r->phases[p];
            }
        }
    }
    for (size_t q = 0; names && pus && q < np; q++) {
        size_t m = 0;
        for (size_t i = a; i < b; i++) {
            const pd_hist_rank_t *r = rows[i].r;
            for (int p = 0; p < r->nphases; p++) {
                if (strcmp(r->phases[p], names[q]) != 0) {
                    continue;
                }
                int64_t u[PD_HIST_RECENT];
                size_t c = 0;
                for (int64_t s = r->last;
                     s != PP_NONE && s >= 0 && s > r->last - h->phase_steps && c < PD_HIST_RECENT;
                     s--) {
                    int64_t x = pd_history_phase_us(h, r, p, s);
                    if (x > 0) {
                        u[c++] = x;
                    }
                }
                if (c) {
                    v[m++] = pd_median_i64(u, c);
                }
            }
        }
        pus[q] = pd_median_i64(v, m);
    }
    if (np && names && pus) {
        o->phases = names;
        o->phases_n = np;
        o->phase_us = pus;
        o->phase_us_n = np;
    } else {
        free(names);
        free(pus);
    }
    /* the nodes its ranks are on (a coordinator's) */
    char **nodes = calloc(n, sizeof(*nodes));
    size_t nn = 0;
    for (size_t i = a; nodes && i < b; i++) {
        const char *nd = rows[i].r->node;
        size_t q;
        if (nd[0] == '\0') {
            continue;
        }
        for (q = 0; q < nn && strcmp(nodes[q], nd) != 0; q++) {
        }
        if (q == nn) {
            nodes[nn++] = (char *)nd;
        }
    }
    if (nn) {
        o->nodes = nodes;
        o->nodes_n = nn;
    } else {
        free(nodes);
    }
    free(v);
    return 0;
}

int pd_history_stats(const pd_history_t *h, const char *job, int64_t now_ms, size_t nslow, bool all,
                     pp_role_stats_t **roles, size_t *nroles, pp_rank_stat_t **ranks,
                     size_t *nranks)
{
    size_t n = 0, nr = 0;
    row_t *rows = malloc((h->n ? h->n : 1) * sizeof(*rows));
    if (rows == NULL) {
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < h->n; i++) {
        pd_hist_rank_t *r = h->v[i];
        if (!r->gone && (job == NULL || strcmp(job, r->job) == 0)) {
            rows[n].r = r;
            rows[n].us = pd_history_median(h, r, PP_NONE, PD_HIST_RECENT);
            n++;
        }
    }
    qsort(rows, n, sizeof(*rows), cmp_row);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(rows[i].r->job, rows[i - 1].r->job) != 0 ||
            strcmp(rows[i].r->role, rows[i - 1].r->role) != 0) {
            nr++;
        }
    }
    pp_role_stats_t *rs = calloc(nr ? nr : 1, sizeof(*rs));
    pp_rank_stat_t *rk = all ? calloc(n ? n : 1, sizeof(*rk)) : NULL;
    if (rs == NULL || (all && rk == NULL)) {
        free(rs);
        free(rk);
        free(rows);
        return PROFD_ENOMEM;
    }
    size_t k = 0;
    int rv = 0;
    for (size_t a = 0; a < n && rv == 0;) {
        size_t b = a + 1;
        while (b < n && strcmp(rows[b].r->job, rows[a].r->job) == 0 &&
               strcmp(rows[b].r->role, rows[a].r->role) == 0) {
            b++;
        }
        rv = role_fill(h, rows, a, b, now_ms, nslow, &rs[k]);
        if (rv == 0 && all) {
            int64_t p50 = (int64_t)(rs[k].p50_ms * 1000.0 + 0.5);
            for (size_t i = a; i < b; i++) {
                stat_fill(&rows[i], p50, now_ms, &rk[i]);
            }
        }
        if (rv == 0) {
            k++;
        }
        a = b;
    }
    free(rows);
    if (rv != 0) {
        pd_history_stats_free(rs, k, rk);
        return rv;
    }
    *roles = rs;
    *nroles = k;
    if (ranks) {
        *ranks = rk;
        *nranks = all ? n : 0;
    } else {
        free(rk);
    }
    return 0;
}
