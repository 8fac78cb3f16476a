// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The trace diff (see tracediff.h). */
#include <stdio.h>
#include <unistd.h>

#include <zlib.h>
#include <stdlib.h>
#include <string.h>

#include "confine.h"
#include "pu_buf.h"
#include "text.h"
#include "tracediff.h"
#include "tracemerge.h"

#define NAME_MAX_LEN 255
#define TSIZE        8192 /* name hash slots: power of two, > 2 * PD_DIFF_NAMES */
#define EPS_US       0.0005

typedef struct name_ent {
    char name[NAME_MAX_LEN + 1];
    char cat[64];
    double us[2];
    int64_t n[2];
} name_ent_t;

typedef struct frame {
    double end, self;
    int idx;
} frame_t;

typedef struct thread {
    uint64_t key;
    double last_ts;
    int depth;
    frame_t *stack; /* PD_DIFF_DEPTH */
} thread_t;

struct pd_diff_acc {
    name_ent_t *names; /* [PD_DIFF_NAMES + 1]: the last is "(other names)" */
    int nnames;
    int64_t seen;      /* distinct names, those past the table too (estimate) */
    uint16_t *slots;   /* name index + 1 */
    thread_t *threads; /* [PD_DIFF_THREADS] */
    int nthreads;
    int side;
    int64_t events[2];
    bool truncated;
};

static uint64_t fnv(const char *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    }
    return h;
}

pd_diff_acc_t *pd_diff_open(void)
{
    pd_diff_acc_t *a = calloc(1, sizeof(*a));
    if (a == NULL || (a->names = calloc(PD_DIFF_NAMES + 1, sizeof(*a->names))) == NULL ||
        (a->slots = calloc(TSIZE, sizeof(*a->slots))) == NULL ||
        (a->threads = calloc(PD_DIFF_THREADS, sizeof(*a->threads))) == NULL) {
        if (a) {
            free(a->names);
            free(a->slots);
            free(a);
        }
        return NULL;
    }
    snprintf(a->names[PD_DIFF_NAMES].name, sizeof(a->names[0].name), "(other names)");
    return a;
}

static void acc_free(pd_diff_acc_t *a)
{
    for (int i = 0; i < a->nthreads; i++) {
        free(a->threads[i].stack);
    }
    free(a->threads);
    free(a->names);
    free(a->slots);
    free(a);
}

/* The index of a name (PD_DIFF_NAMES: the overflow). */
static int name_index(pd_diff_acc_t *a, const char *p, size_t n, const char *cat, size_t catn)
{
    if (n > NAME_MAX_LEN) {
        n = NAME_MAX_LEN;
    }
    uint64_t h = fnv(p, n, 14695981039346656037ULL);
    for (size_t i = h & (TSIZE - 1);; i = (i + 1) & (TSIZE - 1)) {
        if (a->slots[i] == 0) {
            a->seen++;
            if (a->nnames == PD_DIFF_NAMES) {
                a->truncated = true;
                return PD_DIFF_NAMES;
            }
            name_ent_t *e = &a->names[a->nnames];
            memcpy(e->name, p, n);
            e->name[n] = '\0';
            if (cat && catn < sizeof(e->cat)) {
                memcpy(e->cat, cat, catn);
                e->cat[catn] = '\0';
            }
            a->slots[i] = (uint16_t)(++a->nnames);
            return a->nnames - 1;
        }
        name_ent_t *e = &a->names[a->slots[i] - 1];
        if (strncmp(e->name, p, n) == 0 && e->name[n] == '\0') {
            return a->slots[i] - 1;
        }
    }
}

static thread_t *thread_of(pd_diff_acc_t *a, const pd_trace_x_t *x)
{
    uint64_t k = fnv(x->pid ? x->pid : "", x->pid_n, 14695981039346656037ULL);
    k = fnv("/", 1, k);
    k = fnv(x->tid ? x->tid : "", x->tid_n, k);
    for (int i = 0; i < a->nthreads; i++) {
        if (a->threads[i].key == k) {
            return &a->threads[i];
        }
    }
    if (a->nthreads == PD_DIFF_THREADS) {
        return NULL;
    }
    thread_t *t = &a->threads[a->nthreads];
    if ((t->stack = malloc(PD_DIFF_DEPTH * sizeof(*t->stack))) == NULL) {
        return NULL;
    }
    t->key = k;
    t->depth = 0;
    t->last_ts = -1e300;
    a->nthreads++;
    return t;
}

static void settle(pd_diff_acc_t *a, const frame_t *f)
{
    a->names[f->idx].us[a->side] += f->self > 0 ? f->self : 0;
}

static void pop_all(pd_diff_acc_t *a, thread_t *t)
{
    while (t->depth > 0) {
        settle(a, &t->stack[--t->depth]);
    }
}

static bool prefixed(const char *p, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    return n >= k && memcmp(p, lit, k) == 0;
}

static void on_event(void *arg, const pd_trace_x_t *x)
{
    pd_diff_acc_t *a = arg;
    if ((x->cat && x->cat_n == 5 && memcmp(x->cat, "profd", 5) == 0) ||
        prefixed(x->name, x->name_n, "ProfilerStep#") || x->dur < 0) {
        return; /* steps are not operators */
    }
    int idx = name_index(a, x->name, x->name_n, x->cat, x->cat_n);
    frame_t f = {x->ts + x->dur, x->dur, idx};
    a->names[idx].n[a->side]++;
    a->events[a->side]++;
    thread_t *t = thread_of(a, x);
    if (t == NULL) {
        settle(a, &f); /* too many threads: counted whole */
        return;
    }
    if (x->ts < t->last_ts) {
        pop_all(a, t); /* out of order: no nesting guessed across it */
    }
    t->last_ts = x->ts;
    while (t->depth > 0 && x->ts >= t->stack[t->depth - 1].end - EPS_US) {
        settle(a, &t->stack[--t->depth]);
    }
    if (t->depth > 0) {
        frame_t *top = &t->stack[t->depth - 1];
        if (f.end <= top->end + EPS_US) {
            top->self -= x->dur; /* nested in it */
        } else {
            pop_all(a, t); /* overlaps without nesting */
        }
    }
    if (t->depth == PD_DIFF_DEPTH) {
        settle(a, &f);
        return;
    }
    t->stack[t->depth++] = f;
}

int64_t pd_diff_add(pd_diff_acc_t *a, int side, pd_trace_read_fn rd, void *rarg, char *why,
                    size_t whylen)
{
    a->side = side ? 1 : 0;
    int64_t n = pd_trace_each_x(rd, rarg, on_event, a, why, whylen);
    for (int i = 0; i < a->nthreads; i++) {
        pop_all(a, &a->threads[i]);
        free(a->threads[i].stack);
    }
    a->nthreads = 0; /* a trace's threads are its own */
    return n;
}

int64_t pd_diff_mem(pd_diff_acc_t *a, int side, const char *buf, size_t len)
{
    pd_trace_mem_t m = {buf, len, 0};
    char why[128];
    return pd_diff_add(a, side, pd_trace_mem_read, &m, why, sizeof(why));
}

static int row_fill(pp_op_diff_t *o, const name_ent_t *e)
{
    pp_record_init(&pp_desc_op_diff, o);
    o->name = strdup(e->name);
    o->cat = e->cat[0] ? strdup(e->cat) : NULL;
    o->slow_us = (int64_t)(e->us[0] + 0.5);
    o->peer_us = (int64_t)(e->us[1] + 0.5);
    o->slow_n = e->n[0];
    o->peer_n = e->n[1];
    return o->name == NULL || (e->cat[0] && o->cat == NULL) ? PROFD_ENOMEM : 0;
}

typedef struct ord {
    double d; /* slow - peer */
    const char *name;
    int idx;
} ord_t;

/* slow - peer, largest first, then by name */
static int cmp_ord(const void *x, const void *y)
{
    const ord_t *a = x, *b = y;
    if (a->d != b->d) {
        return a->d < b->d ? 1 : -1;
    }
    return strcmp(a->name, b->name);
}

int pd_diff_finish(pd_diff_acc_t *a, pp_trace_diff_t *out)
{
    int n = a->nnames + (a->truncated ? 1 : 0);
    ord_t *v = malloc((size_t)(n ? n : 1) * sizeof(*v));
    double tot[2] = {0, 0};
    int rv = PROFD_ENOMEM;
    if (v == NULL) {
        acc_free(a);
        return PROFD_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        int k = i < a->nnames ? i : PD_DIFF_NAMES;
        const name_ent_t *e = &a->names[k];
        v[i] = (ord_t){e->us[0] - e->us[1], e->name, k};
        tot[0] += e->us[0];
        tot[1] += e->us[1];
    }
    qsort(v, (size_t)n, sizeof(*v), cmp_ord);
    int pos = 0, neg = 0;
    while (pos < n && pos < PD_DIFF_ROWS && v[pos].d > 0) {
        pos++;
    }
    while (neg < n - pos && neg < PD_DIFF_ROWS && v[n - 1 - neg].d < 0) {
        neg++;
    }
    out->rows = calloc((size_t)(pos + neg ? pos + neg : 1), sizeof(*out->rows));
    if (out->rows == NULL) {
        goto out;
    }
    out->rows_n = 0;
    for (int i = 0; i < n; i++) {
        if ((i < pos || i >= n - neg) &&
            row_fill(&out->rows[out->rows_n++], &a->names[v[i].idx]) != 0) {
            goto out;
        }
    }
    out->slow_total_us = (int64_t)(tot[0] + 0.5);
    out->peer_total_us = (int64_t)(tot[1] + 0.5);
    out->slow_events = a->events[0];
    out->peer_events = a->events[1];
    out->names = a->seen;
    out->truncated = a->truncated;
    rv = 0;
out:
    free(v);
    acc_free(a);
    return rv;
}

void pd_diff_free(pd_diff_t *d)
{
    if (d == NULL) {
        return;
    }
    for (int s = 0; s < 2; s++) {
        pu_strv_free(d->files[s], d->nfiles[s]);
    }
    pp_record_free(&pp_desc_trace_diff, &d->out);
    free(d);
}

static long gz_read(void *arg, char *buf, size_t len)
{
    return gzread((gzFile)arg, buf, (unsigned)len);
}

static void diff_warn(pd_diff_t *d, const char *path, const char *why)
{
    char buf[PP_MAX_PATH + 200];
    if (d->out.warnings_n >= 8) {
        return;
    }
    snprintf(buf, sizeof(buf), "%s: %s", path, why);
    pd_strv_add(&d->out.warnings, &d->out.warnings_n, buf);
}

int pd_diff_run_files(const char *root_path, pd_diff_t *d, char *reason, size_t reasonlen)
{
    char why[400];
    int root, rv;
    if ((rv = pd_confine_root(root_path, &root, why, sizeof(why))) != 0) {
        snprintf(reason, reasonlen, "%s", why);
        return rv;
    }
    pd_diff_acc_t *a = pd_diff_open();
    if (a == NULL) {
        close(root);
        snprintf(reason, reasonlen, "out of memory");
        return PROFD_ENOMEM;
    }
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < d->nfiles[s]; i++) {
            struct stat st;
            int fd;
            if (pd_confine_open_file(root, d->files[s][i], &fd, &st, why, sizeof(why)) != 0) {
                diff_warn(d, d->files[s][i], why);
                continue;
            }
            gzFile gz = gzdopen(fd, "rb");
            if (gz == NULL) {
                close(fd);
                diff_warn(d, d->files[s][i], "cannot read it");
                continue;
            }
            gzbuffer(gz, 1u << 17);
            if (pd_diff_add(a, s, gz_read, gz, why, sizeof(why)) < 0) {
                diff_warn(d, d->files[s][i], why);
            }
            gzclose(gz);
        }
    }
    close(root);
    if (pd_diff_finish(a, &d->out) != 0) {
        snprintf(reason, reasonlen, "out of memory");
        return PROFD_ENOMEM;
    }
    return 0;
}
