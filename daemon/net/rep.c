// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Reply endpoint with a growable context pool (see rep.h). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "clock.h"
#include "rep.h"
#include "text.h"

/* How long a stop waits for nng_close (see close_bounded). */
#define PD_REP_CLOSE_MS 3000

enum { R_RECV, R_LOOP, R_PARKED, R_SEND };

struct pd_req {
    pd_rep_t *rep;
    nng_ctx ctx;
    nng_aio *aio;
    int state;
    nng_msg *msg;
    pd_peer_t peer;
    pd_task_t task;
    bool answered; /* loop thread: replied or parked during the handler */
    bool parked;   /* loop thread: parked and not replied yet */
    pd_req_t *next_all;
};

/* Rate limit: a token bucket per connection (pipe). A bucket that has
 * refilled is the same as none, so full ones are swept away instead of
 * tracking connections. */
typedef struct bucket {
    uint32_t pipe;
    bool warned;
    double tokens;
    int64_t last_us;
    struct bucket *next;
} bucket_t;

typedef struct buckets {
    bucket_t **tab;
    size_t ntab; /* power of two */
    size_t count;
    size_t sweep_at; /* sweep the full ones when count reaches it */
} buckets_t;

/* Open connections, by pipe id, and how many each peer holds (below
 * CONN_TAB chains each; nng's pipe callbacks, under the endpoint's mutex). */
#define CONN_TAB 256

typedef struct conn {
    uint32_t pipe;
    uint64_t peer;
    struct conn *next;
} conn_t;

typedef struct peer_count {
    uint64_t peer;
    int n;
    struct peer_count *next;
} peer_count_t;

struct pd_rep {
    pd_loop_t *loop;
    pthread_mutex_t mu; /* the connection tables */
    conn_t *conns[CONN_TAB];
    peer_count_t *peers[CONN_TAB];
    int nconns;
    _Atomic int64_t refused;
    nng_socket sock;
    bool sock_open;
    pd_rep_opts_t o;
    pd_req_t *all;
    void *tls;
    pd_via_t via;
    int ncontexts;
    int nparked;
    int64_t requests;
    int64_t limited;
    buckets_t buckets;
    _Atomic bool closing;
};

typedef struct pipe_ev {
    pd_task_t task;
    pd_rep_t *rep;
    uint32_t pipe;
} pipe_ev_t;

static void req_run(pd_task_t *t);

static void req_cb(void *arg)
{
    pd_req_t *r = arg;
    pd_rep_t *rep = r->rep;
    int rv = nng_aio_result(r->aio);

    if (atomic_load(&rep->closing)) {
        return; /* pd_rep_close() cleans up after nng_aio_stop() */
    }
    if (r->state == R_SEND) {
        if (rv != 0) {
            nng_msg_free(nng_aio_get_msg(r->aio));
            nng_aio_set_msg(r->aio, NULL);
        }
        r->state = R_RECV;
        nng_ctx_recv(r->ctx, r->aio);
        return;
    }
    /* R_RECV */
    if (rv != 0) {
        if (rv != NNG_ECLOSED && rv != NNG_ECANCELED) {
            nng_ctx_recv(r->ctx, r->aio);
        }
        return;
    }
    r->msg = nng_aio_get_msg(r->aio);
    nng_aio_set_msg(r->aio, NULL);
    nng_pipe p = nng_msg_get_pipe(r->msg);
    uint64_t v;
    r->peer.via = rep->via;
    r->peer.pipe = (uint32_t)nng_pipe_id(p);
    r->peer.uid = nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &v) == 0 ? (int64_t)v : -1;
    r->peer.gid = nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_GID, &v) == 0 ? (int64_t)v : -1;
    r->peer.pid = nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &v) == 0 ? (int64_t)v : -1;
    bool verified = false;
    r->peer.tls_verified =
        rep->tls != NULL && nng_pipe_get_bool(p, NNG_OPT_TLS_VERIFIED, &verified) == 0 && verified;
    r->peer.cn[0] = '\0';
#ifdef NNG_OPT_TLS_PEER_CN
    char *cn = NULL;
    if (r->peer.tls_verified && nng_pipe_get_string(p, NNG_OPT_TLS_PEER_CN, &cn) == 0 && cn) {
        if (strlen(cn) < sizeof(r->peer.cn)) { /* a longer name matches no job */
            memcpy(r->peer.cn, cn, strlen(cn) + 1);
        }
        nng_strfree(cn);
    }
#endif
    r->state = R_LOOP;
    pd_loop_post(rep->loop, &r->task);
}

static int add_context(pd_rep_t *rep)
{
    pd_req_t *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return PROFD_ENOMEM;
    }
    r->rep = rep;
    r->task.run = req_run;
    r->task.owner = rep;
    if (nng_ctx_open(&r->ctx, rep->sock) != 0) {
        free(r);
        return PROFD_ENOMEM;
    }
    if (nng_aio_alloc(&r->aio, req_cb, r) != 0) {
        nng_ctx_close(r->ctx);
        free(r);
        return PROFD_ENOMEM;
    }
    r->next_all = rep->all;
    rep->all = r;
    rep->ncontexts++;
    r->state = R_RECV;
    nng_ctx_recv(r->ctx, r->aio);
    return 0;
}

/* ---- rate limit ---- */

static size_t bucket_slot(const buckets_t *b, uint32_t pipe)
{
    return (size_t)((pipe * 2654435761u) & (uint32_t)(b->ntab - 1));
}

/* Refill a bucket to now; true when it is full again (forgettable). */
static bool bucket_refill(bucket_t *k, double rate, int64_t now)
{
    k->tokens += (double)(now - k->last_us) * rate / 1e6;
    k->last_us = now;
    if (k->tokens >= rate) {
        k->tokens = rate;
        return true;
    }
    return false;
}

static void buckets_sweep(buckets_t *b, double rate, int64_t now)
{
    for (size_t i = 0; i < b->ntab; i++) {
        for (bucket_t **pp = &b->tab[i]; *pp;) {
            bucket_t *k = *pp;
            if (bucket_refill(k, rate, now)) {
                *pp = k->next;
                free(k);
                b->count--;
            } else {
                pp = &k->next;
            }
        }
    }
    b->sweep_at = b->count * 2 > 64 ? b->count * 2 : 64;
}

static bool buckets_grow(buckets_t *b)
{
    size_t n = b->ntab ? b->ntab * 2 : 64;
    bucket_t **tab = calloc(n, sizeof(*tab));
    if (tab == NULL) {
        return false;
    }
    buckets_t nb = {tab, n, b->count, b->sweep_at};
    for (size_t i = 0; i < b->ntab; i++) {
        while (b->tab[i]) {
            bucket_t *k = b->tab[i];
            b->tab[i] = k->next;
            size_t s = bucket_slot(&nb, k->pipe);
            k->next = tab[s];
            tab[s] = k;
        }
    }
    free(b->tab);
    *b = nb;
    return true;
}

static void buckets_free(buckets_t *b)
{
    for (size_t i = 0; i < b->ntab; i++) {
        while (b->tab[i]) {
            bucket_t *k = b->tab[i];
            b->tab[i] = k->next;
            free(k);
        }
    }
    free(b->tab);
    memset(b, 0, sizeof(*b));
}

/* Take one token from the peer's bucket: false when there is none. Out of
 * memory lets the request through (the limit is protection, not policy). */
static bool rate_take(pd_rep_t *rep, const pd_peer_t *peer)
{
    buckets_t *b = &rep->buckets;
    double rate = (double)rep->o.rate;
    int64_t now = pd_now_us();
    if (b->count >= b->sweep_at) {
        buckets_sweep(b, rate, now);
    }
    if (b->count >= b->ntab && !buckets_grow(b) && b->ntab == 0) {
        return true;
    }
    bucket_t *k = b->tab[bucket_slot(b, peer->pipe)];
    while (k && k->pipe != peer->pipe) {
        k = k->next;
    }
    if (k == NULL) {
        if ((k = calloc(1, sizeof(*k))) == NULL) {
            return true;
        }
        size_t s = bucket_slot(b, peer->pipe);
        k->pipe = peer->pipe;
        k->tokens = rate;
        k->last_us = now;
        k->next = b->tab[s];
        b->tab[s] = k;
        b->count++;
    } else if (bucket_refill(k, rate, now)) {
        k->warned = false;
    }
    if (k->tokens >= 1.0) {
        k->tokens -= 1.0;
        return true;
    }
    if (!k->warned && rep->o.limited) {
        rep->o.limited(peer, rep->o.arg);
    }
    k->warned = true;
    return false;
}

static void req_run(pd_task_t *t)
{
    pd_req_t *r = (pd_req_t *)((char *)t - offsetof(pd_req_t, task));
    pd_rep_t *rep = r->rep;
    rep->requests++;
    r->answered = false;
    if (rep->o.rate > 0 && !rate_take(rep, &r->peer)) {
        rep->limited++;
        pd_req_reply_error(r, PROFD_ELIMIT, "rate limit: %lld requests/s", (long long)rep->o.rate);
        return;
    }
    rep->o.handler(r, rep->o.handler_arg);
    /* r->state cannot be used here: once replied, the context may already
     * hold the next request */
    if (!r->answered) {
        pd_req_reply_error(r, PROFD_EINTERNAL, "request was not answered");
    } else if (r->parked && r->msg) {
        /* handled: a parked request waits without its body (up to
         * max_msg + PD_REP_SLACK each, max_contexts of them); the reply
         * gets a message of its own */
        nng_msg_free(r->msg);
        r->msg = NULL;
    }
}

static void pipe_run(pd_task_t *t)
{
    pipe_ev_t *ev = (pipe_ev_t *)t;
    if (ev->rep->o.pipe_gone) {
        ev->rep->o.pipe_gone(ev->pipe, ev->rep->o.arg);
    }
    free(ev);
}

static void pipe_drop(pd_task_t *t)
{
    free(t);
}

/* Who a connection comes from: a uid over ipc://, an address over TCP (an
 * IPv6 address hashed), else one key for all. */
static uint64_t peer_key(nng_pipe p)
{
    uint64_t v;
    nng_sockaddr sa;
    if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &v) == 0) {
        return (1ull << 62) | (v & 0xffffffffu);
    }
    if (nng_pipe_get_addr(p, NNG_OPT_REMADDR, &sa) == 0) {
        if (sa.s_family == NNG_AF_INET) {
            return (2ull << 62) | sa.s_in.sa_addr;
        }
        if (sa.s_family == NNG_AF_INET6) {
            uint64_t h = 1469598103934665603ull;
            for (size_t i = 0; i < sizeof(sa.s_in6.sa_addr); i++) {
                h = (h ^ sa.s_in6.sa_addr[i]) * 1099511628211ull;
            }
            return (3ull << 62) | (h >> 2);
        }
    }
    return 0;
}

static size_t slot_of(uint64_t k)
{
    return (size_t)((k * 11400714819323198485ull) >> 56) & (CONN_TAB - 1);
}

static int64_t reserve_of(const pd_rep_t *rep)
{
    return rep->o.max_msg ? (int64_t)(rep->o.max_msg + PD_REP_SLACK) : 0;
}

/* A connection arrives: admitted (counted), or closed at once. */
static void conn_add(pd_rep_t *rep, nng_pipe p)
{
    uint64_t key = peer_key(p);
    uint32_t id = (uint32_t)nng_pipe_id(p);
    int64_t need = reserve_of(rep);
    bool ok = false;
    pthread_mutex_lock(&rep->mu);
    peer_count_t *pc = rep->peers[slot_of(key)];
    while (pc && pc->peer != key) {
        pc = pc->next;
    }
    conn_t *c = NULL;
    if ((rep->o.max_conns <= 0 || rep->nconns < rep->o.max_conns) &&
        (rep->o.max_conns_per_peer <= 0 || pc == NULL || pc->n < rep->o.max_conns_per_peer) &&
        (c = calloc(1, sizeof(*c))) != NULL && (pc || (pc = calloc(1, sizeof(*pc))) != NULL)) {
        pd_rep_budget_t *b = rep->o.budget;
        if (b == NULL || b->cap <= 0 || atomic_fetch_add(&b->used, need) + need <= b->cap) {
            ok = true;
        } else {
            atomic_fetch_sub(&b->used, need);
        }
    }
    if (ok) {
        if (pc->n == 0) {
            pc->peer = key;
            pc->next = rep->peers[slot_of(key)];
            rep->peers[slot_of(key)] = pc;
        }
        pc->n++;
        c->pipe = id;
        c->peer = key;
        c->next = rep->conns[slot_of(id)];
        rep->conns[slot_of(id)] = c;
        rep->nconns++;
    } else {
        free(c);
        if (pc && pc->n == 0) {
            free(pc);
        }
    }
    pthread_mutex_unlock(&rep->mu);
    if (!ok) {
        atomic_fetch_add(&rep->refused, 1);
        nng_pipe_close(p);
    }
}

/* One counted connection gone (the tables' mutex held): false when the pipe
 * was never admitted. */
static bool conn_drop_locked(pd_rep_t *rep, uint32_t id)
{
    conn_t **pp = &rep->conns[slot_of(id)];
    while (*pp && (*pp)->pipe != id) {
        pp = &(*pp)->next;
    }
    conn_t *c = *pp;
    if (c == NULL) {
        return false;
    }
    *pp = c->next;
    for (peer_count_t **qq = &rep->peers[slot_of(c->peer)]; *qq; qq = &(*qq)->next) {
        if ((*qq)->peer == c->peer) {
            if (--(*qq)->n == 0) {
                peer_count_t *q = *qq;
                *qq = q->next;
                free(q);
            }
            break;
        }
    }
    if (rep->o.budget) {
        atomic_fetch_sub(&rep->o.budget->used, reserve_of(rep));
    }
    rep->nconns--;
    free(c);
    return true;
}

static void pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    pd_rep_t *rep = arg;
    if (atomic_load(&rep->closing)) {
        return; /* rep_free releases what is left */
    }
    if (ev == NNG_PIPE_EV_ADD_PRE) {
        conn_add(rep, p);
        return;
    }
    pthread_mutex_lock(&rep->mu);
    bool was = conn_drop_locked(rep, (uint32_t)nng_pipe_id(p));
    pthread_mutex_unlock(&rep->mu);
    if (!was || rep->o.pipe_gone == NULL) {
        return;
    }
    pipe_ev_t *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        return; /* the client times out instead */
    }
    e->task.run = pipe_run;
    e->task.drop = pipe_drop;
    e->task.owner = rep;
    e->rep = rep;
    e->pipe = (uint32_t)nng_pipe_id(p);
    pd_loop_post(rep->loop, &e->task);
}

int pd_rep_open(pd_rep_t **out, pd_loop_t *loop, const pd_rep_opts_t *opts, char *err,
                size_t errlen)
{
    pd_rep_t *rep = calloc(1, sizeof(*rep));
    nng_listener l;
    int rv;

    if (rep == NULL) {
        return PROFD_ENOMEM;
    }
    rep->loop = loop;
    pthread_mutex_init(&rep->mu, NULL);
    rep->o = *opts;
    rep->o.url = NULL;
    if (rep->o.initial < 1) {
        rep->o.initial = 4;
    }
    if (rep->o.max_contexts < rep->o.initial) {
        rep->o.max_contexts = rep->o.initial;
    }
    if (strncmp(opts->url, "ipc://", 6) == 0) {
        rep->via = PD_VIA_IPC;
    } else if (strncmp(opts->url, "tls+tcp://", 10) == 0) {
        rep->via = PD_VIA_TLS;
    } else if (strncmp(opts->url, "tcp://", 6) == 0) {
        rep->via = PD_VIA_TCP;
    } else {
        rep->via = PD_VIA_OTHER;
    }
    if ((rv = nng_rep0_open(&rep->sock)) != 0) {
        snprintf(err, errlen, "cannot open a socket: %s", nng_strerror(rv));
        pthread_mutex_destroy(&rep->mu);
        free(rep);
        return PROFD_ENOMEM;
    }
    rep->sock_open = true;
    /* nng drops the connection of a message over this bound as its length
     * arrives, before reading it; below it the dispatcher answers ETOOBIG */
    nng_socket_set_size(rep->sock, NNG_OPT_RECVMAXSZ,
                        opts->max_msg ? opts->max_msg + PD_REP_SLACK : 0);
    nng_pipe_notify(rep->sock, NNG_PIPE_EV_ADD_PRE, pipe_cb, rep);
    nng_pipe_notify(rep->sock, NNG_PIPE_EV_REM_POST, pipe_cb, rep);
    if ((rv = nng_listener_create(&l, rep->sock, opts->url)) != 0) {
        snprintf(err, errlen, "invalid address %s: %s", opts->url, nng_strerror(rv));
        pd_rep_close(rep);
        return PROFD_EINVAL;
    }
    if (opts->socket_mode && strncmp(opts->url, "ipc://", 6) == 0) {
        nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, opts->socket_mode);
    }
    if (pt_tls_url(opts->url)) {
        char why[384] = "no TLS files given";
        if (opts->tls == NULL ||
            (rep->tls = pt_tls_config(opts->tls, true, why, sizeof(why))) == NULL) {
            snprintf(err, errlen, "%s needs tls.ca_file, tls.cert_file and tls.key_file: %s",
                     opts->url, why);
            pd_rep_close(rep);
            return PROFD_EINVAL;
        }
        nng_listener_set_ptr(l, NNG_OPT_TLS_CONFIG, rep->tls);
    }
    if ((rv = nng_listener_start(l, 0)) != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", opts->url, nng_strerror(rv));
        pd_rep_close(rep);
        return PROFD_EIO;
    }
    /* the socket exists now, with socket_mode: hand it to its group */
    if (opts->chgrp && strncmp(opts->url, "ipc://", 6) == 0 &&
        chown(opts->url + 6, (uid_t)-1, (gid_t)opts->socket_gid) != 0) {
        snprintf(err, errlen, "cannot give %s to group %lld: %s%s", opts->url + 6,
                 (long long)opts->socket_gid, strerror(errno),
                 errno == EPERM ? " (the daemon's user must be a member of the group)" : "");
        pd_rep_close(rep);
        return PROFD_EIO;
    }
    for (int i = 0; i < rep->o.initial; i++) {
        if (add_context(rep) != 0) {
            snprintf(err, errlen, "out of memory");
            pd_rep_close(rep);
            return PROFD_ENOMEM;
        }
    }
    *out = rep;
    return 0;
}

/* nng_close() on a thread of its own, waited for at most `ms`: libnng
 * 1.5.2 can hang in it for ever. Its ipc transport resubmits a partly sent
 * message on an aio the pipe's close already stopped (ipc_pipe_send_cb ->
 * nng_stream_send -> nni_aio_begin refuses it without completing it), so
 * the REP protocol's pipe stop waits for a completion that never comes
 * (seen about once in 40 stops with workers connected). True when the
 * socket closed; false when it was left to its thread, with `keep` (what
 * nng's threads may still touch) reachable from that thread. */
static void rep_free(pd_rep_t *rep);

typedef struct closer {
    nng_socket sock;
    pd_rep_t *keep;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, abandoned;
} closer_t;

static void *closer_run(void *arg)
{
    closer_t *c = arg;
    nng_close(c->sock);
    pthread_mutex_lock(&c->mu);
    c->done = true;
    bool abandoned = c->abandoned;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (abandoned) { /* nobody waits: the close came back late after all */
        rep_free(c->keep);
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
        free(c);
    }
    return NULL;
}

static bool close_bounded(nng_socket sock, pd_rep_t *keep, int ms)
{
    pthread_t t;
    struct timespec until;
    closer_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        nng_close(sock);
        return true;
    }
    c->sock = sock;
    c->keep = keep;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (pthread_create(&t, NULL, closer_run, c) != 0) {
        nng_close(sock);
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
        free(c);
        return true;
    }
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&c->mu);
    while (!c->done && pthread_cond_timedwait(&c->cv, &c->mu, &until) == 0) {
    }
    bool done = c->done;
    c->abandoned = !done;
    pthread_mutex_unlock(&c->mu);
    if (!done) {
        pthread_detach(t);
        return false;
    }
    pthread_join(t, NULL);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
    return true;
}

bool pd_rep_close(pd_rep_t *rep)
{
    if (rep == NULL) {
        return true;
    }
    atomic_store(&rep->closing, true);
    if (rep->sock_open && !close_bounded(rep->sock, rep, PD_REP_CLOSE_MS)) {
        /* nng's threads may still reach the contexts: the endpoint is left
         * to the closing thread, which frees it if the close ever returns */
        pd_loop_cancel_owner(rep->loop, rep);
        return false;
    }
    for (pd_req_t *r = rep->all; r; r = r->next_all) {
        nng_aio_stop(r->aio);
    }
    pd_loop_cancel_owner(rep->loop, rep);
    rep_free(rep);
    return true;
}

/* Once the socket is closed: every context, message and the endpoint. */
static void rep_free(pd_rep_t *rep)
{
    while (rep->all) {
        pd_req_t *r = rep->all;
        rep->all = r->next_all;
        if ((r->state == R_SEND && nng_aio_result(r->aio) != 0) ||
            (r->state == R_RECV && nng_aio_result(r->aio) == 0)) {
            /* not sent; or received as the socket closed, left by req_cb */
            nng_msg_free(nng_aio_get_msg(r->aio));
        }
        if (r->msg) {
            nng_msg_free(r->msg);
        }
        nng_aio_free(r->aio);
        free(r);
    }
    pt_tls_config_free(rep->tls);
    buckets_free(&rep->buckets);
    for (size_t i = 0; i < CONN_TAB; i++) { /* the budget is shared: given back */
        while (rep->conns[i]) {
            conn_drop_locked(rep, rep->conns[i]->pipe);
        }
    }
    pthread_mutex_destroy(&rep->mu);
    free(rep);
}

bool pd_rep_peer_cn_known(void)
{
#ifdef NNG_OPT_TLS_PEER_CN
    return true;
#else
    return false;
#endif
}

const void *pd_req_body(const pd_req_t *req, size_t *len)
{
    if (req->msg == NULL) { /* parked, its handler returned */
        *len = 0;
        return NULL;
    }
    *len = nng_msg_len(req->msg);
    return nng_msg_body(req->msg);
}

const pd_peer_t *pd_req_peer(const pd_req_t *req)
{
    return &req->peer;
}

void pd_req_reply(pd_req_t *r, const char *buf, size_t len)
{
    pd_rep_t *rep = r->rep;
    nng_msg *m = r->msg;
    r->msg = NULL;
    r->answered = true;
    r->parked = false;
    if (r->state == R_PARKED) {
        rep->nparked--;
    }
    int rv;
    if (m != NULL) { /* the request's message, reused */
        nng_msg_header_clear(m);
        nng_msg_clear(m);
        rv = nng_msg_append(m, buf, len);
    } else if ((rv = nng_msg_alloc(&m, len)) == 0 && len > 0) {
        memcpy(nng_msg_body(m), buf, len);
    }
    if (rv != 0) {
        if (m != NULL) {
            nng_msg_free(m);
        }
        r->state = R_RECV; /* no reply: the requester times out */
        nng_ctx_recv(r->ctx, r->aio);
        return;
    }
    r->state = R_SEND;
    nng_aio_set_msg(r->aio, m);
    nng_ctx_send(r->ctx, r->aio);
}

void pd_req_reply_msg(pd_req_t *r, const pp_msg_t *m)
{
    char *buf;
    size_t len;
    if (pp_msg_encode(m, &buf, &len) != 0) {
        pd_req_reply_error(r, PROFD_ENOMEM, "cannot encode the reply");
        return;
    }
    pd_req_reply(r, buf, len);
    free(buf);
}

void pd_req_reply_error(pd_req_t *r, int code, const char *fmt, ...)
{
    char raw[512], msg[512];
    char *buf;
    size_t len;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    pd_text_utf8(msg, sizeof(msg), raw); /* a peer's bytes echoed: never invalid UTF-8 */
    if (pp_error_encode(code, msg, &buf, &len) != 0) {
        static const char oom[] = "{\"v\":1,\"type\":\"error\",\"code\":-2,\"name\":\"ENOMEM\"}";
        pd_req_reply(r, oom, sizeof(oom) - 1);
        return;
    }
    pd_req_reply(r, buf, len);
    free(buf);
}

bool pd_req_park(pd_req_t *r)
{
    pd_rep_t *rep = r->rep;
    if (r->state == R_PARKED) {
        return true; /* parked already (a chunk whose ack then waits for a save) */
    }
    /* keep at least two contexts receiving besides the parked ones */
    while (rep->ncontexts - (rep->nparked + 1) < 2 && rep->ncontexts < rep->o.max_contexts) {
        if (add_context(rep) != 0) {
            break;
        }
    }
    if (rep->ncontexts - (rep->nparked + 1) < 1) {
        return false;
    }
    rep->nparked++;
    r->state = R_PARKED;
    r->parked = true;
    r->answered = true;
    return true;
}

void pd_rep_stats(const pd_rep_t *rep, pd_rep_stats_t *out)
{
    out->requests = rep->requests;
    out->contexts = rep->ncontexts;
    out->parked = rep->nparked;
    out->limited = rep->limited;
    pthread_mutex_lock((pthread_mutex_t *)&rep->mu);
    out->conns = rep->nconns;
    pthread_mutex_unlock((pthread_mutex_t *)&rep->mu);
    out->refused = atomic_load(&rep->refused);
}
