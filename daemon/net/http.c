// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A small HTTP endpoint (see http.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "http.h"
#include "profd/errors.h"

struct pd_http {
    pd_loop_t *loop;
    nng_http_server *srv;
    nng_http_handler *handler;
    pd_http_body_fn fn;
    void *arg;
    char content_type[96];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool closing; /* under mu */
    int inflight; /* under mu */
    long served;  /* under mu */
};

/* One request waiting on an nng thread for its body. */
typedef struct waiter {
    pd_task_t task;
    pd_http_t *h;
    bool done; /* under h->mu */
    int rv;
    char *body;
    size_t len;
} waiter_t;

static void run(pd_task_t *t)
{
    waiter_t *w = (waiter_t *)t;
    char *body = NULL;
    size_t len = 0;
    int rv = w->h->fn(w->h->arg, &body, &len);
    pthread_mutex_lock(&w->h->mu);
    w->rv = rv;
    w->body = rv == 0 ? body : NULL;
    w->len = len;
    w->done = true;
    pthread_cond_broadcast(&w->h->cv);
    pthread_mutex_unlock(&w->h->mu);
    if (rv != 0) {
        free(body);
    }
}

static void drop(pd_task_t *t)
{
    waiter_t *w = (waiter_t *)t;
    pthread_mutex_lock(&w->h->mu);
    w->rv = PROFD_ECLOSED;
    w->done = true;
    pthread_cond_broadcast(&w->h->cv);
    pthread_mutex_unlock(&w->h->mu);
}

static void answer(nng_aio *aio, int status, const char *ctype, const char *body, size_t len)
{
    nng_http_res *res;
    int rv = status == 200 ? nng_http_res_alloc(&res) : nng_http_res_alloc_error(&res, status);
    if (rv != 0) {
        nng_aio_finish(aio, rv);
        return;
    }
    if (status == 200 && (nng_http_res_set_header(res, "Content-Type", ctype) != 0 ||
                          nng_http_res_copy_data(res, body, len) != 0)) {
        nng_http_res_free(res);
        nng_aio_finish(aio, NNG_ENOMEM);
        return;
    }
    nng_aio_set_output(aio, 0, res);
    nng_aio_finish(aio, 0);
}

/* nng's thread */
static void on_request(nng_aio *aio)
{
    nng_http_handler *hd = nng_aio_get_input(aio, 1);
    pd_http_t *h = nng_http_handler_get_data(hd);
    waiter_t w;
    memset(&w, 0, sizeof(w));
    w.task.run = run;
    w.task.drop = drop;
    w.task.owner = h;
    w.h = h;
    pthread_mutex_lock(&h->mu);
    if (h->closing) {
        pthread_mutex_unlock(&h->mu);
        answer(aio, 503, NULL, NULL, 0);
        return;
    }
    h->inflight++;
    pd_loop_post(h->loop, &w.task); /* under mu: close() cannot miss it */
    while (!w.done) {
        pthread_cond_wait(&h->cv, &h->mu);
    }
    h->served++;
    pthread_mutex_unlock(&h->mu);
    if (w.rv == 0) {
        answer(aio, 200, h->content_type, w.body, w.len);
    } else {
        answer(aio, w.rv == PROFD_ECLOSED ? 503 : 500, NULL, NULL, 0);
    }
    free(w.body);
    pthread_mutex_lock(&h->mu);
    h->inflight--;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

int pd_http_open(pd_http_t **out, pd_loop_t *loop, const char *url, const char *path,
                 const char *content_type, pd_http_body_fn fn, void *arg, char *err, size_t errlen)
{
    nng_url *u = NULL;
    int rv;
    if (strncmp(url, "http://", 7) != 0 || nng_url_parse(&u, url) != 0 || u->u_port == NULL ||
        u->u_port[0] == '\0') {
        if (u) {
            nng_url_free(u);
        }
        snprintf(err, errlen, "listen.metrics: expected http://HOST:PORT, found '%.200s'", url);
        return PROFD_EINVAL;
    }
    pd_http_t *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        nng_url_free(u);
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    h->loop = loop;
    h->fn = fn;
    h->arg = arg;
    snprintf(h->content_type, sizeof(h->content_type), "%s", content_type);
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    if ((rv = nng_http_server_hold(&h->srv, u)) != 0 ||
        (rv = nng_http_handler_alloc(&h->handler, path, on_request)) != 0 ||
        (rv = nng_http_handler_set_method(h->handler, "GET")) != 0 ||
        (rv = nng_http_handler_set_data(h->handler, h, NULL)) != 0 ||
        (rv = nng_http_server_add_handler(h->srv, h->handler)) != 0) {
        nng_url_free(u);
        if (h->handler && rv != 0) {
            nng_http_handler_free(h->handler);
        }
        if (h->srv) {
            nng_http_server_release(h->srv);
        }
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->cv);
        free(h);
        snprintf(err, errlen, "listen.metrics %s: %s", url, nng_strerror(rv));
        return PROFD_EIO;
    }
    nng_url_free(u);
    if ((rv = nng_http_server_start(h->srv)) != 0) {
        nng_http_server_release(h->srv);
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->cv);
        free(h);
        snprintf(err, errlen, "listen.metrics %s: %s", url, nng_strerror(rv));
        return PROFD_EIO;
    }
    *out = h;
    return 0;
}

void pd_http_close(pd_http_t *h)
{
    if (h == NULL) {
        return;
    }
    pthread_mutex_lock(&h->mu);
    h->closing = true;
    pthread_mutex_unlock(&h->mu);
    pd_loop_cancel_owner(h->loop, h); /* wakes the threads waiting: 503 */
    pthread_mutex_lock(&h->mu);
    while (h->inflight > 0) {
        pthread_cond_wait(&h->cv, &h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    nng_http_server_stop(h->srv);
    nng_http_server_release(h->srv);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h);
}

long pd_http_served(const pd_http_t *h)
{
    long n;
    if (h == NULL) {
        return 0;
    }
    pthread_mutex_lock((pthread_mutex_t *)&h->mu);
    n = h->served;
    pthread_mutex_unlock((pthread_mutex_t *)&h->mu);
    return n;
}
