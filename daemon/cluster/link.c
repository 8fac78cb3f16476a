// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Node side of the node <-> coordinator link (see link.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "clock.h"
#include "confine.h"
#include "gather.h"
#include "link.h"
#include "linkstream.h"
#include "mirror.h"
#include "profd/errors.h"
#include "profd/version.h"
#include "reqc.h"

#define CTL_TIMEOUT_MS 5000
#define WATCH_HOLD_MS  20000
#define HEARTBEAT_MS   2000
#define SUMMARY_STEPS  64 /* steps per rank in one summary at most */

static void pump(pd_link_t *l);

/* ---- roster and summaries ---- */

/* How long ago rank r began its step, on our clock (0: none begun). */
static int64_t step_age_us(const pd_rank_t *r, int64_t now_us)
{
    return r->step != PP_NONE && now_us > r->step_began_us ? now_us - r->step_began_us : 0;
}

static pp_node_rank_t *roster(const pd_node_t *n, size_t *count)
{
    int64_t now_us = pd_now_us();
    size_t k = 0;
    for (pd_rank_t *r = pd_registry_next(n->reg, NULL); r; r = pd_registry_next(n->reg, r)) {
        k++;
    }
    pp_node_rank_t *v = k ? calloc(k, sizeof(*v)) : NULL;
    *count = 0;
    for (pd_rank_t *r = pd_registry_next(n->reg, NULL); v && r; r = pd_registry_next(n->reg, r)) {
        pp_node_rank_t *x = &v[(*count)++];
        pp_record_init(&pp_desc_node_rank, x);
        x->client = r->id;
        x->job = (char *)r->job;
        x->role = (char *)r->role;
        x->rank = r->rank;
        x->local_rank = r->local_rank;
        x->world_size = r->world_size;
        x->replica_rank = r->replica_rank;
        x->host = (char *)r->host;
        x->pid = r->pid;
        x->lost = r->state == PD_RANK_LOST;
        x->step = r->step; /* where it stands, before the next summary */
        x->age_us = step_age_us(r, now_us);
        x->step_us = r->step_us;
        if (r->nroles > 1 && (x->roles = calloc(r->nroles - 1, sizeof(*x->roles))) != NULL) {
            for (size_t i = 1; i < r->nroles; i++) { /* roles[0] is the primary role */
                pp_record_init(&pp_desc_role_rank, &x->roles[i - 1]);
                x->roles[i - 1].role = r->roles[i].name;
                x->roles[i - 1].rank = r->roles[i].rank;
            }
            x->roles_n = r->nroles - 1;
        }
    }
    return v;
}

static void roster_free(pp_node_rank_t *v, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(v[i].roles);
    }
    free(v);
}

static void on_hello(void *arg, int rv, const void *body, size_t len)
{
    pd_link_t *l = arg;
    pp_msg_t m;
    l->hello_out = false;
    if ((rv = pd_link_reply_of(rv, body, len, PP_T_node_welcome, &m)) != 0) {
        pd_link_lost(l, profd_strerror(rv));
        return;
    }
    if (l->coord[0] && strcmp(l->coord, m.u.node_welcome.instance) != 0) {
        PD_LOG(l->n->log, PD_LOG_INFO, "link", "the coordinator restarted");
        pd_mirror_reset(l->n); /* its windows are gone with it */
    }
    snprintf(l->coord, sizeof(l->coord), "%s", m.u.node_welcome.instance);
    l->batches = m.u.node_welcome.batches;
    l->files = m.u.node_welcome.files;
    pd_node_coordinator_known(l->n, l->coord); /* kept over a restart of this node */
    pp_msg_free(&m);
    l->registered = true;
    l->backoff_ms = 100;
    l->gen = -1;
    PD_LOG(l->n->log, PD_LOG_INFO, "link", "joined coordinator %s", l->n->cfg->coordinator_url);
    pump(l);
}

/* A node_hello or a node_roster (type t), with the node's roster as it is
 * now, sent: true when it went out. */
static bool send_ranks(pd_link_t *l, pp_type_t t, pd_reqc_cb cb)
{
    pd_node_t *n = l->n;
    pp_msg_t m;
    size_t count;
    pp_node_rank_t *ranks = roster(n, &count);
    pp_msg_init(&m, t);
    if (t == PP_T_node_hello) {
        pp_node_hello_t *h = &m.u.node_hello;
        h->node = (char *)n->name;
        h->instance = (char *)n->instance;
        h->version = PROFD_VERSION_STRING;
        h->shared = n->cfg->shared_save_path;
        h->ranks = ranks;
        h->ranks_n = count;
    } else {
        pp_node_roster_t *r = &m.u.node_roster;
        r->node = (char *)n->name;
        r->instance = (char *)n->instance;
        r->ranks = ranks;
        r->ranks_n = count;
    }
    bool sent = pd_reqc_send_msg(l->ctl, &m, NULL, 0, CTL_TIMEOUT_MS, cb, l) == 0;
    if (sent) {
        l->roster_dirty = false; /* the message carries the roster as it is now */
    }
    roster_free(ranks, count);
    return sent;
}

static void send_hello(pd_link_t *l)
{
    if (send_ranks(l, PP_T_node_hello, on_hello)) {
        l->hello_out = true;
    }
}

static void on_roster(void *arg, int rv, const void *body, size_t len)
{
    pd_link_t *l = arg;
    pp_msg_t m;
    l->roster_out = false;
    if ((rv = pd_link_reply_of(rv, body, len, PP_T_NONE, &m)) == 0) {
        pp_msg_free(&m);
        return;
    }
    l->roster_dirty = true;
    pd_link_lost(l, profd_strerror(rv));
}

static void send_roster(pd_link_t *l)
{
    if (send_ranks(l, PP_T_node_roster, on_roster)) {
        l->roster_out = true;
    }
}

/* The coordinator's clock - ours, and its error bound (0: unknown). */
static void clock_best(const pd_link_t *l, int64_t *off, int64_t *err)
{
    *off = 0;
    *err = 0;
    for (int i = 0; i < l->clk_n; i++) {
        if (*err == 0 || l->clk_err[i] < *err) {
            *off = l->clk_off[i];
            *err = l->clk_err[i];
        }
    }
}

static void on_summary(void *arg, int rv, const void *body, size_t len)
{
    pd_link_t *l = arg;
    pp_msg_t m;
    int64_t t3 = pd_now_us();
    l->summary_out = false;
    if ((rv = pd_link_reply_of(rv, body, len, PP_T_NONE, &m)) == 0) {
        if (m.type == PP_T_ack && m.u.ack.t_us > 0 && t3 >= l->summary_sent_us) {
            /* the coordinator read its clock between our send and our receive */
            l->clk_off[l->clk_pos] = m.u.ack.t_us - (l->summary_sent_us + t3) / 2;
            l->clk_err[l->clk_pos] = (t3 - l->summary_sent_us) / 2 + 1;
            l->clk_pos = (l->clk_pos + 1) % CLOCK_SAMPLES;
            l->clk_n += l->clk_n < CLOCK_SAMPLES;
        }
        pp_msg_free(&m);
        return;
    }
    pd_link_lost(l, profd_strerror(rv));
}

/* What each worker's steps were since the last summary (its history). */
static pp_rank_times_t *rank_times(pd_node_t *n, int64_t now_ms, size_t *count, char **names,
                                   size_t *nnames)
{
    size_t k = 0;
    *count = 0;
    for (pd_rank_t *r = pd_registry_next(n->reg, NULL); r; r = pd_registry_next(n->reg, r)) {
        k++;
    }
    pp_rank_times_t *v = k ? calloc(k, sizeof(*v)) : NULL;
    for (pd_rank_t *r = pd_registry_next(n->reg, NULL); v && r; r = pd_registry_next(n->reg, r)) {
        pd_hist_rank_t *h = pd_node_hist_find(n, r);
        if (h == NULL) {
            continue;
        }
        pp_rank_times_t *x = &v[(*count)++];
        pp_record_init(&pp_desc_rank_times, x);
        x->client = r->id;
        x->step = h->now->cur_step;
        x->age_us = h->now->cur_step != PP_NONE ? (now_ms - h->now->began_ms) * 1000 : 0;
        x->in_step = h->now->in_step;
        x->offset_us = h->offset_us;
        x->offset_err_us = h->offset_err_us;
        if (h->last == PP_NONE) {
            continue;
        }
        int64_t from = pd_history_first(n->hist, h);
        if (h->now->reported != PP_NONE && h->now->reported + 1 > from) {
            from = h->now->reported + 1;
        }
        if (h->last - from + 1 > SUMMARY_STEPS) {
            from = h->last - SUMMARY_STEPS + 1;
        }
        x->times = calloc(2 * SUMMARY_STEPS, sizeof(int64_t));
        x->sections = h->sec_us ? calloc(3 * SUMMARY_STEPS * PP_SECTIONS, sizeof(int64_t)) : NULL;
        x->phases =
            h->nphases ? calloc(3 * SUMMARY_STEPS * (size_t)h->nphases, sizeof(int64_t)) : NULL;
        for (int64_t st = from; x->times && st <= h->last; st++) {
            int64_t us = pd_history_step_us(n->hist, h, st);
            if (us <= 0) {
                continue; /* the step running now: next time */
            }
            x->times[x->times_n++] = st;
            x->times[x->times_n++] = us;
            h->now->reported = st;
            for (int sec = 0; x->sections && sec < PP_SECTIONS; sec++) {
                int64_t su = pd_history_section_us(n->hist, h, sec, st);
                if (su >= 0) {
                    x->sections[x->sections_n++] = st;
                    x->sections[x->sections_n++] = sec;
                    x->sections[x->sections_n++] = su;
                }
            }
            for (int p = 0; x->phases && p < h->nphases; p++) {
                int64_t pu = pd_history_phase_us(n->hist, h, p, st);
                size_t q;
                for (q = 0; q < *nnames && strcmp(names[q], h->phases[p]) != 0; q++) {
                }
                if (pu <= 0 || (q == *nnames && *nnames == 64)) {
                    continue;
                }
                if (q == *nnames) {
                    names[(*nnames)++] = (char *)h->phases[p];
                }
                x->phases[x->phases_n++] = st;
                x->phases[x->phases_n++] = (int64_t)q;
                x->phases[x->phases_n++] = pu;
            }
        }
    }
    return v;
}

/* Per (job, role): the fastest rank's step, how long ago it began, the
 * median of the ranks' step times. */
static void send_summary(pd_link_t *l, int64_t now_ms)
{
    pd_node_t *n = l->n;
    pp_role_summary_t v[64];
    int64_t times[64][32];
    int ntimes[64];
    size_t nr = 0;
    int64_t now_us = pd_now_us();
    for (pd_rank_t *r = pd_registry_next(n->reg, NULL); r; r = pd_registry_next(n->reg, r)) {
        if (r->state != PD_RANK_ACTIVE) {
            continue;
        }
        size_t i;
        for (i = 0; i < nr; i++) {
            if (strcmp(v[i].job, r->job) == 0 && strcmp(v[i].role, r->role) == 0) {
                break;
            }
        }
        if (i == nr) {
            if (nr == 64) {
                continue;
            }
            pp_record_init(&pp_desc_role_summary, &v[nr]);
            v[nr].job = (char *)r->job;
            v[nr].role = (char *)r->role;
            ntimes[nr] = 0;
            nr++;
        }
        if (r->step != PP_NONE && (v[i].step == PP_NONE || r->step > v[i].step)) {
            v[i].step = r->step;
            v[i].age_us = step_age_us(r, now_us);
            v[i].in_step = r->in_step;
        }
        if (r->step_us > 0 && ntimes[i] < 32) {
            times[i][ntimes[i]++] = r->step_us;
        }
    }
    for (size_t i = 0; i < nr; i++) { /* median by insertion sort: tiny arrays */
        for (int a = 1; a < ntimes[i]; a++) {
            for (int b = a; b > 0 && times[i][b] < times[i][b - 1]; b--) {
                int64_t t = times[i][b];
                times[i][b] = times[i][b - 1];
                times[i][b - 1] = t;
            }
        }
        v[i].step_us = ntimes[i] ? times[i][ntimes[i] / 2] : 0;
    }
    pp_msg_t m;
    char *names[64];
    size_t nnames = 0, nrt = 0;
    pp_rank_times_t *rt = rank_times(n, now_ms, &nrt, names, &nnames);
    pp_msg_init(&m, PP_T_node_summary);
    m.u.node_summary.node = (char *)n->name;
    m.u.node_summary.instance = (char *)n->instance;
    m.u.node_summary.roles = v;
    m.u.node_summary.roles_n = nr;
    m.u.node_summary.latency_us = pd_latency_p99(&n->latency);
    m.u.node_summary.ranks = rt;
    m.u.node_summary.ranks_n = nrt;
    m.u.node_summary.phase_names = names;
    m.u.node_summary.phase_names_n = nnames;
    clock_best(l, &m.u.node_summary.offset_us, &m.u.node_summary.offset_err_us);
    l->summary_sent_us = pd_now_us();
    if (pd_reqc_send_msg(l->ctl, &m, NULL, 0, CTL_TIMEOUT_MS, on_summary, l) == 0) {
        l->summary_out = true;
        l->last_summary_ms = now_ms;
    }
    for (size_t i = 0; i < nrt; i++) {
        free(rt[i].times);
        free(rt[i].phases);
        free(rt[i].sections);
    }
    free(rt);
}

/* ---- the plan ---- */

static void queue_result(pd_link_t *l, pd_window_t *w, pd_member_t *m);

/* A worker the coordinator added to a window this node had finished: its
 * missed capture goes after the window's results. */
static void forward_late(void *arg, pd_window_t *w, pd_member_t *m)
{
    queue_result(arg, w, m);
}

static void on_watch(void *arg, int rv, const void *body, size_t len)
{
    pd_link_t *l = arg;
    pp_msg_t m;
    l->watch_out = false;
    if ((rv = pd_link_reply_of(rv, body, len, PP_T_node_plan, &m)) != 0) {
        if (rv != PROFD_ETIMEDOUT) {
            pd_link_lost(l, profd_strerror(rv));
        }
        return;
    }
    if (!m.u.node_plan.unchanged && m.u.node_plan.gen != l->gen) {
        l->gen = m.u.node_plan.gen;
        pd_mirror_apply(l->n, &m.u.node_plan, forward_late, l);
    }
    pp_msg_free(&m);
    pump(l);
}

static void send_watch(pd_link_t *l)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_node_watch);
    m.u.node_watch.node = (char *)l->n->name;
    m.u.node_watch.instance = (char *)l->n->instance;
    m.u.node_watch.gen = l->gen;
    m.u.node_watch.hold_ms = WATCH_HOLD_MS;
    if (pd_reqc_send_msg(l->ctl, &m, NULL, 0, WATCH_HOLD_MS + CTL_TIMEOUT_MS, on_watch, l) == 0) {
        l->watch_out = true;
    }
}

/* ---- results ---- */

static bool link_gone(int rv)
{
    return rv == PROFD_ETIMEDOUT || rv == PROFD_ENODAEMON || rv == PROFD_ECLOSED ||
           rv == PROFD_ECLIENT;
}

/* The coordinator's answer `rv` (and its message) to result f: kept to be
 * sent again if the link is gone (false), else forgotten, its files free to
 * go. */
static bool result_answered(pd_link_t *l, fwd_t *f, int rv, const char *why)
{
    if (link_gone(rv)) {
        return false; /* kept: sent again once the link is back */
    }
    for (xfer_t *x = l->xfers; x; x = x->next_x) { /* its files may go now */
        if (x->state == X_HELD && x->window == f->window && x->client == f->client) {
            x->state = X_IDLE;
        }
    }
    if (rv != 0) {
        PD_LOG(l->n->log, PD_LOG_WARN, "link",
               "the coordinator refused the results of window %lld client %lld: %s",
               (long long)f->window, (long long)f->client, why && *why ? why : profd_strerror(rv));
    }
    fwd_t **pp = &l->results;
    while (*pp != f) {
        pp = &(*pp)->next;
    }
    *pp = f->next;
    if (l->results_tail == &f->next) {
        l->results_tail = pp;
    }
    pd_link_delivered(l, f->window);
    free(f->buf);
    free(f);
    return true;
}

static void on_results(void *arg, int rv, const void *body, size_t len)
{
    fwd_req_t *q = arg;
    pd_link_t *l = q->l;
    pp_msg_t m;
    int gone = 0;
    q->used = false;
    l->results_out--;
    for (size_t i = 0; i < q->n; i++) {
        q->f[i]->out = false;
    }
    rv = pd_link_reply_of(rv, body, len, q->single ? PP_T_NONE : PP_T_node_results_reply, &m);
    if (rv == 0 && !q->single &&
        (m.u.node_results_reply.codes_n != q->n || m.u.node_results_reply.messages_n != q->n)) {
        pp_msg_free(&m);
        rv = PROFD_EPROTO;
    }
    for (size_t i = 0; i < q->n; i++) {
        int code = rv == 0 && !q->single ? (int)m.u.node_results_reply.codes[i] : rv;
        const char *why = rv == 0 && !q->single ? m.u.node_results_reply.messages[i] : NULL;
        if (!result_answered(l, q->f[i], code, why)) {
            gone = code;
        }
    }
    if (rv == 0) {
        pp_msg_free(&m);
    }
    if (gone) {
        pd_link_lost(l, profd_strerror(gone));
        return;
    }
    pump(l);
}

static void queue_result(pd_link_t *l, pd_window_t *w, pd_member_t *m)
{
    pp_node_result_item_t it;
    fwd_t *f = calloc(1, sizeof(*f));
    if (f == NULL) {
        return;
    }
    pp_record_init(&pp_desc_node_result_item, &it);
    it.window = w->remote_id;
    it.client = m->client;
    it.captures = m->caps;
    it.captures_n = m->ncaps;
    if (pp_record_encode(&pp_desc_node_result_item, &it, false, &f->buf, &f->len) != 0) {
        free(f);
        return;
    }
    f->window = w->id;
    f->client = m->client;
    *l->results_tail = f;
    l->results_tail = &f->next;
    w->pending++;
}

void pd_link_forward(pd_link_t *l, pd_window_t *w)
{
    if (l == NULL || w->forwarded) {
        return;
    }
    w->forwarded = true;
    pd_windows_touch(l->n->win, w, NULL);
    w->pending++; /* held until everything is queued */
    for (size_t i = 0; i < w->nmembers; i++) {
        pd_member_t *m = &w->members[i];
        queue_result(l, w, m);
        for (size_t c = 0; !l->n->cfg->shared_save_path && c < m->ncaps; c++) {
            const pp_capture_t *cap = &m->caps[c];
            for (size_t f = 0; cap->dir && f < cap->files_n; f++) {
                pd_link_queue_file(l, w, m->client, cap, &cap->files[f]);
            }
        }
    }
    PD_LOG(l->n->log, PD_LOG_INFO, "link", "window %s: forwarding %zu rank(s) to the coordinator",
           w->name, w->nmembers);
    pd_link_delivered(l, w->id);
    pump(l);
}

/* ---- the pump: whatever can go out now ---- */

static int item_text(void *arg, const pp_field_t *f, const void *rec, size_t i, const char **text,
                     size_t *len)
{
    const fwd_req_t *q = arg;
    *text = q->f[i]->buf;
    *len = q->f[i]->len;
    return 1;
}

/* Request q's encoding: its results spliced into a node_results, or its
 * one result as a node_result (decoded back from its item). */
static int results_encode(pd_link_t *l, fwd_req_t *q, char **buf, size_t *len)
{
    pp_msg_t m;
    if (!q->single) {
        pp_node_result_item_t items[RESULTS_BATCH]; /* their text is the hook's */
        pp_elem_hook_t hook = {item_text, q};
        memset(items, 0, sizeof(items));
        pp_msg_init(&m, PP_T_node_results);
        m.u.node_results.node = (char *)l->n->name;
        m.u.node_results.instance = (char *)l->n->instance;
        m.u.node_results.items = items;
        m.u.node_results.items_n = q->n;
        return pp_msg_encode_hooked(&m, &hook, buf, len);
    }
    pp_node_result_item_t it;
    char err[128];
    int rv = pp_record_decode(&pp_desc_node_result_item, q->f[0]->buf, q->f[0]->len, &it, err,
                              sizeof(err));
    if (rv != 0) {
        return rv;
    }
    pp_msg_init(&m, PP_T_node_result);
    m.u.node_result.node = (char *)l->n->name;
    m.u.node_result.instance = (char *)l->n->instance;
    m.u.node_result.window = it.window;
    m.u.node_result.client = it.client;
    m.u.node_result.captures = it.captures;
    m.u.node_result.captures_n = it.captures_n;
    rv = pp_msg_encode(&m, buf, len);
    pp_record_free(&pp_desc_node_result_item, &it);
    return rv;
}

/* One request of the results not sent yet: up to RESULTS_BATCH of them
 * within limits.max_msg_bytes (one at least), or one to a coordinator
 * that takes no batches. false: nothing went. */
static bool send_results(pd_link_t *l)
{
    fwd_req_t *q = NULL;
    for (int i = 0; i < MAX_RESULTS && q == NULL; i++) {
        q = l->reqs[i].used ? NULL : &l->reqs[i];
    }
    if (q == NULL) {
        return false;
    }
    size_t max = l->batches ? RESULTS_BATCH : 1;
    size_t room = (size_t)l->n->cfg->max_msg_bytes;
    size_t bytes = 96 + strlen(l->n->name) + strlen(l->n->instance); /* the rest of the request */
    q->n = 0;
    for (fwd_t *f = l->results; f && q->n < max; f = f->next) {
        if (f->out) {
            continue;
        }
        if (q->n > 0 && bytes + f->len + 1 > room) {
            break;
        }
        bytes += f->len + 1;
        q->f[q->n++] = f;
    }
    if (q->n == 0) {
        return false;
    }
    char *buf;
    size_t len;
    q->l = l;
    q->single = !l->batches;
    if (results_encode(l, q, &buf, &len) != 0) {
        return false;
    }
    int rv = pd_reqc_send(l->ctl, buf, len, CTL_TIMEOUT_MS, on_results, q);
    free(buf);
    if (rv != 0) {
        return false;
    }
    q->used = true;
    for (size_t i = 0; i < q->n; i++) {
        q->f[i]->out = true;
    }
    l->results_out++;
    return true;
}

static void pump(pd_link_t *l)
{
    int64_t now = pd_now_ms();
    if (!l->registered) {
        if (!l->hello_out && now >= l->next_try_ms) {
            send_hello(l);
        }
        return;
    }
    if (l->roster_dirty && !l->roster_out) {
        send_roster(l);
    }
    if (!l->watch_out) {
        send_watch(l);
    }
    while (l->results_out < MAX_RESULTS && send_results(l)) {
    }
    pd_link_stream_pump(l, now);
}

static void on_timer(uv_timer_t *t)
{
    pd_link_t *l = t->data;
    int64_t now = pd_now_ms();
    pd_reqc_tick(l->ctl, now);
    pd_reqc_tick(l->data, now);
    if (l->registered && !l->summary_out &&
        now - l->last_summary_ms >= (l->n->reg->count ? l->n->cfg->summary_ms : HEARTBEAT_MS)) {
        send_summary(l, now);
    }
    pump(l);
}

void pd_link_set_coordinator(pd_link_t *l, const char *instance)
{
    if (l && instance) {
        snprintf(l->coord, sizeof(l->coord), "%s", instance);
    }
}

void pd_link_roster_changed(pd_link_t *l)
{
    if (l) {
        l->roster_dirty = true;
        pump(l);
    }
}

bool pd_link_connected(const pd_link_t *l)
{
    return l && l->registered;
}

void pd_link_backlog(const pd_link_t *l, int64_t *files, int64_t *bytes)
{
    *files = l ? l->backlog_files : 0;
    *bytes = l ? l->backlog_bytes : 0;
}

int pd_link_init(pd_link_t **out, pd_node_t *n, char *err, size_t errlen)
{
    const pd_config_t *cfg = n->cfg;
    pd_link_t *l = calloc(1, sizeof(*l));
    pt_tls_files_t tls = {cfg->tls_ca_file, cfg->tls_cert_file, cfg->tls_key_file,
                          cfg->tls_server_name};
    int rv;
    if (l == NULL) {
        return PROFD_ENOMEM;
    }
    l->n = n;
    l->pump = pump;
    l->backoff_ms = 100;
    l->gen = -1;
    l->results_tail = &l->results;
    if (strncmp(cfg->coordinator_url, "tcp://", 6) == 0) {
        PD_LOG(n->log, PD_LOG_WARN, "link",
               "%s is plain tcp:// (security.insecure_tcp_links): the link to the coordinator is "
               "unauthenticated and unencrypted",
               cfg->coordinator_url);
    }
    if ((rv = pd_reqc_open(&l->ctl, n->loop, cfg->coordinator_url, &tls, 8 + MAX_RESULTS, err,
                           errlen)) != 0 ||
        (rv = pd_reqc_open(&l->data, n->loop, cfg->coordinator_url, &tls, MAX_XFERS, err,
                           errlen)) != 0) {
        pd_reqc_close(l->ctl);
        free(l);
        return rv;
    }
    uv_timer_init(&n->loop->uv, &l->timer);
    l->timer.data = l;
    int64_t every = cfg->summary_ms > 0 ? cfg->summary_ms : 100;
    uv_timer_start(&l->timer, on_timer, 0, (uint64_t)every);
    *out = l;
    return 0;
}

static void timer_closed(uv_handle_t *h)
{
    free(h->data);
}

void pd_link_fini(pd_link_t *l)
{
    if (l == NULL) {
        return;
    }
    pd_reqc_close(l->ctl);
    pd_reqc_close(l->data);
    while (l->results) {
        fwd_t *f = l->results;
        l->results = f->next;
        free(f->buf);
        free(f);
    }
    pd_link_stream_fini(l);
    uv_timer_stop(&l->timer);
    uv_close((uv_handle_t *)&l->timer, timer_closed); /* frees l */
}
