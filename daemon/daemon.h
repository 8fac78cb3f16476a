// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The composition root: one running profd. It owns every module, creates
 * them in order (settings, log, registry, window table, loop, endpoints,
 * the coordinator or the link, the journal), installs the hooks through
 * which the lower layers tell what happened, and tears them down in
 * reverse. No global state: a test can run two daemons in one process.
 * Everything is touched only on the loop thread, but for
 * pd_daemon_request_stop().
 */
#ifndef PD_DAEMON_H
#define PD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "config.h"
#include "control.h"
#include "coord.h"
#include "history.h"
#include "http.h"
#include "journal.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "node.h"
#include "registry.h"
#include "straggler.h"
#include "watchdog.h"
#include "windows.h"
#include "worker.h"

typedef struct pd_daemon {
    pd_config_t cfg;
    pd_log_t log;
    pd_loop_t loop;
    pd_registry_t reg;
    pd_windows_t win;
    pd_history_t hist;      /* step times of every rank heard of */
    pd_wrecords_t wrec;     /* the running windows' records of step times */
    pd_straggler_t strag;   /* the straggler trigger */
    pd_http_t *metrics;     /* listen.metrics, when set */
    pd_node_t node;         /* what the endpoints share (points into the fields here) */
    pd_rep_budget_t budget; /* request memory of the worker and control sockets */

    pd_worker_t *worker;
    pd_control_t *control;
    pd_link_t *link;       /* a node daemon: the link to the coordinator */
    pd_coord_t *coord;     /* a coordinator: the node endpoint */
    pd_journal_t *journal; /* its journal (either role) */

    char instance[24]; /* random id of this daemon run */
    char name[PP_MAX_NAME + 1];
    char spool[PD_PATH_MAX]; /* absolute */
    char save_path[PD_PATH_MAX];

    bool broadcast_due;
    uv_idle_t broadcast; /* coalesces plan changes into one broadcast */
    uv_timer_t tick;     /* liveness, long-poll expiry; runs while ranks exist */
    bool tick_running;
    int64_t last_tick_ms;    /* when the tick last ran (or was started) */
    int64_t trimmed_reports; /* node.stats.reports when the heap was last trimmed */
    int64_t stalled_ms;      /* the daemon's own stalls, in all */
    uv_async_t stop_async;   /* thread-safe stop request */
    int64_t lat_probe_peers; /* ranks + nodes at the last latency probe */

    int64_t stop_timeout_ms; /* > 0: exit(1) when stopping takes longer (main.c sets it) */
    pd_watchdog_t *watchdog; /* while stopping */
    int64_t reload_count;
} pd_daemon_t;

/* Set up everything and listen. On error returns PROFD_* with a one-line
 * reason in `err`, and the daemon is already torn down. */
/* What pd_daemon_init refuses of the settings alone (roles, TLS names, the
 * socket group, the endpoints, the hook's user), without starting anything:
 * profd --check-config. 0, or an error with one line in err. */
int pd_daemon_check(const pd_config_t *cfg, char *err, size_t errlen);
int pd_daemon_init(pd_daemon_t *d, const pd_config_t *cfg, char *err, size_t errlen);
/* Handle SIGINT/SIGTERM (stop) and SIGHUP (reload the profiling config). */
int pd_daemon_signals(pd_daemon_t *d);
/* Run the loop until pd_daemon_request_stop() or a stop signal. */
int pd_daemon_run(pd_daemon_t *d);
/* Any thread. */
void pd_daemon_request_stop(pd_daemon_t *d);
/* Free everything; returns 0 when the loop closed cleanly. */
int pd_daemon_fini(pd_daemon_t *d);

#endif
