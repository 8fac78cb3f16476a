// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A small HTTP endpoint on the loop thread (libuv): GET on one path answered
 * with a body the loop thread makes, then the connection closed. Bounded:
 * at most max_conns connections (max_per_peer from one address), each
 * closed once idle_ms pass without a whole request head (8 KiB at most);
 * a connection past a limit is closed as it arrives. No thread of its own.
 * Plain http:// only: serve it on a loopback or otherwise confined address.
 */
#ifndef PD_HTTP_H
#define PD_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "loop.h"

typedef struct pd_http pd_http_t;

/* Loop thread: the body of one answer (malloc'ed, taken), 0; or an error
 * (the answer is 500). */
typedef int (*pd_http_body_fn)(void *arg, char **body, size_t *len);

typedef struct pd_http_limits {
    int max_conns;    /* connections at once; 0 = none */
    int max_per_peer; /* of one address; 0 = none */
    int64_t idle_ms;  /* a connection without a whole request this long is closed; 0 = 10 s */
} pd_http_limits_t;

/* Serve GET `path` on `url` (http://HOST:PORT) with `content_type`. 0 and
 * *out, or PROFD_EINVAL (bad URL) / PROFD_EIO (cannot listen) / PROFD_ENOMEM
 * with the reason in err. Loop thread. */
int pd_http_open(pd_http_t **out, pd_loop_t *loop, const char *url, const char *path,
                 const char *content_type, const pd_http_limits_t *lim, pd_http_body_fn fn,
                 void *arg, char *err, size_t errlen);
/* Loop thread. Stops serving; requests waiting are answered 503. NULL is
 * fine. */
void pd_http_close(pd_http_t *h);
/* Requests answered so far; connections closed as they arrived. */
long pd_http_served(const pd_http_t *h);
long pd_http_refused(const pd_http_t *h);

#endif
