/*
 * The coordinator's node endpoint: node daemons register here with their
 * rosters and send step summaries; their workers become remote ranks of the
 * coordinator's registry, so windows are planned over every global and
 * replica rank of the job, whatever node hosts it. Nodes long-poll their
 * plans, forward results and stream files (remote.c). A node that stays
 * away longer than limits.node_timeout_ms is lost: its pending captures fail
 * and the windows still complete. Loop thread only.
 */
#ifndef PD_COORD_H
#define PD_COORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pd_daemon;

typedef struct pd_coord pd_coord_t;

/* Listen on cfg.coordinator_listen. 0 or PROFD_* with err. */
int pd_coord_init(struct pd_daemon *d, char *err, size_t errlen);
/* Stop listening (at stop); the node list stays for the last state save. */
void pd_coord_fini(struct pd_daemon *d);
/* Release the node list (after pd_coord_fini). */
void pd_coord_free(struct pd_daemon *d);

/* State (state.c): after a restart, the node `name` that was running as
 * `instance` is awaited; it keeps its windows if it registers again as the
 * same instance within limits.node_timeout_ms. 0 or PROFD_ENOMEM. */
int pd_coord_await(struct pd_daemon *d, const char *name, const char *instance);
/* The i-th node known (name and instance), or false past the end. */
bool pd_coord_node_at(const struct pd_daemon *d, size_t i, const char **name,
                      const char **instance);

/* Plans changed: answer the parked node long polls. */
void pd_coord_broadcast(struct pd_daemon *d);
/* Periodic: lost nodes, expired long polls. */
void pd_coord_tick(struct pd_daemon *d, int64_t now_ms);
/* Nodes known (for status). */
size_t pd_coord_nodes(const struct pd_daemon *d);
/* The slowest connected node's plan delivery estimate to its workers, as
 * its summaries report it (us; 0 when not a coordinator or no node). */
int64_t pd_coord_latency_us(const struct pd_daemon *d);

#endif
