/*
 * The daemon context: everything one running profd owns. No global state:
 * a test can run two daemons in one process. Modules receive this context
 * explicitly; all of it is touched only on the loop thread.
 *
 * Init order (main.c and tests): pd_daemon_init (loop, registry, windows,
 * endpoints), pd_daemon_run (until stopped), pd_daemon_fini (reverse).
 */
#ifndef PD_DAEMON_H
#define PD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "config.h"
#include "log.h"
#include "loop.h"
#include "registry.h"
#include "rep.h"
#include "windows.h"

#define PD_LATENCY_SAMPLES 64

typedef struct pd_daemon {
    pd_config_t cfg;
    pd_log_t log;
    pd_loop_t loop;
    pd_registry_t reg;
    pd_windows_t win;
    pd_rep_t *worker_ep;
    pd_rep_t *control_ep;
    pd_rep_t *control_remote_ep; /* listen.control_remote, when set */
    struct pd_link *link;        /* node mode: the link to the coordinator */
    struct pd_coord *coord;      /* coordinator mode: the node endpoint */

    char instance[24]; /* random id of this daemon run */
    char node[PP_MAX_NAME + 1];
    char spool[PD_PATH_MAX]; /* absolute */
    char save_path[PD_PATH_MAX];
    int64_t uid, gid;
    bool chgrp;         /* security.socket_group is set: */
    int64_t socket_gid; /* its gid */

    int64_t gen; /* plan generation: bumped on every window change */
    int64_t gen_published_us;
    bool broadcast_due;
    uv_idle_t broadcast; /* coalesces plan changes into one broadcast */
    uv_timer_t tick;     /* liveness, long-poll expiry; runs while ranks exist */
    bool tick_running;
    uv_async_t stop_async; /* thread-safe stop request */

    /* plan delivery latency (publish -> worker acknowledges), microseconds */
    int64_t lat_samples[PD_LATENCY_SAMPLES];
    int lat_n, lat_pos;
    int64_t lat_probe_peers; /* ranks + nodes at the last latency probe */

    uv_timer_t state_timer; /* coordinator: saves the state after changes */
    bool state_timer_ready, state_dirty, state_saving;

    int64_t bad_requests;
    int64_t stop_timeout_ms; /* > 0: exit(1) when stopping takes longer (main.c sets it) */
    void *watchdog;          /* the stop watchdog's shared flag */
    int64_t reload_count;
    bool stopping;
} pd_daemon_t;

/* Set up everything and listen. On error returns PROFD_* with a one-line
 * reason in `err`, and the daemon is already torn down. */
int pd_daemon_init(pd_daemon_t *d, const pd_config_t *cfg, char *err, size_t errlen);
/* Handle SIGINT/SIGTERM (stop) and SIGHUP (reload the profiling config). */
int pd_daemon_signals(pd_daemon_t *d);
/* Run the loop until pd_daemon_request_stop() or a stop signal. */
int pd_daemon_run(pd_daemon_t *d);
/* Any thread. */
void pd_daemon_request_stop(pd_daemon_t *d);
/* Free everything; returns 0 when the loop closed cleanly. */
int pd_daemon_fini(pd_daemon_t *d);

/* ---- used by the modules (loop thread) ---- */

int64_t pd_now_ms(void);
int64_t pd_now_us(void);

/* Something that changes plans happened: bump the generation and answer the
 * parked long polls once the current loop iteration is over. */
void pd_daemon_plans_changed(pd_daemon_t *d);
/* Delivery latency estimate (p99 of recent samples, at least 2 ms). On a
 * coordinator it covers the hop to the node daemons; pd_daemon_plan_params
 * adds the slowest node's own estimate. */
int64_t pd_daemon_latency_us(const pd_daemon_t *d);
void pd_daemon_latency_sample(pd_daemon_t *d, int64_t us);
/* Planner parameters for now. */
void pd_daemon_plan_params(const pd_daemon_t *d, pd_plan_params_t *p);
/* Decode a request's JSON body (at most limits.max_msg_bytes): 0, or the
 * error, already counted, logged at debug level and replied. */
int pd_daemon_decode(pd_daemon_t *d, pd_req_t *req, const char *endpoint, const void *body,
                     size_t len, pp_msg_t *m);
/* Reply "ack" with the current plan generation. */
void pd_daemon_reply_ack(pd_daemon_t *d, pd_req_t *req);
/* Start the liveness timer if ranks are registered, stop it otherwise. */
void pd_daemon_tick_update(pd_daemon_t *d);

#endif
