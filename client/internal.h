// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * libprofd internals shared by client.c (training thread) and io.c, flush.c, rpc.c
 * (background thread). Not installed.
 *
 * Hand-offs between the two threads, all lock-free on the training side:
 *  - step events: the SPSC ring (ring.h);
 *  - plans: io publishes an immutable cl_plan_t through `pending`; the
 *    training thread adopts it and acknowledges with `adopted_seq`, after
 *    which io may free every older plan;
 *  - results: the training thread pushes onto the `outbox` stack (one CAS);
 *    io takes the whole stack at once.
 */
#ifndef PROFD_CLIENT_INTERNAL_H
#define PROFD_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include <nng/nng.h>

#include "clock.h"
#include "engine.h"
#include "profd/client.h"
#include "ring.h"
#include "rundir.h"

#define CL_PHASE_NAMES   16 /* phase names whose times are sent (the first ones seen) */
#define CL_CLOCK_SAMPLES 16
#define CL_SECTION_DEPTH 8 /* sections open at once (nested) */

typedef struct cl_plan {
    pp_plan_t p;
    char spool[PP_MAX_PATH]; /* spool root of the daemon that sent it */
    uint64_t seq;
    struct cl_plan *next; /* io's list of published plans */
} cl_plan_t;

typedef struct cl_result {
    pp_result_t *res;
    struct cl_result *next;
} cl_result_t;

typedef struct cl_io {
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;       /* under mu */
    int64_t stop_ms; /* under mu: when stop was asked */
    bool rpc_done;   /* under mu: the rpc aio completed */
    bool kicked;     /* under mu: the training thread has news (events, results, roles) */
    bool watch_done; /* under mu */
    int watch_state; /* under mu */

    nng_socket sock;
    nng_dialer dialer; /* to c->url */
    void *tls_cfg;     /* tls+tcp:// URLs: the dialer's TLS configuration */
    nng_ctx rpc_ctx, watch_ctx;
    nng_aio *rpc_aio, *watch_aio;
    bool sock_open;

    bool registered;
    bool watching;
    uint64_t roles_sent; /* the roles generation the last hello carried */
    int64_t client_id;
    char instance[64];
    char spool[PP_MAX_PATH];
    int64_t gen; /* plan generation last received */
    int backoff_ms;
    int unanswered;      /* hellos in a row that had no answer (a timeout or no daemon) */
    _Atomic int *npipes; /* connections up (nng's pipe events); freed after the socket closes */
    int64_t next_try_ms;
    int64_t last_sent_ms;
    int idle_rounds;       /* flushes in a row that found no step event */
    int64_t last_event_ms; /* when a flush last found one */

    cl_plan_t *plans; /* published, newest first */
    uint64_t pub_seq;
    cl_result_t *results; /* not yet delivered, oldest first */
    uint64_t dropped_reported;
    int64_t *evbuf;  /* flattened (kind, step, t_us) triples */
    int64_t *pevbuf; /* flattened (kind, phase index, t_us) triples */
    int64_t *sevbuf; /* flattened (step, section, us) triples */
    /* the daemon's clock - ours, from the events' round trips: the recent
     * sample with the smallest error (its half round trip) */
    int64_t clk_off[CL_CLOCK_SAMPLES], clk_err[CL_CLOCK_SAMPLES];
    int clk_n, clk_pos;
    cl_event_t last_begin; /* newest step begin seen while disconnected */
    int64_t last_begin_us; /* its time */
    bool have_last_begin;
} cl_io_t;

struct profd_client {
    /* ---- training thread ---- */
    ce_t eng;
    cl_plan_t *plan; /* adopted */
    int64_t captures_seen;

    int cur_phase; /* index of the running phase's name, -1 none */

    /* sections (profd_section_*): this step's exclusive totals, timed (in
     * ticks) and added (ns), the open ones (innermost last) and when the
     * innermost began or resumed (ticks) */
    uint64_t sec_ticks[PROFD_SECTIONS], sec_ns[PROFD_SECTIONS];
    unsigned sec_used, sec_added; /* bit per section with time this step */
    int sec_open[CL_SECTION_DEPTH];
    int sec_depth;
    uint64_t sec_t0;

    /* ---- shared ---- */
    cl_ring_t *ring;
    /* the event clock: its source is fixed at open, its anchors are the
     * background thread's (clock.h) */
    cl_clock_t clock;
    /* phase names by index: written by the training thread (append only),
     * read by the background thread up to nphase_names (release/acquire) */
    char phase_names[CL_PHASE_NAMES][2 * PP_MAX_NAME + 2]; /* "phase" or "role.phase" */
    _Atomic int nphase_names;
    char phase_keys[CL_PHASE_NAMES][PP_MAX_NAME + 1]; /* training thread only: */
    int phase_roles[CL_PHASE_NAMES];                  /* the phase and its role */
    _Atomic(cl_plan_t *) pending;
    _Atomic uint64_t adopted_seq;
    _Atomic(cl_result_t *) outbox;
    _Atomic int64_t st_connected, st_client_id, st_plan_gen, st_windows, st_captures,
        st_events_sent, st_reconnects;

    /* ---- roles: the training thread adds, the background thread sends
     * them (a hello again when roles_gen moves) ---- */
    pthread_mutex_t roles_mu;
    ce_role_t roles[PP_MAX_ROLES]; /* under roles_mu: every role, the primary first */
    int nroles;                    /* under roles_mu */
    _Atomic uint64_t roles_gen;

    /* ---- options (immutable after open) ---- */
    bool url_search;    /* no URL given: look for the daemon with `rundir` */
    cl_rundir_t rundir; /* candidates from the environment at open */
    int flush_ms;
    profd_log_fn log;
    void *log_arg;
    int log_level;
    int64_t local_rank, world_size;

    /* ---- background thread ---- */
    cl_io_t io;
    /* the daemon's URL: set by open, then the background thread's (it
     * re-resolves it before registering when url_search) */
    char url[PP_MAX_PATH];
};

/* Log through the user's hook, if any (never prints otherwise; log.c). */
void cl_log(profd_client_t *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* profd_open() with the run directory candidates given (tests point them at
 * folders of their own; profd_open takes them from cl_rundir_init()). */
int cl_open(profd_client_t **out, const profd_options_t *opts, const cl_rundir_t *rundir);

/* A message encoded into an nng message: 0, or PROFD_ENOMEM or the codec's
 * error (rpc.c). */
int cl_msg_from(const pp_msg_t *m, nng_msg **out);

/* Background thread (io.c). */
int cl_io_start(profd_client_t *c);
/* Asks the thread to deliver what is pending (bounded) and exit; joins it.
 * With no daemon registered it returns within about CL_CLOSE_NODAEMON_MS. */
void cl_io_stop(profd_client_t *c);
#define CL_CLOSE_NODAEMON_MS 100
/* Wake the background thread out of its idle sleep: news for it (the first
 * step event after a pause, a result, a role). A lock and a signal, only
 * when it sleeps: never called on a step with the thread awake. */
void cl_io_kick(profd_client_t *c);

/* Create a folder and its parents (mode 0777 & ~umask). 0 or PROFD_EIO. */
int cl_mkdirs(const char *path, void *arg);
/* The engine's `markers` hook (engine.h): <dir>/profd-markers-p<part>.json,
 * written aside and renamed; a failure costs the capture its markers. */
void cl_markers_write(const char *dir, int64_t part, const char *json, size_t len, void *arg);

#endif
