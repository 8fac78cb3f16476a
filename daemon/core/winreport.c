// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Reports, the files arriving at a coordinator, and a window's end (see
 * windows.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pu_buf.h"
#include "text.h"
#include "windows.h"
#include "winpriv.h"

/* ---- reports ---- */

void pd_windows_set_status(pp_capture_t *c, pp_capture_status_t status, const char *reason)
{
    c->status = status;
    free(c->reason);
    c->reason = reason ? strdup(reason) : NULL;
}

static uint64_t incoming_key(const pd_window_t *w, size_t i)
{
    return pd_uix_hash_str(w->incoming[i].path);
}
/* ---- files arriving (coordinator) ---- */

pd_incoming_t *pd_windows_add_incoming(pd_window_t *w, const char *path)
{
    size_t len = strlen(path);
    if (len > PD_INCOMING_PATH_MAX) {
        return NULL;
    }
    /* 16,384 ranks: grown by one, it was O(n^2) */
    if (PU_GROW(w->incoming, w->capincoming, w->nincoming + 1) != 0) {
        return NULL;
    }
    pd_incoming_t *in = &w->incoming[w->nincoming];
    memset(in, 0, sizeof(*in));
    if ((in->path = strdup(path)) == NULL) {
        return NULL;
    }
    w->nincoming++;
    pd_incoming_mark(w, in);
    return in;
}

pd_incoming_t *pd_windows_incoming(pd_window_t *w, const char *path, size_t *idx)
{
    if (!pd_windows_index(w, &w->inix, w->nincoming, incoming_key)) { /* no memory: a scan */
        for (size_t i = 0; i < w->nincoming; i++) {
            if (strcmp(w->incoming[i].path, path) == 0) {
                *idx = i;
                return &w->incoming[i];
            }
        }
        return NULL;
    }
    for (size_t at = pd_uix_first(&w->inix, pd_uix_hash_str(path)); w->inix.slot[at];
         at = pd_uix_next(&w->inix, at)) {
        size_t i = pd_uix_at(&w->inix, at);
        if (i < w->nincoming && strcmp(w->incoming[i].path, path) == 0) {
            *idx = i;
            return &w->incoming[i];
        }
    }
    return NULL;
}

/* Where a capture of this member must be: "<job>/<window>/<capdir>[/step<N>]". */
bool pd_windows_capdir_ok(const pd_window_t *w, const pd_member_t *m, const pp_capture_t *c,
                          bool rel)
{
    char capdir[PP_MAX_PATH], a[PP_MAX_PATH], b[PP_MAX_PATH + 32];
    int n;
    int64_t rank = pd_windows_role_rank(m, c->phase ? c->role : NULL);
    if (c->dir == NULL || rank < 0 ||
        pp_capture_dir(capdir, sizeof(capdir), c->role, c->phase, rank, m->replica_rank, m->host,
                       m->pid_dir ? m->pid : 0) != 0) {
        return false;
    }
    if (rel) {
        n = snprintf(a, sizeof(a), "%s", capdir);
    } else {
        n = snprintf(a, sizeof(a), "%s/%s/%s", w->job, w->name, capdir);
    }
    if (n < 0 || (size_t)n >= sizeof(a) ||
        (size_t)snprintf(b, sizeof(b), "%s/step%lld", a, (long long)c->first_step) >= sizeof(b)) {
        return false;
    }
    return strcmp(c->dir, a) == 0 || (c->phase && strcmp(c->dir, b) == 0);
}

/* Check one reported capture and stamp who captured it; NULL when it
 * passes, else why it failed (in `why` or a constant). */
static const char *check_capture(pd_windows_t *ws, const pd_window_t *w, const pd_member_t *m,
                                 pp_capture_t *c, bool rel, char *why, size_t whylen)
{
    if (!rel) { /* a worker's: the files are the daemon's listing, never the report's */
        pp_records_free(&pp_desc_file, c->files, c->files_n);
        c->files = NULL;
        c->files_n = 0;
    }
    if (c->reason) { /* free text from the worker: fit for logs and JSON */
        char q[512];
        pd_quote(q, sizeof(q), c->reason);
        free(c->reason);
        c->reason = strdup(q);
    }
    /* who captured is the daemon's knowledge, not the report's */
    bool e2e = strcmp(c->role, "e2e") == 0;
    int64_t rank = pd_windows_role_rank(m, e2e ? NULL : c->role);
    c->rank = rank >= 0 ? rank : m->rank;
    c->replica_rank = m->replica_rank;
    c->pid = m->pid;
    free(c->host);
    c->host = strdup(m->host);
    free(c->tool);
    c->tool = strdup(pd_plan_tool(&w->spec, m->selector));
    pu_strv_free(c->roles, c->roles_n);
    c->roles = NULL;
    c->roles_n = 0;
    size_t nroles = m->nroles ? m->nroles : 1;
    if (e2e && (c->roles = calloc(nroles, sizeof(*c->roles))) != NULL) {
        for (size_t i = 0; i < nroles; i++) { /* the roles an e2e capture covers */
            if ((c->roles[c->roles_n] = strdup(m->nroles ? m->roles[i].name : m->role)) != NULL) {
                c->roles_n++;
            }
        }
    }
    if (c->status == PP_CAP_NONE) {
        return "unknown capture status in the report";
    }
    if ((!e2e && rank < 0) || (c->phase && !pp_ident_ok(c->phase))) {
        return "capture role or phase does not match the rank";
    }
    if (c->dir && c->status != PP_CAP_MISSED && !pd_windows_capdir_ok(w, m, c, rel)) {
        char q[160];
        pd_quote(q, sizeof(q), c->dir);
        snprintf(why, whylen, "capture folder '%s' is not where this capture belongs", q);
        PD_LOG(ws->log, PD_LOG_WARN, "windows", "window %s rank %lld: %s", w->name,
               (long long)m->rank, why);
        return why;
    }
    return NULL;
}

int pd_windows_report(pd_windows_t *ws, const pd_rank_t *k, int64_t window, pp_capture_t **caps,
                      size_t *ncaps, bool rel, pd_window_t **wout, pd_member_t **mout, char *err,
                      size_t errlen)
{
    char why[256];
    pd_window_t *w = pd_windows_get(ws, window);
    if (w == NULL) {
        snprintf(err, errlen, "no window %lld", (long long)window);
        return PROFD_ENOENT;
    }
    pd_member_t *m = pd_windows_member(w, k->id);
    if (m == NULL) {
        snprintf(err, errlen, "client %lld is not a member of window %s", (long long)k->id,
                 w->name);
        return PROFD_ESTATE;
    }
    if (m->state != PP_MS_EXPECTED) {
        snprintf(err, errlen, "window %s already has the captures of rank %lld", w->name,
                 (long long)m->rank);
        return PROFD_ESTATE;
    }
    m->caps = *caps; /* moved */
    m->ncaps = *ncaps;
    *caps = NULL;
    *ncaps = 0;
    free(m->gathered);
    m->gathered = m->ncaps ? calloc(m->ncaps, sizeof(*m->gathered)) : NULL;
    m->state = PP_MS_REPORTED;
    if (w->state == PP_WS_PENDING) {
        w->state = PP_WS_ACTIVE;
        w->jdirty = true;
    }
    pd_windows_touch(ws, w, m); /* kept over a restart */
    for (size_t i = 0; i < m->ncaps; i++) {
        pp_capture_t *c = &m->caps[i];
        const char *failure = check_capture(ws, w, m, c, rel, why, sizeof(why));
        if (failure) {
            pd_windows_set_status(c, PP_CAP_FAILED, failure);
        }
        if (failure || c->status == PP_CAP_MISSED) {
            free(c->dir);
            c->dir = NULL;
        }
    }
    *wout = w;
    *mout = m;
    return 0;
}

int pd_windows_on_result(pd_windows_t *ws, const pd_rank_t *k, pp_result_t *res, char *err,
                         size_t errlen)
{
    pd_window_t *w;
    pd_member_t *m;
    int rv = pd_windows_report(ws, k, res->window, &res->captures, &res->captures_n, false, &w, &m,
                               err, errlen);
    if (rv != 0) {
        return rv;
    }
    for (size_t i = 0; i < m->ncaps; i++) {
        if (m->caps[i].dir && ws->hooks.gather) {
            ws->hooks.gather(ws->hooks.arg, w, m, i, k->uid);
        }
    }
    /* No new plan generation: a report changes no other rank's plan, and the
     * reporting rank is done with the window (its engine keeps it as done
     * until the next plan drops it). Bumping the generation here re-sent
     * every plan to every rank once per burst of reports: up to N^2 plan
     * messages for a window over N ranks (about 4N measured with 64 ranks
     * reporting together, instead of N). */
    pd_windows_maybe_finish(ws, w);
    return 0;
}

void pd_windows_maybe_finish(pd_windows_t *ws, pd_window_t *w)
{
    if (pd_windows_finished(w) || w->nmembers == 0 || w->forwarded) {
        return;
    }
    for (size_t i = 0; i < w->nmembers; i++) {
        if (w->members[i].state == PP_MS_EXPECTED) {
            return;
        }
    }
    if (w->state != PP_WS_GATHERING) {
        w->state = PP_WS_GATHERING;
        pd_windows_touch(ws, w, NULL);
    }
    if (w->pending == 0 && ws->hooks.complete) {
        ws->hooks.complete(ws->hooks.arg, w);
    }
}
