// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The rank registry: every worker registered with this daemon, what it is
 * (job, role, global rank, replica rank, host, pid) and where it stands
 * (current step, recent step time, liveness). Owned by the loop thread.
 *
 * Ids are (slot index + 1) | generation << 32, so lookups are O(1) and a
 * stale id never reaches a reused slot.
 */
#ifndef PD_REGISTRY_H
#define PD_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "intern.h"
#include "plan.h"
#include "profd/proto.h"

#define PD_STEP_SAMPLES 8

typedef enum pd_rank_state {
    PD_RANK_ACTIVE, /* heard from within the timeout */
    PD_RANK_LOST,   /* connection gone or silent; kept for status */
} pd_rank_state_t;

typedef struct pd_rank {
    int64_t id;
    /* names: the registry's interned copies (never NULL; "" none) */
    const char *job;
    const char *role; /* the primary role */
    pd_role_t *roles; /* every role it hosts, the primary first (nroles >= 1) */
    size_t nroles;
    const char *host;
    const char *node;    /* the daemon it is registered with */
    int64_t node_client; /* coordinator: the id its node daemon gave it; 0 local */
    int64_t rank, local_rank, world_size, replica_rank, pid;
    uint32_t pipe;
    /* who registered it (pd_owner_t): over ipc:// the worker's uid and, from
     * the kernel, its pid; over tls+tcp:// its certificate's common name
     * where the transport gives it. -1, -1, "": none (plain tcp://, a
     * coordinator's remote rank). */
    int64_t uid;
    int64_t peer_pid;
    const char *cn;
    pd_rank_state_t state;

    int64_t step; /* last step begun, PP_NONE before the first */
    bool in_step;
    int64_t step_began_us;              /* monotonic clock of the worker's host */
    int64_t step_us;                    /* median of the recent step times, 0 unknown */
    int64_t recent_us[PD_STEP_SAMPLES]; /* recent step times, a ring */
    int nrecent, recent_pos;
    int64_t last_seen_ms;
    int64_t registered_ms;
    int64_t events, dropped;
    bool restored; /* kept over a daemon restart, not heard from since */

    int64_t gen_acked;  /* plan generation the worker confirmed */
    int64_t gen_sample; /* its long poll was parked when this generation was
                           published: its next poll is a delivery sample */
    void *watch;        /* the worker endpoint's parked long poll (opaque here) */
    int64_t watch_deadline_ms;
} pd_rank_t;

typedef struct pd_registry {
    pd_rank_t **slots;
    uint32_t *gens;
    size_t cap, count, max;
    /* registrations one peer may hold (its uid, its certificate's name, or
     * its connection when it has neither); 0: no limit */
    size_t max_per_peer;
    /* ranks of one job may come from several uids (else the job belongs to
     * the uid that registered it first) */
    bool shared_jobs;
    /* a certificate's common name is the one job its workers may register */
    bool job_cn;
    /* ids are never given twice, over restarts too: a slot's generation
     * starts above this (the largest a journal saw) */
    uint32_t gen_floor;
    pd_intern_t names; /* the entries' names */
} pd_registry_t;

/* The credentials of a registering peer (pd_registry_register). */
typedef struct pd_owner {
    int64_t uid;    /* ipc://: from the kernel; -1 none */
    int64_t pid;    /* ipc://: from the kernel (not the hello's); -1 none */
    const char *cn; /* tls+tcp://: the verified certificate's common name; NULL none */
    uint32_t pipe;  /* the connection; 0: not a peer (a coordinator's remote rank) */
} pd_owner_t;

void pd_registry_init(pd_registry_t *r, size_t max);
void pd_registry_fini(pd_registry_t *r);

/*
 * Register a worker. A worker that registers again (same job, role, rank,
 * host and pid: e.g. after a timeout, or having added a role) gets its
 * existing entry back, revived, with the roles of this hello. Its roles are
 * the primary role at the global rank, then h->roles in their order (a
 * rank of PP_NONE: the global rank; the primary role listed again gives it
 * a rank of its own). Returns 0 and *out, PROFD_ELIMIT when `max` workers
 * are registered, PROFD_EINVAL for invalid names, a role listed twice or
 * more than PP_MAX_ROLES roles, PROFD_ENOMEM.
 */
int pd_registry_add(pd_registry_t *r, const pp_hello_t *h, const char *node, int64_t now_ms,
                    pd_rank_t **out);
/*
 * pd_registry_add for a peer with credentials, bound to them: an entry
 * registered over ipc:// is registered again only from its uid and its
 * process (the kernel's pid), one registered with a certificate's name only
 * with that name (PROFD_EPERM); a new rank of a job another uid registered
 * is refused unless shared_jobs (PROFD_EPERM), a hello naming another job
 * than its certificate with job_cn (PROFD_EPERM); a peer holding
 * max_per_peer registrations is refused (PROFD_ELIMIT). The reason of a
 * refusal is in err (the caller logs it). owner NULL: pd_registry_add.
 */
int pd_registry_register(pd_registry_t *r, const pp_hello_t *h, const char *node,
                         const pd_owner_t *owner, int64_t now_ms, pd_rank_t **out, char *err,
                         size_t errlen);
pd_rank_t *pd_registry_get(const pd_registry_t *r, int64_t id);
/* The registry's interned copy of a name (NULL: ""), NULL without memory. */
const char *pd_registry_name(pd_registry_t *r, const char *s);
/* An entry made elsewhere (restored from a journal) under its own k->id;
 * the registry takes it. Its names must be the registry's
 * (pd_registry_name). 0, PROFD_EINVAL (the id is not valid or taken),
 * PROFD_ENOMEM, PROFD_ELIMIT. */
int pd_registry_insert(pd_registry_t *r, pd_rank_t *k);
/* Generations at least `floor` from now on (slots in use keep theirs). */
void pd_registry_floor(pd_registry_t *r, uint32_t floor);
void pd_registry_remove(pd_registry_t *r, int64_t id);
/* The daemon itself did not run for `ms` (a stall: SIGSTOP, swap, a slow
 * disk): nobody could be heard then, so nobody is counted silent for it --
 * every rank was last seen `ms` later. */
void pd_registry_credit(pd_registry_t *r, int64_t ms);

/* Apply a batch of (kind, step, t_us) events. Returns PROFD_EPROTO when the
 * array is not whole triples, or holds unknown kinds, a step out of
 * 0..PP_INT_MAX or a time out of 0..PP_INT_MAX (the valid prefix is
 * applied). */
int pd_registry_events(pd_rank_t *k, const int64_t *ev, size_t n, int64_t now_ms);

/* Iterate: for (k = pd_registry_next(r, NULL); k; k = pd_registry_next(r, k)) */
pd_rank_t *pd_registry_next(const pd_registry_t *r, const pd_rank_t *prev);

/* The index of a role the rank hosts, -1 when it hosts no such role. */
int pd_registry_role(const pd_rank_t *k, const char *role);

/* Planner view of a rank. */
void pd_registry_plan_rank(const pd_rank_t *k, pd_plan_rank_t *out);

/* Status row (strings borrowed from k; out->roles is malloc'ed, free it
 * with free() alone; NULL for a rank hosting one role). */
void pd_registry_row(const pd_rank_t *k, int64_t now_ms, pp_rank_t *out);

#endif
