/*
 * A reply endpoint: an nng REP socket served by a pool of contexts, each
 * request handed to the loop thread. The handler either replies at once or
 * parks the request (a long poll) and replies later; the pool grows so that
 * parked requests never starve new ones, up to a bound.
 *
 * Threads: the nng callbacks only move a request between states and post it
 * to the loop; handlers, replies and parking happen on the loop thread.
 */
#ifndef PD_REP_H
#define PD_REP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "profd/proto.h"

typedef struct pd_rep pd_rep_t;
typedef struct pd_req pd_req_t;

/* Peer credentials of an ipc:// request; -1 when unknown (tcp). */
typedef struct pd_peer {
    int64_t uid, gid, pid;
    uint32_t pipe;
} pd_peer_t;

/* Called on the loop thread for each request: must pd_req_reply*() or
 * pd_req_park() before returning. */
typedef void (*pd_rep_handler)(pd_req_t *req, void *arg);
/* Called on the loop thread when a peer's connection goes away. */
typedef void (*pd_rep_pipe_gone)(uint32_t pipe, void *arg);

typedef struct pd_rep_opts {
    const char *url;
    size_t max_msg;     /* larger requests still arrive (to get an error reply) up
                           to 4x this; beyond that nng drops the connection */
    int socket_mode;    /* ipc socket permissions, 0 = library default */
    int initial;        /* contexts created at start */
    int max_contexts;   /* bound on parked + receiving contexts */
    const struct pd_tls_files *tls; /* tls+tcp:// listeners: required */
    pd_rep_handler handler;
    pd_rep_pipe_gone pipe_gone; /* optional */
    void *arg;
} pd_rep_opts_t;

/* Listen on opts->url. Returns 0 and *out, or PROFD_EINVAL (bad URL),
 * PROFD_EIO (cannot listen: the message in err), PROFD_ENOMEM. */
int pd_rep_open(pd_rep_t **out, pd_loop_t *loop, const pd_rep_opts_t *opts, char *err,
                size_t errlen);
/* Loop thread. Stops every context, frees parked requests without a reply. */
void pd_rep_close(pd_rep_t *rep);

/* The request body (not NUL-terminated). */
const void *pd_req_body(const pd_req_t *req, size_t *len);
const pd_peer_t *pd_req_peer(const pd_req_t *req);

/* Replies; the request is gone afterwards. */
void pd_req_reply(pd_req_t *req, const char *buf, size_t len);
void pd_req_reply_msg(pd_req_t *req, const pp_msg_t *m);
void pd_req_reply_error(pd_req_t *req, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Keep the request for a later reply. Returns false (not parked; reply now)
 * when the pool is at its bound. */
bool pd_req_park(pd_req_t *req);

/* Counters. */
typedef struct pd_rep_stats {
    int64_t requests;
    int64_t contexts;
    int64_t parked;
} pd_rep_stats_t;
void pd_rep_stats(const pd_rep_t *rep, pd_rep_stats_t *out);

#endif
