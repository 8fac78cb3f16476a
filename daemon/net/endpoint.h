// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * An endpoint: a reply endpoint (rep.h) whose requests all go through one
 * dispatcher doing every check, in order, before any handler runs:
 *   1. size and codec: the JSON part decodes (size limit, JSON, version,
 *      known type, schema); a payload after a NUL only for the framed
 *      types the endpoint takes (framed, framed2);
 *   2. the access class messages.def gives the type is one this endpoint
 *      serves;
 *   3. the peer may send it (the endpoint's permit function);
 * then the handler of the type, from the endpoint's const table. Refused
 * requests get an error reply and are counted in *bad_requests (permission
 * refusals are counted by the permit function, which knows why).
 * Loop thread only.
 */
#ifndef PD_ENDPOINT_H
#define PD_ENDPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "loop.h"
#include "profd/proto.h"
#include "rep.h"

/* A handler owns nothing of `m` (the dispatcher frees it afterwards; a
 * handler may move parts out and leave NULL behind) and must reply to or
 * park `req` before returning. payload: the bytes after the JSON of a
 * framed message, else NULL. */
typedef void (*pd_handler_fn)(void *ctx, pd_req_t *req, pp_msg_t *m, const void *payload,
                              size_t plen);

typedef struct pd_handler {
    pp_type_t type;
    pd_handler_fn fn;
} pd_handler_t;

/* May this peer send m? 0, or a PROFD_* code with a one-line reason in
 * `why` for the error reply. */
typedef int (*pd_permit_fn)(void *ctx, const pd_peer_t *peer, const pp_msg_t *m, char *why,
                            size_t whylen);

#define PD_ACCEPT(acc) (1u << (acc))

typedef struct pd_endpoint_opts {
    const char *name;  /* log tag: "worker", "control", "coord" */
    const char *what;  /* a refused type is "'TYPE' is not WHAT" */
    unsigned accept;   /* PD_ACCEPT(PP_ACC_...) of the classes served */
    size_t max_json;   /* limit of the JSON part (limits.max_msg_bytes) */
    pp_type_t framed;  /* the type that may carry a payload; PP_T_NONE */
    pp_type_t framed2; /* a second one (the node endpoint's chunks); PP_T_NONE */
    const pd_handler_t *handlers;
    size_t nhandlers;
    pd_permit_fn permit;   /* NULL: every peer may send what the endpoint serves */
    int64_t *bad_requests; /* where refusals are counted */
    pd_log_t *log;
    void *ctx; /* handlers', permit's and rep's pipe_gone / limited argument */
} pd_endpoint_opts_t;

typedef struct pd_endpoint pd_endpoint_t;

/* Listen with `rep` (its handler and arg are the dispatcher's; its
 * pipe_gone and limited get o->ctx). 0 and *out, or what pd_rep_open
 * returns, with the reason in err. */
int pd_endpoint_open(pd_endpoint_t **out, pd_loop_t *loop, const pd_rep_opts_t *rep,
                     const pd_endpoint_opts_t *o, char *err, size_t errlen);
/* Stop serving; parked requests are dropped without a reply. NULL is fine. */
void pd_endpoint_close(pd_endpoint_t *ep);
/* Requests refused by the endpoint's rate limit so far. */
int64_t pd_endpoint_limited(const pd_endpoint_t *ep);
/* Requests parked now (held for a later reply). */
int64_t pd_endpoint_parked(const pd_endpoint_t *ep);

#endif
