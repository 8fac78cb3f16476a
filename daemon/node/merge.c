// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The merged timeline of a window (see merge.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "gather.h"
#include "merge.h"
#include "retention.h"

/* An input may decompress to this many times its size on disk at most:
 * trace JSON compresses about 10 to 30 times, a zip bomb 1000 times. */
#define PD_MERGE_MAX_RATIO 100

typedef struct mctx {
    pd_node_t *n;
    pd_merge_done_fn done;
    void *arg;
} mctx_t;

static bool ends(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n > k && strcmp(s + n - k, tail) == 0;
}

bool pd_merge_is_trace(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return base[0] != '.' && (ends(base, ".pt.trace.json") || ends(base, ".pt.trace.json.gz") ||
                              strcmp(base, "trace_view.json") == 0 ||
                              (strncmp(base, "profd-markers", 13) == 0 && ends(base, ".json")));
}

static int cmp_input(const void *a, const void *b)
{
    const pd_merge_input_t *x = a, *y = b;
    int c = (x->rank > y->rank) - (x->rank < y->rank);
    if (c == 0) {
        c = strcmp(x->role, y->role);
    }
    if (c == 0) {
        c = strcmp(x->phase, y->phase);
    }
    return c ? c : strcmp(x->path, y->path);
}

static void job_done(pd_job_t *j)
{
    mctx_t *c = j->arg;
    c->done(c->n, j->window, j->rv, j->reason, ((pd_merge_job_t *)j)->merge, c->arg);
    free(c);
    pd_job_free(j);
}

/* What the merge may write: the window's byte budget and the free space
 * above the floor, the smaller; an input decompressing to more than
 * PD_MERGE_MAX_RATIO times its size is skipped. 0, or PROFD_ELIMIT below
 * the floor already. */
static int merge_bounds(pd_node_t *n, const pd_window_t *w, pd_merge_t *m, char *err, size_t errlen)
{
    char root[PP_MAX_PATH];
    struct statvfs sv;
    int64_t cap = n->cfg->window_byte_budget;
    snprintf(root, sizeof(root), "%.*s", (int)w->root_len, w->dir);
    int rv = pd_retention_floor(n, root, err, errlen);
    if (rv != 0) {
        return rv;
    }
    if (n->cfg->min_free_bytes > 0 && statvfs(root, &sv) == 0) {
        int64_t room = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize - n->cfg->min_free_bytes;
        if (cap == 0 || room < cap) {
            cap = room > 1 ? room : 1;
        }
    }
    m->max_bytes = cap;
    m->max_ratio = PD_MERGE_MAX_RATIO;
    return 0;
}

int pd_merge_window(pd_node_t *n, const pd_window_t *w, pd_merge_done_fn done, void *arg, char *err,
                    size_t errlen)
{
    int rv;
    if (w->state != PP_WS_DONE) {
        snprintf(err, errlen, "window %lld is %s: merge it once it is done", (long long)w->id,
                 pp_enum_name(&pp_enum_window_state, w->state));
        return PROFD_ESTATE;
    }
    size_t cap = 0;
    for (size_t i = 0; i < w->nmembers; i++) {
        for (size_t c = 0; c < w->members[i].ncaps; c++) {
            cap += w->members[i].caps[c].files_n;
        }
    }
    pd_merge_t *m = calloc(1, sizeof(*m));
    pd_merge_job_t *j = (pd_merge_job_t *)pd_job_new(PD_JOB_MERGE);
    mctx_t *ctx = calloc(1, sizeof(*ctx));
    if (m == NULL || j == NULL || ctx == NULL ||
        (cap && (m->inputs = calloc(cap, sizeof(*m->inputs))) == NULL)) {
        pd_merge_free(m);
        free(j);
        free(ctx);
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < w->nmembers; i++) {
        const pd_member_t *mb = &w->members[i];
        pd_hist_id_t id = {w->job,   mb->role,         mb->host, mb->node,
                           mb->rank, mb->replica_rank, mb->pid};
        const pd_hist_rank_t *h = n->hist ? pd_history_find(n->hist, &id) : NULL;
        for (size_t c = 0; c < mb->ncaps; c++) {
            const pp_capture_t *cp = &mb->caps[c];
            for (size_t f = 0; cp->dir && f < cp->files_n; f++) {
                pd_merge_input_t *in = &m->inputs[m->ninputs];
                if (!pd_merge_is_trace(cp->files[f].path) ||
                    (size_t)snprintf(in->path, sizeof(in->path), "%s/%s/%s/%s", w->job, w->name,
                                     cp->dir, cp->files[f].path) >= sizeof(in->path)) {
                    continue;
                }
                in->rank = mb->rank;
                in->pid = cp->pid ? cp->pid : mb->pid;
                snprintf(in->role, sizeof(in->role), "%s", mb->role);
                snprintf(in->phase, sizeof(in->phase), "%s", cp->phase ? cp->phase : "");
                snprintf(in->host, sizeof(in->host), "%s", cp->host ? cp->host : mb->host);
                in->offset_us = h ? h->offset_us : 0;
                in->err_us = h ? h->offset_err_us : 0;
                m->ninputs++;
            }
        }
    }
    if (m->ninputs > 1) { /* inputs is NULL without any (qsort's argument may not be) */
        qsort(m->inputs, m->ninputs, sizeof(*m->inputs), cmp_input);
    }
    if ((rv = merge_bounds(n, w, m, err, errlen)) != 0) {
        pd_merge_free(m);
        free(j);
        free(ctx);
        return rv;
    }
    snprintf(m->job, sizeof(m->job), "%s", w->job);
    snprintf(m->window, sizeof(m->window), "%s", w->name);
    snprintf(m->clock, sizeof(m->clock), "%s", n->name);
    j->merge = m;
    snprintf(j->root, sizeof(j->root), "%.*s", (int)w->root_len, w->dir);
    snprintf(j->dst, sizeof(j->dst), "%s/%s/%s", w->job, w->name, PD_MERGE_FILE);
    j->window = w->id;
    j->done = job_done;
    j->arg = ctx;
    ctx->n = n;
    ctx->done = done;
    ctx->arg = arg;
    if (pd_job_submit(&n->loop->uv, PD_JOB(j)) != 0) {
        pd_job_free(PD_JOB(j));
        free(ctx);
        snprintf(err, errlen, "cannot queue the merge (stopping)");
        return PROFD_EINTERNAL;
    }
    return 0;
}
