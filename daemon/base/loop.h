// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The daemon's event loop: owns the uv_loop_t, the signal handlers and the
 * bridge from nng threads into the loop. nng callbacks never touch libuv or
 * daemon state: they post a task (a node embedded in their own object) onto
 * a mutex-protected queue and call uv_async_send(), the only libuv call made
 * from another thread. The loop drains the whole queue per wake-up (sends
 * coalesce).
 */
#ifndef PD_LOOP_H
#define PD_LOOP_H

#include <pthread.h>
#include <stdbool.h>

#include <uv.h>

typedef struct pd_task pd_task_t;
typedef void (*pd_task_fn)(pd_task_t *t);

struct pd_task {
    pd_task_fn run;  /* called on the loop thread */
    pd_task_fn drop; /* called instead when the task is cancelled; may be NULL */
    void *owner;     /* for pd_loop_cancel_owner() */
    pd_task_t *next;
    bool queued;
};

typedef void (*pd_signal_fn)(int signum, void *arg);

typedef struct pd_loop {
    uv_loop_t uv;
    uv_async_t async;
    uv_signal_t sig[3];
    int nsig;
    pthread_mutex_t mu;
    pd_task_t *head, *tail; /* under mu */
    pd_signal_fn on_signal;
    void *signal_arg;
    bool closed;
} pd_loop_t;

/* Initialise the loop and the bridge. 0 or PROFD_EINTERNAL. */
int pd_loop_init(pd_loop_t *l);

/* Handle SIGINT, SIGTERM and SIGHUP on the loop thread (optional: tests
 * running daemons in threads do not install them). */
int pd_loop_signals(pd_loop_t *l, pd_signal_fn fn, void *arg);

/* Any thread. The task must not already be queued. */
void pd_loop_post(pd_loop_t *l, pd_task_t *t);

/* Loop thread. Remove queued tasks of `owner`, calling their drop(). */
void pd_loop_cancel_owner(pd_loop_t *l, void *owner);

/* Run until every handle is closed (uv_run UV_RUN_DEFAULT). */
int pd_loop_run(pd_loop_t *l);

/* Close the loop's own handles (async, signals); handles of other modules
 * must already be closing. Runs the loop until they are closed, drops any
 * task still queued, closes the loop. Returns uv_loop_close()'s result. */
int pd_loop_fini(pd_loop_t *l);

#endif
