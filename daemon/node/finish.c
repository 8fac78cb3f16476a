/* Finishing windows: gathering and manifests (see finish.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "finish.h"
#include "gather.h"
#include "manifest.h"
#include "report.h"

static void gather_done(pd_job_t *j)
{
    pd_node_t *n = j->arg;
    pd_window_t *w = pd_windows_get(n->win, j->window);
    pd_member_t *m = w ? pd_windows_member(w, j->client) : NULL;
    if (m && j->cap < m->ncaps) {
        pp_capture_t *c = &m->caps[j->cap];
        if (j->rv == 0) {
            c->files = j->files; /* moved */
            c->files_n = j->nfiles;
            j->files = NULL;
            j->nfiles = 0;
            w->bytes += j->bytes;
            w->trash |= j->trashed;
            if (j->incomplete && c->status == PP_CAP_COMPLETE) {
                pd_windows_set_status(c, PP_CAP_TRUNCATED,
                                      "the profiler left an incomplete (.part) file");
            }
            if (j->left) {
                PD_LOG(n->log, PD_LOG_WARN, "gather", "window %s rank %lld: %s", w->name,
                       (long long)m->rank, j->reason);
            }
        } else {
            pd_windows_set_status(c, j->rv == PROFD_ELIMIT ? PP_CAP_TRUNCATED : PP_CAP_FAILED,
                                  j->reason);
            free(c->dir);
            c->dir = NULL;
            PD_LOG(n->log, j->rv == PROFD_EPATH ? PD_LOG_WARN : PD_LOG_INFO, "gather",
                   "window %s rank %lld: %s", w->name, (long long)m->rank, j->reason);
        }
    }
    if (w) {
        w->pending--;
        pd_windows_maybe_finish(n->win, w);
    }
    pd_job_free(j);
}

void pd_finish_gather(pd_node_t *n, pd_window_t *w, pd_member_t *m, size_t ci, int64_t owner)
{
    pp_capture_t *c = &m->caps[ci];
    size_t prefix = strlen(w->job) + 1 + strlen(w->name) + 1;
    pd_job_t *j = calloc(1, sizeof(*j));
    if (j == NULL) {
        pd_windows_set_status(c, PP_CAP_FAILED, "out of memory while gathering");
        return;
    }
    j->kind = PD_JOB_GATHER;
    /* c->dir is "<job>/<window>/<capdir>", the same below the spool and the
     * save tree; gathering checks it again, component by component */
    snprintf(j->spool, sizeof(j->spool), "%s", n->spool);
    snprintf(j->root, sizeof(j->root), "%.*s", (int)w->root_len, w->dir);
    if ((size_t)snprintf(j->src, sizeof(j->src), "%s", c->dir) >= sizeof(j->src) ||
        (size_t)snprintf(j->dst, sizeof(j->dst), "%s", c->dir) >= sizeof(j->dst)) {
        pd_windows_set_status(c, PP_CAP_FAILED, "capture path too long");
        free(c->dir);
        c->dir = NULL;
        pd_job_free(j);
        return;
    }
    j->checksum = strcmp(n->cfg->checksum, "none") != 0;
    /* a node streams its captures to the coordinator: list them in place */
    j->list_only = w->mirror && !n->cfg->shared_save_path;
    if (j->list_only) {
        j->checksum = true; /* the coordinator verifies every file */
    }
    j->owner = owner;
    j->max_files = n->cfg->max_capture_files;
    j->min_free = n->cfg->min_free_bytes;
    j->budget = n->cfg->window_byte_budget > 0 ? n->cfg->window_byte_budget : -1;
    j->used = &w->claimed;
    j->done = gather_done;
    j->arg = n;
    j->window = w->id;
    j->client = m->client;
    j->cap = ci;
    /* the manifest names folders relative to the window */
    memmove(c->dir, c->dir + prefix, strlen(c->dir + prefix) + 1);
    w->pending++;
    if (pd_job_submit(&n->loop->uv, j) != 0) {
        w->pending--;
        pd_windows_set_status(c, PP_CAP_FAILED, "cannot queue the gathering");
        pd_job_free(j);
    }
}

static void remove_done(pd_job_t *j)
{
    pd_node_t *n = j->arg;
    if (j->rv != 0) {
        PD_LOG(n->log, PD_LOG_WARN, "gather", "spool: %s", j->reason);
    }
    pd_job_free(j);
}

void pd_finish_remove_spool(pd_node_t *n, const char *rel)
{
    pd_job_t *j = calloc(1, sizeof(*j));
    if (j == NULL) {
        return; /* left for the next start */
    }
    j->kind = PD_JOB_REMOVE;
    snprintf(j->spool, sizeof(j->spool), "%s", n->spool);
    snprintf(j->src, sizeof(j->src), "%s", rel);
    j->done = remove_done;
    j->arg = n;
    if (pd_job_submit(&n->loop->uv, j) != 0) {
        pd_job_free(j);
    }
}

/* The manifest and the report are written: the window is done. */
static void window_done(pd_node_t *n, pd_window_t *w)
{
    w->state = PP_WS_DONE;
    w->done_ms = pd_now_ms();
    n->stats.windows_done++;
    n->stats.bytes += w->bytes;
    for (size_t i = 0; i < w->nmembers; i++) {
        for (size_t c = 0; c < w->members[i].ncaps; c++) {
            int st = (int)w->members[i].caps[c].status;
            n->stats.captures[st >= 0 && st < 5 ? st : 0]++;
        }
    }
    if (w->reason[0] == '\0') {
        PD_LOG(n->log, PD_LOG_INFO, "windows", "window %s done: %s/manifest.json", w->name, w->dir);
    }
}

static void manifest_done(pd_job_t *j)
{
    pd_node_t *n = j->arg;
    pd_window_t *w = pd_windows_get(n->win, j->window);
    pd_windows_dirty(n->win);
    if (w && w->trash) {
        char rel[64];
        snprintf(rel, sizeof(rel), "%s/w%lld", PD_TRASH, (long long)w->id);
        w->trash = false;
        pd_finish_remove_spool(n, rel);
    }
    if (w) {
        if (j->rv != 0) {
            n->stats.errors_manifest++;
            snprintf(w->reason, sizeof(w->reason), "manifest not written: %.200s", j->reason);
            PD_LOG(n->log, PD_LOG_ERROR, "windows", "window %s: %s", w->name, w->reason);
        }
        if (--w->pending == 0) {
            window_done(n, w);
        }
    }
    pd_job_free(j);
}

static void report_done(pd_node_t *n, int64_t window, const pd_report_result_t *r, void *arg)
{
    pd_window_t *w = pd_windows_get(n->win, window);
    n->stats.reports++;
    n->stats.errors_report += r->rv != 0;
    if (w && --w->pending == 0) {
        window_done(n, w);
    }
}

void pd_finish_manifest(pd_node_t *n, pd_window_t *w)
{
    pp_manifest_t man;
    char err[256];
    pd_job_t *j = calloc(1, sizeof(*j));
    char *text = NULL;
    size_t len = 0;
    int rv = j == NULL ? PROFD_ENOMEM : pd_manifest_build(w, &man);
    if (rv == 0) {
        rv = pp_record_encode(&pp_desc_manifest, &man, true, &text, &len);
        if (rv != 0) {
            pd_manifest_free(&man);
        }
    }
    if (rv != 0) {
        free(text);
        free(j);
        w->state = PP_WS_DONE;
        snprintf(w->reason, sizeof(w->reason), "manifest not written: out of memory");
        PD_LOG(n->log, PD_LOG_ERROR, "windows", "window %s: %s", w->name, w->reason);
        return;
    }
    j->kind = PD_JOB_WRITE;
    j->data = text;
    j->len = len;
    /* fits: the window's folder left room below it */
    snprintf(j->root, sizeof(j->root), "%.*s", (int)w->root_len, w->dir);
    snprintf(j->dst, sizeof(j->dst), "%s/%s/manifest.json", w->job, w->name);
    /* what is left of the window in the spool: empty folders */
    snprintf(j->spool, sizeof(j->spool), "%s", n->spool);
    snprintf(j->prune, sizeof(j->prune), "%s/%s", w->job, w->name);
    j->done = manifest_done;
    j->arg = n;
    j->window = w->id;
    w->state = PP_WS_GATHERING;
    /* the report goes with it: the window is done when both are written */
    w->pending += 2; /* before: the report may be done at once when the pool is gone */
    if (pd_report_write(n, w, &man, true, report_done, NULL, err, sizeof(err)) != 0) {
        w->pending--;
        PD_LOG(n->log, PD_LOG_WARN, "report", "window %s: %s", w->name, err);
    }
    pd_manifest_free(&man);
    if (pd_job_submit(&n->loop->uv, j) != 0) {
        pd_write_run(j); /* the pool is gone: do it here */
        manifest_done(j);
    }
}
