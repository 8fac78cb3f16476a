// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * libprofd's background thread: one request on the rpc context and its
 * reply, every wait bounded (see rpc_wait's note on libnng 1.5.2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>

#include "io.h"
#include "pu_nng.h"

#define RPC_GRACE_MS 500 /* past a request's timeout: cancelled by us (see rpc_wait) */

int cl_msg_from(const pp_msg_t *m, nng_msg **out)
{
    char *buf;
    size_t len;
    nng_msg *nm;
    int rv = pp_msg_encode(m, &buf, &len);
    if (rv != 0) {
        return rv;
    }
    rv = nng_msg_alloc(&nm, len);
    if (rv == 0) {
        memcpy(nng_msg_body(nm), buf, len);
    }
    free(buf);
    if (rv != 0) {
        return PROFD_ENOMEM;
    }
    *out = nm;
    return 0;
}

/* Decode a reply; an error message becomes its code. */
int cl_msg_to(profd_client_t *c, nng_msg *nm, pp_msg_t *out)
{
    char err[256];
    int rv = pp_msg_decode(nng_msg_body(nm), nng_msg_len(nm), 0, out, err, sizeof(err));
    nng_msg_free(nm);
    if (rv != 0) {
        cl_log(c, PROFD_LOG_WARN, "profd: bad reply from daemon: %s", err);
        return rv;
    }
    if (out->type == PP_T_error) {
        rv = (int)out->u.error.code;
        cl_log(c, PROFD_LOG_DEBUG, "profd: daemon refused: %s", out->u.error.message);
        pp_msg_free(out);
        return rv < 0 ? rv : PROFD_EPROTO;
    }
    return 0;
}

void cl_rpc_cb(void *arg)
{
    cl_io_t *io = &((profd_client_t *)arg)->io;
    pthread_mutex_lock(&io->mu);
    io->rpc_done = true;
    pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
}

void cl_abs_deadline(struct timespec *ts, int64_t deadline_ms)
{
    int64_t now = cl_now_ms();
    clock_gettime(CLOCK_MONOTONIC, ts);
    int64_t ns = (int64_t)ts->tv_nsec + (deadline_ms > now ? deadline_ms - now : 0) * 1000000;
    ts->tv_sec += ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
}

/* Start the rpc aio's operation and wait for it. Once close is asked, an
 * operation still running is cancelled after CLOSE_TIMEOUT_MS while
 * registered, CL_CLOSE_NODAEMON_MS otherwise (a hello nobody answers).
 *
 * The wait does not rely on libnng alone to end it: libnng 1.5.2 was seen
 * to lose an aio's timeout (the aio left in an expiry queue whose thread
 * sleeps without a deadline; a hello queued for a daemon that had just
 * restarted then waited forever, and its rank never came back). An
 * operation past its own timeout by RPC_GRACE_MS is cancelled here (the
 * cancellation is the protocol's, as a timeout's would be), and again each
 * RPC_GRACE_MS until it completes. */
static int rpc_wait(profd_client_t *c, bool send, int timeout_ms)
{
    cl_io_t *io = &c->io;
    pthread_mutex_lock(&io->mu);
    io->rpc_done = false;
    pthread_mutex_unlock(&io->mu);
    if (send) {
        nng_ctx_send(io->rpc_ctx, io->rpc_aio);
    } else {
        nng_ctx_recv(io->rpc_ctx, io->rpc_aio);
    }
    bool cancelled = false;
    int64_t overdue = cl_now_ms() + timeout_ms + RPC_GRACE_MS;
    pthread_mutex_lock(&io->mu);
    while (!io->rpc_done) {
        int64_t now = cl_now_ms(), limit = overdue;
        if (io->stop && !cancelled) {
            int64_t close =
                io->stop_ms + (io->registered ? CLOSE_TIMEOUT_MS : CL_CLOSE_NODAEMON_MS);
            limit = close < limit ? close : limit;
        }
        if (now >= limit) {
            bool late = now >= overdue;
            if (late) {
                overdue = now + RPC_GRACE_MS;
            } else {
                cancelled = true;
            }
            pthread_mutex_unlock(&io->mu);
            if (late) {
                cl_log(c, PROFD_LOG_DEBUG, "profd: a request outlived its %d ms: cancelled",
                       timeout_ms);
            }
            nng_aio_cancel(io->rpc_aio); /* completes it: cl_rpc_cb */
            pthread_mutex_lock(&io->mu);
            continue;
        }
        struct timespec ts;
        cl_abs_deadline(&ts, limit);
        pthread_cond_timedwait(&io->cv, &io->mu, &ts);
    }
    pthread_mutex_unlock(&io->mu);
    return nng_aio_result(io->rpc_aio);
}

int cl_rpc(profd_client_t *c, const pp_msg_t *req, pp_msg_t *rep, int timeout_ms)
{
    cl_io_t *io = &c->io;
    nng_msg *nm;
    int rv;

    if ((rv = cl_msg_from(req, &nm)) != 0) {
        return rv;
    }
    nng_aio_set_msg(io->rpc_aio, nm);
    nng_aio_set_timeout(io->rpc_aio, timeout_ms);
    if ((rv = rpc_wait(c, true, timeout_ms)) != 0) {
        nng_msg_free(nng_aio_get_msg(io->rpc_aio));
        nng_aio_set_msg(io->rpc_aio, NULL);
        return pu_nng_err(rv);
    }
    nng_aio_set_timeout(io->rpc_aio, timeout_ms);
    if ((rv = rpc_wait(c, false, timeout_ms)) != 0) {
        return pu_nng_err(rv);
    }
    return cl_msg_to(c, nng_aio_get_msg(io->rpc_aio), rep);
}

void cl_set_disconnected(profd_client_t *c)
{
    cl_io_t *io = &c->io;
    if (io->registered) {
        cl_log(c, PROFD_LOG_INFO, "profd: lost the daemon at %s; will reconnect", c->url);
    }
    io->registered = false;
    atomic_store(&c->st_connected, 0);
    atomic_store(&c->st_client_id, 0);
    if (io->watching) {
        nng_aio_cancel(io->watch_aio); /* the callback reports it */
    }
}
