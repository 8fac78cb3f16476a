// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The last resort of a stop that does not end: a library call that never
 * returns (seen once in nng's close under heavy load) must not keep a
 * service from stopping. A watchdog thread waits; if it is not cancelled in
 * time it writes one line to stderr and _exit(1)s.
 */
#ifndef PD_WATCHDOG_H
#define PD_WATCHDOG_H

#include <stdint.h>

typedef struct pd_watchdog pd_watchdog_t;

/* Start one; NULL when timeout_ms <= 0 or no thread could be started (then
 * nothing guards the stop). */
pd_watchdog_t *pd_watchdog_start(int64_t timeout_ms);
/* The stop finished: the thread frees the watchdog when it wakes. NULL is
 * fine. */
void pd_watchdog_cancel(pd_watchdog_t *w);

#endif
