// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The daemon's clock (see clock.h): common/pu_clock.c's reading. */
#include "clock.h"
#include "pu_clock.h"

int64_t pd_now_ms(void)
{
    return pu_now_ms();
}

int64_t pd_now_us(void)
{
    return pu_now_us();
}
