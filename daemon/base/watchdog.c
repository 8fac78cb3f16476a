// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The stop watchdog (see watchdog.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "watchdog.h"

struct pd_watchdog {
    _Atomic bool stopped; /* set by pd_watchdog_cancel(); the thread frees it */
    int64_t timeout_ms;
};

static void *run(void *arg)
{
    pd_watchdog_t *w = arg;
    struct timespec ts = {(time_t)(w->timeout_ms / 1000), (long)(w->timeout_ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    if (!atomic_load(&w->stopped)) {
        static const char msg[] = "profd: stopping did not finish in time; exiting\n";
        (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(1);
    }
    free(w);
    return NULL;
}

pd_watchdog_t *pd_watchdog_start(int64_t timeout_ms)
{
    pthread_t t;
    pd_watchdog_t *w = timeout_ms > 0 ? calloc(1, sizeof(*w)) : NULL;
    if (w == NULL) {
        return NULL;
    }
    w->timeout_ms = timeout_ms;
    if (pthread_create(&t, NULL, run, w) != 0) {
        free(w);
        return NULL;
    }
    pthread_detach(t);
    return w;
}

void pd_watchdog_cancel(pd_watchdog_t *w)
{
    if (w) {
        atomic_store(&w->stopped, true);
    }
}
