// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Finishing windows: gathering and manifests (see finish.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "finish.h"
#include "gather.h"
#include "hook.h"
#include "manifest.h"
#include "report.h"
#include "retention.h"
#include "text.h"

static void gather_done(pd_job_t *job)
{
    pd_gather_job_t *j = (pd_gather_job_t *)job;
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
            if (j->incomplete) {
                char why[400];
                char q[160];
                pd_quote(q, sizeof(q), j->part);
                snprintf(why, sizeof(why),
                         "the profiler left an incomplete (.part) file, removed: %s%s", q,
                         j->nparts > 1 ? " and others" : "");
                if (c->status == PP_CAP_COMPLETE) {
                    pd_windows_set_status(c, PP_CAP_TRUNCATED, why);
                } else if (c->reason == NULL) {
                    pd_windows_set_status(c, c->status, why);
                }
            }
            if (j->left) {
                PD_LOG(n->log, PD_LOG_WARN, "gather", "window %s rank %lld: %s", w->name,
                       (long long)m->rank, j->reason);
            }
            if (j->dropped) { /* no file: no folder in the tree either */
                free(c->dir);
                c->dir = NULL;
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
    if (m && j->cap < m->ncaps && m->gathered) {
        m->gathered[j->cap] = true; /* done, either way: not gathered again after a restart */
    }
    if (w) {
        w->pending--;
        pd_windows_touch(n->win, w, NULL);
        if (m) {
            pd_windows_touch(n->win, w, m);
        }
        pd_windows_maybe_finish(n->win, w);
    }
    pd_job_free(job);
}

/* recover: after a restart, the capture may be in the spool still, half
 * copied into the tree, or renamed into it already (gather.h). */
static void gather(pd_node_t *n, pd_window_t *w, pd_member_t *m, size_t ci, int64_t owner,
                   bool recover)
{
    pp_capture_t *c = &m->caps[ci];
    size_t prefix = strlen(w->job) + 1 + strlen(w->name) + 1;
    pd_gather_job_t *j = (pd_gather_job_t *)pd_job_new(PD_JOB_GATHER);
    if (j == NULL) {
        pd_windows_set_status(c, PP_CAP_FAILED, "out of memory while gathering");
        return;
    }
    /* c->dir is "<job>/<window>/<capdir>", the same below the spool and the
     * save tree (after a restart: "<capdir>", relative to the window);
     * gathering checks it again, component by component */
    bool full = strncmp(c->dir, w->job, strlen(w->job)) == 0 && c->dir[strlen(w->job)] == '/' &&
                strncmp(c->dir + strlen(w->job) + 1, w->name, strlen(w->name)) == 0 &&
                c->dir[prefix - 1] == '/';
    snprintf(j->spool, sizeof(j->spool), "%s", n->spool);
    snprintf(j->root, sizeof(j->root), "%.*s", (int)w->root_len, w->dir);
    j->recover = recover;
    if ((size_t)snprintf(j->src, sizeof(j->src), "%s%s%s%s%s", full ? "" : w->job, full ? "" : "/",
                         full ? "" : w->name, full ? "" : "/", c->dir) >= sizeof(j->src) ||
        (size_t)snprintf(j->dst, sizeof(j->dst), "%s", j->src) >= sizeof(j->dst)) {
        pd_windows_set_status(c, PP_CAP_FAILED, "capture path too long");
        free(c->dir);
        c->dir = NULL;
        pd_job_free(PD_JOB(j));
        return;
    }
    j->checksum = strcmp(n->cfg->checksum, "none") != 0;
    /* a node streams its captures to the coordinator: list them in place
     * (each file is hashed as it is streamed, not here) */
    j->list_only = w->mirror && !n->cfg->shared_save_path;
    if (j->list_only) {
        j->checksum = false;
    }
    j->owner = owner;
    j->drop_empty = c->status != PP_CAP_COMPLETE;
    j->max_files = n->cfg->max_capture_files;
    /* room for the manifest, kept as the captures arrive (gather.h) */
    if (!j->list_only) {
        snprintf(j->manifest, sizeof(j->manifest), "%s/%s/manifest.json", w->job, w->name);
        j->reserve_base = 4096 + 1024 * (int64_t)w->nmembers;
        j->reserved = &w->reserved;
    }
    j->min_free = n->cfg->min_free_bytes;
    j->budget = n->cfg->window_byte_budget > 0 ? n->cfg->window_byte_budget : -1;
    j->used = &w->claimed;
    j->done = gather_done;
    j->arg = n;
    j->window = w->id;
    j->client = m->client;
    j->cap = ci;
    /* the manifest names folders relative to the window */
    if (full) {
        memmove(c->dir, c->dir + prefix, strlen(c->dir + prefix) + 1);
    }
    w->pending++;
    if (pd_job_submit(&n->loop->uv, PD_JOB(j)) != 0) {
        w->pending--;
        pd_windows_set_status(c, PP_CAP_FAILED, "cannot queue the gathering");
        pd_job_free(PD_JOB(j));
    }
}

void pd_finish_gather(pd_node_t *n, pd_window_t *w, pd_member_t *m, size_t ci, int64_t owner)
{
    gather(n, w, m, ci, owner, false);
}

void pd_finish_resume(pd_node_t *n)
{
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        if (w->state == PP_WS_DONE || w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED) {
            continue;
        }
        w->pending = 0;
        w->forwarded = false; /* a node forwards it (again): the coordinator sorts repeats out */
        for (size_t i = 0; i < w->nmembers; i++) {
            pd_member_t *m = &w->members[i];
            for (size_t c = 0; m->state == PP_MS_REPORTED && c < m->ncaps; c++) {
                if (m->caps[c].dir && !(m->gathered && m->gathered[c])) {
                    gather(n, w, m, c, m->uid, true);
                }
            }
        }
        pd_windows_maybe_finish(n->win, w);
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
    pd_remove_job_t *j = (pd_remove_job_t *)pd_job_new(PD_JOB_REMOVE);
    if (j == NULL) {
        return; /* left for the next start */
    }
    snprintf(j->spool, sizeof(j->spool), "%s", n->spool);
    snprintf(j->src, sizeof(j->src), "%s", rel);
    j->done = remove_done;
    j->arg = n;
    if (pd_job_submit(&n->loop->uv, PD_JOB(j)) != 0) {
        pd_job_free(PD_JOB(j));
    }
}

#define RETRY_MIN_MS 1000
#define RETRY_MAX_MS 10000

/* The manifest could not be written for now (out of space, an I/O error):
 * the window stays gathering, with the reason, and is tried again. */
static void manifest_later(pd_node_t *n, pd_window_t *w, const char *why)
{
    int64_t delay = RETRY_MIN_MS << (w->manifest_tries < 4 ? w->manifest_tries : 4);
    w->manifest_tries++;
    w->manifest_retry_ms = pd_now_ms() + (delay < RETRY_MAX_MS ? delay : RETRY_MAX_MS);
    n->manifests_waiting++;
    snprintf(w->reason, sizeof(w->reason), "manifest not written yet: %.200s (retrying)", why);
    PD_LOG(n->log, w->manifest_tries == 1 ? PD_LOG_WARN : PD_LOG_DEBUG, "windows", "window %s: %s",
           w->name, w->reason);
    pd_node_ranks_changed(n); /* the tick retries it */
}

/* The manifest and the report are written: the window is done. */
static void window_done(pd_node_t *n, pd_window_t *w)
{
    w->state = PP_WS_DONE;
    w->done_ms = pd_now_ms();
    if (strncmp(w->reason, "manifest not written yet", 24) == 0) {
        w->reason[0] = '\0';
    }
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
    if (n->wrec != NULL && pd_wrecords_get(n->wrec, w->id) != NULL) {
        /* the report is written once more when the steps after the window
         * are in: the hook uploads that one (pd_report_tick) */
        pd_hook_defer(n->hook, w);
    } else {
        pd_hook_window(n->hook, w); /* the manifest is written: upload it, say */
    }
    pd_retention_kick(n->retention);
}

/* The manifest's and the report's jobs are over. A window is done only once
 * its manifest exists: one that cannot be written for now is tried again,
 * one that never can be where it belongs (a symlink in the tree) fails. */
static void window_written(pd_node_t *n, pd_window_t *w)
{
    int rv = w->manifest_rv;
    pd_windows_touch(n->win, w, NULL); /* its state or reason */
    if (rv == 0) {
        if (w->trash) { /* the spool copies may go now */
            char rel[64];
            snprintf(rel, sizeof(rel), "%s/w%lld", PD_TRASH, (long long)w->id);
            w->trash = false;
            pd_finish_remove_spool(n, rel);
        }
        window_done(n, w);
    } else if (rv == PROFD_EPATH) {
        w->state = PP_WS_FAILED;
        w->done_ms = pd_now_ms();
        PD_LOG(n->log, PD_LOG_ERROR, "windows", "window %s: %s", w->name, w->reason);
    } else if (n->stopping) {
        /* gathering still: the manifest is written after a restart (journal) */
    } else {
        manifest_later(n, w, w->manifest_why);
    }
}

/* The manifest written as it is encoded, on the pool (the record borrows
 * the window's strings: nothing changes them while its jobs are pending,
 * w->pending, and the daemon stops only once the pool's jobs are over). */
static int manifest_fill(void *arg, int (*put)(void *to, const char *text, size_t len), void *to)
{
    pp_sink_t sink = {.put = put, .arg = to};
    return pp_record_encode_to(&pp_desc_manifest, arg, true, &sink);
}

/* The manifest record, read by two jobs on the pool: the manifest's and
 * report.html's (pd_report_write_kept); freed when both are over. */
typedef struct man_held {
    pp_manifest_t man; /* first: the manifest job's fill_arg */
    int refs;
} man_held_t;

static void man_release(man_held_t *h)
{
    if (--h->refs == 0) {
        pd_manifest_free(&h->man);
        free(h);
    }
}

static void manifest_done(pd_job_t *j)
{
    pd_node_t *n = j->arg;
    pd_window_t *w = pd_windows_get(n->win, j->window);
    man_release(((pd_write_job_t *)j)->fill_arg);
    if (w) {
        w->manifest_rv = j->rv;
        if (j->rv != 0) {
            n->stats.errors_manifest++;
            snprintf(w->manifest_why, sizeof(w->manifest_why), "%.200s", j->reason);
            snprintf(w->reason, sizeof(w->reason), "manifest not written%s: %.200s",
                     j->rv == PROFD_EPATH ? "" : " yet", j->reason);
        }
        if (--w->pending == 0) {
            window_written(n, w);
        }
    }
    pd_job_free(j);
}

static void report_done(pd_node_t *n, int64_t window, const pd_report_result_t *r, void *arg)
{
    pd_window_t *w = pd_windows_get(n->win, window);
    man_release(arg);
    n->stats.reports++;
    n->stats.errors_report += r->rv != 0;
    if (w && --w->pending == 0) {
        window_written(n, w);
    }
}

void pd_finish_retry(pd_node_t *n, int64_t now_ms)
{
    if (n->manifests_waiting == 0) {
        return;
    }
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        if (w->manifest_retry_ms && now_ms >= w->manifest_retry_ms) {
            pd_finish_manifest(n, w); /* clears the retry */
        }
    }
}

void pd_finish_manifest(pd_node_t *n, pd_window_t *w)
{
    char err[256];
    if (w->manifest_retry_ms) {
        w->manifest_retry_ms = 0;
        n->manifests_waiting--;
    }
    pd_write_job_t *j = (pd_write_job_t *)pd_job_new(PD_JOB_WRITE);
    man_held_t *h = calloc(1, sizeof(*h));
    pp_manifest_t *man = h ? &h->man : NULL;
    if (j == NULL || man == NULL || pd_manifest_build(w, man) != 0) {
        free(h);
        free(j);
        manifest_later(n, w, "out of memory");
        return;
    }
    /* never its whole text: encoded into the file piece by piece, on the
     * pool; the record is freed once this job and the report are over */
    j->fill = manifest_fill;
    j->fill_arg = h;
    h->refs = 2; /* the manifest's job, the report */
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
    w->pending += 2; /* before: either may be done at once when the pool is gone */
    /* the report reads the record (report.html is drawn from it on the
     * pool) until report_done, the manifest's job until manifest_done */
    if (pd_report_write_kept(n, w, man, true, true, report_done, h, err, sizeof(err)) != 0) {
        w->pending--;
        man_release(h); /* report_done is not called */
        PD_LOG(n->log, PD_LOG_WARN, "report", "window %s: %s", w->name, err);
    }
    if (pd_job_submit(&n->loop->uv, PD_JOB(j)) != 0) {
        pd_write_run(j); /* the pool is gone: do it here */
        manifest_done(PD_JOB(j));
    }
}
