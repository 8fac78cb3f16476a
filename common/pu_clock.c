// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* CLOCK_MONOTONIC in milliseconds and microseconds (see pu_clock.h). */
#include <time.h>

#include "pu_clock.h"

int64_t pu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t pu_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
