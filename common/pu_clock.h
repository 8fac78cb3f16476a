// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The one reading of CLOCK_MONOTONIC in milliseconds and microseconds, for
 * the client library (clock.h's cl_now_*) and the daemon's layers above the
 * pure core (base/clock.h's pd_now_*). */
#ifndef PU_CLOCK_H
#define PU_CLOCK_H

#include <stdint.h>

int64_t pu_now_ms(void);
int64_t pu_now_us(void);

#endif
