// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A small HTTP endpoint (nng's HTTP server): GET on one path answered with
 * a body the loop thread makes. nng serves the request on its own thread,
 * which posts a task to the loop and waits for it; the body is made on the
 * loop thread only (daemon state is never touched from nng's threads), and
 * the nng thread sends it. Plain http:// only: serve it on a loopback or
 * otherwise confined address.
 */
#ifndef PD_HTTP_H
#define PD_HTTP_H

#include <stddef.h>

#include "loop.h"

typedef struct pd_http pd_http_t;

/* Loop thread: the body of one answer (malloc'ed, taken), 0; or an error
 * (the answer is 500). */
typedef int (*pd_http_body_fn)(void *arg, char **body, size_t *len);

/* Serve GET `path` on `url` (http://HOST:PORT) with `content_type`. 0 and
 * *out, or PROFD_EINVAL (bad URL) / PROFD_EIO (cannot listen) / PROFD_ENOMEM
 * with the reason in err. */
int pd_http_open(pd_http_t **out, pd_loop_t *loop, const char *url, const char *path,
                 const char *content_type, pd_http_body_fn fn, void *arg, char *err, size_t errlen);
/* Loop thread. Stops serving; requests waiting are answered 503. NULL is
 * fine. */
void pd_http_close(pd_http_t *h);
/* Requests answered so far. */
long pd_http_served(const pd_http_t *h);

#endif
