// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The coordinator's node endpoint: node daemons register here with their
 * rosters and send step summaries; their workers become remote ranks of the
 * coordinator's registry, so windows are planned over every global and
 * replica rank of the job, whatever node hosts it. Nodes long-poll their
 * plans, forward results and stream files (remote.c). A node that stays
 * away longer than coordinator.node_timeout_ms is lost: its pending
 * captures fail and the windows still complete. Loop thread only.
 */
#ifndef PD_COORD_H
#define PD_COORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node.h"

typedef struct pd_coord pd_coord_t;

/* The node list, before listening (a journal may add awaited nodes).
 * changed: called when a node joins (as `instance`) or goes for good (the
 * list is part of the coordinator's journal); may be NULL. NULL on
 * ENOMEM. */
pd_coord_t *pd_coord_new(pd_node_t *n,
                         void (*changed)(void *arg, const char *name, const char *instance,
                                         bool gone),
                         void *arg);
/* Listen on cfg.coordinator_listen. 0, or PROFD_* with err. */
int pd_coord_listen(pd_coord_t *c, char *err, size_t errlen);
/* Stop listening (at stop); the node list stays for the journal's last write. */
void pd_coord_stop(pd_coord_t *c);
/* Release the node list (after pd_coord_stop). NULL is fine. */
void pd_coord_free(pd_coord_t *c);

/* After a restart, the node `name` that was running as `instance` is
 * awaited; it keeps its windows if it registers again as the same instance
 * within coordinator.node_timeout_ms. 0 or PROFD_ENOMEM. */
int pd_coord_await(pd_coord_t *c, const char *name, const char *instance, int64_t now_ms);
/* The i-th node known (name and instance), or false past the end. */
bool pd_coord_node_at(const pd_coord_t *c, size_t i, const char **name, const char **instance);

/* Plans changed: answer the parked node long polls. */
void pd_coord_broadcast(pd_coord_t *c);
/* Periodic: lost nodes, expired long polls. */
void pd_coord_tick(pd_coord_t *c, int64_t now_ms);
/* The daemon did not run for `ms` (a stall): no node daemon is counted
 * unreachable for that time. */
void pd_coord_credit(pd_coord_t *c, int64_t ms);
/* Nodes known (0 for NULL). */
size_t pd_coord_nodes(const pd_coord_t *c);
/* Requests of node daemons parked now: long polls, chunks being written,
 * replies waiting for a save. */
int64_t pd_coord_parked(const pd_coord_t *c);
/* The slowest connected node's plan delivery estimate to its workers, as
 * its summaries report it (us; 0 for NULL or no node). */
int64_t pd_coord_latency_us(const pd_coord_t *c);

#endif
