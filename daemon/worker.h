/*
 * The worker endpoint: registration, step events, the plan long poll and
 * capture results from the client library (libprofd). Loop thread only.
 */
#ifndef PD_WORKER_H
#define PD_WORKER_H

#include <stdint.h>

struct pd_daemon;
struct pd_rank;

/* Listen on cfg.worker_url. 0, or PROFD_* with the reason in err. */
int pd_worker_init(struct pd_daemon *d, char *err, size_t errlen);
void pd_worker_fini(struct pd_daemon *d);

/* Answer every parked long poll with the worker's current plan. */
void pd_worker_broadcast(struct pd_daemon *d);
/* Periodic: lost workers, expired long polls, forgetting long-lost ranks. */
void pd_worker_tick(struct pd_daemon *d, int64_t now_ms);

#endif
