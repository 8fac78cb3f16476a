// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A window's report (see report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gather.h"
#include "profd/client.h"
#include "report.h"
#include "reporthtml.h"
#include "stepdoc.h"

typedef struct rctx {
    pd_node_t *n;
    int64_t window;
    int left;
    pd_report_result_t res;
    pd_report_done_fn done;
    void *arg;
} rctx_t;

static void release(rctx_t *c)
{
    if (--c->left == 0) {
        if (c->res.rv != 0) {
            PD_LOG(c->n->log, PD_LOG_WARN, "report", "window %lld: %s", (long long)c->window,
                   c->res.reason);
        }
        c->done(c->n, c->window, &c->res, c->arg);
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
        c->res.links = j->have;
    }
    pd_job_free(j);
    release(c);
}

static pd_job_t *job_new(rctx_t *c, const pd_window_t *w, pd_job_kind_t kind, const char *name)
{
    pd_job_t *j = calloc(1, sizeof(*j));
    if (j == NULL) {
        return NULL;
    }
    j->kind = kind;
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
static int links_of(const pd_window_t *w, const pp_manifest_t *man, pd_job_t *j)
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

int pd_report_write(pd_node_t *n, const pd_window_t *w, const pp_manifest_t *man, bool links,
                    pd_report_done_fn done, void *arg, char *err, size_t errlen)
{
    pp_steps_doc_t doc;
    char *json = NULL, *html = NULL;
    size_t jlen = 0, hlen = 0;
    rctx_t *c = NULL;
    pd_job_t *jobs[3] = {NULL, NULL, NULL};
    if (pd_stepdoc_build(w, n->hist, n->name, &doc) != 0) {
        snprintf(err, errlen, "out of memory building the report");
        return PROFD_ENOMEM;
    }
    int rv = pp_record_encode(&pp_desc_steps_doc, &doc, true, &json, &jlen);
    if (rv == 0) {
        rv = pd_report_html(&doc, man, PROFD_VERSION_STRING, &html, &hlen);
    }
    if (rv == 0 && (c = calloc(1, sizeof(*c))) != NULL) {
        jobs[0] = job_new(c, w, PD_JOB_WRITE, "steps.json");
        jobs[1] = job_new(c, w, PD_JOB_WRITE, "report.html");
        jobs[2] = links ? job_new(c, w, PD_JOB_LINK, PD_REPORT_TB_DIR) : NULL;
    }
    if (rv != 0 || c == NULL || jobs[0] == NULL || jobs[1] == NULL ||
        (links && (jobs[2] == NULL || links_of(w, man, jobs[2]) != 0))) {
        pp_record_free(&pp_desc_steps_doc, &doc);
        free(json);
        free(html);
        for (int i = 0; i < 3; i++) {
            pd_job_free(jobs[i]);
        }
        free(c);
        snprintf(err, errlen, "out of memory building the report");
        return PROFD_ENOMEM;
    }
    c->res.ranks = (int64_t)doc.ranks_n;
    c->res.steps = doc.steps_n == 2 ? doc.steps[1] - doc.steps[0] + 1 : 0;
    pp_record_free(&pp_desc_steps_doc, &doc);
    c->n = n;
    c->window = w->id;
    c->done = done;
    c->arg = arg;
    jobs[0]->data = json;
    jobs[0]->len = jlen;
    jobs[1]->data = html;
    jobs[1]->len = hlen;
    if (jobs[2] && jobs[2]->nlinks == 0) {
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
            if (jobs[i]->kind == PD_JOB_LINK) {
                pd_link_run(jobs[i]);
            } else {
                pd_write_run(jobs[i]);
            }
            job_done(jobs[i]);
        }
    }
    release(c);
    return 0;
}
