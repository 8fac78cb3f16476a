// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Section scores and the synchronous straggler (see scores.h). */
#include <stdlib.h>
#include <string.h>

#include "scores.h"

const char *pd_sec_name(int sec)
{
    static const char *const names[PD_SECS] = {"data", "forward", "backward", "optimizer",
                                               "comm", "compute", "other"};
    return sec >= 0 && sec < PD_SECS ? names[sec] : NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* torch.median: the lower of the two middle values. */
static int64_t lower_median(int64_t *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_i64);
    return v[(n - 1) / 2];
}

/* The newest step of r with a time, PP_NONE none. */
static int64_t newest_done(const pd_history_t *h, const pd_hist_rank_t *r)
{
    int64_t s = r->last;
    while (s != PP_NONE && s >= 0 && s > r->last - h->steps && pd_history_step_us(h, r, s) < 0) {
        s--;
    }
    return s != PP_NONE && s >= 0 && s > r->last - h->steps ? s : PP_NONE;
}

/* The sections of one step: v[PD_SECS] and the step time; false when the
 * step has no time or no section. */
static bool step_secs(const pd_history_t *h, const pd_hist_rank_t *r, int64_t s, int64_t *v)
{
    int64_t step = pd_history_step_us(h, r, s), sum = 0;
    bool any = false;
    if (step < 0) {
        return false;
    }
    for (int k = 0; k < PP_SECTIONS; k++) {
        int64_t us = pd_history_section_us(h, r, k, s);
        any |= us >= 0;
        v[k] = us > 0 ? us : 0;
        sum += v[k];
    }
    v[PD_SEC_COMPUTE] = v[PD_SEC_FORWARD] + v[PD_SEC_BACKWARD] + v[PD_SEC_OPTIMIZER];
    v[PD_SEC_OTHER] = step > sum ? step - sum : 0;
    return any;
}

/* Medians of the steps (end - recent, end] with sections, at least half of
 * them: med[PD_SECS] and the step time; false when too few. */
static bool block_medians(const pd_history_t *h, const pd_hist_rank_t *r, int64_t end, int recent,
                          int64_t *med, int64_t *step_us)
{
    int64_t vals[PD_SECS][64], steps[64], v[PD_SECS];
    size_t n = 0;
    for (int64_t s = end; s > end - recent && s >= 0 && s > r->last - h->steps; s--) {
        if (step_secs(h, r, s, v)) {
            for (int k = 0; k < PD_SECS; k++) {
                vals[k][n] = v[k];
            }
            steps[n++] = pd_history_step_us(h, r, s);
        }
    }
    if (n == 0 || 2 * n < (size_t)recent) {
        return false;
    }
    for (int k = 0; k < PD_SECS; k++) {
        med[k] = lower_median(vals[k], n);
    }
    *step_us = lower_median(steps, n);
    return true;
}

static void rank_scores(const pd_history_t *h, const pd_hist_rank_t *r, int recent,
                        int64_t upto_back, pd_score_rank_t *o)
{
    int64_t end = newest_done(h, r), med[PD_SECS], st;
    o->r = r;
    o->step_us = -1;
    for (int k = 0; k < PD_SECS; k++) {
        o->med_us[k] = o->best_us[k] = -1;
        o->rel[k] = o->ind[k] = -1;
    }
    if (end == PP_NONE || !block_medians(h, r, end - upto_back, recent, o->med_us, &o->step_us)) {
        for (int k = 0; k < PD_SECS; k++) {
            o->med_us[k] = -1;
        }
        return;
    }
    /* its own recent best: the blocks of `recent` steps back from the newest */
    for (int64_t e = end - upto_back; e > r->last - h->steps && e >= 0; e -= recent) {
        if (block_medians(h, r, e, recent, med, &st)) {
            for (int k = 0; k < PD_SECS; k++) {
                if (o->best_us[k] < 0 || med[k] < o->best_us[k]) {
                    o->best_us[k] = med[k];
                }
            }
        }
    }
    for (int k = 0; k < PD_SECS; k++) {
        o->ind[k] = o->med_us[k] > 0 ? (double)o->best_us[k] / (double)o->med_us[k] : 1.0;
    }
}

static int cmp_rank(const void *a, const void *b)
{
    const pd_hist_rank_t *x = *(pd_hist_rank_t *const *)a, *y = *(pd_hist_rank_t *const *)b;
    int c = strcmp(x->job, y->job);
    if (c == 0) {
        c = strcmp(x->role, y->role);
    }
    if (c == 0) {
        c = (x->rank > y->rank) - (x->rank < y->rank);
    }
    return c ? c : strcmp(x->node, y->node);
}

int pd_scores_compute(const pd_history_t *h, const char *job, int recent, int64_t upto_back,
                      pd_score_role_t **roles, size_t *nroles)
{
    const pd_hist_rank_t **v = malloc((h->n ? h->n : 1) * sizeof(*v));
    pd_score_role_t *out = NULL;
    size_t n = 0, nout = 0;
    if (recent < 1) {
        recent = 1;
    }
    if (recent > 64) {
        recent = 64;
    }
    if (v == NULL) {
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < h->n; i++) {
        const pd_hist_rank_t *r = h->v[i];
        if (r->sec_us && !r->gone && !r->left && (job == NULL || strcmp(job, r->job) == 0)) {
            v[n++] = r;
        }
    }
    qsort(v, n, sizeof(*v), cmp_rank);
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && strcmp(v[a]->job, v[b]->job) == 0 && strcmp(v[a]->role, v[b]->role) == 0) {
            b++;
        }
        pd_score_role_t *grown = realloc(out, (nout + 1) * sizeof(*out));
        pd_score_rank_t *rk = calloc(b - a, sizeof(*rk));
        if (grown == NULL || rk == NULL) {
            free(rk);
            out = grown ? grown : out;
            pd_scores_free(out, nout);
            free(v);
            return PROFD_ENOMEM;
        }
        out = grown;
        pd_score_role_t *ro = &out[nout++];
        ro->job = v[a]->job;
        ro->role = v[a]->role;
        ro->ranks = rk;
        ro->n = b - a;
        for (int k = 0; k < PD_SECS; k++) {
            ro->min_us[k] = -1;
        }
        for (size_t i = a; i < b; i++) {
            rank_scores(h, v[i], recent, upto_back, &rk[i - a]);
            for (int k = 0; k < PD_SECS; k++) {
                int64_t m = rk[i - a].med_us[k];
                if (m >= 0 && (ro->min_us[k] < 0 || m < ro->min_us[k])) {
                    ro->min_us[k] = m;
                }
            }
        }
        for (size_t i = 0; i < ro->n; i++) {
            for (int k = 0; k < PD_SECS; k++) {
                int64_t m = rk[i].med_us[k];
                rk[i].rel[k] = m < 0 ? -1 : m == 0 ? 1.0 : (double)ro->min_us[k] / (double)m;
            }
        }
        a = b;
    }
    free(v);
    *roles = out;
    *nroles = nout;
    return 0;
}

void pd_scores_free(pd_score_role_t *roles, size_t nroles)
{
    for (size_t i = 0; i < nroles; i++) {
        free(roles[i].ranks);
    }
    free(roles);
}

static double ms_of(int64_t us)
{
    return us < 0 ? -1 : (double)us / 1000.0;
}

static int cmp_rel(const void *a, const void *b)
{
    const pd_score_rank_t *x = *(pd_score_rank_t *const *)a, *y = *(pd_score_rank_t *const *)b;
    double p = x->rel[PD_SEC_COMPUTE] < 0 ? 2 : x->rel[PD_SEC_COMPUTE];
    double q = y->rel[PD_SEC_COMPUTE] < 0 ? 2 : y->rel[PD_SEC_COMPUTE];
    if (p != q) {
        return p < q ? -1 : 1;
    }
    return (x->r->rank > y->r->rank) - (x->r->rank < y->r->rank);
}

int pd_scores_rows(const pd_history_t *h, const char *job, int recent, size_t per_role,
                   pp_rank_sections_t **out, size_t *n)
{
    pd_score_role_t *roles;
    size_t nroles, total = 0, k = 0;
    if (pd_scores_compute(h, job, recent, 0, &roles, &nroles) != 0) {
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < nroles; i++) {
        total += per_role && per_role < roles[i].n ? per_role : roles[i].n;
    }
    pp_rank_sections_t *v = calloc(total ? total : 1, sizeof(*v));
    const pd_score_rank_t **tmp = NULL;
    if (v == NULL) {
        pd_scores_free(roles, nroles);
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < nroles; i++) {
        const pd_score_role_t *ro = &roles[i];
        const pd_score_rank_t **t = realloc(tmp, (ro->n ? ro->n : 1) * sizeof(*t));
        if (t == NULL) {
            free(tmp);
            free(v);
            pd_scores_free(roles, nroles);
            return PROFD_ENOMEM;
        }
        tmp = t;
        for (size_t j = 0; j < ro->n; j++) {
            tmp[j] = &ro->ranks[j];
        }
        qsort(tmp, ro->n, sizeof(*tmp), cmp_rel);
        for (size_t j = 0; j < ro->n && (per_role == 0 || j < per_role); j++) {
            const pd_score_rank_t *sr = tmp[j];
            pp_rank_sections_t *o = &v[k++];
            pp_record_init(&pp_desc_rank_sections, o);
            o->job = (char *)sr->r->job;
            o->role = (char *)sr->r->role;
            o->rank = sr->r->rank;
            o->host = (char *)sr->r->host;
            o->step_ms = ms_of(sr->step_us);
            o->compute_ms = ms_of(sr->med_us[PD_SEC_COMPUTE]);
            o->comm_ms = ms_of(sr->med_us[PD_SEC_COMM]);
            o->data_ms = ms_of(sr->med_us[PD_SEC_DATA]);
            o->other_ms = ms_of(sr->med_us[PD_SEC_OTHER]);
            o->relative = sr->rel[PD_SEC_COMPUTE];
            o->individual = sr->ind[PD_SEC_COMPUTE];
        }
    }
    free(tmp);
    pd_scores_free(roles, nroles);
    *out = v;
    *n = k;
    return 0;
}

/* The median of the role's ranks but `skip` for section k (-1 none known). */
static int64_t others_median(const pd_score_role_t *ro, size_t skip, int k)
{
    int64_t v[256];
    size_t n = 0;
    for (size_t i = 0; i < ro->n && n < 256; i++) {
        int64_t x = ro->ranks[i].med_us[k];
        if (i != skip && x >= 0) {
            v[n++] = x;
        }
    }
    return n ? lower_median(v, n) : -1;
}

/* One role at one point in time: the straggler's index, or ro->n. */
static size_t role_straggler(const pd_score_role_t *ro, double threshold, bool *comm_known)
{
    size_t worst = ro->n;
    for (size_t i = 0; i < ro->n; i++) {
        const pd_score_rank_t *k = &ro->ranks[i];
        if (k->rel[PD_SEC_COMPUTE] >= 0 &&
            (worst == ro->n || k->rel[PD_SEC_COMPUTE] < ro->ranks[worst].rel[PD_SEC_COMPUTE])) {
            worst = i;
        }
        *comm_known |= k->med_us[PD_SEC_COMM] > 0;
    }
    if (worst == ro->n || ro->ranks[worst].rel[PD_SEC_COMPUTE] >= threshold) {
        return ro->n;
    }
    const pd_score_rank_t *w = &ro->ranks[worst];
    int64_t oc = others_median(ro, worst, PD_SEC_COMPUTE);
    int64_t ow = others_median(ro, worst, PD_SEC_COMM);
    if (oc < 0 || w->med_us[PD_SEC_COMPUTE] <= oc) {
        return ro->n;
    }
    /* they wait for it: their wait exceeds its own by half its excess,
     * which is worth a window: at least 5 % of their compute */
    int64_t excess = w->med_us[PD_SEC_COMPUTE] - oc;
    if (!*comm_known || 2 * (ow - w->med_us[PD_SEC_COMM]) < excess || 20 * excess < oc) {
        return ro->n;
    }
    /* and it stands out of the others' own spread: its excess is over
     * PD_SCORES_MADS times their median absolute deviation (a job whose
     * ranks share too few cores has compute times all over the place) */
    int64_t dev[256];
    size_t nd = 0;
    for (size_t i = 0; i < ro->n && nd < 256; i++) {
        int64_t x = ro->ranks[i].med_us[PD_SEC_COMPUTE];
        if (i != worst && x >= 0) {
            dev[nd++] = x > oc ? x - oc : oc - x;
        }
    }
    if (nd > 0 && excess <= PD_SCORES_MADS * lower_median(dev, nd)) {
        return ro->n;
    }
    /* the one they wait for arrives last: no rank of the role waits less */
    for (size_t i = 0; i < ro->n; i++) {
        int64_t c = ro->ranks[i].med_us[PD_SEC_COMM];
        if (i != worst && c >= 0 && c < w->med_us[PD_SEC_COMM]) {
            return ro->n;
        }
    }
    return worst;
}

bool pd_scores_straggler(const pd_history_t *h, int recent, double threshold, int64_t consecutive,
                         pd_score_watch_fn watched, void *arg, pd_score_hit_t *hit)
{
    pd_score_role_t *now = NULL;
    size_t nnow = 0;
    bool found = false;
    if (consecutive < 1 || threshold <= 0 || pd_scores_compute(h, NULL, recent, 0, &now, &nnow)) {
        return false;
    }
    for (size_t i = 0; i < nnow && !found; i++) {
        pd_score_role_t *ro = &now[i];
        bool comm = false;
        if (ro->n < 2 || (watched && !watched(ro->ranks[0].r, arg))) {
            continue;
        }
        size_t s = role_straggler(ro, threshold, &comm);
        if (s == ro->n) {
            continue;
        }
        const pd_hist_rank_t *slow = ro->ranks[s].r;
        /* the same rank, each of the `consecutive` - 1 steps before */
        bool held = true;
        for (int64_t back = 1; back < consecutive && held; back++) {
            pd_score_role_t *then = NULL;
            size_t nthen = 0;
            held = false;
            if (pd_scores_compute(h, ro->job, recent, back, &then, &nthen) != 0) {
                break;
            }
            for (size_t j = 0; j < nthen; j++) {
                bool c2 = false;
                if (strcmp(then[j].role, ro->role) == 0 && then[j].n == ro->n) {
                    size_t s2 = role_straggler(&then[j], threshold, &c2);
                    held = s2 < then[j].n && then[j].ranks[s2].r == slow;
                }
            }
            pd_scores_free(then, nthen);
        }
        if (!held) {
            continue;
        }
        int64_t oc = others_median(ro, s, PD_SEC_COMPUTE);
        size_t peer = ro->n;
        int64_t best = 0;
        for (size_t j = 0; j < ro->n; j++) {
            int64_t m = ro->ranks[j].med_us[PD_SEC_COMPUTE];
            int64_t d = m > oc ? m - oc : oc - m;
            if (j != s && m >= 0 && (peer == ro->n || d < best)) {
                peer = j;
                best = d;
            }
        }
        if (peer == ro->n) {
            continue;
        }
        hit->slow = slow;
        hit->peer = ro->ranks[peer].r;
        hit->rel = ro->ranks[s].rel[PD_SEC_COMPUTE];
        hit->slow_compute_us = ro->ranks[s].med_us[PD_SEC_COMPUTE];
        hit->peer_compute_us = ro->ranks[peer].med_us[PD_SEC_COMPUTE];
        hit->slow_comm_us = ro->ranks[s].med_us[PD_SEC_COMM];
        hit->peer_comm_us = others_median(ro, s, PD_SEC_COMM);
        found = true;
    }
    pd_scores_free(now, nnow);
    return found;
}
