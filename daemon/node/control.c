// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The control endpoints (see control.h). */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "apply.h"
#include "clock.h"
#include "control.h"
#include "hook.h"
#include "manifest.h"
#include "merge.h"
#include "profd/errors.h"
#include "profd/version.h"
#include "pu_buf.h"
#include "report.h"
#include "scores.h"
#include "start.h"
#include "trigger.h"
#include "wcaps.h"

/* A request parked until work on the thread pool is over (report, merge).
 * The endpoint frees parked requests when it closes: then `req` is NULL and
 * the work's end only frees this. */
typedef struct waiting {
    struct pd_control *c;
    pd_req_t *req;
    struct waiting *prev, *next;
} waiting_t;

struct pd_control {
    pd_node_t *n;
    pd_endpoint_t *local;  /* listen.control */
    pd_endpoint_t *remote; /* listen.control_remote, when set */
    waiting_t *waiting;
};

#define TOP_SLOWEST_DEFAULT 3
#define TOP_SLOWEST_MAX     64

static bool allowed_gid(const pd_node_t *n, int64_t gid)
{
    for (size_t i = 0; i < n->cfg->n_allow_gids; i++) {
        if (n->cfg->allow_gids[i] == gid) {
            return true;
        }
    }
    return false;
}

/* Is the user `uid` a member of an allowed group in the group database?
 * The kernel gives only the primary gid of an ipc:// peer, not the groups
 * of its process. */
static bool allowed_member(const pd_node_t *n, int64_t uid, int64_t gid)
{
    struct passwd pw, *res = NULL;
    char buf[16384];
    gid_t groups[256];
    int ng = (int)(sizeof(groups) / sizeof(groups[0]));
    if (n->cfg->n_allow_gids == 0 || getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) != 0 ||
        res == NULL) {
        return false;
    }
    /* -1: more groups than fit; ng then holds the ones that did */
    if (getgrouplist(pw.pw_name, (gid_t)gid, groups, &ng) < 0 &&
        ng > (int)(sizeof(groups) / sizeof(groups[0]))) {
        ng = (int)(sizeof(groups) / sizeof(groups[0]));
    }
    for (int i = 0; i < ng; i++) {
        if (allowed_gid(n, (int64_t)groups[i])) {
            return true;
        }
    }
    return false;
}

bool pd_control_permitted(const pd_node_t *n, const pd_peer_t *peer)
{
    switch (peer->via) {
    case PD_VIA_TLS:
        return peer->tls_verified;
    case PD_VIA_TCP:
        return n->cfg->insecure_tcp_control;
    case PD_VIA_IPC:
        break;
    default:
        return false;
    }
    if (peer->uid < 0) {
        return false; /* no credentials to check */
    }
    if (peer->uid == 0 || peer->uid == n->uid) {
        return true;
    }
    for (size_t i = 0; i < n->cfg->n_allow_uids; i++) {
        if (n->cfg->allow_uids[i] == peer->uid) {
            return true;
        }
    }
    return allowed_gid(n, peer->gid) || allowed_member(n, peer->uid, peer->gid);
}

static void reply_started(pd_node_t *n, pd_req_t *req, const int64_t *ids, size_t k,
                          char **warnings, size_t nwarnings)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_started);
    pp_window_t *v = k ? calloc(k, sizeof(*v)) : NULL;
    size_t j = 0;
    for (size_t i = 0; v && i < k; i++) {
        pd_window_t *w = pd_windows_get(n->win, ids[i]);
        if (w) {
            pd_windows_info(w, false, &v[j]);
            pd_hook_info(n->hook, w->id, &v[j++]);
        }
    }
    m.u.started.windows = v;
    m.u.started.windows_n = j;
    m.u.started.warnings = warnings;
    m.u.started.warnings_n = nwarnings;
    /* a window is kept over a restart before anyone hears of it */
    pd_node_reply_durable(n, req, &m);
    for (size_t i = 0; i < j; i++) {
        pd_windows_info_free(&v[i]);
    }
    free(v);
}

static void on_status(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_control_t *c = ctx;
    pd_node_t *n = c->n;
    pp_msg_t m;
    int64_t now = pd_now_ms();
    size_t k = 0, i = 0;
    pp_msg_init(&m, PP_T_status_reply);
    for (pd_rank_t *r = pd_registry_next(n->reg, NULL); r; r = pd_registry_next(n->reg, r)) {
        k++;
    }
    pp_rank_t *rows = k ? calloc(k, sizeof(*rows)) : NULL;
    for (pd_rank_t *r = pd_registry_next(n->reg, NULL); rows && r;
         r = pd_registry_next(n->reg, r)) {
        if (in->u.status.job == NULL || strcmp(in->u.status.job, r->job) == 0) {
            pd_registry_row(r, now, &rows[i++]);
        }
    }
    pp_status_reply_t *s = &m.u.status_reply;
    s->node = (char *)n->name;
    s->instance = (char *)n->instance;
    s->version = PROFD_VERSION_STRING;
    s->save_path = (char *)n->save_path;
    s->windows = (int64_t)pd_windows_live(n->win); /* open: not yet done or cancelled */
    s->windows_kept = (int64_t)n->win->count;      /* every window it holds */
    s->ranks = rows;
    s->ranks_n = i;
    s->bad_requests = n->bad_requests;
    s->mode = "standalone";
    if (n->hooks.status) {
        n->hooks.status(n->hooks.arg, s); /* mode, coordinator, link and nodes */
    }
    pd_req_reply_msg(req, &m);
    for (size_t j = 0; j < i; j++) {
        free(rows[j].roles);
    }
    free(rows);
}

static void on_top(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    const pp_top_query_t *q = &in->u.top;
    pp_msg_t m;
    pp_status_reply_t st;
    pp_straggler_t trig;
    size_t nslow =
        q->n > 0 ? (size_t)(q->n < TOP_SLOWEST_MAX ? q->n : TOP_SLOWEST_MAX) : TOP_SLOWEST_DEFAULT;
    pp_msg_init(&m, PP_T_top_reply);
    pp_top_reply_t *t = &m.u.top_reply;
    pp_record_init(&pp_desc_status_reply, &st);
    st.mode = "standalone";
    if (n->hooks.status) {
        n->hooks.status(n->hooks.arg, &st);
    }
    if (pd_history_stats(n->hist, q->job, pd_now_ms(), nslow, q->ranks, &t->roles, &t->roles_n,
                         &t->ranks, &t->ranks_n) != 0) {
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
        return;
    }
    t->node = (char *)n->name;
    t->mode = (char *)st.mode;
    for (size_t i = 0; i < t->roles_n; i++) {
        t->nranks += t->roles[i].ranks;
        t->nstalled += (int64_t)t->roles[i].stalled_n;
    }
    pd_straggler_info(n->strag, &trig);
    t->trigger = trig;
    if (pd_scores_rows(n->hist, q->job, PD_HIST_RECENT, q->ranks ? 0 : nslow, &t->sections,
                       &t->sections_n) != 0) {
        t->sections = NULL;
        t->sections_n = 0;
    }
    pd_req_reply_msg(req, &m);
    free(t->sections);
    free(trig.roles);
    pd_history_stats_free(t->roles, t->roles_n, t->ranks);
}

/* ---- requests waiting on the thread pool ---- */

static waiting_t *wait_on(pd_control_t *c, pd_req_t *req)
{
    waiting_t *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
        return NULL;
    }
    if (!pd_req_park(req)) {
        free(w);
        pd_req_reply_error(req, PROFD_ELIMIT, "too many requests waiting: try again");
        return NULL;
    }
    w->c = c;
    w->req = req;
    w->next = c->waiting;
    if (c->waiting) {
        c->waiting->prev = w;
    }
    c->waiting = w;
    return w;
}

/* The work is over: the request (if it is still there) is the caller's to
 * answer; w is gone afterwards. */
static pd_req_t *wait_over(waiting_t *w)
{
    pd_req_t *req = w->req;
    if (w->c) {
        if (w->prev) {
            w->prev->next = w->next;
        } else {
            w->c->waiting = w->next;
        }
        if (w->next) {
            w->next->prev = w->prev;
        }
    }
    free(w);
    return req;
}

static pd_window_t *window_of(pd_node_t *n, pd_req_t *req, const pp_query_t *q, const char *what)
{
    pd_window_t *w = q->id != PP_NONE ? pd_windows_get(n->win, q->id) : NULL;
    if (q->id == PP_NONE) {
        pd_req_reply_error(req, PROFD_EINVAL, "%s: give a window id", what);
    } else if (w == NULL) {
        pd_req_reply_error(req, PROFD_ENOENT, "no window %lld", (long long)q->id);
    } else if (w->mirror) {
        pd_req_reply_error(req, PROFD_ENOTSUP,
                           "window %lld is the coordinator's: ask the coordinator",
                           (long long)q->id);
        w = NULL;
    }
    return w;
}

static void report_over(pd_node_t *n, int64_t window, const pd_report_result_t *r, void *arg)
{
    pd_req_t *req = wait_over(arg);
    pd_window_t *w = pd_windows_get(n->win, window);
    char html[PD_PATH_MAX + 16], steps[PD_PATH_MAX + 16];
    n->stats.reports++;
    n->stats.errors_report += r->rv != 0;
    if (req == NULL) {
        return;
    }
    if (r->rv != 0 || w == NULL) {
        pd_req_reply_error(req, r->rv ? r->rv : PROFD_ENOENT, "report not written: %s",
                           r->rv ? r->reason : "the window is gone");
        return;
    }
    pp_msg_t m;
    pp_msg_init(&m, PP_T_report_reply);
    snprintf(html, sizeof(html), "%s/report.html", w->dir);
    snprintf(steps, sizeof(steps), "%s/steps.json", w->dir);
    m.u.report_reply.id = window;
    m.u.report_reply.html = html;
    m.u.report_reply.steps = steps;
    m.u.report_reply.ranks = r->ranks;
    m.u.report_reply.nsteps = r->steps;
    pd_req_reply_msg(req, &m);
}

static void on_report(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_control_t *c = ctx;
    pd_node_t *n = c->n;
    char err[256];
    pp_manifest_t man;
    pd_window_t *w = window_of(n, req, &in->u.report, "report");
    if (w == NULL) {
        return;
    }
    if (w->state == PP_WS_CANCELLED) {
        pd_req_reply_error(req, PROFD_ESTATE, "window %lld was cancelled", (long long)w->id);
        return;
    }
    bool back;
    int rv = pd_wcaps_open(w, &back, err, sizeof(err)); /* a compacted window's, from disk */
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    if (pd_manifest_build(w, &man) != 0) {
        pd_wcaps_done(w, back);
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
        return;
    }
    waiting_t *wt = wait_on(c, req);
    if (wt) {
        rv = pd_report_write(n, w, &man, w->state == PP_WS_DONE, false, report_over, wt, err,
                             sizeof(err));
        if (rv != 0) {
            req = wait_over(wt);
            pd_req_reply_error(req, rv, "%s", err);
        }
    }
    pd_manifest_free(&man);
    pd_wcaps_done(w, back); /* what the report needs of them is copied */
}

static void merge_over(pd_node_t *n, int64_t window, int rv, const char *reason,
                       const pd_merge_t *mg, void *arg)
{
    pd_req_t *req = wait_over(arg);
    pd_window_t *w = pd_windows_get(n->win, window);
    char path[PD_PATH_MAX + 32];
    char *warnings[4];
    n->stats.merges++;
    n->stats.errors_merge += rv != 0;
    if (rv == 0) {
        PD_LOG(n->log, PD_LOG_INFO, "merge",
               "window %lld: %lld event(s) of %lld file(s), %lld unaligned, %lld skipped",
               (long long)window, (long long)mg->events, (long long)mg->files,
               (long long)mg->unaligned, (long long)mg->skipped);
    }
    if (req == NULL) {
        return;
    }
    if (rv != 0 || w == NULL) {
        pd_req_reply_error(req, rv ? rv : PROFD_ENOENT, "merge failed: %s",
                           rv ? reason : "the window is gone");
        return;
    }
    if (mg->files == 0) {
        pd_req_reply_error(req, PROFD_ENOENT,
                           "window %lld has nothing to merge: none of its %zu trace(s) could be "
                           "read (%lld skipped%s%.300s)",
                           (long long)window, mg->ninputs, (long long)mg->skipped,
                           mg->nwarnings ? ": " : "", mg->nwarnings ? mg->warnings[0] : "");
        return;
    }
    pp_msg_t m;
    pp_msg_init(&m, PP_T_merge_reply);
    pp_merge_reply_t *r = &m.u.merge_reply;
    snprintf(path, sizeof(path), "%s/%s", w->dir, PD_MERGE_FILE);
    r->id = window;
    r->path = path;
    r->files = mg->files;
    r->events = mg->events;
    r->bytes = mg->bytes;
    r->unaligned = mg->unaligned;
    r->err_us = mg->err_us;
    for (int i = 0; i < mg->nwarnings; i++) {
        warnings[i] = (char *)mg->warnings[i];
    }
    r->warnings = warnings;
    r->warnings_n = (size_t)mg->nwarnings;
    int64_t ranks = 0, last = PP_NONE;
    for (size_t i = 0; i < mg->ninputs; i++) {
        ranks += mg->inputs[i].rank != last;
        last = mg->inputs[i].rank;
    }
    r->ranks = ranks;
    pd_req_reply_msg(req, &m);
}

/* Traces a merge of w would read; *by_status counts its captures by status. */
static size_t merge_traces(const pd_window_t *w, int64_t by_status[5])
{
    size_t traces = 0;
    for (size_t i = 0; i < w->nmembers; i++) {
        for (size_t c = 0; c < w->members[i].ncaps; c++) {
            const pp_capture_t *cp = &w->members[i].caps[c];
            by_status[(int)cp->status >= 0 && (int)cp->status < 5 ? (int)cp->status : 0]++;
            for (size_t f = 0; cp->dir && f < cp->files_n; f++) {
                traces += pd_merge_is_trace(cp->files[f].path);
            }
        }
    }
    return traces;
}

static void on_merge(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_control_t *c = ctx;
    pd_node_t *n = c->n;
    char err[256];
    pd_window_t *w = window_of(n, req, &in->u.merge, "merge");
    if (w == NULL) {
        return;
    }
    if (w->state != PP_WS_DONE) {
        pd_req_reply_error(req, PROFD_ESTATE, "window %lld is %s: merge it once it is done",
                           (long long)w->id, pp_enum_name(&pp_enum_window_state, w->state));
        return;
    }
    int64_t st[5] = {0, 0, 0, 0, 0};
    bool back;
    int rv = pd_wcaps_open(w, &back, err, sizeof(err)); /* a compacted window's, from disk */
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    if (merge_traces(w, st) == 0) {
        pd_wcaps_done(w, back);
        pd_req_reply_error(req, PROFD_ENOENT,
                           "window %lld has nothing to merge: none of its %lld capture(s) has a "
                           "trace (%lld complete, %lld failed, %lld missed, %lld truncated)",
                           (long long)w->id,
                           (long long)(st[PP_CAP_COMPLETE] + st[PP_CAP_FAILED] + st[PP_CAP_MISSED] +
                                       st[PP_CAP_TRUNCATED]),
                           (long long)st[PP_CAP_COMPLETE], (long long)st[PP_CAP_FAILED],
                           (long long)st[PP_CAP_MISSED], (long long)st[PP_CAP_TRUNCATED]);
        return;
    }
    waiting_t *wt = wait_on(c, req);
    if (wt) {
        rv = pd_merge_window(n, w, merge_over, wt, err, sizeof(err));
        if (rv != 0) {
            req = wait_over(wt);
            pd_req_reply_error(req, rv, "%s", err);
        }
    }
    pd_wcaps_done(w, back); /* the merge's inputs are copied */
}

static void on_straggler(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    char err[256];
    int rv = pd_trigger_request(n, &in->u.straggler, err, sizeof(err));
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    pp_msg_t m;
    pp_msg_init(&m, PP_T_straggler_reply);
    pd_straggler_info(n->strag, &m.u.straggler_reply);
    pd_req_reply_msg(req, &m);
    free(m.u.straggler_reply.roles);
}

#define FAILURES_SHOWN 8 /* captures not complete shown per rank, then a count */

/* qsort of capture pointers in the manifest's order (pd_manifest_cmp),
 * equal ones as they came. */
static int cmp_cap_at(const void *a, const void *b)
{
    const pp_capture_t *x = *(const pp_capture_t *const *)a, *y = *(const pp_capture_t *const *)b;
    int c = pd_manifest_cmp(x, y);
    return c ? c : (x > y) - (x < y);
}

/* Each selected rank's captures that are not complete, in one line each:
 * "failed, steps 5-6, phase generate: <reason>" (the detail of one window),
 * in the manifest's order: the same whether the captures are the ones
 * reported or the ones read back from the manifest. */
static void failures_fill(const pd_window_t *w, pp_window_t *out)
{
    for (size_t i = 0; i < out->ranks_n && i < w->nmembers; i++) {
        const pd_member_t *m = &w->members[i];
        size_t bad = 0, k = 0;
        for (size_t c = 0; c < m->ncaps; c++) {
            bad += m->caps[c].status != PP_CAP_COMPLETE;
        }
        char **v =
            bad ? calloc(bad < FAILURES_SHOWN ? bad : FAILURES_SHOWN + 1, sizeof(char *)) : NULL;
        const pp_capture_t **at = bad ? calloc(bad, sizeof(*at)) : NULL;
        if (v == NULL || at == NULL) {
            free(v);
            free(at);
            continue;
        }
        for (size_t c = 0, b = 0; c < m->ncaps; c++) {
            if (m->caps[c].status != PP_CAP_COMPLETE) {
                at[b++] = &m->caps[c];
            }
        }
        qsort(at, bad, sizeof(*at), cmp_cap_at);
        for (size_t c = 0; c < bad && k < FAILURES_SHOWN; c++) {
            const pp_capture_t *cp = at[c];
            char steps[64] = "", line[512];
            if (cp->first_step != PP_NONE && cp->last_step != PP_NONE &&
                cp->last_step != cp->first_step) {
                snprintf(steps, sizeof(steps), ", steps %lld-%lld", (long long)cp->first_step,
                         (long long)cp->last_step);
            } else if (cp->first_step != PP_NONE) {
                snprintf(steps, sizeof(steps), ", step %lld", (long long)cp->first_step);
            }
            snprintf(line, sizeof(line), "%s%s%s%s: %s", pp_status_name(cp->status), steps,
                     cp->phase ? ", phase " : "", cp->phase ? cp->phase : "",
                     cp->reason ? cp->reason : "no reason given");
            if ((v[k] = strdup(line)) == NULL) {
                break;
            }
            k++;
        }
        if (k == FAILURES_SHOWN && bad > FAILURES_SHOWN) {
            char line[96];
            snprintf(line, sizeof(line), "... and %zu more (see the manifest)",
                     bad - FAILURES_SHOWN);
            if ((v[k] = strdup(line)) != NULL) {
                k++;
            }
        }
        free(at);
        out->ranks[i].failures = v;
        out->ranks[i].failures_n = k;
    }
}

static void failures_free(pp_window_t *out)
{
    for (size_t i = 0; i < out->ranks_n; i++) {
        pu_strv_free(out->ranks[i].failures, out->ranks[i].failures_n);
    }
}

static void on_windows(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    const pp_query_t *q = &in->u.windows;
    pp_msg_t m;
    size_t k = 0, j = 0;
    pp_msg_init(&m, PP_T_windows_reply);
    pd_window_t *one = q->id != PP_NONE ? pd_windows_get(n->win, q->id) : NULL;
    bool back = false;
    char err[600];
    if (q->id != PP_NONE && one == NULL) {
        pd_req_reply_error(req, PROFD_ENOENT, "no window %lld", (long long)q->id);
        return;
    }
    /* the detail of one window: its captures, from its manifest when
     * compacted (a window retention removed has none: its counts only);
     * one that cannot be read back is answered without them, with a
     * warning that says why */
    int rv = one && !one->pruned[0] ? pd_wcaps_open(one, &back, err, sizeof(err)) : 0;
    char **warn = NULL;
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        k++;
    }
    pp_window_t *v = k ? calloc(k, sizeof(*v)) : NULL;
    for (pd_window_t *w = n->win->head; v && w; w = w->next) {
        if ((q->id != PP_NONE && w->id != q->id) || (q->job && strcmp(q->job, w->job) != 0)) {
            continue;
        }
        pd_windows_info(w, q->id != PP_NONE, &v[j]);
        pd_hook_info(n->hook, w->id, &v[j]);
        failures_fill(w, &v[j]);
        if (w == one && rv != 0 &&
            (warn = calloc(w->nwarnings + 1, sizeof(*warn))) != NULL) { /* borrowed strings */
            for (size_t i = 0; i < w->nwarnings; i++) {
                warn[i] = w->warnings[i];
            }
            warn[w->nwarnings] = err;
            v[j].warnings = warn;
            v[j].warnings_n = w->nwarnings + 1;
        }
        /* its record of step times, once final (none still open for it)
         * and written */
        if (w->record[0] && w->pending == 0 &&
            (n->wrec == NULL || pd_wrecords_get(n->wrec, w->id) == NULL)) {
            v[j].record = w->record;
        }
        j++;
    }
    m.u.windows_reply.windows = v;
    m.u.windows_reply.windows_n = j;
    pd_req_reply_msg(req, &m);
    for (size_t i = 0; i < j; i++) {
        failures_free(&v[i]);
        pd_windows_info_free(&v[i]);
    }
    free(v);
    free(warn);
    if (one) {
        pd_wcaps_done(one, back);
    }
}

static void on_start(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    char err[256];
    int64_t *ids;
    size_t k;
    int rv = pd_start_windows(n, &in->u.start, &ids, &k, err, sizeof(err));
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    reply_started(n, req, ids, k, NULL, 0);
    free(ids);
}

static void on_stop(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    char err[256];
    const pp_stop_t *s = &in->u.stop;
    int64_t *ids = NULL;
    size_t k = 0, cap = 0;
    if (s->id != PP_NONE) {
        int rv = pd_start_stop(n, s->id, err, sizeof(err));
        if (rv != 0) {
            pd_req_reply_error(req, rv, "%s", err);
            return;
        }
        reply_started(n, req, &s->id, 1, NULL, 0);
        return;
    }
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        if (!pd_windows_running(w) || (s->job && strcmp(s->job, w->job) != 0)) {
            continue;
        }
        if (pd_start_stop(n, w->id, err, sizeof(err)) == 0) {
            if (PU_GROW(ids, cap, k + 1) != 0) {
                break;
            }
            ids[k++] = w->id;
        }
    }
    reply_started(n, req, ids, k, NULL, 0);
    free(ids);
}

static void on_apply(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    char err[512];
    pp_apply_t *a = &in->u.apply;
    pd_apply_result_t r;
    int rv;
    if (a->yaml != NULL) { /* an older client: the YAML text, read here */
        rv = pd_apply_text(n, a->file, a->yaml, strlen(a->yaml), a->overrides, a->overrides_n,
                           a->job, false, &r, err, sizeof(err));
    } else if (a->specs_n > 0) { /* read by profctl on the caller's side */
        rv = pd_apply_specs(n, a->specs, a->specs_n, a->warnings, a->warnings_n, a->job, &r, err,
                            sizeof(err));
    } else {
        rv = PROFD_EINVAL;
        snprintf(err, sizeof(err), "apply: give the window requests (specs) or the yaml text");
    }
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    PD_LOG(n->log, PD_LOG_INFO, "control", "applied %s: %zu window(s)",
           a->file ? a->file : "config", r.nids);
    reply_started(n, req, r.ids, r.nids, r.warnings, r.nwarnings);
    pd_apply_result_free(&r);
}

static const pd_handler_t handlers[] = {
    {PP_T_status, on_status}, {PP_T_windows, on_windows}, {PP_T_start, on_start},
    {PP_T_stop, on_stop},     {PP_T_apply, on_apply},     {PP_T_top, on_top},
    {PP_T_report, on_report}, {PP_T_merge, on_merge},     {PP_T_straggler, on_straggler},
};

/* Mutating requests: not on a node daemon, and only for permitted peers. */
static int permit(void *ctx, const pd_peer_t *p, const pp_msg_t *m, char *why, size_t whylen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    const char *what = pp_type_name(m->type);
    if (pp_type_access(m->type) != PP_ACC_WRITE) {
        return 0;
    }
    if (n->cfg->coordinator_url[0]) {
        snprintf(why, whylen,
                 "this node daemon's windows are planned by its coordinator (%s): run '%s' "
                 "against the coordinator's control endpoint",
                 n->cfg->coordinator_url, what);
        return PROFD_ENOTSUP;
    }
    if (pd_control_permitted(n, p)) {
        return 0;
    }
    if (p->via == PD_VIA_IPC) {
        PD_LOG(n->log, PD_LOG_WARN, "control", "refused '%s' from uid %lld gid %lld pid %lld", what,
               (long long)p->uid, (long long)p->gid, (long long)p->pid);
        snprintf(why, whylen,
                 "'%s' is not permitted for uid %lld (see security.allow_uids and allow_gids)",
                 what, (long long)p->uid);
    } else if (p->via == PD_VIA_TLS) {
        PD_LOG(n->log, PD_LOG_WARN, "control",
               "refused '%s' from connection %u: its certificate did not verify", what, p->pipe);
        snprintf(why, whylen, "'%s' is not permitted: the client certificate did not verify", what);
    } else {
        PD_LOG(n->log, PD_LOG_WARN, "control", "refused '%s' from connection %u", what, p->pipe);
        snprintf(why, whylen, "'%s' is not permitted over this transport", what);
    }
    return PROFD_EPERM;
}

static void on_limited(const pd_peer_t *p, void *arg)
{
    pd_node_t *n = ((pd_control_t *)arg)->n;
    PD_LOG(n->log, PD_LOG_WARN, "control",
           "connection %u (uid %lld pid %lld) is over the rate limit of %lld requests/s "
           "(limits.control_requests_per_s)",
           p->pipe, (long long)p->uid, (long long)p->pid, (long long)n->cfg->control_rate);
}

static int listen_on(pd_control_t *c, const char *url, pd_endpoint_t **out, char *err,
                     size_t errlen)
{
    pd_node_t *n = c->n;
    pt_tls_files_t tls;
    pd_rep_opts_t ro;
    pd_node_rep_opts(n, url, &tls, &ro);
    ro.initial = 2;
    ro.max_contexts = 16;
    ro.rate = n->cfg->control_rate;
    ro.limited = on_limited;
    pd_endpoint_opts_t eo = {
        .name = "control",
        .what = "a control request",
        .accept = PD_ACCEPT(PP_ACC_READ) | PD_ACCEPT(PP_ACC_WRITE),
        .handlers = handlers,
        .nhandlers = sizeof(handlers) / sizeof(handlers[0]),
        .permit = permit,
        .ctx = c,
    };
    pd_node_endpoint_opts(n, &eo);
    if (strncmp(url, "tcp://", 6) == 0) {
        PD_LOG(n->log, PD_LOG_WARN, "control",
               "%s is plain tcp:// (security.insecure_tcp_control): anyone who can connect to it "
               "controls this daemon",
               url);
    }
    return pd_endpoint_open(out, n->loop, &ro, &eo, err, errlen);
}

int pd_control_init(pd_control_t **out, pd_node_t *n, char *err, size_t errlen)
{
    pd_control_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return PROFD_ENOMEM;
    }
    c->n = n;
    int rv = listen_on(c, n->cfg->control_url, &c->local, err, errlen);
    if (rv == 0 && n->cfg->control_remote_url[0]) {
        rv = listen_on(c, n->cfg->control_remote_url, &c->remote, err, errlen);
    }
    if (rv != 0) {
        pd_control_fini(c);
        return rv;
    }
    *out = c;
    return 0;
}

void pd_control_fini(pd_control_t *c)
{
    if (c) {
        /* the endpoints free their parked requests: the work in flight only
         * frees its waiting_t when it ends */
        for (waiting_t *w = c->waiting; w; w = w->next) {
            w->c = NULL;
            w->req = NULL;
        }
        pd_endpoint_close(c->remote);
        pd_endpoint_close(c->local);
        free(c);
    }
}

int64_t pd_control_limited(const pd_control_t *c)
{
    return c ? pd_endpoint_limited(c->local) + pd_endpoint_limited(c->remote) : 0;
}
