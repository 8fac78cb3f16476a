// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * bench_swarm: thousands of simulated ranks driven from one thread, for the
 * scale figure (run.py, figure 9), where one libprofd client per rank (each
 * with its background thread) is more threads than two cores can schedule.
 *
 * Real, per rank: its own nng socket and connection to its node daemon;
 * every message it exchanges (hello, plan long poll, step and phase events
 * with the clock estimate, results, bye) encoded and decoded by the codec
 * the library uses; its capture engine (client/engine.c) adopting the plans
 * and starting and stopping the `sim` backend at its step boundaries; the
 * traces and step markers written into the daemon's spool.
 * Simulated: libprofd's background thread (here one driver thread serves
 * every rank's socket through nng aio, with the library's timeouts,
 * backoff and heartbeat; no ring: events go straight to the rank's batch,
 * sent every --flush-ms; a rank that loses its daemon registers again but
 * keeps its dialer, where the library would make a new one) and the
 * training loops (each rank's steps and phases at their own times, as
 * profd-sim runs them: phases by role, --substeps sub-steps a phase).
 *
 * Ranks per node: the layout run.py's cluster_up gives profd-sim: actor
 * per/4, rollout per/2 in per/16 replicas (at least 1), ref the rest;
 * node i holds global ranks i*per .. i*per+per-1.
 */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "bench_util.h"
#include "engine.h"
#include "internal.h"
#include "profd/client.h"
#include "profd/proto.h"

/* as libprofd's background thread (client/io.c) */
#define RPC_TIMEOUT_MS   2000
#define CLOSE_TIMEOUT_MS 500
#define HEARTBEAT_MS     2000
#define WATCH_HOLD_MS    120000
#define BACKOFF_MIN_MS   50
#define BACKOFF_MAX_MS   2000
#define CLOCK_SAMPLES    16

#define TICK_MS   20 /* how often the driver looks at the training loops */
#define MAX_NODES 4096
#define MAX_PH    2

enum { X_SENDING, X_RECVING };
enum { Q_HELLO = 1, Q_EVENTS, Q_RESULT, Q_BYE };

typedef struct swarm swarm_t;
typedef struct srank srank_t;

/* One request and its reply on a context of the rank's socket. The state
 * is nng's callback's while the exchange runs; the driver reads the outcome
 * after taking it from the swarm's queue of completed exchanges. */
typedef struct xchg {
    srank_t *r;
    nng_ctx ctx;
    nng_aio *aio;
    int state;
    int recv_ms;
    int rv;
    bool busy; /* the driver's: sent, not yet taken back */
    int what;  /* Q_* */
    struct xchg *next;
} xchg_t;

typedef struct result_node {
    pp_result_t *res;
    struct result_node *next;
} result_node_t;

struct srank {
    swarm_t *s;
    const char *url, *role, *host;
    int64_t rank, local, replica;
    ce_t eng;
    nng_socket sock;
    xchg_t rpc, watch;
    bool registered, refused;
    int64_t client_id, gen;
    pp_plan_t *plan; /* adopted by the engine: kept until the next one */
    int backoff_ms;
    int64_t next_try_ms, last_sent_ms, last_flush_ms, sent_us;
    int64_t *ev, *pev; /* (kind, step or phase index, t_us) triples */
    size_t nev, npev, cap;
    result_node_t *results, **results_tail;
    int64_t clk_off[CLOCK_SAMPLES], clk_err[CLOCK_SAMPLES];
    int clk_n, clk_pos;
    /* the training loop */
    const char *phases[MAX_PH];
    int nph, phase, substep;
    bool done;
    int64_t step;
    double t, t0, period; /* ms */
};

struct swarm {
    const char *job;
    int per, substeps;
    int64_t world, steps, trace_bytes;
    double rate;
    int flush_ms;
    srank_t *ranks;
    int nranks;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    xchg_t *done; /* under mu: completed exchanges */
    bool closing;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static double now_ms_f(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- exchanges ---- */

static void xchg_cb(void *arg)
{
    xchg_t *x = arg;
    int rv = nng_aio_result(x->aio);
    if (x->state == X_SENDING && rv == 0) {
        x->state = X_RECVING;
        nng_aio_set_timeout(x->aio, x->recv_ms);
        nng_ctx_recv(x->ctx, x->aio);
        return;
    }
    if (x->state == X_SENDING) { /* not sent: the message is still ours */
        nng_msg_free(nng_aio_get_msg(x->aio));
        nng_aio_set_msg(x->aio, NULL);
    }
    x->rv = rv;
    swarm_t *s = x->r->s;
    pthread_mutex_lock(&s->mu);
    x->next = s->done;
    s->done = x;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Sends m (borrowed) on x; its reply comes back through the queue. */
static int xchg_start(xchg_t *x, const pp_msg_t *m, int what, int send_ms, int recv_ms)
{
    nng_msg *nm;
    int rv = cl_msg_from(m, &nm);
    if (rv != 0) {
        return rv;
    }
    x->what = what;
    x->busy = true;
    x->state = X_SENDING;
    x->recv_ms = recv_ms;
    nng_aio_set_msg(x->aio, nm);
    nng_aio_set_timeout(x->aio, send_ms);
    nng_ctx_send(x->ctx, x->aio);
    return 0;
}

/* The reply of a completed exchange: 0 and *out, or the daemon's error
 * code, PROFD_ETIMEDOUT or PROFD_ENODAEMON. */
static int xchg_reply(xchg_t *x, pp_msg_t *out)
{
    char err[256];
    if (x->rv != 0) {
        return x->rv == NNG_ETIMEDOUT                           ? PROFD_ETIMEDOUT
               : x->rv == NNG_ECANCELED || x->rv == NNG_ECLOSED ? PROFD_ECLOSED
                                                                : PROFD_ENODAEMON;
    }
    nng_msg *nm = nng_aio_get_msg(x->aio);
    nng_aio_set_msg(x->aio, NULL);
    int rv = pp_reply_decode(nng_msg_body(nm), nng_msg_len(nm), 0, out, err, sizeof(err));
    nng_msg_free(nm);
    return rv;
}

/* ---- a rank's messages ---- */

static void unregister(srank_t *r)
{
    r->registered = false;
    r->nev = r->npev = 0; /* history no daemon can use */
    if (r->watch.busy) {
        nng_aio_cancel(r->watch.aio);
    }
}

static void send_hello(srank_t *r)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_hello);
    m.u.hello.job = (char *)r->s->job;
    m.u.hello.role = (char *)r->role;
    m.u.hello.rank = r->rank;
    m.u.hello.local_rank = r->local;
    m.u.hello.world_size = r->s->world;
    m.u.hello.replica_rank = r->replica;
    m.u.hello.host = (char *)r->host;
    m.u.hello.pid = getpid();
    m.u.hello.version = PROFD_VERSION_STRING;
    xchg_start(&r->rpc, &m, Q_HELLO, RPC_TIMEOUT_MS, RPC_TIMEOUT_MS);
}

static void send_watch(srank_t *r)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_watch);
    m.u.watch.client = r->client_id;
    m.u.watch.gen = r->gen;
    m.u.watch.hold_ms = WATCH_HOLD_MS;
    xchg_start(&r->watch, &m, 0, RPC_TIMEOUT_MS, WATCH_HOLD_MS + 5000);
}

static void send_events(srank_t *r, int64_t now)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_events);
    m.u.events.client = r->client_id;
    m.u.events.gen = r->gen;
    m.u.events.ev = r->ev;
    m.u.events.ev_n = 3 * r->nev;
    if (r->npev) {
        m.u.events.pev = r->pev;
        m.u.events.pev_n = 3 * r->npev;
        m.u.events.names = (char **)r->phases;
        m.u.events.names_n = (size_t)r->nph;
    }
    for (int i = 0; i < r->clk_n; i++) { /* the recent sample with the smallest error */
        if (m.u.events.offset_err_us == 0 || r->clk_err[i] < m.u.events.offset_err_us) {
            m.u.events.offset_us = r->clk_off[i];
            m.u.events.offset_err_us = r->clk_err[i];
        }
    }
    r->sent_us = cl_now_us();
    if (xchg_start(&r->rpc, &m, Q_EVENTS, RPC_TIMEOUT_MS, RPC_TIMEOUT_MS) == 0) {
        r->nev = r->npev = 0; /* sent or lost, as the library's batch */
        r->last_sent_ms = r->last_flush_ms = now;
    }
}

static void send_result(srank_t *r)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_result);
    m.u.result = *r->results->res; /* borrowed */
    m.u.result.client = r->client_id;
    xchg_start(&r->rpc, &m, Q_RESULT, RPC_TIMEOUT_MS, RPC_TIMEOUT_MS);
}

static void send_bye(srank_t *r)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_bye);
    m.u.bye.client = r->client_id;
    xchg_start(&r->rpc, &m, Q_BYE, CLOSE_TIMEOUT_MS, CLOSE_TIMEOUT_MS);
}

static void drop_result(srank_t *r)
{
    result_node_t *n = r->results;
    r->results = n->next;
    if (r->results == NULL) {
        r->results_tail = &r->results;
    }
    pp_record_free(&pp_desc_result, n->res);
    free(n->res);
    free(n);
}

/* What the rank owes the daemon next, as the library's loop orders it:
 * register, hold a plan long poll, deliver results, flush events (or a
 * heartbeat while no long poll is held). */
static void rank_io(srank_t *r, int64_t now)
{
    if (stop_flag || r->s->closing) {
        return;
    }
    if (!r->registered) {
        if (!r->rpc.busy && !r->watch.busy && now >= r->next_try_ms) {
            send_hello(r);
        }
        return;
    }
    if (!r->watch.busy) {
        send_watch(r);
    }
    if (r->rpc.busy) {
        return;
    }
    if (r->results) {
        send_result(r);
    } else if ((r->nev + r->npev && now - r->last_flush_ms >= r->s->flush_ms) ||
               (!r->watch.busy && now - r->last_sent_ms >= HEARTBEAT_MS)) {
        send_events(r, now);
    }
}

static void on_rpc(srank_t *r, int64_t now)
{
    pp_msg_t rep;
    int rv = xchg_reply(&r->rpc, &rep);
    bool lost = rv == PROFD_ETIMEDOUT || rv == PROFD_ENODAEMON || rv == PROFD_ECLIENT;
    switch (r->rpc.what) {
    case Q_HELLO:
        if (rv == 0 && rep.type == PP_T_welcome) {
            r->client_id = rep.u.welcome.client;
            r->gen = -1;
            r->registered = true;
            r->backoff_ms = BACKOFF_MIN_MS;
            ce_set_spool(&r->eng, rep.u.welcome.spool);
        } else {
            if (rv != PROFD_ETIMEDOUT && rv != PROFD_ENODAEMON && rv != PROFD_ECLOSED &&
                !r->refused) {
                r->refused = true; /* said once a rank */
                fprintf(stderr, "bench_swarm: rank %" PRId64 ": hello refused: %s\n", r->rank,
                        profd_strerror(rv));
            }
            r->next_try_ms = now + r->backoff_ms;
            r->backoff_ms = r->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : r->backoff_ms * 2;
        }
        break;
    case Q_EVENTS:
        if (rv == 0 && rep.type == PP_T_ack && rep.u.ack.t_us > 0) {
            /* the daemon read its clock between our send and this reply */
            int64_t t3 = cl_now_us();
            r->clk_off[r->clk_pos] = rep.u.ack.t_us - (r->sent_us + t3) / 2;
            r->clk_err[r->clk_pos] = (t3 - r->sent_us) / 2 + 1;
            r->clk_pos = (r->clk_pos + 1) % CLOCK_SAMPLES;
            r->clk_n += r->clk_n < CLOCK_SAMPLES;
        }
        if (lost) {
            unregister(r);
        }
        break;
    case Q_RESULT:
        if (lost) {
            unregister(r); /* kept: delivered after registering again */
        } else if (rv != PROFD_ELIMIT) {
            drop_result(r);
        }
        break;
    default:
        break;
    }
    if (rv == 0) {
        pp_msg_free(&rep);
    }
}

static void on_watch(srank_t *r)
{
    pp_msg_t rep;
    int rv = xchg_reply(&r->watch, &rep);
    if (rv == PROFD_ECLIENT || rv == PROFD_ENODAEMON) {
        unregister(r);
        return;
    }
    if (rv != 0) {
        return; /* timed out or cancelled: held again at the next pass */
    }
    if (rep.type == PP_T_plan && r->registered && !rep.u.plan.unchanged &&
        rep.u.plan.gen != r->gen) {
        pp_plan_t *p = malloc(sizeof(*p));
        if (p != NULL) {
            *p = rep.u.plan; /* moved */
            pp_record_init(&pp_desc_plan, &rep.u.plan);
            r->gen = p->gen;
            ce_adopt(&r->eng, p);
            if (r->plan) {
                pp_record_free(&pp_desc_plan, r->plan);
                free(r->plan);
            }
            r->plan = p;
        }
    }
    pp_msg_free(&rep);
}

/* ---- the training loop ---- */

/* An event into the rank's batch. While no daemon has it registered, only
 * its newest step begin is kept (where it is), as the library keeps it. */
static void ev_push(srank_t *r, int kind, int64_t v)
{
    bool phase = kind == CL_EV_PHASE_BEGIN || kind == CL_EV_PHASE_END;
    if (!r->registered) {
        if (kind == CL_EV_STEP_BEGIN) {
            r->nev = 0;
        } else {
            return;
        }
    }
    size_t *n = phase ? &r->npev : &r->nev;
    if (*n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        int64_t *ev = realloc(r->ev, 3 * cap * sizeof(*ev));
        int64_t *pev = ev ? realloc(r->pev, 3 * cap * sizeof(*pev)) : NULL;
        if (ev) {
            r->ev = ev;
        }
        if (pev == NULL) {
            return; /* dropped, as a full ring drops */
        }
        r->pev = pev;
        r->cap = cap;
    }
    int64_t *t = (phase ? r->pev : r->ev) + 3 * *n;
    t[0] = phase ? (kind == CL_EV_PHASE_BEGIN ? 1 : 2) : kind;
    t[1] = v;
    t[2] = cl_now_us();
    (*n)++;
}

static void phase_begin(srank_t *r)
{
    const char *p = r->phases[r->phase];
    ev_push(r, CL_EV_PHASE_BEGIN, r->phase);
    ce_on_phase_begin(&r->eng, 0, p, strlen(p));
}

/* The rank's turn, due at r->t: the calls a training loop makes at that
 * moment (as profd-sim's rank_turn: a step's begin and its first phase, a
 * sub-step, a phase's end and the next one's begin, the step's end). */
static void rank_turn(srank_t *r)
{
    const swarm_t *s = r->s;
    double slice = r->period / (r->nph * s->substeps);

    if (r->phase < 0) { /* a step begins */
        if (r->step >= 1 + s->steps) {
            r->done = true;
            return;
        }
        r->t0 = r->t;
        ev_push(r, CL_EV_STEP_BEGIN, r->step);
        ce_on_step_begin(&r->eng, r->step);
        r->phase = 0;
        r->substep = 0;
        phase_begin(r);
        r->t += slice;
        return;
    }
    ce_on_substep(&r->eng);
    if (++r->substep < s->substeps) {
        r->t += slice;
        return;
    }
    ev_push(r, CL_EV_PHASE_END, r->phase);
    ce_on_phase_end(&r->eng);
    if (++r->phase < r->nph) {
        r->substep = 0;
        phase_begin(r);
        r->t += slice;
        return;
    }
    ev_push(r, CL_EV_STEP_END, r->step);
    ce_on_step_end(&r->eng, r->step);
    r->step++;
    r->phase = -1;
    r->t = r->t0 + r->period;
}

/* ---- the engine's hooks and the backend ---- */

static void emit(pp_result_t *res, void *arg)
{
    srank_t *r = arg;
    result_node_t *n = malloc(sizeof(*n));
    if (n == NULL) {
        pp_record_free(&pp_desc_result, res);
        free(res);
        return;
    }
    n->res = res;
    n->next = NULL;
    *r->results_tail = n;
    r->results_tail = &n->next;
}

static int64_t mono_us(void *arg)
{
    (void)arg;
    return cl_now_us();
}

/* The sim backend with this run's trace size unless the window says. */
static int sized(const profd_capture_t *cap, void *user,
                 int (*fn)(const profd_capture_t *, void *, char *, size_t), char *reason,
                 size_t len)
{
    char settings[64];
    profd_capture_t c = *cap;
    if (pp_json_get_i64(cap->settings_json, "bytes", -1) < 0) {
        snprintf(settings, sizeof(settings), "{\"bytes\":%" PRId64 "}", *(int64_t *)user);
        c.settings_json = settings;
    }
    return fn(&c, NULL, reason, len);
}

static int sized_start(const profd_capture_t *cap, void *user, char *reason, size_t len)
{
    return sized(cap, user, profd_backend_sim()->start, reason, len);
}

static int sized_stop(const profd_capture_t *cap, void *user, char *reason, size_t len)
{
    return sized(cap, user, profd_backend_sim()->stop, reason, len);
}

static const profd_backend_t sized_sim = {"*", 0, sized_start, sized_stop, NULL};

/* ---- ranks ---- */

static int rank_open(srank_t *r)
{
    int rv;
    if ((rv = nng_req0_open(&r->sock)) != 0) {
        return rv;
    }
    nng_socket_set_ms(r->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
    nng_socket_set_ms(r->sock, NNG_OPT_RECONNMINT, 50);
    nng_socket_set_ms(r->sock, NNG_OPT_RECONNMAXT, 1000);
    nng_socket_set_size(r->sock, NNG_OPT_RECVMAXSZ, 16u << 20);
    xchg_t *xs[2] = {&r->rpc, &r->watch};
    for (int i = 0; i < 2; i++) {
        xs[i]->r = r;
        if ((rv = nng_ctx_open(&xs[i]->ctx, r->sock)) != 0 ||
            (rv = nng_aio_alloc(&xs[i]->aio, xchg_cb, xs[i])) != 0) {
            return rv;
        }
    }
    return nng_dial(r->sock, r->url, NULL, NNG_FLAG_NONBLOCK);
}

static void rank_init(srank_t *r, swarm_t *s, const char *url, const char *host, int node, int i)
{
    int per = s->per, actors = per / 4, rollouts = per / 2;
    int replicas = per / 16 > 0 ? per / 16 : 1;
    if (rollouts < replicas) {
        replicas = rollouts > 0 ? rollouts : 1;
    }
    memset(r, 0, sizeof(*r));
    r->s = s;
    r->url = url;
    r->host = host;
    r->rank = (int64_t)node * per + i;
    r->local = i;
    r->replica = PP_NONE;
    if (i < actors) {
        r->role = "actor";
        r->phases[0] = "compute_log_prob";
        r->phases[1] = "update_actor";
        r->nph = 2;
    } else if (i < actors + rollouts) {
        r->role = "rollout";
        r->replica = (int64_t)node * replicas + (i - actors) / (rollouts / replicas);
        r->phases[0] = "generate";
        r->nph = 1;
    } else {
        r->role = "ref";
        r->phases[0] = "ref_compute_log_prob";
        r->nph = 1;
    }
    r->gen = -1;
    r->backoff_ms = BACKOFF_MIN_MS;
    r->results_tail = &r->results;
    r->step = 1;
    r->phase = -1;
    r->period = s->rate > 0 ? 1000.0 / s->rate : 1000.0;

    ce_identity_t id;
    memset(&id, 0, sizeof(id));
    snprintf(id.job, sizeof(id.job), "%s", s->job);
    snprintf(id.role, sizeof(id.role), "%s", r->role);
    snprintf(id.host, sizeof(id.host), "%s", host);
    id.rank = r->rank;
    id.replica_rank = r->replica;
    id.pid = getpid();
    ce_hooks_t hooks = {cl_mkdirs, emit, r, mono_us, cl_markers_write};
    ce_init(&r->eng, &id, &hooks);
    ce_add_backend(&r->eng, &sized_sim, &s->trace_bytes);
}

static void rank_free(srank_t *r)
{
    nng_close(r->sock); /* cancels what runs; the callbacks queue it */
    nng_aio_free(r->rpc.aio);
    nng_aio_free(r->watch.aio);
    while (r->results) {
        drop_result(r);
    }
    if (r->plan) {
        pp_record_free(&pp_desc_plan, r->plan);
        free(r->plan);
    }
    free(r->ev);
    free(r->pev);
}

/* ---- the driver ---- */

/* Waits until `until_ms` or a completed exchange; handles what completed. */
static void drive(swarm_t *s, double until_ms)
{
    pthread_mutex_lock(&s->mu);
    while (s->done == NULL && (!stop_flag || s->closing)) {
        double now = now_ms_f();
        if (now >= until_ms) {
            break;
        }
        double d = until_ms - now;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t ns = (int64_t)ts.tv_nsec + (int64_t)(d * 1e6);
        ts.tv_sec += (time_t)(ns / 1000000000);
        ts.tv_nsec = (long)(ns % 1000000000);
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    xchg_t *done = s->done;
    s->done = NULL;
    pthread_mutex_unlock(&s->mu);
    int64_t now = cl_now_ms();
    for (xchg_t *x = done, *next; x; x = next) {
        next = x->next;
        x->busy = false;
        if (x == &x->r->rpc) {
            on_rpc(x->r, now);
        } else {
            on_watch(x->r);
        }
        rank_io(x->r, now);
    }
}

/* Waits (the library's closing time at most) for every exchange in flight
 * to complete. */
static void settle(swarm_t *s)
{
    double until = now_ms_f() + CLOSE_TIMEOUT_MS;
    for (;;) {
        bool busy = false;
        for (int i = 0; i < s->nranks && !busy; i++) {
            busy = s->ranks[i].rpc.busy || s->ranks[i].watch.busy;
        }
        if (!busy || now_ms_f() >= until) {
            return;
        }
        drive(s, now_ms_f() + TICK_MS);
    }
}

/* Every rank's windows end (truncated), their results go within the
 * library's closing time, then a bye each. */
static void close_all(swarm_t *s)
{
    for (int i = 0; i < s->nranks; i++) {
        srank_t *r = &s->ranks[i];
        ce_fini(&r->eng);
        if (r->watch.busy) {
            nng_aio_cancel(r->watch.aio);
        }
    }
    s->closing = true; /* no new long polls or events: results, then a bye */
    double until = now_ms_f() + CLOSE_TIMEOUT_MS;
    for (;;) {
        int owed = 0;
        for (int i = 0; i < s->nranks; i++) {
            srank_t *r = &s->ranks[i];
            if (r->registered && !r->rpc.busy && r->results) {
                send_result(r);
            }
            owed += r->registered && r->results != NULL;
        }
        if (owed == 0 || now_ms_f() >= until) {
            break;
        }
        drive(s, now_ms_f() + TICK_MS);
    }
    for (int i = 0; i < s->nranks; i++) {
        srank_t *r = &s->ranks[i];
        if (r->rpc.busy) {
            nng_aio_cancel(r->rpc.aio);
        }
    }
    settle(s);
    for (int i = 0; i < s->nranks; i++) {
        if (s->ranks[i].registered && !s->ranks[i].rpc.busy) {
            send_bye(&s->ranks[i]);
        }
    }
    settle(s);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: bench_swarm --node URL,HOST,INDEX [--node ...] [options]\n"
                 "\n"
                 "Simulates the ranks of many nodes from one thread (see the top of\n"
                 "tests/bench/bench_swarm.c for what is real and what is simulated).\n"
                 "  --node URL,HOST,INDEX  a node daemon's worker endpoint, the host name its\n"
                 "                    ranks report, and its index (its ranks are INDEX*per ...)\n"
                 "  --per N           ranks per node (default 64)\n"
                 "  --world N         ranks of the job (hello's world_size; default: nodes x per)\n"
                 "  --rate R          steps per second (default 10)\n"
                 "  --steps N         steps per rank (default 1000000)\n"
                 "  --substeps K      sub-steps per phase (default 1)\n"
                 "  --flush-ms N      a rank's event flush period (default 50, the library's)\n"
                 "  --trace-bytes B   synthetic trace size per capture (default 4096)\n"
                 "  --job J           job name (default \"default\")\n"
                 "  --help            this help\n");
}

static int parse_node(char *arg, const char **url, const char **host, int *index)
{
    char *c1 = strchr(arg, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL, *end;
    if (c2 == NULL) {
        return -1;
    }
    *c1 = *c2 = '\0';
    long v = strtol(c2 + 1, &end, 10);
    if (*arg == '\0' || c1[1] == '\0' || *end != '\0' || v < 0 || v >= 1000000) {
        return -1;
    }
    *url = arg;
    *host = c1 + 1;
    *index = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"node", required_argument, 0, 'n'},
        {"per", required_argument, 0, 'p'},
        {"world", required_argument, 0, 'w'},
        {"rate", required_argument, 0, 'r'},
        {"steps", required_argument, 0, 's'},
        {"substeps", required_argument, 0, 'k'},
        {"flush-ms", required_argument, 0, 'f'},
        {"trace-bytes", required_argument, 0, 'b'},
        {"job", required_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    swarm_t s = {.job = "default",
                 .per = 64,
                 .substeps = 1,
                 .steps = 1000000,
                 .rate = 10,
                 .flush_ms = 50,
                 .trace_bytes = 4096};
    /* the options that set one field of s: getopt's value, how to read it */
    const struct {
        int ch;
        bench_kind_t kind;
        void *out;
    } fields[] = {{'p', BENCH_INT, &s.per},         {'w', BENCH_I64, &s.world},
                  {'r', BENCH_DBL, &s.rate},        {'s', BENCH_I64, &s.steps},
                  {'k', BENCH_INT, &s.substeps},    {'f', BENCH_INT, &s.flush_ms},
                  {'b', BENCH_I64, &s.trace_bytes}, {'j', BENCH_STR, &s.job}};
    const size_t nfields = sizeof(fields) / sizeof(fields[0]);
    const char *urls[MAX_NODES], *hosts[MAX_NODES];
    int index[MAX_NODES], nnodes = 0, ch;
    size_t f;

    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            if (nnodes == MAX_NODES ||
                parse_node(optarg, &urls[nnodes], &hosts[nnodes], &index[nnodes]) != 0) {
                fprintf(stderr, "bench_swarm: bad --node %s (URL,HOST,INDEX; at most %d)\n", optarg,
                        MAX_NODES);
                return 2;
            }
            nnodes++;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            f = 0;
            while (f < nfields && fields[f].ch != ch) {
                f++;
            }
            if (f == nfields) {
                usage(stderr);
                return 2;
            }
            bench_set(fields[f].kind, fields[f].out, optarg);
            break;
        }
    }
    if (nnodes == 0 || optind != argc || s.per < 1 || s.per > 4096 || s.substeps < 1 ||
        s.rate <= 0 || s.steps < 1 || s.flush_ms < 1 || s.trace_bytes < 0 || !pp_ident_ok(s.job)) {
        fprintf(stderr, "bench_swarm: bad arguments (--help)\n");
        return 2;
    }
    if (s.world == 0) {
        s.world = (int64_t)nnodes * s.per;
    }
    s.nranks = nnodes * s.per;
    s.ranks = calloc((size_t)s.nranks, sizeof(*s.ranks));
    if (s.ranks == NULL) {
        fprintf(stderr, "bench_swarm: out of memory\n");
        return 1;
    }
    pthread_mutex_init(&s.mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s.cv, &ca);
    pthread_condattr_destroy(&ca);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    int failed = 0;
    double t = now_ms_f();
    for (int nd = 0, k = 0; nd < nnodes; nd++) {
        for (int i = 0; i < s.per; i++, k++) {
            srank_t *r = &s.ranks[k];
            rank_init(r, &s, urls[nd], hosts[nd], index[nd], i);
            int rv = rank_open(r);
            if (rv != 0) {
                fprintf(stderr, "bench_swarm: rank %" PRId64 ": %s\n", r->rank, nng_strerror(rv));
                failed = 1;
            }
            r->t = t;
        }
    }
    double next_scan = 0;
    while (!stop_flag && !failed) {
        double now = now_ms_f();
        if (now >= next_scan) {
            int64_t now_i = (int64_t)now;
            int live = 0;
            for (int i = 0; i < s.nranks; i++) {
                srank_t *r = &s.ranks[i];
                while (!r->done && r->t <= now) {
                    rank_turn(r);
                }
                live += !r->done;
                rank_io(r, now_i);
            }
            if (live == 0) {
                break;
            }
            next_scan = now + TICK_MS;
        }
        drive(&s, next_scan);
    }
    close_all(&s);
    for (int i = 0; i < s.nranks; i++) {
        rank_free(&s.ranks[i]);
    }
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    free(s.ranks);
    return failed;
}
