// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The endpoint dispatcher (see endpoint.h). */
#include <stdlib.h>

#include "endpoint.h"

struct pd_endpoint {
    pd_rep_t *rep;
    pd_endpoint_opts_t o;
};

static void refuse(pd_endpoint_t *ep, pd_req_t *req, int code, const char *fmt, const char *arg)
{
    (*ep->o.bad_requests)++;
    pd_req_reply_error(req, code, fmt, arg);
}

static pd_handler_fn handler_of(const pd_endpoint_t *ep, pp_type_t t)
{
    for (size_t i = 0; i < ep->o.nhandlers; i++) {
        if (ep->o.handlers[i].type == t) {
            return ep->o.handlers[i].fn;
        }
    }
    return NULL;
}

static void dispatch(pd_req_t *req, void *arg)
{
    pd_endpoint_t *ep = arg;
    char err[256], what[256];
    const void *payload = NULL;
    size_t len, plen = 0;
    pp_msg_t m;
    const void *body = pd_req_body(req, &len);
    size_t jl = ep->o.framed != PP_T_NONE ? pp_frame_split(body, len, &payload, &plen) : len;

    int rv = pp_msg_decode(body, jl, ep->o.max_json, &m, err, sizeof(err));
    if (rv != 0) {
        PD_LOG(ep->o.log, PD_LOG_DEBUG, ep->o.name, "bad request: %s", err);
        refuse(ep, req, rv, "%s", err);
        return;
    }
    pd_handler_fn fn = handler_of(ep, m.type);
    snprintf(what, sizeof(what), "'%s' is not %s", pp_type_name(m.type), ep->o.what);
    if (!(ep->o.accept & PD_ACCEPT(pp_type_access(m.type))) ||
        (plen && m.type != ep->o.framed && m.type != ep->o.framed2) || fn == NULL) {
        refuse(ep, req, PROFD_ETYPE, "%s", what);
    } else if (ep->o.permit &&
               (rv = ep->o.permit(ep->o.ctx, pd_req_peer(req), &m, err, sizeof(err))) != 0) {
        pd_req_reply_error(req, rv, "%s", err);
    } else {
        fn(ep->o.ctx, req, &m, payload, plen);
    }
    pp_msg_free(&m);
}

int pd_endpoint_open(pd_endpoint_t **out, pd_loop_t *loop, const pd_rep_opts_t *rep,
                     const pd_endpoint_opts_t *o, char *err, size_t errlen)
{
    pd_endpoint_t *ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        return PROFD_ENOMEM;
    }
    ep->o = *o;
    pd_rep_opts_t ro = *rep;
    ro.handler = dispatch;
    ro.handler_arg = ep;
    ro.arg = o->ctx;
    int rv = pd_rep_open(&ep->rep, loop, &ro, err, errlen);
    if (rv != 0) {
        free(ep);
        return rv;
    }
    *out = ep;
    return 0;
}

void pd_endpoint_close(pd_endpoint_t *ep)
{
    if (ep && !pd_rep_close(ep->rep)) {
        PD_LOG(ep->o.log, PD_LOG_WARN, ep->o.name,
               "the socket did not close within 3 s (a hang of libnng 1.5.2's ipc "
               "transport with a reply partly sent): left to a thread, stopping without it");
    }
    free(ep);
}

static pd_rep_stats_t stats_of(const pd_endpoint_t *ep)
{
    pd_rep_stats_t st = {0};
    if (ep) {
        pd_rep_stats(ep->rep, &st);
    }
    return st;
}

int64_t pd_endpoint_limited(const pd_endpoint_t *ep)
{
    return stats_of(ep).limited;
}

int64_t pd_endpoint_parked(const pd_endpoint_t *ep)
{
    return stats_of(ep).parked;
}
