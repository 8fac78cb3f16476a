// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * libprofd background thread: registers with the node daemon, keeps a plan
 * long-poll open, and has flush.c send the step events and deliver the
 * capture results (requests through rpc.c).
 *
 * One REQ socket with two contexts: `rpc` for synchronous request/reply
 * (hello, events, result, bye) and `watch` for the long poll, driven by an
 * aio callback that only flips state under the mutex and signals. Every wait
 * is bounded; a missing daemon costs a timed-out request and a backoff, never
 * anything on the training thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "io.h"
#include "pu_nng.h"
#include "tlsconf.h"

#define RPC_TIMEOUT_MS     2000
#define WATCH_HOLD_MS      120000 /* the daemon may hold it for less (limits.watch_hold_ms) */
#define BACKOFF_MIN_MS     50
#define BACKOFF_MAX_MS     2000
#define UNANSWERED_REDIAL  2 /* hellos in a row with no answer: a new dialer (see redial) */
#define IDLE_MAX_MS        1000
#define IDLE_DEEP_AFTER_MS 2000  /* without a step event, then sleep until the next one */
#define IDLE_DEEP_MS       10000 /* the longest sleep of an idle thread (woken by news) */
#define RECHECK_MS         20    /* a deep sleep looks at the ring once more then */

enum { W_IDLE, W_SENDING, W_RECVING, W_DONE };

/* ---- registration ---- */

static int dialer_start(profd_client_t *c, const char *url, nng_dialer *d);

/* Connections up, from nng's pipe events (ADD_PRE and REM_POST come in
 * pairs) into io->npipes: a counter of the socket's own, freed after the
 * socket's close, which may end after the client is gone (sock_close). */
static void pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    (void)p;
    atomic_fetch_add((_Atomic int *)arg, ev == NNG_PIPE_EV_ADD_PRE ? 1 : -1);
}

/* A new dialer in place of the old one, which goes only once the new one
 * exists. With no URL given, the daemon may have started after us, or
 * moved between /run/profd and /tmp/profd-<uid>: the rule is asked again
 * and the new dialer goes there. Else `fresh`: the same URL, anew (hellos
 * went unanswered with no connection up: a dialer of libnng 1.5.2 whose
 * reconnection timer was lost, see rpc_wait, never dials again; a new one
 * dials at once). A connection that is up is never closed for it. */
static void redial(profd_client_t *c, bool fresh)
{
    cl_io_t *io = &c->io;
    char url[sizeof(c->url)];
    nng_dialer d;
    int rv;

    snprintf(url, sizeof(url), "%s", c->url);
    if (c->url_search) {
        cl_rundir_url(&c->rundir, "worker.sock", url, sizeof(url));
    }
    bool moved = strcmp(url, c->url) != 0;
    if (!moved && !fresh) {
        return;
    }
    if ((rv = dialer_start(c, url, &d)) != 0) {
        cl_log(c, PROFD_LOG_DEBUG, "profd: cannot dial %s: %s", url, nng_strerror(rv));
        return;
    }
    nng_dialer_close(io->dialer);
    io->dialer = d;
    if (moved) {
        cl_log(c, PROFD_LOG_INFO, "profd: looking for the daemon at %s instead of %s", url, c->url);
        snprintf(c->url, sizeof(c->url), "%s", url);
    } else {
        cl_log(c, PROFD_LOG_DEBUG, "profd: no answer from %s: dialing it anew", url);
    }
}

static int do_hello(profd_client_t *c)
{
    cl_io_t *io = &c->io;
    const ce_identity_t *id = &c->eng.id; /* immutable after open */
    pp_msg_t req, rep;
    pp_role_rank_t roles[PP_MAX_ROLES];
    ce_role_t copy[PP_MAX_ROLES];
    int rv, n;

    uint64_t gen = atomic_load(&c->roles_gen);
    pthread_mutex_lock(&c->roles_mu);
    n = c->nroles;
    memcpy(copy, c->roles, sizeof(copy));
    pthread_mutex_unlock(&c->roles_mu);
    pp_msg_init(&req, PP_T_hello);
    for (int i = 1; i < n; i++) { /* roles[0] is the primary role */
        pp_record_init(&pp_desc_role_rank, &roles[i - 1]);
        roles[i - 1].role = copy[i].name;
        roles[i - 1].rank = copy[i].rank;
    }
    req.u.hello.roles = n > 1 ? roles : NULL;
    req.u.hello.roles_n = n > 1 ? (size_t)(n - 1) : 0;
    req.u.hello.job = (char *)id->job;
    req.u.hello.role = (char *)id->role;
    req.u.hello.rank = id->rank;
    req.u.hello.local_rank = c->local_rank;
    req.u.hello.world_size = c->world_size;
    req.u.hello.replica_rank = id->replica_rank;
    req.u.hello.host = (char *)id->host;
    req.u.hello.pid = id->pid;
    req.u.hello.version = PROFD_VERSION_STRING;
    rv = cl_rpc(c, &req, &rep, RPC_TIMEOUT_MS); /* req strings are borrowed */
    if (rv != 0) {
        return rv;
    }
    if (rep.type != PP_T_welcome) {
        pp_msg_free(&rep);
        return PROFD_EPROTO;
    }
    if (io->client_id != 0 && !io->registered) {
        atomic_fetch_add(&c->st_reconnects, 1);
    }
    io->client_id = rep.u.welcome.client;
    snprintf(io->instance, sizeof(io->instance), "%s", rep.u.welcome.instance);
    snprintf(io->spool, sizeof(io->spool), "%s", rep.u.welcome.spool);
    io->gen = -1; /* whatever the daemon has is news */
    io->registered = true;
    io->roles_sent = gen;
    atomic_store(&c->st_connected, 1);
    atomic_store(&c->st_client_id, io->client_id);
    cl_log(c, PROFD_LOG_INFO, "profd: registered with %s as client %lld", c->url,
           (long long)io->client_id);
    pp_msg_free(&rep);
    return 0;
}

/* ---- plans ---- */

static void publish(profd_client_t *c, pp_plan_t *plan)
{
    cl_io_t *io = &c->io;
    cl_plan_t *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        pp_record_free(&pp_desc_plan, plan);
        return;
    }
    p->p = *plan; /* moved */
    pp_record_init(&pp_desc_plan, plan);
    snprintf(p->spool, sizeof(p->spool), "%s", io->spool);
    p->seq = ++io->pub_seq;
    p->next = io->plans;
    io->plans = p;
    atomic_store_explicit(&c->pending, p, memory_order_release);
}

/* Free every plan older than the one the training thread adopted. */
static void retire(profd_client_t *c)
{
    uint64_t adopted = atomic_load_explicit(&c->adopted_seq, memory_order_acquire);
    for (cl_plan_t **pp = &c->io.plans; *pp;) {
        cl_plan_t *p = *pp;
        if (p->seq < adopted) {
            *pp = p->next;
            pp_record_free(&pp_desc_plan, &p->p);
            free(p);
        } else {
            pp = &p->next;
        }
    }
}

static void watch_cb(void *arg)
{
    profd_client_t *c = arg;
    cl_io_t *io = &c->io;
    int rv = nng_aio_result(io->watch_aio);

    pthread_mutex_lock(&io->mu);
    if (io->watch_state == W_SENDING && rv == 0 && !io->stop) {
        io->watch_state = W_RECVING;
        pthread_mutex_unlock(&io->mu);
        nng_aio_set_timeout(io->watch_aio, WATCH_HOLD_MS + 5000);
        nng_ctx_recv(io->watch_ctx, io->watch_aio);
        return;
    }
    if (io->watch_state == W_SENDING) {
        nng_msg_free(nng_aio_get_msg(io->watch_aio));
        nng_aio_set_msg(io->watch_aio, NULL);
    }
    io->watch_state = W_DONE;
    io->watch_done = true;
    pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
}

static void watch_start(profd_client_t *c)
{
    cl_io_t *io = &c->io;
    pp_msg_t req;
    nng_msg *nm;

    pp_msg_init(&req, PP_T_watch);
    req.u.watch.client = io->client_id;
    req.u.watch.gen = io->gen;
    req.u.watch.hold_ms = WATCH_HOLD_MS;
    if (cl_msg_from(&req, &nm) != 0) {
        return;
    }
    pthread_mutex_lock(&io->mu);
    io->watch_state = W_SENDING;
    io->watch_done = false;
    pthread_mutex_unlock(&io->mu);
    io->watching = true;
    nng_aio_set_msg(io->watch_aio, nm);
    nng_aio_set_timeout(io->watch_aio, RPC_TIMEOUT_MS);
    nng_ctx_send(io->watch_ctx, io->watch_aio);
}

static void watch_handle(profd_client_t *c)
{
    cl_io_t *io = &c->io;
    pp_msg_t rep;
    int rv;

    pthread_mutex_lock(&io->mu);
    io->watch_state = W_IDLE;
    io->watch_done = false;
    pthread_mutex_unlock(&io->mu);
    io->watching = false;

    if ((rv = nng_aio_result(io->watch_aio)) != 0) {
        if (rv != NNG_ETIMEDOUT && rv != NNG_ECANCELED && io->registered) {
            cl_set_disconnected(c);
        }
        return;
    }
    rv = cl_msg_to(c, nng_aio_get_msg(io->watch_aio), &rep);
    nng_aio_set_msg(io->watch_aio, NULL);
    if (rv == PROFD_ECLIENT) {
        cl_set_disconnected(c); /* the daemon restarted: register again */
        return;
    }
    if (rv != 0 || rep.type != PP_T_plan) {
        if (rv == 0) {
            pp_msg_free(&rep);
        }
        return;
    }
    if (!rep.u.plan.unchanged && rep.u.plan.gen != io->gen) {
        io->gen = rep.u.plan.gen;
        cl_log(c, PROFD_LOG_DEBUG, "profd: plan %lld with %zu window(s)", (long long)io->gen,
               rep.u.plan.entries_n);
        publish(c, &rep.u.plan);
    }
    pp_msg_free(&rep);
}

/* ---- the thread ---- */

/* Sleep until the deadline, a stop, a finished long poll or news from the
 * training thread. `deep`: an idle thread's long sleep, which the next step
 * event ends (the ring's `sleeping` flag); it is not taken when an event
 * is already there. */
static void wait_until(profd_client_t *c, int64_t deadline_ms, bool deep, bool *stop,
                       bool *watch_done)
{
    cl_io_t *io = &c->io;
    /* The training thread reads `sleeping` after its push with no fence (a
     * fence would double the cost of a step), so an event pushed just as
     * the flag is set can miss it; looking at the ring again once the flag
     * is surely visible (RECHECK_MS later) bounds that delay to RECHECK_MS
     * instead of the whole sleep. */
    int64_t recheck_ms = deep ? cl_now_ms() + RECHECK_MS : 0;
    pthread_mutex_lock(&io->mu);
    if (deep) {
        atomic_store(&c->ring->sleeping, 1);
        if (!cl_ring_empty(c->ring)) {
            deadline_ms = 0;
        }
    }
    while (!io->stop && !io->watch_done && !io->kicked) {
        int64_t now = cl_now_ms();
        if (now >= deadline_ms) {
            break;
        }
        if (recheck_ms && now >= recheck_ms) {
            recheck_ms = 0;
            if (!cl_ring_empty(c->ring)) {
                break;
            }
        }
        struct timespec ts;
        cl_abs_deadline(&ts, recheck_ms && recheck_ms < deadline_ms ? recheck_ms : deadline_ms);
        pthread_cond_timedwait(&io->cv, &io->mu, &ts);
    }
    if (deep) {
        atomic_store(&c->ring->sleeping, 0);
    }
    if (io->kicked) {
        io->kicked = false;
        io->idle_rounds = 0;
    }
    *stop = io->stop;
    *watch_done = io->watch_done;
    pthread_mutex_unlock(&io->mu);
}

void cl_io_kick(profd_client_t *c)
{
    cl_io_t *io = &c->io;
    if (!io->started) {
        return;
    }
    atomic_store_explicit(&c->ring->sleeping, 0, memory_order_relaxed);
    pthread_mutex_lock(&io->mu);
    io->kicked = true;
    pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
}

static void *io_main(void *arg)
{
    profd_client_t *c = arg;
    cl_io_t *io = &c->io;
    bool stop, watch_done;
    int rv;

    io->backoff_ms = BACKOFF_MIN_MS;
    for (;;) {
        int64_t now = cl_now_ms();
        /* an idle worker (no steps) is looked at less and less often, up to
         * once a second: no busy wake-ups on nodes full of idle workers */
        int shift = io->idle_rounds < 5 ? io->idle_rounds : 5;
        int64_t every = (int64_t)c->flush_ms << shift;
        int64_t most = c->flush_ms > IDLE_MAX_MS ? c->flush_ms : IDLE_MAX_MS;
        int64_t deadline = now + (every < most ? every : most);
        if (!io->registered && io->next_try_ms > deadline) {
            deadline = io->next_try_ms;
        }
        /* idle for a while, nothing owed: sleep until the training thread
         * has news, the long poll ends, or IDLE_DEEP_MS */
        bool deep = io->registered && io->watching &&
                    now - io->last_event_ms >= IDLE_DEEP_AFTER_MS && io->results == NULL &&
                    atomic_load_explicit(&c->outbox, memory_order_relaxed) == NULL &&
                    cl_ring_dropped(c->ring) == io->dropped_reported;
        if (deep) {
            deadline = now + IDLE_DEEP_MS;
        } else if (io->results && io->registered && deadline > now + c->flush_ms) {
            deadline = now + c->flush_ms; /* a result waits for an exec command */
        }
        wait_until(c, deadline, deep, &stop, &watch_done);
        if (stop) {
            break;
        }
        if (watch_done) {
            watch_handle(c);
        }
        if (!io->registered) {
            cl_discard_stale_events(c);
            if (io->watching || cl_now_ms() < io->next_try_ms) {
                continue; /* wait for the cancelled watch to come back first */
            }
            /* no connection up: its dialer may never dial again (redial) */
            bool fresh = io->unanswered >= UNANSWERED_REDIAL && atomic_load(io->npipes) <= 0;
            redial(c, fresh);
            if (fresh) {
                io->unanswered = 0;
            }
            if ((rv = do_hello(c)) != 0) {
                io->unanswered = cl_transport_error(rv) ? io->unanswered + 1 : 0;
                io->next_try_ms = cl_now_ms() + io->backoff_ms;
                io->backoff_ms =
                    io->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : io->backoff_ms * 2;
                continue;
            }
            io->backoff_ms = BACKOFF_MIN_MS;
            io->unanswered = 0;
        }
        if (io->roles_sent != atomic_load(&c->roles_gen) && do_hello(c) != 0) {
            cl_set_disconnected(c); /* a role was added: register again (same entry, more roles) */
            continue;
        }
        if (!io->watching) {
            watch_start(c);
        }
        cl_flush_results(c, RPC_TIMEOUT_MS);
        if (io->registered) {
            cl_flush_events(c, RPC_TIMEOUT_MS, false);
        }
        retire(c);
    }

    /* closing: deliver what is owed, within a bounded time (exec commands
     * still running get part of it; then their captures fail) */
    if (io->registered) {
        cl_take_outbox(c);
        int64_t until = cl_now_ms() + CLOSE_TIMEOUT_MS / 2;
        for (cl_result_t *r = io->results; r && cl_now_ms() < until;) {
            if (cl_exec_settled(r, false)) {
                r = r->next;
                continue;
            }
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        cl_flush_results(c, CLOSE_TIMEOUT_MS);
    }
    if (io->registered) {
        cl_flush_events(c, CLOSE_TIMEOUT_MS, true);
    }
    if (io->registered) {
        cl_say_bye(c);
    }
    return NULL;
}

/* A started dialer to url, over tls+tcp:// with the TLS configuration
 * dial() made. */
static int dialer_start(profd_client_t *c, const char *url, nng_dialer *d)
{
    cl_io_t *io = &c->io;
    int rv;
    if (io->tls_cfg == NULL) {
        return nng_dial(io->sock, url, d, NNG_FLAG_NONBLOCK);
    }
    if ((rv = nng_dialer_create(d, io->sock, url)) != 0) {
        return rv;
    }
    if ((rv = nng_dialer_set_ptr(*d, NNG_OPT_TLS_CONFIG, io->tls_cfg)) != 0 ||
        (rv = nng_dialer_start(*d, NNG_FLAG_NONBLOCK)) != 0) {
        nng_dialer_close(*d);
    }
    return rv;
}

/* The dialer to c->url; over tls+tcp:// with the files named by
 * PROFD_TLS_CA, PROFD_TLS_CERT, PROFD_TLS_KEY and PROFD_TLS_SERVER_NAME (the
 * variables profctl reads). A file that cannot be used is an error, its
 * reason logged. */
static int dial(profd_client_t *c)
{
    cl_io_t *io = &c->io;
    pt_tls_files_t files = {getenv("PROFD_TLS_CA"), getenv("PROFD_TLS_CERT"),
                            getenv("PROFD_TLS_KEY"), getenv("PROFD_TLS_SERVER_NAME")};
    char err[256];

    if (pt_tls_url(c->url) &&
        (io->tls_cfg = pt_tls_config(&files, false, err, sizeof(err))) == NULL) {
        cl_log(c, PROFD_LOG_ERROR, "profd: %s: %s (PROFD_TLS_CA, PROFD_TLS_CERT, PROFD_TLS_KEY)",
               c->url, err);
        return NNG_EINVAL;
    }
    return dialer_start(c, c->url, &io->dialer);
}

/* A condition variable whose timed waits use CLOCK_MONOTONIC (cl_abs_deadline). */
static void cond_init_mono(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

int cl_io_start(profd_client_t *c)
{
    cl_io_t *io = &c->io;
    int rv;

    memset(io, 0, sizeof(*io));
    if ((io->evbuf = malloc(3 * EV_BATCH * sizeof(int64_t))) == NULL ||
        (io->pevbuf = malloc(3 * EV_BATCH * sizeof(int64_t))) == NULL ||
        (io->sevbuf = malloc(3 * EV_BATCH * sizeof(int64_t))) == NULL) {
        free(io->evbuf);
        free(io->pevbuf);
        return PROFD_ENOMEM;
    }
    cond_init_mono(&io->cv);
    pthread_mutex_init(&io->mu, NULL);

    if ((io->npipes = calloc(1, sizeof(*io->npipes))) == NULL) {
        rv = NNG_ENOMEM;
        goto fail;
    }
    if ((rv = nng_req0_open(&io->sock)) != 0) {
        goto fail;
    }
    io->sock_open = true;
    nng_socket_set_ms(io->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
    nng_socket_set_ms(io->sock, NNG_OPT_RECONNMINT, 50);
    nng_socket_set_ms(io->sock, NNG_OPT_RECONNMAXT, 1000);
    nng_pipe_notify(io->sock, NNG_PIPE_EV_ADD_PRE, pipe_cb, (void *)io->npipes);
    nng_pipe_notify(io->sock, NNG_PIPE_EV_REM_POST, pipe_cb, (void *)io->npipes);
    nng_socket_set_size(io->sock, NNG_OPT_RECVMAXSZ, 16u << 20);
    if ((rv = nng_ctx_open(&io->rpc_ctx, io->sock)) != 0 ||
        (rv = nng_ctx_open(&io->watch_ctx, io->sock)) != 0 ||
        (rv = nng_aio_alloc(&io->rpc_aio, cl_rpc_cb, c)) != 0 ||
        (rv = nng_aio_alloc(&io->watch_aio, watch_cb, c)) != 0) {
        goto fail;
    }
    if ((rv = dial(c)) != 0) {
        goto fail;
    }
    if (pthread_create(&io->thread, NULL, io_main, c) != 0) {
        rv = NNG_ENOMEM;
        goto fail;
    }
    pthread_setname_np(io->thread, "profd-io"); /* for top, perf and the benchmarks */
    io->started = true;
    return 0;

fail:
    if (io->watch_aio) {
        nng_aio_free(io->watch_aio);
    }
    if (io->rpc_aio) {
        nng_aio_free(io->rpc_aio);
    }
    if (io->sock_open) {
        nng_close(io->sock);
    }
    free((void *)io->npipes);
    pt_tls_config_free(io->tls_cfg);
    pthread_cond_destroy(&io->cv);
    pthread_mutex_destroy(&io->mu);
    free(io->evbuf);
    free(io->pevbuf);
    free(io->sevbuf);
    return pu_nng_err(rv) == PROFD_ENODAEMON ? PROFD_EINVAL : pu_nng_err(rv);
}

/* nng_close() of libnng 1.5.2 can wait for a dialer's reconnection timer
 * (up to NNG_OPT_RECONNMAXT, seen at 1.8 s with no daemon). The socket,
 * its TLS configuration and its (stopped) aios go to a thread of their own,
 * waited for at most CLOSER_WAIT_MS; whichever of the two ends last frees
 * the hand-over. Nothing of the client is touched there. */
#define CLOSER_WAIT_MS 20

typedef struct closer {
    nng_socket sock;
    void *tls_cfg;
    _Atomic int *npipes; /* the pipe events' counter (pipe_cb) */
    nng_aio *aios[2];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    int refs; /* under mu */
} closer_t;

static void closer_unref(closer_t *k)
{
    pthread_mutex_lock(&k->mu);
    int left = --k->refs;
    pthread_mutex_unlock(&k->mu);
    if (left == 0) {
        pthread_cond_destroy(&k->cv);
        pthread_mutex_destroy(&k->mu);
        free(k);
    }
}

static void *closer_main(void *arg)
{
    closer_t *k = arg;
    nng_close(k->sock);
    free((void *)k->npipes);
    pt_tls_config_free(k->tls_cfg);
    nng_aio_free(k->aios[0]);
    nng_aio_free(k->aios[1]);
    pthread_mutex_lock(&k->mu);
    k->done = true;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    closer_unref(k);
    return NULL;
}

static void sock_close(cl_io_t *io)
{
    closer_t *k = calloc(1, sizeof(*k));
    pthread_t t;
    pthread_attr_t a;
    if (k != NULL) {
        k->sock = io->sock;
        k->tls_cfg = io->tls_cfg;
        k->npipes = io->npipes;
        k->aios[0] = io->watch_aio;
        k->aios[1] = io->rpc_aio;
        k->refs = 2;
        cond_init_mono(&k->cv);
        pthread_mutex_init(&k->mu, NULL);
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int rv = pthread_create(&t, &a, closer_main, k);
        pthread_attr_destroy(&a);
        if (rv == 0) {
            struct timespec ts;
            cl_abs_deadline(&ts, cl_now_ms() + CLOSER_WAIT_MS);
            pthread_mutex_lock(&k->mu);
            while (!k->done && pthread_cond_timedwait(&k->cv, &k->mu, &ts) == 0) {
            }
            pthread_mutex_unlock(&k->mu);
            closer_unref(k);
            return;
        }
        pthread_cond_destroy(&k->cv);
        pthread_mutex_destroy(&k->mu);
        free(k);
    }
    nng_close(io->sock); /* no thread to spare: here */
    free((void *)io->npipes);
    pt_tls_config_free(io->tls_cfg);
    nng_aio_free(io->watch_aio);
    nng_aio_free(io->rpc_aio);
}

void cl_io_stop(profd_client_t *c)
{
    cl_io_t *io = &c->io;
    if (!io->started) {
        return;
    }
    cl_take_outbox(c);
    pthread_mutex_lock(&io->mu);
    io->stop = true;
    io->stop_ms = cl_now_ms();
    pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
    pthread_join(io->thread, NULL);

    nng_aio_stop(io->watch_aio);
    nng_aio_stop(io->rpc_aio);
    nng_msg *m = nng_aio_get_msg(io->watch_aio);
    if (m && io->watch_state == W_DONE && nng_aio_result(io->watch_aio) == 0) {
        nng_msg_free(m);
    }
    sock_close(io);

    while (io->plans) {
        cl_plan_t *p = io->plans;
        io->plans = p->next;
        pp_record_free(&pp_desc_plan, &p->p);
        free(p);
    }
    while (io->results) {
        cl_result_t *r = io->results;
        io->results = r->next;
        pp_record_free(&pp_desc_result, r->res);
        free(r->res);
        free(r);
    }
    free(io->evbuf);
    free(io->pevbuf);
    free(io->sevbuf);
    pthread_cond_destroy(&io->cv);
    pthread_mutex_destroy(&io->mu);
    io->started = false;
}
