/* The worker endpoint (see worker.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "link.h"
#include "worker.h"

static void reply_plan(pd_daemon_t *d, pd_rank_t *k, pd_req_t *req, bool unchanged)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_plan);
    m.u.plan.gen = d->gen;
    m.u.plan.instance = d->instance;
    m.u.plan.unchanged = unchanged;
    if (!unchanged && pd_windows_plan_for(&d->win, k, &m.u.plan) != 0) {
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory building the plan");
        return;
    }
    pd_req_reply_msg(req, &m);
    free(m.u.plan.entries); /* the rest is borrowed */
}

static void release_watch(pd_daemon_t *d, pd_rank_t *k)
{
    if (k->watch) {
        pd_req_t *w = k->watch;
        k->watch = NULL;
        reply_plan(d, k, w, true);
    }
}

static void lose(pd_daemon_t *d, pd_rank_t *k, const char *reason)
{
    if (k->state == PD_RANK_LOST) {
        return;
    }
    k->state = PD_RANK_LOST;
    PD_LOG(&d->log, PD_LOG_INFO, "worker", "rank %lld (%s, pid %lld) %s", (long long)k->rank,
           k->role, (long long)k->pid, reason);
    release_watch(d, k);
    pd_windows_on_lost(d, k, reason);
    pd_link_roster_changed(d);
}

static pd_rank_t *client_of(pd_daemon_t *d, pd_req_t *req, int64_t id)
{
    pd_rank_t *k = pd_registry_get(&d->reg, id);
    if (k == NULL) {
        pd_req_reply_error(req, PROFD_ECLIENT,
                           "unknown client %lld (the daemon restarted or forgot it): register "
                           "again",
                           (long long)id);
        return NULL;
    }
    const pd_peer_t *peer = pd_req_peer(req);
    if (k->uid >= 0 && peer->uid != k->uid) {
        d->bad_requests++;
        PD_LOG(&d->log, PD_LOG_WARN, "worker",
               "refused a request for client %lld (uid %lld) from uid %lld pid %lld", (long long)id,
               (long long)k->uid, (long long)peer->uid, (long long)peer->pid);
        pd_req_reply_error(req, PROFD_EPERM, "client %lld was registered by another user",
                           (long long)id);
        return NULL;
    }
    k->pipe = peer->pipe;
    k->last_seen_ms = pd_now_ms();
    if (k->state == PD_RANK_LOST) {
        k->state = PD_RANK_ACTIVE;
    }
    return k;
}

static void on_hello(pd_daemon_t *d, pd_req_t *req, const pp_hello_t *h)
{
    pd_rank_t *k;
    int rv = pd_registry_add(&d->reg, h, d->node, pd_now_ms(), &k);
    if (rv == PROFD_ELIMIT) {
        pd_req_reply_error(req, rv, "registry full: %lld ranks registered (limits.max_clients)",
                           (long long)d->cfg.max_clients);
        return;
    }
    if (rv != 0) {
        d->bad_requests++;
        pd_req_reply_error(req, rv,
                           "invalid hello: job and role must be identifiers, host a host name, "
                           "rank and pid positive");
        return;
    }
    const pd_peer_t *peer = pd_req_peer(req);
    k->pipe = peer->pipe;
    k->uid = peer->via == PD_VIA_IPC ? peer->uid : -1;
    PD_LOG(&d->log, PD_LOG_DEBUG, "worker", "rank %lld role %s replica %lld pid %lld registered",
           (long long)k->rank, k->role, (long long)k->replica_rank, (long long)k->pid);
    release_watch(d, k); /* a re-registration supersedes an old poll */
    pd_windows_on_register(d, k);
    pd_link_roster_changed(d);
    pd_daemon_tick_update(d);

    pp_msg_t m;
    pp_msg_init(&m, PP_T_welcome);
    m.u.welcome.client = k->id;
    m.u.welcome.instance = d->instance;
    m.u.welcome.spool = d->spool;
    m.u.welcome.gen = d->gen;
    pd_req_reply_msg(req, &m);
}

static void on_events(pd_daemon_t *d, pd_req_t *req, const pp_events_t *e)
{
    pd_rank_t *k = client_of(d, req, e->client);
    if (k == NULL) {
        return;
    }
    int64_t before = k->step;
    int rv = pd_registry_events(k, e->ev, e->ev_n, pd_now_ms());
    k->dropped += e->dropped > 0 ? e->dropped : 0;
    if (k->step != before) {
        pd_windows_on_step(d, k);
    }
    if (rv != 0) {
        d->bad_requests++;
        pd_req_reply_error(req, rv, "events must be (kind 1|2, step, t_us) triples");
        return;
    }
    pd_daemon_reply_ack(d, req);
}

static void on_watch(pd_daemon_t *d, pd_req_t *req, const pp_watch_t *w)
{
    pd_rank_t *k = client_of(d, req, w->client);
    if (k == NULL) {
        return;
    }
    if (w->gen == d->gen && k->gen_acked != d->gen) {
        pd_daemon_latency_sample(d, pd_now_us() - d->gen_published_us);
    }
    k->gen_acked = w->gen;
    release_watch(d, k);
    if (w->gen != d->gen) {
        reply_plan(d, k, req, false);
        return;
    }
    int64_t hold =
        w->hold_ms > 0 && w->hold_ms < d->cfg.watch_hold_ms ? w->hold_ms : d->cfg.watch_hold_ms;
    if (!pd_req_park(req)) {
        reply_plan(d, k, req, true); /* too many parked: the worker asks again */
        return;
    }
    k->watch = req;
    k->watch_deadline_ms = pd_now_ms() + hold;
}

static void on_result(pd_daemon_t *d, pd_req_t *req, pp_result_t *r)
{
    char err[256];
    pd_rank_t *k = client_of(d, req, r->client);
    if (k == NULL) {
        return;
    }
    int rv = pd_windows_on_result(d, k, r, err, sizeof(err));
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    pd_daemon_reply_ack(d, req);
}

static void on_bye(pd_daemon_t *d, pd_req_t *req, const pp_bye_t *b)
{
    pd_rank_t *k = client_of(d, req, b->client);
    if (k == NULL) {
        return;
    }
    PD_LOG(&d->log, PD_LOG_DEBUG, "worker", "rank %lld (%s, pid %lld) unregistered",
           (long long)k->rank, k->role, (long long)k->pid);
    release_watch(d, k);
    pd_windows_on_lost(d, k, "exited without reporting its captures");
    pd_registry_remove(&d->reg, b->client);
    pd_link_roster_changed(d);
    pd_daemon_tick_update(d);
    pp_msg_t m;
    pp_msg_init(&m, PP_T_ok);
    pd_req_reply_msg(req, &m);
}

static void on_request(pd_req_t *req, void *arg)
{
    pd_daemon_t *d = arg;
    pp_msg_t m;
    size_t len;
    const void *body = pd_req_body(req, &len);
    if (pd_daemon_decode(d, req, "worker", body, len, &m) != 0) {
        return;
    }
    switch (m.type) {
    case PP_T_hello:
        on_hello(d, req, &m.u.hello);
        break;
    case PP_T_events:
        on_events(d, req, &m.u.events);
        break;
    case PP_T_watch:
        on_watch(d, req, &m.u.watch);
        break;
    case PP_T_result:
        on_result(d, req, &m.u.result);
        break;
    case PP_T_bye:
        on_bye(d, req, &m.u.bye);
        break;
    default:
        d->bad_requests++;
        pd_req_reply_error(req, PROFD_ETYPE, "'%s' is not a request of the worker endpoint",
                           pp_type_name(m.type));
        break;
    }
    pp_msg_free(&m);
}

static void on_pipe_gone(uint32_t pipe, void *arg)
{
    pd_daemon_t *d = arg;
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = pd_registry_next(&d->reg, k)) {
        if (k->pipe == pipe && k->node_client == 0 && k->state == PD_RANK_ACTIVE) {
            lose(d, k, "closed its connection");
        }
    }
}

static void on_limited(const pd_peer_t *p, void *arg)
{
    pd_daemon_t *d = arg;
    PD_LOG(&d->log, PD_LOG_WARN, "worker",
           "connection %u (pid %lld) is over the rate limit of %lld requests/s "
           "(limits.worker_requests_per_s)",
           p->pipe, (long long)p->pid, (long long)d->cfg.worker_rate);
}

int pd_worker_init(pd_daemon_t *d, char *err, size_t errlen)
{
    pt_tls_files_t tls = {d->cfg.tls_ca_file, d->cfg.tls_cert_file, d->cfg.tls_key_file, NULL};
    pd_rep_opts_t o = {
        .url = d->cfg.worker_url,
        .max_msg = (size_t)d->cfg.max_msg_bytes,
        .socket_mode = (int)d->cfg.socket_mode,
        .chgrp = d->chgrp,
        .socket_gid = d->socket_gid,
        .initial = 8,
        .max_contexts = (int)d->cfg.max_clients + 16,
        .rate = d->cfg.worker_rate,
        .tls = &tls,
        .handler = on_request,
        .pipe_gone = on_pipe_gone,
        .limited = on_limited,
        .arg = d,
    };
    return pd_rep_open(&d->worker_ep, &d->loop, &o, err, errlen);
}

void pd_worker_fini(pd_daemon_t *d)
{
    /* parked requests are freed by pd_rep_close without a reply */
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = pd_registry_next(&d->reg, k)) {
        k->watch = NULL;
    }
    pd_rep_close(d->worker_ep);
    d->worker_ep = NULL;
}

void pd_worker_broadcast(pd_daemon_t *d)
{
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = pd_registry_next(&d->reg, k)) {
        if (k->watch) {
            pd_req_t *w = k->watch;
            k->watch = NULL;
            reply_plan(d, k, w, false);
        }
    }
}

void pd_worker_tick(pd_daemon_t *d, int64_t now_ms)
{
    char why[96];
    pd_rank_t *next;
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = next) {
        next = pd_registry_next(&d->reg, k);
        if (k->node_client) {
            continue; /* a coordinator's remote rank: its node answers for it */
        }
        int64_t silent = now_ms - k->last_seen_ms;
        if (k->watch && now_ms >= k->watch_deadline_ms) {
            release_watch(d, k);
        }
        if (k->state == PD_RANK_ACTIVE && silent > d->cfg.client_timeout_ms) {
            snprintf(why, sizeof(why), "was silent for %lld ms", (long long)silent);
            lose(d, k, why);
        }
        if (k->state == PD_RANK_LOST && silent > 6 * d->cfg.client_timeout_ms) {
            pd_registry_remove(&d->reg, k->id);
        }
    }
}
