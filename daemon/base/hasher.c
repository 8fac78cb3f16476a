// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* xxh64 on a second thread (see hasher.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <xxhash.h>

#include "hasher.h"
#include "profd/proto.h"

struct pd_hasher {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const void *buf; /* handed over, not yet hashed; NULL: idle */
    size_t len;
    bool stop;
    XXH64_state_t *st;
};

static void *run(void *arg)
{
    pd_hasher_t *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (h->buf == NULL && !h->stop) {
            pthread_cond_wait(&h->cv, &h->mu);
        }
        if (h->buf == NULL) {
            break; /* stopped, nothing left */
        }
        const void *buf = h->buf;
        size_t len = h->len;
        pthread_mutex_unlock(&h->mu);
        XXH64_update(h->st, buf, len);
        pthread_mutex_lock(&h->mu);
        h->buf = NULL;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

int pd_hasher_start(pd_hasher_t **out)
{
    pd_hasher_t *h = calloc(1, sizeof(*h));
    if (h == NULL || (h->st = XXH64_createState()) == NULL) {
        free(h);
        return PROFD_ENOMEM;
    }
    XXH64_reset(h->st, 0);
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    if (pthread_create(&h->thread, NULL, run, h) != 0) {
        pthread_cond_destroy(&h->cv);
        pthread_mutex_destroy(&h->mu);
        XXH64_freeState(h->st);
        free(h);
        return PROFD_EINTERNAL;
    }
    *out = h;
    return 0;
}

static void wait_idle(pd_hasher_t *h)
{
    while (h->buf != NULL) {
        pthread_cond_wait(&h->cv, &h->mu);
    }
}

void pd_hasher_feed(pd_hasher_t *h, const void *buf, size_t len)
{
    pthread_mutex_lock(&h->mu);
    wait_idle(h);
    h->buf = buf;
    h->len = len;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

uint64_t pd_hasher_finish(pd_hasher_t *h)
{
    pthread_mutex_lock(&h->mu);
    wait_idle(h);
    h->stop = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->thread, NULL);
    uint64_t digest = XXH64_digest(h->st);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    XXH64_freeState(h->st);
    free(h);
    return digest;
}
