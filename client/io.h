// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * libprofd's background thread, inside: what io.c (the thread, registration,
 * plans), rpc.c (one request and its reply) and flush.c (step events and
 * results) share. Calls go io.c -> flush.c -> rpc.c. Not installed.
 */
#ifndef PROFD_CLIENT_IO_H
#define PROFD_CLIENT_IO_H

#include <time.h>

#include "internal.h"

#define CLOSE_TIMEOUT_MS 500
#define EV_BATCH         2048

/* A failure that means the daemon is gone (or never was): register again. */
static inline bool cl_transport_error(int rv)
{
    return rv == PROFD_ETIMEDOUT || rv == PROFD_ECLOSED || rv == PROFD_ENODAEMON;
}

/* ---- rpc.c ---- */

/* Decode a reply (freeing nm); an error message becomes its code. */
int cl_msg_to(profd_client_t *c, nng_msg *nm, pp_msg_t *out);
/* The rpc aio's callback (arg: the client). */
void cl_rpc_cb(void *arg);
/* *ts: CLOCK_MONOTONIC at deadline_ms (cl_now_ms's clock), for a timed wait. */
void cl_abs_deadline(struct timespec *ts, int64_t deadline_ms);
/* Send req on the rpc context and wait for its reply (bounded, see rpc.c). */
int cl_rpc(profd_client_t *c, const pp_msg_t *req, pp_msg_t *rep, int timeout_ms);
/* The daemon is gone: registered no more, the long poll cancelled. */
void cl_set_disconnected(profd_client_t *c);

/* ---- flush.c ---- */

/* Send the ring's step events (and the clock samples); `force`: even with
 * nothing new (a heartbeat). */
void cl_flush_events(profd_client_t *c, int timeout_ms, bool force);
/* No daemon: drop the ring's events but the newest step begin. */
void cl_discard_stale_events(profd_client_t *c);
/* Move the training thread's results onto io's list, oldest first. */
void cl_take_outbox(profd_client_t *c);
/* Whether r can go: no exec command of its captures still runs (one that
 * failed fails its capture; `closing`: one still running fails it). */
bool cl_exec_settled(cl_result_t *r, bool closing);
/* Deliver the results whose exec commands have settled. */
void cl_flush_results(profd_client_t *c, int timeout_ms);
void cl_say_bye(profd_client_t *c);

#endif
