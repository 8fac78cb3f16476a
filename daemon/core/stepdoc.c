// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* steps.json of a window (see stepdoc.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stepdoc.h"
#include "uix.h"

typedef struct row {
    const pd_hist_rank_t *h; /* NULL: a member the history has no times of */
    const pd_member_t *m;    /* NULL: not a member */
} row_t;

static const char *row_role(const row_t *r)
{
    return r->h ? r->h->role : r->m->role;
}

static int64_t row_rank(const row_t *r)
{
    return r->h ? r->h->rank : r->m->rank;
}

static const char *row_node(const row_t *r)
{
    return r->h ? r->h->node : r->m->node;
}

static int cmp_row(const void *a, const void *b)
{
    const row_t *x = a, *y = b;
    int c = strcmp(row_role(x), row_role(y));
    if (c == 0) {
        c = (row_rank(x) > row_rank(y)) - (row_rank(x) < row_rank(y));
    }
    if (c == 0) {
        c = strcmp(row_node(x), row_node(y));
    }
    return c;
}

static bool member_is(const pd_member_t *m, const pd_hist_rank_t *r)
{
    return m->rank == r->rank && strcmp(m->role, r->role) == 0 && strcmp(m->host, r->host) == 0 &&
           strcmp(m->node, r->node) == 0;
}

int64_t pd_stepdoc_window_last(const pd_window_t *w)
{
    int64_t last = w->last;
    if (last != PP_NONE) {
        return last;
    }
    for (size_t i = 0; i < w->nmembers; i++) {
        for (size_t c = 0; c < w->members[i].ncaps; c++) {
            int64_t l = w->members[i].caps[c].last_step;
            if (l != PP_NONE && (last == PP_NONE || l > last)) {
                last = l;
            }
        }
    }
    return last == PP_NONE ? w->first : last;
}

static char *dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Every output array is allocated here; a failed allocation leaves NULL
 * and the caller gives up (pp_record_free frees what was made). */
static int64_t *i64s(size_t n)
{
    return malloc((n ? n : 1) * sizeof(int64_t));
}

/* The ranks' names and arrays of a document: one allocation, its values
 * (every rank's step, section and phase times, rank 0's step times first)
 * then its names, each distinct name once (a role, a host and a node name
 * per rank, but few distinct: at 16,384 ranks a strdup each had been 1.5 MB,
 * and an allocation per array half as much again). */
typedef struct block {
    const char **name; /* the distinct names, from the rows */
    size_t nnames, capnames;
    pd_uix_t x;
    size_t *off;  /* where each is in strs */
    size_t bytes; /* their lengths + 1 */
    int64_t *at;  /* the next values */
    char *strs;
} block_t;

/* The position of s among the distinct names, added when new; SIZE_MAX:
 * no memory. */
static size_t name_pos(block_t *b, const char *s)
{
    uint64_t h = pd_uix_hash_str(s);
    for (size_t at = b->x.cap ? pd_uix_first(&b->x, h) : 0; b->x.cap && b->x.slot[at];
         at = pd_uix_next(&b->x, at)) {
        size_t i = pd_uix_at(&b->x, at);
        if (strcmp(b->name[i], s) == 0) {
            return i;
        }
    }
    if (b->nnames == b->capnames) {
        size_t cap = b->capnames ? 2 * b->capnames : 16;
        const char **v = realloc(b->name, cap * sizeof(*v));
        if (v == NULL) {
            return SIZE_MAX;
        }
        b->name = v;
        b->capnames = cap;
    }
    int r = pd_uix_room(&b->x, b->nnames, 1);
    if (r < 0) {
        return SIZE_MAX;
    }
    for (size_t i = 0; r == 1 && i < b->nnames; i++) {
        pd_uix_put(&b->x, pd_uix_hash_str(b->name[i]), i);
    }
    b->name[b->nnames] = s;
    pd_uix_put(&b->x, h, b->nnames);
    b->bytes += strlen(s) + 1;
    return b->nnames++;
}

static char *name_of(block_t *b, const char *s)
{
    return b->strs + b->off[name_pos(b, s)]; /* every name was put before */
}

static int64_t *take(block_t *b, size_t n)
{
    int64_t *v = b->at;
    b->at += n;
    return v;
}

static void block_fini(block_t *b)
{
    free(b->name);
    free(b->off);
    pd_uix_free(&b->x);
}

/* The block of d (rank 0's step times start it), its ranks' pointers into
 * it cleared. */
static void *unhook(pp_steps_doc_t *d)
{
    void *block = d->ranks_n ? d->ranks[0].step_us : NULL;
    for (size_t i = 0; i < d->ranks_n; i++) {
        pp_steps_rank_t *o = &d->ranks[i];
        o->role = o->host = o->node = NULL;
        o->step_us = o->phase_us = o->section_us = NULL;
        o->step_us_n = o->phase_us_n = o->section_us_n = 0;
    }
    return block;
}

void pd_stepdoc_free(pp_steps_doc_t *d)
{
    void *block = unhook(d);
    pp_record_free(&pp_desc_steps_doc, d);
    free(block);
}

typedef struct role_acc {
    const char *role;
    size_t a, b; /* rows [a, b) */
    char *phases[PD_STEPDOC_PHASES];
    size_t nphases;
} role_acc_t;

/* The values a row takes in the block. */
static size_t row_values(const row_t *rw, const role_acc_t *ra, int64_t nsteps)
{
    const pd_hist_rank_t *r = rw->h;
    size_t n = (size_t)nsteps;
    n += r && r->sec_us ? PP_SECTIONS * (size_t)nsteps : 0;
    n += ra->nphases && r && r->nphases ? ra->nphases * (size_t)nsteps : 0;
    return n;
}

static void fill_rank(const pd_history_t *h, const row_t *rw, const role_acc_t *ra, int64_t first,
                      int64_t nsteps, int64_t wfirst, int64_t wlast, block_t *b, pp_steps_rank_t *o)
{
    const pd_hist_rank_t *r = rw->h;
    const pd_member_t *m = rw->m;
    pp_record_init(&pp_desc_steps_rank, o);
    o->role = name_of(b, row_role(rw));
    o->rank = row_rank(rw);
    o->replica_rank = r ? r->replica_rank : m->replica_rank;
    o->host = name_of(b, r ? r->host : m->host);
    o->node = row_node(rw)[0] ? name_of(b, row_node(rw)) : NULL;
    o->pid = r ? r->pid : m->pid;
    o->member = m != NULL;
    o->step_us = take(b, (size_t)nsteps);
    o->step_us_n = (size_t)nsteps;
    int64_t in[PD_STEPDOC_MAX_STEPS];
    size_t k = 0;
    for (int64_t i = 0; i < nsteps; i++) {
        int64_t us = r ? pd_history_step_us(h, r, first + i) : -1;
        o->step_us[i] = us;
        if (us > 0 && first + i >= wfirst && first + i <= wlast) {
            in[k++] = us;
        }
    }
    o->median_ms = (double)pd_median_i64(in, k) / 1000.0;
    if (r) {
        o->offset_us = r->offset_us;
        o->offset_err_us = r->offset_err_us;
    }
    if (r && r->sec_us) { /* data, forward, backward, optimizer, comm */
        size_t n = PP_SECTIONS * (size_t)nsteps;
        o->section_us = take(b, n);
        o->section_us_n = n;
        for (int s = 0; s < PP_SECTIONS; s++) {
            for (int64_t i = 0; i < nsteps; i++) {
                o->section_us[(size_t)s * (size_t)nsteps + (size_t)i] =
                    pd_history_section_us(h, r, s, first + i);
            }
        }
    }
    if (ra->nphases && r && r->nphases) {
        size_t n = ra->nphases * (size_t)nsteps;
        o->phase_us = take(b, n);
        o->phase_us_n = n;
        for (size_t q = 0; q < ra->nphases; q++) {
            int p;
            for (p = 0; p < r->nphases && strcmp(r->phases[p], ra->phases[q]) != 0; p++) {
            }
            for (int64_t i = 0; i < nsteps; i++) {
                o->phase_us[q * (size_t)nsteps + (size_t)i] =
                    p < r->nphases ? pd_history_phase_us(h, r, p, first + i) : -1;
            }
        }
    }
}

static int fill_role(const role_acc_t *ra, pp_steps_rank_t *ranks, int64_t first, int64_t nsteps,
                     int64_t wfirst, int64_t wlast, pp_steps_role_t *o)
{
    size_t n = ra->b - ra->a;
    int64_t *v = i64s(n * (size_t)(nsteps > 0 ? nsteps : 1));
    pp_record_init(&pp_desc_steps_role, o);
    o->role = dup(ra->role);
    o->ranks = (int64_t)n;
    o->p50_us = i64s((size_t)nsteps);
    o->p50_us_n = (size_t)nsteps;
    o->phases = calloc(ra->nphases ? ra->nphases : 1, sizeof(char *));
    o->phase_p50_us = i64s(ra->nphases);
    if (v == NULL || o->role == NULL || o->p50_us == NULL || o->phases == NULL ||
        o->phase_p50_us == NULL) {
        free(v);
        return PROFD_ENOMEM;
    }
    for (int64_t i = 0; i < nsteps; i++) {
        size_t k = 0;
        for (size_t j = ra->a; j < ra->b; j++) {
            if (ranks[j].step_us[i] > 0) {
                v[k++] = ranks[j].step_us[i];
            }
        }
        o->p50_us[i] = k ? pd_median_i64(v, k) : -1;
    }
    size_t k = 0;
    for (size_t j = ra->a; j < ra->b; j++) {
        if (ranks[j].median_ms > 0) {
            v[k++] = (int64_t)(ranks[j].median_ms * 1000.0 + 0.5);
        }
    }
    int64_t p50 = pd_median_i64(v, k);
    o->p50_ms = (double)p50 / 1000.0;
    for (size_t j = ra->a; j < ra->b; j++) {
        ranks[j].ratio = p50 > 0 ? ranks[j].median_ms * 1000.0 / (double)p50 : 0.0;
    }
    for (size_t q = 0; q < ra->nphases; q++) {
        if ((o->phases[q] = strdup(ra->phases[q])) == NULL) {
            free(v);
            return PROFD_ENOMEM;
        }
        o->phases_n = q + 1;
        k = 0;
        for (size_t j = ra->a; j < ra->b; j++) {
            if (ranks[j].phase_us == NULL) {
                continue;
            }
            for (int64_t i = 0; i < nsteps; i++) {
                int64_t x = ranks[j].phase_us[q * (size_t)nsteps + (size_t)i];
                if (x > 0 && first + i >= wfirst && first + i <= wlast) {
                    v[k++] = x;
                }
            }
        }
        o->phase_p50_us[q] = k ? pd_median_i64(v, k) : -1;
    }
    o->phase_p50_us_n = ra->nphases;
    free(v);
    return 0;
}

int pd_stepdoc_build(const pd_window_t *w, const pd_history_t *h, const char *clock,
                     pp_steps_doc_t *out)
{
    pp_steps_doc_t d;
    size_t cap = h->n + w->nmembers, n = 0;
    row_t *rows = malloc((cap ? cap : 1) * sizeof(*rows));
    role_acc_t *roles = NULL;
    block_t b = {0};
    void *block = NULL;
    int rv = PROFD_ENOMEM;
    pp_record_init(&pp_desc_steps_doc, &d);
    if (rows == NULL) {
        return PROFD_ENOMEM;
    }
    /* each rank of the history finds its member (the last that is it)
     * among the members of its rank, through an index by rank: a scan of
     * every member per rank, and of every row per member, was 400 M
     * comparisons at 16,384 ranks. Without memory for the index: scans. */
    bool *matched = calloc(w->nmembers ? w->nmembers : 1, sizeof(*matched));
    pd_uix_t mx = {0};
    if (matched == NULL) {
        free(rows);
        return PROFD_ENOMEM;
    }
    bool indexed = pd_uix_room(&mx, w->nmembers, w->nmembers) >= 0;
    for (size_t j = 0; indexed && j < w->nmembers; j++) {
        pd_uix_put(&mx, pd_uix_hash_i64(w->members[j].rank), j);
    }
    int64_t wfirst = w->first, wlast = pd_stepdoc_window_last(w);
    int64_t lo = PP_NONE, hi = PP_NONE; /* steps held */
    for (size_t i = 0; i < h->n; i++) {
        const pd_hist_rank_t *r = h->v[i];
        if (strcmp(r->job, w->job) != 0) {
            continue;
        }
        size_t best = SIZE_MAX;
        if (indexed) {
            for (size_t at = pd_uix_first(&mx, pd_uix_hash_i64(r->rank)); mx.slot[at];
                 at = pd_uix_next(&mx, at)) {
                size_t j = pd_uix_at(&mx, at);
                if (member_is(&w->members[j], r) && (best == SIZE_MAX || j > best)) {
                    best = j;
                }
            }
        } else {
            for (size_t j = 0; j < w->nmembers; j++) {
                best = member_is(&w->members[j], r) ? j : best;
            }
        }
        rows[n].h = r;
        rows[n].m = best != SIZE_MAX ? &w->members[best] : NULL;
        if (best != SIZE_MAX) {
            matched[best] = true;
        }
        n++;
        if (r->last != PP_NONE) {
            int64_t f = pd_history_first(h, r);
            lo = lo == PP_NONE || f < lo ? f : lo;
            hi = hi == PP_NONE || r->last > hi ? r->last : hi;
        }
    }
    pd_uix_free(&mx);
    for (size_t j = 0; j < w->nmembers; j++) {
        if (!matched[j]) {
            rows[n].h = NULL;
            rows[n].m = &w->members[j];
            n++;
        }
    }
    qsort(rows, n, sizeof(*rows), cmp_row);

    /* the range: the window and its context, as far as it is held */
    int64_t first = wfirst - PD_STEPDOC_CONTEXT, last = wlast + PD_STEPDOC_CONTEXT;
    if (lo != PP_NONE && first < lo) {
        first = lo < wfirst ? lo : wfirst;
    }
    if (hi != PP_NONE && last > hi) {
        last = hi > wlast ? hi : wlast;
    }
    if (first < 0) {
        first = 0;
    }
    if (last - first + 1 > PD_STEPDOC_MAX_STEPS) {
        first = last - PD_STEPDOC_MAX_STEPS + 1;
    }
    int64_t nsteps = last - first + 1;

    d.version = 1;
    d.job = dup(w->job);
    d.id = w->id;
    d.name = dup(w->name);
    d.window = i64s(2);
    d.steps = i64s(2);
    d.clock = dup(clock);
    d.source = dup(w->spec.source);
    d.ranks = calloc(n ? n : 1, sizeof(*d.ranks));
    if (d.job == NULL || d.name == NULL || d.window == NULL || d.steps == NULL || d.ranks == NULL ||
        (clock && d.clock == NULL)) {
        goto done;
    }
    d.sections = calloc(PP_SECTIONS, sizeof(char *));
    if (d.sections == NULL) {
        goto done;
    }
    for (int s = 0; s < PP_SECTIONS; s++) {
        if ((d.sections[s] = dup(pp_section_name(s))) == NULL) {
            goto done;
        }
        d.sections_n = (size_t)s + 1;
    }
    d.window[0] = wfirst;
    d.window[1] = wlast + 1;
    d.window_n = 2;
    d.steps[0] = first;
    d.steps[1] = last;
    d.steps_n = 2;

    /* roles: runs of rows, with the union of their phases */
    size_t nroles = 0;
    for (size_t i = 0; i < n; i++) {
        nroles += i == 0 || strcmp(row_role(&rows[i]), row_role(&rows[i - 1])) != 0;
    }
    roles = calloc(nroles ? nroles : 1, sizeof(*roles));
    d.roles = calloc(nroles ? nroles : 1, sizeof(*d.roles));
    if (roles == NULL || d.roles == NULL) {
        goto done;
    }
    for (size_t i = 0, k = 0; i < n; i++) {
        if (i == 0 || strcmp(row_role(&rows[i]), row_role(&rows[i - 1])) != 0) {
            roles[k].role = row_role(&rows[i]);
            roles[k].a = i;
            k++;
        }
        role_acc_t *ra = &roles[k - 1];
        ra->b = i + 1;
        const pd_hist_rank_t *r = rows[i].h;
        for (int p = 0; r && p < r->nphases; p++) {
            size_t q;
            for (q = 0; q < ra->nphases && strcmp(ra->phases[q], r->phases[p]) != 0; q++) {
            }
            if (q == ra->nphases && q < PD_STEPDOC_PHASES) {
                ra->phases[ra->nphases++] = (char *)r->phases[p];
            }
        }
    }
    /* the block: every rank's values, then the distinct names */
    size_t nvals = 0;
    for (size_t k = 0; k < nroles; k++) {
        for (size_t i = roles[k].a; i < roles[k].b; i++) {
            const row_t *rw = &rows[i];
            nvals += row_values(rw, &roles[k], nsteps);
            if (name_pos(&b, row_role(rw)) == SIZE_MAX ||
                name_pos(&b, rw->h ? rw->h->host : rw->m->host) == SIZE_MAX ||
                (row_node(rw)[0] && name_pos(&b, row_node(rw)) == SIZE_MAX)) {
                goto done;
            }
        }
    }
    if (n > 0) {
        if ((b.off = calloc(b.nnames ? b.nnames : 1, sizeof(*b.off))) == NULL ||
            (b.at = malloc(nvals * sizeof(int64_t) + b.bytes)) == NULL) {
            goto done;
        }
        block = b.at;
        b.strs = (char *)(b.at + nvals);
        for (size_t i = 0, at = 0; i < b.nnames; i++) {
            size_t len = strlen(b.name[i]) + 1;
            memcpy(b.strs + at, b.name[i], len);
            b.off[i] = at;
            at += len;
        }
    }
    for (size_t k = 0; k < nroles; k++) {
        for (size_t i = roles[k].a; i < roles[k].b; i++) {
            d.ranks_n = i + 1;
            fill_rank(h, &rows[i], &roles[k], first, nsteps, wfirst, wlast, &b, &d.ranks[i]);
        }
        d.roles_n = k + 1;
        if (fill_role(&roles[k], d.ranks, first, nsteps, wfirst, wlast, &d.roles[k]) != 0) {
            goto done;
        }
    }
    rv = 0;
done:
    free(matched);
    free(rows);
    free(roles);
    block_fini(&b);
    if (rv != 0) {
        unhook(&d);
        pp_record_free(&pp_desc_steps_doc, &d);
        free(block);
        return rv;
    }
    *out = d;
    return 0;
}
