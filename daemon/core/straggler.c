// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The straggler detector (see straggler.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scores.h"
#include "straggler.h"

void pd_straggler_init(pd_straggler_t *s, const pd_straggler_cfg_t *cfg, bool armed)
{
    memset(s, 0, sizeof(*s));
    s->cfg = *cfg;
    s->armed = armed;
    s->last_ms = PP_NONE;
    s->last_window = PP_NONE;
}

void pd_straggler_arm(pd_straggler_t *s, const pd_straggler_cfg_t *cfg)
{
    pd_straggler_init(s, cfg, true);
}

void pd_straggler_disarm(pd_straggler_t *s)
{
    s->armed = false;
}

static bool role_watched(const pd_straggler_cfg_t *c, const pd_hist_rank_t *r)
{
    if (c->job[0] && strcmp(c->job, r->job) != 0) {
        return false;
    }
    for (int i = 0; i < c->nroles; i++) {
        if (strcmp(c->roles[i], r->role) == 0) {
            return true;
        }
    }
    return c->nroles == 0;
}

/* The smallest of the rank's `m` newest consecutive known step times, 0
 * when it has not got m of them in a row. */
static int64_t run_min(const pd_history_t *h, const pd_hist_rank_t *r, int64_t m)
{
    int64_t s = r->last, lo = 0;
    while (s != PP_NONE && s >= 0 && s > r->last - h->steps && pd_history_step_us(h, r, s) < 0) {
        s--; /* the step running now has no time yet */
    }
    for (int64_t i = 0; i < m; i++, s--) {
        int64_t us = s >= 0 ? pd_history_step_us(h, r, s) : -1;
        if (us <= 0) {
            return 0;
        }
        if (lo == 0 || us < lo) {
            lo = us;
        }
    }
    return lo;
}

typedef struct cand {
    const pd_hist_rank_t *r;
    int64_t us; /* recent step time */
} cand_t;

static int cmp_cand(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->us != y->us) {
        return (x->us > y->us) - (x->us < y->us);
    }
    return (x->r->rank > y->r->rank) - (x->r->rank < y->r->rank);
}

static int cmp_role(const void *a, const void *b)
{
    const pd_hist_rank_t *x = ((const cand_t *)a)->r, *y = ((const cand_t *)b)->r;
    int c = strcmp(x->job, y->job);
    return c ? c : strcmp(x->role, y->role);
}

/* The median of v[0..n) (sorted) without its element at index p. */
static int64_t median_without(const cand_t *v, size_t n, size_t p)
{
    size_t mid = (n - 1) / 2;
    return mid < p ? v[mid].us : v[mid + 1].us;
}

/* One role: candidates v[0..n), sorted by step time. Of its stragglers the
 * one furthest over the median is named. */
static bool role_check(const pd_straggler_t *s, const pd_history_t *h, const cand_t *v, size_t n,
                       pd_straggler_hit_t *hit)
{
    const pd_straggler_cfg_t *c = &s->cfg;
    size_t worst = n;
    double worst_ratio = 0;
    int64_t worst_lo = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t p50 = median_without(v, n, i);
        int64_t lo = p50 > 0 ? run_min(h, v[i].r, c->consecutive) : 0;
        double ratio = p50 > 0 ? (double)lo / (double)p50 : 0;
        if (lo > 0 && ratio > c->factor && ratio > worst_ratio) {
            worst = i;
            worst_ratio = ratio;
            worst_lo = lo;
        }
    }
    if (worst == n) {
        return false;
    }
    int64_t p50 = median_without(v, n, worst);
    /* the peer: closest to the median, not itself a straggler */
    size_t best = n;
    int64_t bestd = 0;
    for (size_t j = 0; j < n; j++) {
        int64_t lo = run_min(h, v[j].r, c->consecutive);
        if (j == worst || (lo > 0 && (double)lo > c->factor * (double)p50)) {
            continue;
        }
        int64_t d = v[j].us > p50 ? v[j].us - p50 : p50 - v[j].us;
        if (best == n || d < bestd) {
            best = j;
            bestd = d;
        }
    }
    if (best == n) {
        return false;
    }
    hit->slow = v[worst].r;
    hit->peer = v[best].r;
    hit->slow_us = worst_lo;
    hit->peer_us = v[best].us;
    hit->p50_us = p50;
    snprintf(hit->reason, sizeof(hit->reason),
             "straggler trigger: rank %lld (%s) took at least %.1f ms per step for %lld "
             "step(s), over %.2f x the median of the role's other ranks (%.1f ms); "
             "healthy peer rank %lld (%.1f ms)",
             (long long)v[worst].r->rank, v[worst].r->role, (double)worst_lo / 1000.0,
             (long long)c->consecutive, c->factor, (double)p50 / 1000.0, (long long)v[best].r->rank,
             (double)v[best].us / 1000.0);
    return true;
}

/* With no job configured: the job's own rate limit and budget allow a hit
 * at now_ms (a job not fired for yet always may). */
static bool job_allowed(const pd_straggler_t *s, const char *job, int64_t now_ms)
{
    const pd_straggler_cfg_t *c = &s->cfg;
    if (c->job[0]) {
        return true; /* one job: the global gates are its own */
    }
    for (int i = 0; i < s->njobs; i++) {
        const pd_straggler_job_t *j = &s->jobs[i];
        if (strcmp(j->job, job) == 0) {
            return (j->last_ms == PP_NONE || now_ms - j->last_ms >= c->interval_ms) &&
                   (c->max_bytes == 0 || j->bytes < c->max_bytes);
        }
    }
    return true;
}

static pd_straggler_job_t *job_entry(pd_straggler_t *s, const char *job)
{
    int oldest = 0;
    for (int i = 0; i < s->njobs; i++) {
        if (strcmp(s->jobs[i].job, job) == 0) {
            return &s->jobs[i];
        }
        if (s->jobs[i].last_ms < s->jobs[oldest].last_ms) {
            oldest = i;
        }
    }
    pd_straggler_job_t *j = s->njobs < PD_STRAGGLER_JOBS ? &s->jobs[s->njobs++] : &s->jobs[oldest];
    memset(j, 0, sizeof(*j));
    snprintf(j->job, sizeof(j->job), "%s", job);
    j->last_ms = PP_NONE;
    return j;
}

typedef struct watch_ctx {
    const pd_straggler_t *s;
    int64_t now_ms;
} watch_ctx_t;

static bool watched(const pd_hist_rank_t *r, void *arg)
{
    const watch_ctx_t *w = arg;
    return role_watched(&w->s->cfg, r) && job_allowed(w->s, r->job, w->now_ms);
}

/* The section rule (scores.h). */
static bool sync_check(const pd_straggler_t *s, const pd_history_t *h, int64_t now_ms,
                       pd_straggler_hit_t *hit)
{
    const pd_straggler_cfg_t *c = &s->cfg;
    pd_score_hit_t sh;
    watch_ctx_t w = {s, now_ms};
    if (!pd_scores_straggler(h, PD_HIST_RECENT, c->score, c->consecutive, watched, &w, &sh)) {
        return false;
    }
    hit->slow = sh.slow;
    hit->peer = sh.peer;
    hit->slow_us = sh.slow_compute_us;
    hit->peer_us = sh.peer_compute_us;
    hit->p50_us = sh.peer_compute_us;
    snprintf(hit->reason, sizeof(hit->reason),
             "straggler trigger: rank %lld (%s) computes %.1f ms per step, relative score %.2f "
             "(under %.2f) for %lld step(s), while the role's other ranks wait %.1f ms for it in "
             "communication (it waits %.1f ms); healthy peer rank %lld (%.1f ms compute)",
             (long long)sh.slow->rank, sh.slow->role, (double)sh.slow_compute_us / 1000.0, sh.rel,
             c->score, (long long)c->consecutive, (double)sh.peer_comm_us / 1000.0,
             (double)sh.slow_comm_us / 1000.0, (long long)sh.peer->rank,
             (double)sh.peer_compute_us / 1000.0);
    return true;
}

bool pd_straggler_check(const pd_straggler_t *s, const pd_history_t *h, int64_t now_ms,
                        pd_straggler_hit_t *hit)
{
    const pd_straggler_cfg_t *c = &s->cfg;
    bool one_job = c->job[0] != '\0'; /* else the gates below hold per job */
    if (!s->armed || s->live || c->consecutive < 1 || c->factor <= 0 ||
        (one_job && s->last_ms != PP_NONE && now_ms - s->last_ms < c->interval_ms) ||
        (one_job && c->max_bytes > 0 && s->bytes >= c->max_bytes) || h->n < 2) {
        return false;
    }
    cand_t *v = malloc(h->n * sizeof(*v));
    size_t n = 0;
    bool found = false;
    if (v == NULL) {
        return false;
    }
    for (size_t i = 0; i < h->n; i++) {
        const pd_hist_rank_t *r = h->v[i];
        int64_t us = r->gone ? 0 : pd_history_median(h, r, PP_NONE, PD_HIST_RECENT);
        if (us > 0 && role_watched(c, r) && job_allowed(s, r->job, now_ms)) {
            v[n].r = r;
            v[n].us = us;
            n++;
        }
    }
    qsort(v, n, sizeof(*v), cmp_role); /* group by job and role */
    /* synchronous stragglers first: their step times are their peers' */
    if (c->score > 0 && (found = sync_check(s, h, now_ms, hit))) {
        free(v);
        return true;
    }
    for (size_t a = 0; a < n && !found;) {
        size_t b = a + 1;
        while (b < n && cmp_role(&v[a], &v[b]) == 0) {
            b++;
        }
        if (b - a >= 2) {
            qsort(v + a, b - a, sizeof(*v), cmp_cand);
            found = role_check(s, h, v + a, b - a, hit);
        }
        a = b;
    }
    free(v);
    return found;
}

void pd_straggler_fired(pd_straggler_t *s, const pd_straggler_hit_t *hit, int64_t window,
                        int64_t now_ms)
{
    s->last_ms = now_ms;
    s->last_window = window;
    s->live = window != PP_NONE;
    s->fired += window != PP_NONE;
    snprintf(s->last_job, sizeof(s->last_job), "%s", hit->slow ? hit->slow->job : "");
    job_entry(s, s->last_job)->last_ms = now_ms;
    snprintf(s->last_reason, sizeof(s->last_reason), "%s", hit->reason);
}

void pd_straggler_window_done(pd_straggler_t *s, int64_t window, int64_t bytes)
{
    if (s->last_window != PP_NONE && window == s->last_window && s->live) {
        s->live = false;
        s->bytes += bytes > 0 ? bytes : 0;
        job_entry(s, s->last_job)->bytes += bytes > 0 ? bytes : 0;
    }
}

void pd_straggler_info(const pd_straggler_t *s, pp_straggler_t *out)
{
    const pd_straggler_cfg_t *c = &s->cfg;
    pp_record_init(&pp_desc_straggler, out);
    out->job = c->job[0] ? (char *)c->job : NULL;
    out->roles = c->nroles ? calloc((size_t)c->nroles, sizeof(*out->roles)) : NULL;
    for (int i = 0; out->roles && i < c->nroles; i++) {
        out->roles[i] = (char *)c->roles[i];
    }
    out->roles_n = out->roles ? (size_t)c->nroles : 0;
    out->factor = c->factor;
    out->score = c->score;
    out->consecutive = c->consecutive;
    out->steps = c->steps;
    out->interval_ms = c->interval_ms;
    out->max_bytes = c->max_bytes;
    out->tool = c->tool[0] ? (char *)c->tool : NULL;
    out->armed = s->armed;
    out->fired = s->fired;
    out->last_window = s->last_window;
    out->bytes = s->bytes;
    out->last_reason = s->last_reason[0] ? (char *)s->last_reason : NULL;
}
