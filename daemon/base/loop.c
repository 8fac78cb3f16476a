// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Event loop and nng -> libuv bridge (see loop.h). */
#include <signal.h>
#include <string.h>

#include "loop.h"
#include "profd/errors.h"

static void on_async(uv_async_t *h)
{
    pd_loop_t *l = h->data;
    pd_task_t *t;

    pthread_mutex_lock(&l->mu);
    t = l->head;
    l->head = l->tail = NULL;
    for (pd_task_t *p = t; p; p = p->next) {
        p->queued = false;
    }
    pthread_mutex_unlock(&l->mu);

    while (t) {
        pd_task_t *next = t->next; /* run() may requeue or free t */
        t->next = NULL;
        t->run(t);
        t = next;
    }
}

static void on_signal(uv_signal_t *h, int signum)
{
    pd_loop_t *l = h->data;
    if (l->on_signal) {
        l->on_signal(signum, l->signal_arg);
    }
}

int pd_loop_init(pd_loop_t *l)
{
    memset(l, 0, sizeof(*l));
    if (uv_loop_init(&l->uv) != 0) {
        return PROFD_EINTERNAL;
    }
    if (uv_async_init(&l->uv, &l->async, on_async) != 0) {
        uv_loop_close(&l->uv);
        return PROFD_EINTERNAL;
    }
    l->async.data = l;
    pthread_mutex_init(&l->mu, NULL);
    return 0;
}

int pd_loop_signals(pd_loop_t *l, pd_signal_fn fn, void *arg)
{
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    l->on_signal = fn;
    l->signal_arg = arg;
    for (int i = 0; i < 3; i++) {
        if (uv_signal_init(&l->uv, &l->sig[i]) != 0 ||
            uv_signal_start(&l->sig[i], on_signal, sigs[i]) != 0) {
            return PROFD_EINTERNAL;
        }
        l->sig[i].data = l;
        l->nsig = i + 1;
    }
    return 0;
}

void pd_loop_post(pd_loop_t *l, pd_task_t *t)
{
    pthread_mutex_lock(&l->mu);
    if (l->closed) {
        pthread_mutex_unlock(&l->mu);
        if (t->drop) {
            t->drop(t);
        }
        return;
    }
    t->next = NULL;
    t->queued = true;
    if (l->tail) {
        l->tail->next = t;
    } else {
        l->head = t;
    }
    l->tail = t;
    pthread_mutex_unlock(&l->mu);
    uv_async_send(&l->async);
}

void pd_loop_cancel_owner(pd_loop_t *l, void *owner)
{
    pd_task_t *dropped = NULL;
    pthread_mutex_lock(&l->mu);
    pd_task_t **pp = &l->head;
    l->tail = NULL;
    while (*pp) {
        pd_task_t *t = *pp;
        if (t->owner == owner) {
            *pp = t->next;
            t->queued = false;
            t->next = dropped;
            dropped = t;
        } else {
            l->tail = t;
            pp = &t->next;
        }
    }
    pthread_mutex_unlock(&l->mu);
    while (dropped) {
        pd_task_t *next = dropped->next;
        if (dropped->drop) {
            dropped->drop(dropped);
        }
        dropped = next;
    }
}

int pd_loop_run(pd_loop_t *l)
{
    return uv_run(&l->uv, UV_RUN_DEFAULT);
}

int pd_loop_fini(pd_loop_t *l)
{
    pd_task_t *t;

    uv_close((uv_handle_t *)&l->async, NULL);
    for (int i = 0; i < l->nsig; i++) {
        uv_close((uv_handle_t *)&l->sig[i], NULL);
    }
    uv_run(&l->uv, UV_RUN_DEFAULT);

    pthread_mutex_lock(&l->mu);
    l->closed = true;
    t = l->head;
    l->head = l->tail = NULL;
    pthread_mutex_unlock(&l->mu);
    while (t) {
        pd_task_t *next = t->next;
        t->queued = false;
        if (t->drop) {
            t->drop(t);
        }
        t = next;
    }
    int rv = uv_loop_close(&l->uv);
    pthread_mutex_destroy(&l->mu);
    return rv;
}
