// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * What the endpoints of one daemon share: its settings and identity, the
 * loop, the rank registry, the window table, the plan generation and the
 * delivery latency estimate, and the hooks through which they tell the
 * layers above them what happened. The composition root (daemon.c) owns
 * every part of it and fills it in; the node and cluster modules receive a
 * pointer. Loop thread only.
 */
#ifndef PD_NODE_H
#define PD_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "endpoint.h"
#include "history.h"
#include "latency.h"
#include "log.h"
#include "loop.h"
#include "registry.h"
#include "straggler.h"
#include "windows.h"
#include "wrecord.h"

/* Up the layers: what a node module tells the daemon. Every hook is
 * optional. */
typedef struct pd_node_hooks {
    /* a worker registered, was lost or left (the roster a coordinator gets) */
    void (*roster_changed)(void *arg);
    /* ranks were added or removed, or a manifest waits for a retry (the
     * periodic tick follows them) */
    void (*ranks_changed)(void *arg);
    /* a coordinator: the slowest node's own delivery estimate (us) */
    int64_t (*remote_latency_us)(void *arg);
    /* `status` fields only the multi-node modules know */
    void (*status)(void *arg, pp_status_reply_t *out);
    /* a rank registered (or again, its roles changed) / is gone for good */
    void (*rank_changed)(void *arg, const pd_rank_t *k);
    void (*rank_gone)(void *arg, int64_t id);
    /* what changed is about to be told (a plan): keep it over a restart first */
    void (*durable)(void *arg);
    /* send this reply (buf, owned from here) once the daemon's journal
     * holds what it tells: at once after the journal's write (held while
     * writes fail) */
    void (*reply_durable)(void *arg, pd_req_t *req, char *buf, size_t len);
    /* a node daemon: the instance of its coordinator */
    void (*coordinator_known)(void *arg, const char *instance);
    void *arg;
} pd_node_hooks_t;

/* Counts the metrics endpoint serves (counters only grow). */
typedef struct pd_node_stats {
    int64_t events;      /* step events taken in from workers */
    int64_t dropped;     /* step events workers dropped (their ring was full) */
    int64_t captures[5]; /* captures of finished windows, by pp_capture_status_t */
    int64_t windows_done;
    int64_t bytes; /* gathered into finished windows */
    int64_t errors_manifest, errors_report, errors_merge;
    int64_t reports, merges;
    /* a coordinator's journal: its writes, their time on the loop thread,
     * the member records they held (state_cached: 0, nothing is cached) */
    int64_t state_saves, state_save_us, state_encoded, state_cached;
    /* a coordinator: chunks answered "no progress" with its node requests
     * at coordinator.max_node_requests (cluster/remote.c) */
    int64_t chunks_deferred;
    /* a coordinator: chunks batches answered busy (cluster/remote.c) */
    int64_t batches_busy;
} pd_node_stats_t;

struct pd_retention;
struct pd_hook;

typedef struct pd_node {
    const pd_config_t *cfg;
    pd_log_t *log;
    pd_loop_t *loop;
    pd_registry_t *reg;
    pd_windows_t *win;
    pd_history_t *hist;    /* step times of every rank heard of */
    pd_straggler_t *strag; /* the straggler trigger */
    pd_wrecords_t *wrec;   /* the running windows' records of step times; NULL none */

    const char *instance; /* random id of this daemon run */
    const char *name;     /* this node's name */
    const char *spool;    /* absolute */
    const char *save_path;
    int64_t uid, gid; /* the daemon's own */
    bool chgrp;       /* security.socket_group is set: */
    int64_t socket_gid;

    int64_t gen; /* plan generation: bumped on every window change */
    int64_t gen_published_us;
    pd_latency_t latency; /* publish -> worker (or node) acknowledges */
    int64_t bad_requests;
    pd_node_stats_t stats;
    int64_t batch_files, batch_bytes; /* a coordinator: of the batches being written */
    int64_t manifests_waiting;        /* windows whose manifest waits for a retry (finish.c) */
    bool stopping;
    struct pd_retention *retention; /* node/retention.c: prunes the tree; NULL none */
    struct pd_hook *hook;           /* node/hook.c: the after-window hook; NULL none */
    pd_rep_budget_t *budget;        /* the request memory of the worker and control sockets */
    pd_node_hooks_t hooks;
} pd_node_t;

/* Planner parameters for now: the clock, the delivery estimate (plus the
 * slowest node's own, on a coordinator), the margin, and the default job
 * (the one every registered rank shares, else "default"). */
void pd_node_plan_params(const pd_node_t *n, pd_plan_params_t *p);

/* Reply "ack" with the current plan generation. */
void pd_node_reply_ack(const pd_node_t *n, pd_req_t *req);
/* Reply m (or "ack") once what it acknowledges is kept over a restart
 * (hooks.reply_durable; at once where none is set): the peer forgets what
 * it sent once acknowledged. */
void pd_node_reply_durable(pd_node_t *n, pd_req_t *req, const pp_msg_t *m);
void pd_node_reply_ack_durable(pd_node_t *n, pd_req_t *req);

/* A long poll (a worker's watch, a node's node_watch) that acknowledges
 * plan generation gen and asks to be held hold_ms (0, or more than
 * watch_hold_ms: watch_hold_ms). A delivery sample when the poller's
 * previous poll held the plan when this generation was published
 * (*gen_sample == gen); any other poller (one that registered, or came
 * back, since) would measure its own start, not the delivery. Then
 * *gen_sample = -1 and *gen_acked = gen, and: PD_WATCH_PARKED (req parked
 * until *deadline_ms), PD_WATCH_NEW (answer now with the new plan) or
 * PD_WATCH_FULL (too many parked: answer "unchanged" now, the poller asks
 * again). */
enum { PD_WATCH_PARKED, PD_WATCH_NEW, PD_WATCH_FULL };
int pd_node_watch(pd_node_t *n, pd_req_t *req, int64_t gen, int64_t hold_ms, int64_t *gen_sample,
                  int64_t *gen_acked, int64_t *deadline_ms);

/* Options of a reply endpoint of this daemon: its settings for size,
 * socket mode and group, and TLS files (tls points at storage of the
 * caller's that outlives the call). */
void pd_node_rep_opts(const pd_node_t *n, const char *url, pt_tls_files_t *tls, pd_rep_opts_t *out);
/* What every endpoint of this daemon shares in its dispatcher's options:
 * the JSON bound, no framed type, the refusal counter, the log. */
void pd_node_endpoint_opts(pd_node_t *n, pd_endpoint_opts_t *eo);

/* A rank of `job` was lost or left: when no rank of the job is active any
 * more, its windows with nobody to wait for expire (pd_windows_job_gone). */
void pd_node_job_check(pd_node_t *n, const char *job);
/* The step-time history entry of rank k (made when new); NULL on ENOMEM. */
pd_hist_rank_t *pd_node_hist(pd_node_t *n, const pd_rank_t *k, int64_t now_ms);
/* The entry of rank k, if it has one (nothing made, nothing updated). */
pd_hist_rank_t *pd_node_hist_find(pd_node_t *n, const pd_rank_t *k);
/* Entry h of the history took new times: into the running windows' records. */
void pd_node_hist_fed(pd_node_t *n, const pd_hist_rank_t *h);
/* Rank k is gone: lost, or left (it said goodbye, its job may be over);
 * its history stays, marked, for the reports. */
void pd_node_hist_gone(pd_node_t *n, const pd_rank_t *k, bool left);

/* The hooks, called when set. */
void pd_node_roster_changed(pd_node_t *n);
void pd_node_ranks_changed(pd_node_t *n);
void pd_node_rank_changed(pd_node_t *n, const pd_rank_t *k);
void pd_node_rank_gone(pd_node_t *n, int64_t id);
void pd_node_durable(pd_node_t *n);
void pd_node_coordinator_known(pd_node_t *n, const char *instance);

#endif
