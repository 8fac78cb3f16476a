// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * An asynchronous request client on the daemon's loop: an nng REQ socket
 * dialing one peer (tcp://, tls+tcp:// or ipc://), a bounded number of
 * requests in flight, each on its own context, each reply (or error)
 * delivered to a callback on the loop thread. Reconnects by itself.
 */
#ifndef PD_REQC_H
#define PD_REQC_H

#include <stddef.h>

#include "loop.h"
#include "profd/proto.h"
#include "tlsconf.h"

typedef struct pd_reqc pd_reqc_t;

/* rv: 0 with the reply body, or PROFD_ETIMEDOUT / PROFD_ENODAEMON /
 * PROFD_ECLOSED (no body). Loop thread. The body is valid during the call. */
typedef void (*pd_reqc_cb)(void *arg, int rv, const void *body, size_t len);

/* Open and dial (in the background). PROFD_EINVAL for a bad URL or TLS
 * files, with the reason in err. */
int pd_reqc_open(pd_reqc_t **out, pd_loop_t *loop, const char *url, const pt_tls_files_t *tls,
                 int max_inflight, char *err, size_t errlen);

/* Send a copy of `buf`. Returns 0 (cb will run once), or PROFD_ELIMIT when
 * max_inflight requests are out, PROFD_ENOMEM (cb will not run). */
int pd_reqc_send(pd_reqc_t *c, const void *buf, size_t len, int timeout_ms, pd_reqc_cb cb,
                 void *arg);
/* Encode and send a message, with an optional framed payload. */
int pd_reqc_send_msg(pd_reqc_t *c, const pp_msg_t *m, const void *payload, size_t plen,
                     int timeout_ms, pd_reqc_cb cb, void *arg);

/* Loop thread, every second or so: a request past its timeout that libnng
 * did not end is cancelled; after requests in a row with no answer, the
 * peer is dialed anew (libnng 1.5.2 was seen to lose timeouts and a
 * dialer's reconnection timer). */
void pd_reqc_tick(pd_reqc_t *c, int64_t now_ms);

/* Loop thread: cancel everything (callbacks of pending requests do not run)
 * and free. */
void pd_reqc_close(pd_reqc_t *c);

#endif
