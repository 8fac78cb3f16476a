// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
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
#include "tlsconf.h"

typedef struct pd_rep pd_rep_t;
typedef struct pd_req pd_req_t;

typedef enum pd_via {
    PD_VIA_IPC,   /* ipc:// */
    PD_VIA_TLS,   /* tls+tcp:// */
    PD_VIA_TCP,   /* tcp:// */
    PD_VIA_OTHER, /* inproc:// ... */
} pd_via_t;

/* Who sent a request: the transport, the credentials of an ipc://
 * connection (uid, gid and pid from the kernel; -1 for other transports),
 * and for tls+tcp:// whether the peer's certificate verified against the
 * configured CA. */
typedef struct pd_peer {
    pd_via_t via;
    int64_t uid, gid, pid;
    bool tls_verified;
    /* tls+tcp://: the verified certificate's common name, where nng gives
     * it (NNG_OPT_TLS_PEER_CN, nng >= 1.6; pd_rep_peer_cn_known()); "" */
    char cn[PP_MAX_NAME + 1];
    uint32_t pipe;
} pd_peer_t;

/* Does this build read the common name of a peer's certificate? */
bool pd_rep_peer_cn_known(void);

/* Called on the loop thread for each request: must pd_req_reply*() or
 * pd_req_park() before returning. */
typedef void (*pd_rep_handler)(pd_req_t *req, void *arg);
/* Called on the loop thread when a peer's connection goes away. */
typedef void (*pd_rep_pipe_gone)(uint32_t pipe, void *arg);
/* Called on the loop thread when a peer first goes over the rate limit
 * (again after its allowance has refilled). */
typedef void (*pd_rep_limited)(const pd_peer_t *peer, void *arg);

/* Requests are received whole up to max_msg plus this, so that one a little
 * over max_msg gets its ETOOBIG reply. Beyond it nng drops the connection
 * as soon as the message's length header arrives, before its body is read:
 * a connection never holds more than max_msg + PD_REP_SLACK of a request. */
#define PD_REP_SLACK ((size_t)64 << 10)

/* The memory the requests of several endpoints may hold together: each open
 * connection reserves what one request of its endpoint can take (max_msg +
 * PD_REP_SLACK) for as long as it is open; a connection past the budget is
 * closed as it arrives. Shared across threads (nng's pipe callbacks). */
typedef struct pd_rep_budget {
    _Atomic int64_t used;
    int64_t cap; /* bytes; 0 = none */
} pd_rep_budget_t;

typedef struct pd_rep_opts {
    const char *url;
    size_t max_msg; /* larger requests still arrive (to get an error reply) up to
                       max_msg + PD_REP_SLACK; beyond that nng drops the connection */
    /* connections at once, in all and from one peer (a uid over ipc://, an
     * address over TCP): one past them is closed as it arrives; 0 none */
    int max_conns;
    int max_conns_per_peer;
    pd_rep_budget_t *budget; /* shared request memory; NULL none */
    int socket_mode;         /* ipc socket permissions, 0 = library default */
    bool chgrp;              /* give ipc sockets to socket_gid (else the daemon's group) */
    int64_t socket_gid;
    int initial;               /* contexts created at start */
    int max_contexts;          /* bound on parked + receiving contexts */
    int64_t rate;              /* requests per second per connection, 0 = unlimited */
    const pt_tls_files_t *tls; /* tls+tcp:// listeners: required */
    pd_rep_handler handler;
    void *handler_arg;
    pd_rep_pipe_gone pipe_gone; /* optional */
    pd_rep_limited limited;     /* optional */
    void *arg;                  /* of pipe_gone and limited */
} pd_rep_opts_t;

/* Listen on opts->url. Requests over the rate limit (a token bucket per
 * connection: `rate` requests per second, bursts of one second's worth) get
 * PROFD_ELIMIT "rate limit: N requests/s" without reaching the handler.
 * Returns 0 and *out, or PROFD_EINVAL (bad URL or TLS files), PROFD_EIO
 * (cannot listen, or cannot give an ipc socket to socket_gid: the message
 * in err), PROFD_ENOMEM. */
int pd_rep_open(pd_rep_t **out, pd_loop_t *loop, const pd_rep_opts_t *opts, char *err,
                size_t errlen);
/* Loop thread. Stops every context, frees parked requests without a
 * reply, closes the socket and frees the endpoint. Returns true, or false
 * when libnng did not finish closing the socket within 3 s (a known hang
 * of nng 1.5.2's ipc transport): the endpoint is then left to a thread of
 * its own and the caller goes on without it. */
bool pd_rep_close(pd_rep_t *rep);

/* The request body (not NUL-terminated). A parked request gives its body
 * back once its handler returns (NULL, *len 0 after that): what a later
 * reply needs of it is kept by the handler. */
const void *pd_req_body(const pd_req_t *req, size_t *len);
const pd_peer_t *pd_req_peer(const pd_req_t *req);

/* Replies; the request is gone afterwards. */
void pd_req_reply(pd_req_t *req, const char *buf, size_t len);
void pd_req_reply_msg(pd_req_t *req, const pp_msg_t *m);
void pd_req_reply_error(pd_req_t *req, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Keep the request for a later reply. Returns false (not parked; reply now)
 * when the pool is at its bound; true, and nothing else, for a request
 * parked already. */
bool pd_req_park(pd_req_t *req);

/* Counters. */
typedef struct pd_rep_stats {
    int64_t requests;
    int64_t contexts;
    int64_t parked;
    int64_t limited; /* refused by the rate limit */
    int64_t conns;   /* connections open */
    int64_t refused; /* connections closed as they arrived (the limits above) */
} pd_rep_stats_t;
void pd_rep_stats(const pd_rep_t *rep, pd_rep_stats_t *out);

#endif
