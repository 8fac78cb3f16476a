// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The daemon's clock: CLOCK_MONOTONIC, in milliseconds and microseconds.
 * Only the layers above the pure core read it; the core takes times as
 * parameters. */
#ifndef PD_CLOCK_H
#define PD_CLOCK_H

#include <stdint.h>

int64_t pd_now_ms(void);
int64_t pd_now_us(void);

#endif
