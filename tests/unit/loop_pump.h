// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Turning a daemon loop from a test thread that also plays the peer: the
 * monotonic clock in ms, and pump() for `ms` at most or until done(arg).
 */
#ifndef PD_TEST_LOOP_PUMP_H
#define PD_TEST_LOOP_PUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "loop.h"

static inline int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void loop_pump(pd_loop_t *loop, int ms, bool (*done)(void *arg), void *arg)
{
    int64_t end = now_ms() + ms;
    while (now_ms() < end && !(done && done(arg))) {
        uv_run(&loop->uv, UV_RUN_NOWAIT);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

#endif
