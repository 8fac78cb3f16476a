// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Asynchronous request client on the loop (see reqc.h). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "clock.h"
#include "reqc.h"
#include "pu_nng.h"
#include "tlsconf.h"

enum { S_FREE, S_SEND, S_RECV, S_DONE };

/* libnng 1.5.2 was seen to lose an aio's timeout (left in an expiry queue
 * whose thread slept without a deadline) and with it a dialer's
 * reconnection timer: a request past its own timeout by GRACE_MS is
 * cancelled by pd_reqc_tick, and UNANSWERED requests in a row that had no
 * answer, with no connection up, get a new dialer (see client/io.c, where a
 * worker never came back after its daemon's restart). A connection that is
 * up is never closed for it: requests also time out on a busy peer. */
#define GRACE_MS   500
#define UNANSWERED 2

typedef struct slot {
    struct pd_reqc *c;
    nng_ctx ctx;
    nng_aio *aio;
    int state;
    int rv;
    nng_msg *reply;
    pd_reqc_cb cb;
    void *arg;
    pd_task_t task;
    int timeout_ms;
    _Atomic int64_t due_ms; /* past it, pd_reqc_tick cancels the operation; 0 idle */
} slot_t;

struct pd_reqc {
    pd_loop_t *loop;
    nng_socket sock;
    nng_dialer dialer;
    char url[PP_MAX_PATH];
    slot_t *slots;
    int nslots;
    void *tls;
    int unanswered;     /* requests in a row that ended with no answer */
    _Atomic int npipes; /* connections up (nng's pipe events) */
    _Atomic bool closing;
};

static void slot_run(pd_task_t *t)
{
    slot_t *s = (slot_t *)((char *)t - offsetof(slot_t, task));
    pd_reqc_cb cb = s->cb;
    void *arg = s->arg;
    nng_msg *m = s->reply;
    int rv = s->rv;
    s->reply = NULL;
    s->state = S_FREE;
    s->cb = NULL;
    atomic_store(&s->due_ms, 0);
    if (m) {
        s->c->unanswered = 0;
    } else if (rv == PROFD_ETIMEDOUT || rv == PROFD_ENODAEMON) {
        s->c->unanswered++; /* no answer: see pd_reqc_tick */
    }
    if (m) {
        cb(arg, 0, nng_msg_body(m), nng_msg_len(m));
        nng_msg_free(m);
    } else {
        cb(arg, rv, NULL, 0);
    }
}

static void pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    (void)p;
    atomic_fetch_add(&((pd_reqc_t *)arg)->npipes, ev == NNG_PIPE_EV_ADD_PRE ? 1 : -1);
}

static void slot_cb(void *arg)
{
    slot_t *s = arg;
    int rv = nng_aio_result(s->aio);
    if (atomic_load(&s->c->closing)) {
        return;
    }
    if (s->state == S_SEND) {
        if (rv == 0) {
            s->state = S_RECV;
            atomic_store(&s->due_ms, pd_now_ms() + s->timeout_ms + GRACE_MS);
            nng_ctx_recv(s->ctx, s->aio);
            return;
        }
        nng_msg_free(nng_aio_get_msg(s->aio));
        nng_aio_set_msg(s->aio, NULL);
    } else if (rv == 0) {
        s->reply = nng_aio_get_msg(s->aio);
        nng_aio_set_msg(s->aio, NULL);
    }
    s->rv = pu_nng_err(rv);
    s->state = S_DONE;
    pd_loop_post(s->c->loop, &s->task);
}

/* A dialer of url on c's socket (with c's TLS configuration, if any),
 * started: it dials at once, then again after a drop. 0 or nng's error. */
static int dialer_start(pd_reqc_t *c, const char *url, nng_dialer *out)
{
    nng_dialer d;
    int rv = nng_dialer_create(&d, c->sock, url);
    if (rv != 0) {
        return rv;
    }
    if ((c->tls && (rv = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, c->tls)) != 0) ||
        (rv = nng_dialer_start(d, NNG_FLAG_NONBLOCK)) != 0) {
        nng_dialer_close(d);
        return rv;
    }
    *out = d;
    return 0;
}

int pd_reqc_open(pd_reqc_t **out, pd_loop_t *loop, const char *url, const pt_tls_files_t *tls,
                 int max_inflight, char *err, size_t errlen)
{
    pd_reqc_t *c = calloc(1, sizeof(*c));
    nng_dialer d;
    int rv;
    if (c == NULL) {
        return PROFD_ENOMEM;
    }
    c->loop = loop;
    c->nslots = max_inflight > 0 ? max_inflight : 1;
    if ((c->slots = calloc((size_t)c->nslots, sizeof(*c->slots))) == NULL ||
        nng_req0_open(&c->sock) != 0) {
        free(c->slots);
        free(c);
        return PROFD_ENOMEM;
    }
    /* requests are idempotent or carry their own state: resend only when a
     * connection drops (nng does that), never on a timer */
    nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
    nng_socket_set_ms(c->sock, NNG_OPT_RECONNMINT, 100);
    nng_socket_set_ms(c->sock, NNG_OPT_RECONNMAXT, 2000);
    nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, 64u << 20);
    nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_PRE, pipe_cb, c);
    nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, pipe_cb, c);
    for (int i = 0; i < c->nslots; i++) {
        slot_t *s = &c->slots[i];
        s->c = c;
        s->task.run = slot_run;
        s->task.owner = c;
        if (nng_ctx_open(&s->ctx, c->sock) != 0 || nng_aio_alloc(&s->aio, slot_cb, s) != 0) {
            snprintf(err, errlen, "out of memory");
            pd_reqc_close(c);
            return PROFD_ENOMEM;
        }
    }
    if (pt_tls_url(url)) {
        if (tls == NULL || (c->tls = pt_tls_config(tls, false, err, errlen)) == NULL) {
            if (tls == NULL) {
                snprintf(err, errlen,
                         "%s needs TLS files (tls.ca_file, tls.cert_file, tls.key_file)", url);
            }
            pd_reqc_close(c);
            return PROFD_EINVAL;
        }
    }
    if ((rv = dialer_start(c, url, &d)) != 0) {
        snprintf(err, errlen, "%s %s: %s",
                 rv == NNG_EADDRINVAL || rv == NNG_ENOTSUP ? "invalid address" : "cannot dial", url,
                 nng_strerror(rv));
        pd_reqc_close(c);
        return PROFD_EINVAL;
    }
    c->dialer = d;
    snprintf(c->url, sizeof(c->url), "%s", url);
    *out = c;
    return 0;
}

/* A new dialer in place of the old one (which goes once the new one is
 * started): the old one's reconnection timer may be lost (see GRACE_MS). */
static void redial(pd_reqc_t *c)
{
    nng_dialer d;
    if (dialer_start(c, c->url, &d) == 0) {
        nng_dialer_close(c->dialer);
        c->dialer = d;
    }
}

void pd_reqc_tick(pd_reqc_t *c, int64_t now_ms)
{
    for (int i = 0; i < c->nslots; i++) {
        slot_t *s = &c->slots[i];
        int64_t due = atomic_load(&s->due_ms);
        if (due != 0 && now_ms >= due &&
            atomic_compare_exchange_strong(&s->due_ms, &due, now_ms + GRACE_MS)) {
            nng_aio_cancel(s->aio); /* completes it (slot_cb), as its timeout would have */
        }
    }
    if (c->unanswered >= UNANSWERED && atomic_load(&c->npipes) <= 0) {
        c->unanswered = 0;
        redial(c);
    }
}

/* Sends m (owned by the slot from now on, freed on failure) on a free slot. */
static int send_nng(pd_reqc_t *c, nng_msg *m, int timeout_ms, pd_reqc_cb cb, void *arg)
{
    slot_t *s = NULL;
    for (int i = 0; i < c->nslots; i++) {
        if (c->slots[i].state == S_FREE) {
            s = &c->slots[i];
            break;
        }
    }
    if (s == NULL) {
        nng_msg_free(m);
        return PROFD_ELIMIT;
    }
    s->cb = cb;
    s->arg = arg;
    s->rv = 0;
    s->reply = NULL;
    s->state = S_SEND;
    s->timeout_ms = timeout_ms;
    atomic_store(&s->due_ms, pd_now_ms() + timeout_ms + GRACE_MS);
    nng_aio_set_msg(s->aio, m);
    nng_aio_set_timeout(s->aio, timeout_ms);
    nng_ctx_send(s->ctx, s->aio);
    return 0;
}

int pd_reqc_send(pd_reqc_t *c, const void *buf, size_t len, int timeout_ms, pd_reqc_cb cb,
                 void *arg)
{
    nng_msg *m;
    if (nng_msg_alloc(&m, 0) != 0) {
        return PROFD_ENOMEM;
    }
    if (nng_msg_append(m, buf, len) != 0) {
        nng_msg_free(m);
        return PROFD_ENOMEM;
    }
    return send_nng(c, m, timeout_ms, cb, arg);
}

int pd_reqc_send_msg(pd_reqc_t *c, const pp_msg_t *m, const void *payload, size_t plen,
                     int timeout_ms, pd_reqc_cb cb, void *arg)
{
    char *json;
    size_t jl;
    nng_msg *nm;
    int rv = pp_msg_encode(m, &json, &jl);
    if (rv != 0) {
        return rv;
    }
    /* a frame (pp_frame_encode's layout: the JSON, a NUL, the payload)
     * built in the message itself: the payload copied once */
    if (nng_msg_alloc(&nm, jl + (payload ? 1 + plen : 0)) != 0) {
        free(json);
        return PROFD_ENOMEM;
    }
    char *body = nng_msg_body(nm);
    memcpy(body, json, jl);
    free(json);
    if (payload) {
        body[jl] = '\0';
        memcpy(body + jl + 1, payload, plen);
    }
    return send_nng(c, nm, timeout_ms, cb, arg);
}

void pd_reqc_close(pd_reqc_t *c)
{
    if (c == NULL) {
        return;
    }
    atomic_store(&c->closing, true);
    nng_close(c->sock);
    for (int i = 0; i < c->nslots; i++) {
        if (c->slots[i].aio) {
            nng_aio_stop(c->slots[i].aio);
        }
    }
    pd_loop_cancel_owner(c->loop, c);
    for (int i = 0; i < c->nslots; i++) {
        slot_t *s = &c->slots[i];
        if (s->aio) {
            if (s->state == S_SEND && nng_aio_result(s->aio) != 0) {
                nng_msg_free(nng_aio_get_msg(s->aio));
            }
            nng_aio_free(s->aio);
        }
        if (s->reply) {
            nng_msg_free(s->reply);
        }
    }
    pt_tls_config_free(c->tls);
    free(c->slots);
    free(c);
}
