// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A window's report (see report.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* the size of XXH64_state_t */
#include <xxhash.h>

#include "clock.h"
#include "gather.h"
#include "hook.h"
#include "manifest.h"
#include "wcaps.h"
#include "profd/errors.h"
#include "profd/version.h"
#include "report.h"
#include "reporthtml.h"
#include "reportwhy.h"
#include "scores.h"
#include "tracediff.h"
#include "stepdoc.h"

typedef struct rctx {
    pd_node_t *n;
    int64_t window;
    int left;
    pd_report_result_t res;
    pd_report_done_fn done;
    void *arg;
    /* held while the trace diff runs: report.html is written after it */
    bool held;
    /* the document, kept until every job is over: steps.json is encoded
     * from it into its file on the pool (steps_fill), hashed as it goes
     * into `hs`; sum: that hash and length become the window's record */
    pp_steps_doc_t doc;
    bool built; /* by pd_stepdoc_build, else decoded (the record read back) */
    pd_job_t *steps;
    XXH64_state_t hs;
    bool sum;
    /* report.html is drawn on the pool into its file (html_fill) from the
     * document, the trace diff's result (`diff`, owned; NULL none) and `mp`:
     * the caller's manifest record where it keeps it until done()
     * (pd_report_write_kept), else `man`, a copy (owned) */
    const pp_manifest_t *mp;
    pp_manifest_t man;
    bool owned;
    pd_diff_t *diff;
    char root[PD_PATH_MAX];
    char dst[2 * PP_MAX_NAME + 64]; /* <job>/<window> */
} rctx_t;

static void doc_free(pp_steps_doc_t *doc, bool built)
{
    if (built) {
        pd_stepdoc_free(doc);
    } else {
        pp_record_free(&pp_desc_steps_doc, doc);
    }
}

static void release(rctx_t *c)
{
    if (--c->left == 0) {
        if (c->res.rv != 0) {
            PD_LOG(c->n->log, PD_LOG_WARN, "report", "window %lld: %s", (long long)c->window,
                   c->res.reason);
        }
        c->done(c->n, c->window, &c->res, c->arg);
        doc_free(&c->doc, c->built);
        if (c->owned) {
            pp_record_free(&pp_desc_manifest, &c->man);
        }
        pd_diff_free(c->diff);
        free(c);
    }
}

static void job_done(pd_job_t *j)
{
    rctx_t *c = j->arg;
    if (j->rv != 0 && c->res.rv == 0) {
        c->res.rv = j->rv;
        snprintf(c->res.reason, sizeof(c->res.reason), "%.250s", j->reason);
    }
    if (j->kind == PD_JOB_LINK) {
        c->res.links = ((pd_link_job_t *)j)->have;
    }
    pd_window_t *w =
        j == c->steps && c->sum && j->rv == 0 ? pd_windows_get(c->n->win, c->window) : NULL;
    if (w != NULL) { /* the record: what steps.json holds, kept with the window */
        snprintf(w->record, sizeof(w->record), "xxh64:%016" PRIx64, (uint64_t)XXH64_digest(&c->hs));
        w->record_bytes = (int64_t)((pd_write_job_t *)j)->len;
        pd_windows_touch(c->n->win, w, NULL);
    }
    pd_job_free(j);
    release(c);
}

/* steps.json into its file as it is encoded (on the pool), hashed as it
 * goes. */
typedef struct steps_put {
    rctx_t *c;
    int (*put)(void *to, const char *text, size_t len);
    void *to;
} steps_put_t;

static int steps_put(void *arg, const char *text, size_t len)
{
    steps_put_t *s = arg;
    XXH64_update(&s->c->hs, text, len);
    return s->put(s->to, text, len);
}

static int steps_fill(void *arg, int (*put)(void *to, const char *text, size_t len), void *to)
{
    rctx_t *c = arg;
    steps_put_t s = {.c = c, .put = put, .to = to};
    pp_sink_t sink = {.put = steps_put, .arg = &s};
    XXH64_reset(&c->hs, 0);
    return pp_record_encode_to(&pp_desc_steps_doc, &c->doc, true, &sink);
}

/* report.html into its file as it is drawn (on the pool): never its whole
 * text (megabytes at thousands of ranks). */
static void why_draw(pu_sbuf_t *b, const void *arg)
{
    const rctx_t *c = arg;
    pd_report_why_draw(b, &c->doc, c->mp, c->diff ? &c->diff->out : NULL);
}

static int html_fill(void *arg, int (*put)(void *to, const char *text, size_t len), void *to)
{
    rctx_t *c = arg;
    pp_sink_t sink = {.put = put, .arg = to};
    pd_report_part_t why = {.draw = why_draw, .arg = c};
    return pd_report_html_part_to(&c->doc, c->mp, PROFD_VERSION_STRING, &why, &sink);
}

static pd_job_t *job_new(rctx_t *c, const pd_window_t *w, pd_job_kind_t kind, const char *name)
{
    pd_job_t *j = pd_job_new(kind);
    if (j == NULL) {
        return NULL;
    }
    snprintf(j->root, sizeof(j->root), "%.*s", (int)w->root_len, w->dir);
    snprintf(j->dst, sizeof(j->dst), "%s/%s/%s", w->job, w->name, name);
    j->done = job_done;
    j->arg = c;
    j->window = w->id;
    return j;
}

static bool is_tb_trace(const char *path)
{
    size_t n = strlen(path);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return base[0] != '.' && ((n > 14 && strcmp(path + n - 14, ".pt.trace.json") == 0) ||
                              (n > 17 && strcmp(path + n - 17, ".pt.trace.json.gz") == 0));
}

/* Every TensorBoard trace of the window's captures, relative to the root. */
static int links_of(const pd_window_t *w, const pp_manifest_t *man, pd_link_job_t *j)
{
    size_t n = 0;
    for (size_t i = 0; i < man->captures_n; i++) {
        for (size_t f = 0; f < man->captures[i].files_n; f++) {
            n += man->captures[i].dir && is_tb_trace(man->captures[i].files[f].path);
        }
    }
    j->links = n ? calloc(n, sizeof(*j->links)) : NULL;
    if (n && j->links == NULL) {
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < man->captures_n; i++) {
        const pp_capture_t *c = &man->captures[i];
        for (size_t f = 0; c->dir && f < c->files_n; f++) {
            if (!is_tb_trace(c->files[f].path)) {
                continue;
            }
            char buf[PD_PATH_MAX];
            if ((size_t)snprintf(buf, sizeof(buf), "%s/%s/%s/%s", w->job, w->name, c->dir,
                                 c->files[f].path) >= sizeof(buf) ||
                (j->links[j->nlinks] = strdup(buf)) == NULL) {
                continue;
            }
            j->nlinks++;
        }
    }
    return 0;
}

/* <window>/steps.json, whole (at most `max` bytes), read below save_path
 * without following a symlink: 0, or PROFD_ENOENT / PROFD_EPATH /
 * PROFD_EIO / PROFD_ELIMIT / PROFD_ENOMEM. */
static int read_steps(const pd_window_t *w, int64_t max, char **out, size_t *len)
{
    char why[200];
    return pd_wcaps_read_file(w, "steps.json", max, out, len, why, sizeof(why));
}

static void record_sum(const char *json, size_t len, char *out, size_t outlen)
{
    snprintf(out, outlen, "xxh64:%016" PRIx64, (uint64_t)XXH64(json, len, 0));
}

/* Step and phase times a document holds. */
static int64_t known_times(const pp_steps_doc_t *d)
{
    int64_t k = 0;
    for (size_t i = 0; i < d->ranks_n; i++) {
        for (size_t s = 0; s < d->ranks[i].step_us_n; s++) {
            k += d->ranks[i].step_us[s] > 0;
        }
        for (size_t s = 0; s < d->ranks[i].phase_us_n; s++) {
            k += d->ranks[i].phase_us[s] > 0;
        }
    }
    return k;
}

/* The window's record, steps.json as written at its end, read back and
 * checked against what the window keeps of it. */
static int record_load(const pd_window_t *w, pp_steps_doc_t *doc, char *err, size_t errlen)
{
    char *json = NULL, sum[32], derr[128];
    size_t len = 0;
    int rv = read_steps(w, w->record_bytes, &json, &len);
    if (rv == PROFD_ENOMEM) {
        snprintf(err, errlen, "out of memory reading the window's record");
        return rv;
    }
    if (rv == 0) {
        record_sum(json, len, sum, sizeof(sum));
    }
    if (rv != 0 || (int64_t)len != w->record_bytes || strcmp(sum, w->record) != 0) {
        free(json);
        snprintf(err, errlen,
                 "%s/steps.json, the window's record of step times, is %s: the report is not "
                 "written from anything else",
                 w->name, rv == PROFD_ENOENT ? "gone" : "not what the window's end wrote");
        return PROFD_ESTATE;
    }
    rv = pp_record_decode(&pp_desc_steps_doc, json, len, doc, derr, sizeof(derr));
    free(json);
    if (rv != 0) {
        snprintf(err, errlen, "%s/steps.json, the window's record, does not decode: %s", w->name,
                 derr);
        return PROFD_ESTATE;
    }
    return 0;
}

static bool diff_trace(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return base[0] != '.' && strncmp(base, "profd-markers", 13) != 0 &&
           (is_tb_trace(path) || strcmp(base, "trace_view.json") == 0);
}

/* The trace diff of a window of two ranks of one role (the straggler
 * trigger's: the straggler and its healthy peer; the slow one is the one
 * with the larger compute, else step time, over the window), with traces
 * on both sides. NULL when the window is not such, or on ENOMEM. */
static pd_diff_t *diff_plan(const pp_steps_doc_t *doc, const pp_manifest_t *man,
                            const pd_window_t *w)
{
    const pp_steps_rank_t *m[2];
    size_t nm = 0;
    for (size_t i = 0; i < doc->ranks_n; i++) {
        if (doc->ranks[i].member) {
            if (nm == 2) {
                return NULL;
            }
            m[nm++] = &doc->ranks[i];
        }
    }
    if (nm != 2 || strcmp(m[0]->role, m[1]->role) != 0) {
        return NULL;
    }
    int64_t a = pd_report_section_us(doc, m[0], PD_SEC_COMPUTE);
    int64_t b = pd_report_section_us(doc, m[1], PD_SEC_COMPUTE);
    bool swap = a >= 0 && b >= 0 ? b > a : m[1]->median_ms > m[0]->median_ms;
    const pp_steps_rank_t *rk[2] = {swap ? m[1] : m[0], swap ? m[0] : m[1]};
    pd_diff_t *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        return NULL;
    }
    pp_record_init(&pp_desc_trace_diff, &d->out);
    d->out.version = 1;
    d->out.role = strdup(rk[0]->role);
    d->out.slow_rank = rk[0]->rank;
    d->out.peer_rank = rk[1]->rank;
    size_t skip = strlen(w->job) + strlen(w->name) + 2;
    for (int s = 0; s < 2; s++) {
        size_t n = 0;
        for (size_t i = 0; i < man->captures_n; i++) {
            const pp_capture_t *k = &man->captures[i];
            for (size_t f = 0; k->dir && k->rank == rk[s]->rank && f < k->files_n; f++) {
                n += diff_trace(k->files[f].path);
            }
        }
        char **shown = calloc(n ? n : 1, sizeof(char *));
        d->files[s] = calloc(n ? n : 1, sizeof(char *));
        *(s ? &d->out.peer_files : &d->out.slow_files) = shown;
        if (d->files[s] == NULL || shown == NULL) {
            pd_diff_free(d);
            return NULL;
        }
        for (size_t i = 0; i < man->captures_n; i++) {
            const pp_capture_t *k = &man->captures[i];
            for (size_t f = 0; k->dir && k->rank == rk[s]->rank && f < k->files_n; f++) {
                char buf[PD_PATH_MAX];
                size_t at = d->nfiles[s];
                if (!diff_trace(k->files[f].path) ||
                    (size_t)snprintf(buf, sizeof(buf), "%s/%s/%s/%s", w->job, w->name, k->dir,
                                     k->files[f].path) >= sizeof(buf) ||
                    (d->files[s][at] = strdup(buf)) == NULL) {
                    continue;
                }
                if ((shown[at] = strdup(buf + skip)) == NULL) {
                    free(d->files[s][at]);
                    continue;
                }
                d->nfiles[s]++;
                *(s ? &d->out.peer_files_n : &d->out.slow_files_n) = d->nfiles[s];
            }
        }
    }
    if (d->out.role == NULL || d->nfiles[0] == 0 || d->nfiles[1] == 0) {
        pd_diff_free(d);
        return NULL;
    }
    return d;
}

static pd_job_t *held_job(rctx_t *c, pd_job_kind_t kind, const char *name)
{
    pd_job_t *j = pd_job_new(kind);
    if (j == NULL) {
        return NULL;
    }
    snprintf(j->root, sizeof(j->root), "%s", c->root);
    snprintf(j->dst, sizeof(j->dst), "%s/%s", c->dst, name);
    j->done = job_done;
    j->arg = c;
    j->window = c->window;
    return j;
}

static void submit(rctx_t *c, pd_job_t *j)
{
    c->left++;
    if (pd_job_submit(&c->n->loop->uv, j) != 0) { /* the pool is gone (stopping) */
        pd_job_run(j);
        j->done(j);
    }
}

/* The diff is over (or failed): report.html with it, and tracediff.json. */
static void diff_done(pd_job_t *j)
{
    rctx_t *c = j->arg;
    const pp_trace_diff_t *diff = j->rv == 0 ? &((pd_diff_job_t *)j)->diff->out : NULL;
    char *dj = NULL;
    size_t dlen = 0;
    if (j->rv != 0) {
        PD_LOG(c->n->log, PD_LOG_WARN, "report", "window %lld: trace diff: %s",
               (long long)c->window, j->reason);
    }
    pd_write_job_t *hj = (pd_write_job_t *)held_job(c, PD_JOB_WRITE, "report.html");
    pd_write_job_t *dj_ =
        diff ? (pd_write_job_t *)held_job(c, PD_JOB_WRITE, "tracediff.json") : NULL;
    if (hj == NULL || (diff && dj_ == NULL) ||
        (diff && pp_record_encode(&pp_desc_trace_diff, diff, true, &dj, &dlen) != 0)) {
        pd_job_free(PD_JOB(hj));
        pd_job_free(PD_JOB(dj_));
        free(dj);
        if (c->res.rv == 0) {
            c->res.rv = PROFD_ENOMEM;
            snprintf(c->res.reason, sizeof(c->res.reason), "out of memory writing report.html");
        }
    } else {
        if (diff) { /* kept for report.html's why part, drawn on the pool */
            c->diff = ((pd_diff_job_t *)j)->diff;
            ((pd_diff_job_t *)j)->diff = NULL;
        }
        hj->fill = html_fill;
        hj->fill_arg = c;
        submit(c, PD_JOB(hj));
        if (dj_) {
            dj_->data = dj;
            dj_->len = dlen;
            submit(c, PD_JOB(dj_));
        }
    }
    pd_job_free(j);
    release(c);
}

/* late: the record's last write (pd_report_tick), `man` NULL: the record
 * is dropped once the document is built from it and only then the manifest
 * record built into `late` (kept by the caller), so that the step times of
 * the record and the manifest are never held at once (megabytes each at
 * 16,384 ranks, the coordinator's peak) */
static int report_write(pd_node_t *n, const pd_window_t *w, const pp_manifest_t *man,
                        pp_manifest_t *late, bool kept, bool links, bool final,
                        pd_report_done_fn done, void *arg, char *err, size_t errlen)
{
    pp_steps_doc_t doc;
    rctx_t *c = NULL;
    pd_job_t *jobs[3] = {NULL, NULL, NULL};
    int rv = 0;
    pd_wrecord_t *rec = NULL;
    if (n->wrec != NULL) {
        pd_wrecords_sync(n->wrec, n->win, n->hist, n->gen);
        if ((rec = pd_wrecords_get(n->wrec, w->id)) != NULL) {
            pd_wrecord_take(rec, n->hist); /* kept from now on, if not yet */
        }
    }
    /* the record kept, read back: steps.json stays as it is (a record still
     * open, the window running or waiting for the steps after it, is
     * written out like at the window's end) */
    bool again = !final && rec == NULL && w->record[0] != '\0';
    if (again) {
        if ((rv = record_load(w, &doc, err, errlen)) != 0) {
            return rv;
        }
    } else {
        if (pd_stepdoc_build(w, rec ? &rec->h : n->hist, n->name, &doc) != 0) {
            snprintf(err, errlen, "out of memory building the report");
            return PROFD_ENOMEM;
        }
    }
    if (late != NULL) {
        if (final && rec != NULL && (rec->closing || pd_wrecord_complete(rec, n->hist))) {
            pd_wrecords_drop(n->wrec, w->id); /* in the document now */
            rec = NULL;
        }
        if (pd_manifest_build(w, late) != 0) {
            doc_free(&doc, !again);
            snprintf(err, errlen, "out of memory building the report");
            return PROFD_ENOMEM;
        }
        man = late;
    }
    if (rv == 0 && !again && !final && rec == NULL) {
        /* a window without a record (from before records were kept): built
         * from the live history, which never replaces a fuller steps.json */
        char *old = NULL, derr[128];
        size_t olen = 0;
        pp_steps_doc_t prev;
        if (read_steps(w, (int64_t)1 << 28, &old, &olen) == 0 &&
            pp_record_decode(&pp_desc_steps_doc, old, olen, &prev, derr, sizeof(derr)) == 0) {
            int64_t had = known_times(&prev), has = known_times(&doc);
            pp_record_free(&pp_desc_steps_doc, &prev);
            if (has < had) {
                free(old);
                doc_free(&doc, !again);
                snprintf(err, errlen,
                         "the step-time history now holds %lld of the %lld step and phase "
                         "times in %s/steps.json: the report is kept as it is",
                         (long long)has, (long long)had, w->name);
                return PROFD_ESTATE;
            }
        }
        free(old);
    }
    pd_diff_t *diff = rv == 0 ? diff_plan(&doc, man, w) : NULL;
    pd_diff_job_t *dj = NULL; /* with one, report.html after the diff */
    if (rv == 0 && (c = calloc(1, sizeof(*c))) != NULL) {
        jobs[0] = again ? NULL : job_new(c, w, PD_JOB_WRITE, "steps.json");
        jobs[1] = diff ? NULL : job_new(c, w, PD_JOB_WRITE, "report.html");
        jobs[2] = links ? job_new(c, w, PD_JOB_LINK, PD_REPORT_TB_DIR) : NULL;
        if (diff && (dj = (pd_diff_job_t *)pd_job_new(PD_JOB_DIFF)) != NULL) {
            snprintf(dj->root, sizeof(dj->root), "%.*s", (int)w->root_len, w->dir);
            dj->diff = diff;
            dj->done = diff_done;
            dj->arg = c;
            dj->window = w->id;
            diff = NULL;
        }
    }
    if (rv != 0 || c == NULL || (!again && jobs[0] == NULL) || (dj == NULL && jobs[1] == NULL) ||
        (links && (jobs[2] == NULL || links_of(w, man, (pd_link_job_t *)jobs[2]) != 0)) ||
        (!kept && pp_record_copy(&pp_desc_manifest, &c->man, man) != 0)) {
        pd_diff_free(diff);
        pd_job_free(PD_JOB(dj));
        if (c && !kept) {
            pp_record_free(&pp_desc_manifest, &c->man);
        }
        doc_free(&doc, !again);
        for (int i = 0; i < 3; i++) {
            pd_job_free(jobs[i]);
        }
        free(c);
        snprintf(err, errlen, "out of memory building the report");
        return PROFD_ENOMEM;
    }
    /* the record: what steps.json holds, kept with the window once it is
     * written (job_done) */
    c->sum = final || rec != NULL;
    if (final && rec != NULL) { /* (`profctl report` leaves an open record open) */
        if (rec->closing || pd_wrecord_complete(rec, n->hist)) {
            pd_wrecords_drop(n->wrec, w->id);
        } else { /* the steps after the window are still to come */
            rec->closing = true;
            rec->close_by_ms = pd_now_ms() + PD_REPORT_RECORD_WAIT_MS;
            if (rec->hi == INT64_MAX) {
                rec->hi = pd_stepdoc_window_last(w) + PD_STEPDOC_CONTEXT;
            }
        }
    }
    c->res.ranks = (int64_t)doc.ranks_n;
    c->res.steps = doc.steps_n == 2 ? doc.steps[1] - doc.steps[0] + 1 : 0;
    c->doc = doc; /* steps.json is encoded from it on the pool; freed with c */
    c->built = !again;
    c->owned = !kept;
    c->mp = kept ? man : &c->man;
    if (dj) { /* kept for report.html, drawn once the diff is over */
        c->held = true;
        snprintf(c->root, sizeof(c->root), "%.*s", (int)w->root_len, w->dir);
        snprintf(c->dst, sizeof(c->dst), "%s/%s", w->job, w->name);
    }
    c->n = n;
    c->window = w->id;
    c->done = done;
    c->arg = arg;
    if (jobs[0] != NULL) { /* steps.json, never its whole text: encoded into its file */
        ((pd_write_job_t *)jobs[0])->fill = steps_fill;
        ((pd_write_job_t *)jobs[0])->fill_arg = c;
        c->steps = jobs[0];
    }
    if (jobs[1] != NULL) { /* report.html, never its whole text: drawn into its file */
        ((pd_write_job_t *)jobs[1])->fill = html_fill;
        ((pd_write_job_t *)jobs[1])->fill_arg = c;
    }
    if (jobs[2] && ((pd_link_job_t *)jobs[2])->nlinks == 0) {
        pd_job_free(jobs[2]); /* no TensorBoard trace in this window */
        jobs[2] = NULL;
    }
    c->left = 1; /* held until every job is queued */
    for (int i = 0; i < 3; i++) {
        if (jobs[i] == NULL) {
            continue;
        }
        c->left++;
        if (pd_job_submit(&n->loop->uv, jobs[i]) != 0) {
            /* the pool is gone (stopping): do it here */
            pd_job_run(jobs[i]);
            job_done(jobs[i]);
        }
    }
    if (dj) {
        submit(c, PD_JOB(dj));
    }
    release(c);
    return 0;
}

int pd_report_write(pd_node_t *n, const pd_window_t *w, const pp_manifest_t *man, bool links,
                    bool final, pd_report_done_fn done, void *arg, char *err, size_t errlen)
{
    return report_write(n, w, man, NULL, false, links, final, done, arg, err, errlen);
}

int pd_report_write_kept(pd_node_t *n, const pd_window_t *w, const pp_manifest_t *man, bool links,
                         bool final, pd_report_done_fn done, void *arg, char *err, size_t errlen)
{
    return report_write(n, w, man, NULL, true, links, final, done, arg, err, errlen);
}

static void again_done(pd_node_t *n, int64_t window, const pd_report_result_t *r, void *arg)
{
    (void)r;
    pp_manifest_t *man = arg;
    pd_manifest_free(man);
    free(man);
    pd_window_t *w = pd_windows_get(n->win, window);
    if (w != NULL && w->pending > 0) {
        w->pending--;
        pd_windows_dirty(n->win); /* it may be compacted now (pd_wcaps_settle) */
    }
    if (w != NULL && pd_hook_waiting(n->hook, w->id)) {
        pd_hook_window(n->hook, w); /* the report's last write is over */
    }
}

void pd_report_tick(pd_node_t *n, int64_t now_ms)
{
    if (n->wrec == NULL) {
        return;
    }
    for (pd_wrecord_t *rec = n->wrec->head; rec; rec = rec->next) {
        if (!rec->closing) {
            continue;
        }
        pd_window_t *w = pd_windows_get(n->win, rec->window);
        if (w == NULL || w->state != PP_WS_DONE) {
            if (w == NULL || w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED) {
                pd_wrecords_drop(n->wrec, rec->window);
                return; /* the list changed: the others at the next tick */
            }
            continue;
        }
        if (w->pending > 0 || (!pd_wrecord_complete(rec, n->hist) && now_ms < rec->close_by_ms)) {
            continue;
        }
        pp_manifest_t *man = NULL;
        char err[600];
        int64_t id = rec->window;
        bool back;
        if (pd_wcaps_open(w, &back, err, sizeof(err)) != 0) { /* compacted: from disk */
            PD_LOG(n->log, PD_LOG_WARN, "report", "%s", err);
            pd_wrecords_drop(n->wrec, id);
            if (pd_hook_waiting(n->hook, w->id)) {
                pd_hook_window(n->hook, w); /* with the report as it is */
            }
            return;
        }
        if ((man = calloc(1, sizeof(*man))) == NULL) {
            pd_wcaps_done(w, back);
            continue;
        }
        /* the writes are the window's until done (again_done): it is not
         * compacted before (pd_wcaps_settle), so the manifest, which borrows
         * its captures, is kept as it is rather than copied (megabytes at
         * 16,384 ranks); it is built once the record is dropped */
        w->pending++;
        if (report_write(n, w, NULL, man, true, false, true, again_done, man, err, sizeof(err)) !=
            0) {
            w->pending--;
            pd_manifest_free(man);
            free(man);
            PD_LOG(n->log, PD_LOG_WARN, "report", "window %s: %s", w->name, err);
            pd_wrecords_drop(n->wrec, id);
            if (pd_hook_waiting(n->hook, w->id)) {
                pd_hook_window(n->hook, w); /* with the report as it is */
            }
        }
        pd_wcaps_done(w, back);
        return; /* the record is gone: the others at the next tick */
    }
}
