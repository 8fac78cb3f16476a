// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The worker endpoint: registration, step events, the plan long poll and
 * capture results from the client library (libprofd). A worker's requests
 * after its registration are accepted only from the uid that registered it.
 * Loop thread only.
 */
#ifndef PD_WORKER_H
#define PD_WORKER_H

#include <stdint.h>

#include "node.h"

typedef struct pd_worker pd_worker_t;

/* Listen on cfg.worker_url. 0 and *out, or PROFD_* with the reason in err. */
int pd_worker_init(pd_worker_t **out, pd_node_t *n, char *err, size_t errlen);
/* Stop listening (parked long polls are dropped) and free. NULL is fine. */
void pd_worker_fini(pd_worker_t *w);

/* Answer every parked long poll with the worker's current plan: a plan's reply is
 * encoded once and its bytes are shared by every poll whose plan is the same. */
void pd_worker_broadcast(pd_worker_t *w);
/* Periodic: lost workers, expired long polls, forgetting long-lost ranks. */
void pd_worker_tick(pd_worker_t *w, int64_t now_ms);
/* Requests refused by the rate limit so far. */
int64_t pd_worker_limited(const pd_worker_t *w);

#endif
