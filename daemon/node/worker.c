// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The worker endpoint (see worker.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "worker.h"

struct pd_worker {
    pd_node_t *n;
    pd_endpoint_t *ep;
};

static void reply_plan(pd_node_t *n, pd_rank_t *k, pd_req_t *req, bool unchanged)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_plan);
    m.u.plan.gen = n->gen;
    m.u.plan.instance = (char *)n->instance;
    m.u.plan.unchanged = unchanged;
    if (!unchanged && pd_windows_plan_for(n->win, k, &m.u.plan) != 0) {
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory building the plan");
        return;
    }
    pd_req_reply_msg(req, &m);
    free(m.u.plan.entries); /* the rest is borrowed */
}

static void release_watch(pd_node_t *n, pd_rank_t *k)
{
    if (k->watch) {
        pd_req_t *w = k->watch;
        k->watch = NULL;
        reply_plan(n, k, w, true);
    }
}

static void lose(pd_node_t *n, pd_rank_t *k, const char *reason)
{
    if (k->state == PD_RANK_LOST) {
        return;
    }
    k->state = PD_RANK_LOST;
    PD_LOG(n->log, PD_LOG_INFO, "worker", "rank %lld (%s, pid %lld) %s", (long long)k->rank,
           k->role, (long long)k->pid, reason);
    release_watch(n, k);
    pd_windows_on_lost(n->win, k, reason);
    pd_node_hist_gone(n, k, false);
    pd_node_roster_changed(n);
    pd_node_job_check(n, k->job);
}

/* The client a request names (the permit function checked it exists and
 * belongs to the peer's uid): seen now, on this connection. */
static pd_rank_t *client_of(pd_node_t *n, pd_req_t *req, int64_t id)
{
    pd_rank_t *k = pd_registry_get(n->reg, id);
    k->pipe = pd_req_peer(req)->pipe;
    k->last_seen_ms = pd_now_ms();
    k->restored = false;
    if (k->state == PD_RANK_LOST) {
        k->state = PD_RANK_ACTIVE;
    }
    return k;
}

static int permit(void *ctx, const pd_peer_t *peer, const pp_msg_t *m, char *why, size_t whylen)
{
    pd_worker_t *w = ctx;
    pd_node_t *n = w->n;
    int64_t id;
    switch (m->type) {
    case PP_T_events:
        id = m->u.events.client;
        break;
    case PP_T_watch:
        id = m->u.watch.client;
        break;
    case PP_T_result:
        id = m->u.result.client;
        break;
    case PP_T_bye:
        id = m->u.bye.client;
        break;
    default:
        return 0; /* hello: anyone who can connect may register */
    }
    pd_rank_t *k = pd_registry_get(n->reg, id);
    if (k == NULL) {
        snprintf(why, whylen,
                 "unknown client %lld (the daemon restarted or forgot it): register again",
                 (long long)id);
        return PROFD_ECLIENT;
    }
    if (k->uid >= 0 && peer->uid != k->uid) {
        snprintf(why, whylen, "client %lld was registered by another user", (long long)id);
    } else if (k->uid >= 0 && k->peer_pid >= 0 && peer->pid >= 0 && peer->pid != k->peer_pid) {
        snprintf(why, whylen, "client %lld belongs to another process (pid %lld)", (long long)id,
                 (long long)k->peer_pid);
    } else if (k->uid < 0 && k->cn[0] && strcmp(peer->cn, k->cn) != 0) {
        snprintf(why, whylen, "client %lld was registered with another certificate", (long long)id);
    } else {
        return 0;
    }
    n->bad_requests++;
    PD_LOG(n->log, PD_LOG_WARN, "worker",
           "refused a request for client %lld (uid %lld pid %lld) from uid %lld pid %lld: %s",
           (long long)id, (long long)k->uid, (long long)k->peer_pid, (long long)peer->uid,
           (long long)peer->pid, why);
    return PROFD_EPERM;
}

static void on_hello(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_worker_t *)ctx)->n;
    const pp_hello_t *h = &msg->u.hello;
    const pd_peer_t *peer = pd_req_peer(req);
    pd_rank_t *k;
    char err[256];
    /* the registration is bound to who sent it: see pd_registry_register */
    pd_owner_t owner = {
        .uid = peer->via == PD_VIA_IPC ? peer->uid : -1,
        .pid = peer->via == PD_VIA_IPC ? peer->pid : -1,
        .cn = peer->via == PD_VIA_TLS && peer->cn[0] ? peer->cn : NULL,
        .pipe = peer->pipe,
    };
    int rv = pd_registry_register(n->reg, h, n->name, &owner, pd_now_ms(), &k, err, sizeof(err));
    if (rv == PROFD_ELIMIT || rv == PROFD_EPERM) {
        n->bad_requests += rv == PROFD_EPERM;
        PD_LOG(n->log, PD_LOG_WARN, "worker",
               "refused a registration of rank %lld of job %s (pid %lld) from uid %lld pid %lld: "
               "%s",
               (long long)h->rank, h->job, (long long)h->pid, (long long)peer->uid,
               (long long)peer->pid, err);
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    if (rv != 0) {
        n->bad_requests++;
        pd_req_reply_error(req, rv,
                           "invalid hello: job and role must be identifiers, host a host name, "
                           "rank and pid positive");
        return;
    }
    k->pipe = peer->pipe;
    k->restored = false;
    PD_LOG(n->log, PD_LOG_DEBUG, "worker", "rank %lld role %s replica %lld pid %lld registered",
           (long long)k->rank, k->role, (long long)k->replica_rank, (long long)k->pid);
    release_watch(n, k); /* a re-registration supersedes an old poll */
    pd_windows_on_register(n->win, k);
    pd_node_roster_changed(n);
    pd_node_ranks_changed(n);
    pd_node_rank_changed(n, k);

    pp_msg_t m;
    pp_msg_init(&m, PP_T_welcome);
    m.u.welcome.client = k->id;
    m.u.welcome.instance = (char *)n->instance;
    m.u.welcome.spool = (char *)n->spool;
    m.u.welcome.gen = n->gen;
    pd_node_reply_durable(n, req, &m); /* its id is kept before it hears it */
}

static void on_events(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_worker_t *)ctx)->n;
    const pp_events_t *e = &msg->u.events;
    pd_rank_t *k = client_of(n, req, e->client);
    int64_t before = k->step, now = pd_now_ms();
    int rv = pd_registry_events(k, e->ev, e->ev_n, now);
    pd_hist_rank_t *h = pd_node_hist(n, k, now);
    if (h) {
        if (e->offset_err_us > 0) { /* the worker's own estimate against our acks */
            h->offset_us = e->offset_us;
            h->offset_err_us = e->offset_err_us;
        }
        pd_history_events(n->hist, h, e->ev, e->ev_n, e->pev, e->pev_n, e->names, e->names_n, now);
        pd_history_sections(n->hist, h, e->sev, e->sev_n);
        pd_node_hist_fed(n, h);
    }
    if (e->dropped > 0) { /* saturating, within what the wire carries: a peer may say anything */
        k->dropped = k->dropped > PP_INT_MAX - e->dropped ? PP_INT_MAX : k->dropped + e->dropped;
        n->stats.dropped =
            n->stats.dropped > PP_INT_MAX - e->dropped ? PP_INT_MAX : n->stats.dropped + e->dropped;
    }
    n->stats.events += (int64_t)(e->ev_n / 3);
    if (k->step != before) {
        pd_windows_on_step(n->win, k);
    }
    if (rv != 0) {
        n->bad_requests++;
        pd_req_reply_error(req, rv, "events must be (kind 1|2, step, t_us) triples");
        return;
    }
    pd_node_reply_ack(n, req);
}

static void on_watch(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_worker_t *)ctx)->n;
    const pp_watch_t *w = &msg->u.watch;
    pd_rank_t *k = client_of(n, req, w->client);
    /* the delivery is sampled only from a worker whose poll held the
     * previous plan (pd_node_watch): another would measure its own start
     * and push every --next window seconds ahead */
    release_watch(n, k);
    int rv = pd_node_watch(n, req, w->gen, w->hold_ms, &k->gen_sample, &k->gen_acked,
                           &k->watch_deadline_ms);
    if (rv == PD_WATCH_PARKED) {
        k->watch = req;
    } else {
        reply_plan(n, k, req, rv == PD_WATCH_FULL);
    }
}

static void on_result(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_worker_t *)ctx)->n;
    char err[256];
    pd_rank_t *k = client_of(n, req, msg->u.result.client);
    int rv = pd_windows_on_result(n->win, k, &msg->u.result, err, sizeof(err));
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    pd_node_reply_ack_durable(n, req); /* the worker forgets what it reported */
}

static void on_bye(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_worker_t *)ctx)->n;
    pd_rank_t *k = client_of(n, req, msg->u.bye.client);
    PD_LOG(n->log, PD_LOG_DEBUG, "worker", "rank %lld (%s, pid %lld) unregistered",
           (long long)k->rank, k->role, (long long)k->pid);
    char job[PP_MAX_NAME + 1];
    snprintf(job, sizeof(job), "%s", k->job);
    release_watch(n, k);
    pd_windows_on_lost(n->win, k, "exited without reporting its captures");
    pd_node_hist_gone(n, k, true);
    pd_registry_remove(n->reg, msg->u.bye.client);
    pd_node_roster_changed(n);
    pd_node_ranks_changed(n);
    pd_node_job_check(n, job);
    pd_node_rank_gone(n, msg->u.bye.client);
    pp_msg_t m;
    pp_msg_init(&m, PP_T_ok);
    pd_node_reply_durable(n, req, &m);
}

static const pd_handler_t handlers[] = {
    {PP_T_hello, on_hello},   {PP_T_events, on_events}, {PP_T_watch, on_watch},
    {PP_T_result, on_result}, {PP_T_bye, on_bye},
};

static void on_pipe_gone(uint32_t pipe, void *arg)
{
    pd_node_t *n = ((pd_worker_t *)arg)->n;
    for (pd_rank_t *k = pd_registry_next(n->reg, NULL); k; k = pd_registry_next(n->reg, k)) {
        if (k->pipe == pipe && k->node_client == 0 && k->state == PD_RANK_ACTIVE) {
            lose(n, k, "closed its connection");
        }
    }
}

static void on_limited(const pd_peer_t *p, void *arg)
{
    pd_node_t *n = ((pd_worker_t *)arg)->n;
    PD_LOG(n->log, PD_LOG_WARN, "worker",
           "connection %u (pid %lld) is over the rate limit of %lld requests/s "
           "(limits.worker_requests_per_s)",
           p->pipe, (long long)p->pid, (long long)n->cfg->worker_rate);
}

int pd_worker_init(pd_worker_t **out, pd_node_t *n, char *err, size_t errlen)
{
    pt_tls_files_t tls;
    pd_rep_opts_t ro;
    pd_worker_t *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        return PROFD_ENOMEM;
    }
    w->n = n;
    pd_node_rep_opts(n, n->cfg->worker_url, &tls, &ro);
    ro.initial = 8;
    ro.max_contexts = (int)n->cfg->max_clients + 16;
    ro.rate = n->cfg->worker_rate;
    ro.pipe_gone = on_pipe_gone;
    ro.limited = on_limited;
    pd_endpoint_opts_t eo = {
        .name = "worker",
        .what = "a request of the worker endpoint",
        .accept = PD_ACCEPT(PP_ACC_WORKER),
        .handlers = handlers,
        .nhandlers = sizeof(handlers) / sizeof(handlers[0]),
        .permit = permit,
        .ctx = w,
    };
    pd_node_endpoint_opts(n, &eo);
    int rv = pd_endpoint_open(&w->ep, n->loop, &ro, &eo, err, errlen);
    if (rv != 0) {
        free(w);
        return rv;
    }
    *out = w;
    return 0;
}

void pd_worker_fini(pd_worker_t *w)
{
    if (w == NULL) {
        return;
    }
    /* parked requests are freed by the endpoint without a reply */
    pd_registry_t *reg = w->n->reg;
    for (pd_rank_t *k = pd_registry_next(reg, NULL); k; k = pd_registry_next(reg, k)) {
        k->watch = NULL;
    }
    pd_endpoint_close(w->ep);
    free(w);
}

/* A plan reply encoded once and shared by every parked watch whose plan is
 * the same (most ranks of a job get the same windows). */
#define SHARED_PLANS 8

typedef struct shared_plan {
    pp_msg_t m; /* its entries owned, the rest borrowed */
    char *buf;
    size_t len;
} shared_plan_t;

/* The encoded reply for rank k's plan: one of `sp` (added when new and
 * there is room), else encoded into *own for this reply alone. 0, or
 * PROFD_ENOMEM. */
static int shared_reply(pd_node_t *n, pd_rank_t *k, shared_plan_t *sp, size_t *nsp, char **own,
                        const char **buf, size_t *len)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_plan);
    m.u.plan.gen = n->gen;
    m.u.plan.instance = (char *)n->instance;
    if (pd_windows_plan_for(n->win, k, &m.u.plan) != 0) {
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < *nsp; i++) {
        if (pp_record_equal(&pp_desc_plan, &sp[i].m.u.plan, &m.u.plan)) {
            free(m.u.plan.entries);
            *buf = sp[i].buf;
            *len = sp[i].len;
            return 0;
        }
    }
    char *b;
    if (pp_msg_encode(&m, &b, len) != 0) {
        free(m.u.plan.entries);
        return PROFD_ENOMEM;
    }
    if (*nsp < SHARED_PLANS) {
        sp[*nsp].m = m;
        sp[*nsp].buf = b;
        sp[*nsp].len = *len;
        (*nsp)++;
    } else {
        free(m.u.plan.entries);
        *own = b;
    }
    *buf = b;
    return 0;
}

void pd_worker_broadcast(pd_worker_t *w)
{
    pd_node_t *n = w->n;
    shared_plan_t sp[SHARED_PLANS];
    size_t nsp = 0;
    for (pd_rank_t *k = pd_registry_next(n->reg, NULL); k; k = pd_registry_next(n->reg, k)) {
        if (k->watch == NULL) {
            continue;
        }
        pd_req_t *req = k->watch;
        k->watch = NULL;
        k->gen_sample = n->gen; /* its next poll measures the delivery */
        char *own = NULL;
        const char *buf;
        size_t len;
        if (shared_reply(n, k, sp, &nsp, &own, &buf, &len) != 0) {
            pd_req_reply_error(req, PROFD_ENOMEM, "out of memory building the plan");
            continue;
        }
        pd_req_reply(req, buf, len);
        free(own);
    }
    for (size_t i = 0; i < nsp; i++) {
        free(sp[i].m.u.plan.entries); /* the rest is borrowed */
        free(sp[i].buf);
    }
}

void pd_worker_tick(pd_worker_t *w, int64_t now_ms)
{
    pd_node_t *n = w->n;
    char why[96];
    pd_rank_t *next;
    for (pd_rank_t *k = pd_registry_next(n->reg, NULL); k; k = next) {
        next = pd_registry_next(n->reg, k);
        if (k->node_client) {
            continue; /* a coordinator's remote rank: its node answers for it */
        }
        if (k->watch && now_ms >= k->watch_deadline_ms) {
            release_watch(n, k); /* it polls again at once: seen then */
        } else if (k->watch) {
            /* a held long poll is a live connection (its loss is
             * on_pipe_gone): an idle rank needs no heartbeat */
            k->last_seen_ms = now_ms;
        }
        int64_t silent = now_ms - k->last_seen_ms;
        if (k->state == PD_RANK_ACTIVE && silent > n->cfg->client_timeout_ms) {
            if (k->restored) {
                snprintf(why, sizeof(why),
                         "did not come back within %lld ms of the daemon's restart",
                         (long long)silent);
            } else {
                snprintf(why, sizeof(why), "was silent for %lld ms", (long long)silent);
            }
            lose(n, k, why);
        }
        if (k->state == PD_RANK_LOST && silent > 6 * n->cfg->client_timeout_ms) {
            int64_t id = k->id;
            pd_registry_remove(n->reg, id);
            pd_node_rank_gone(n, id);
        }
    }
}

int64_t pd_worker_limited(const pd_worker_t *w)
{
    return w ? pd_endpoint_limited(w->ep) : 0;
}
