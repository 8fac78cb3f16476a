// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The control endpoints: profctl and any nng peer speaking the control JSON,
 * on listen.control (ipc:// or tls+tcp://) and listen.control_remote
 * (tls+tcp://); plain tcp:// only with security.insecure_tcp_control.
 * Requests go through the endpoint dispatcher (endpoint.h): read-only ones
 * (status, windows) for any peer that can connect; mutating ones (start,
 * stop, apply) only for permitted peers (pd_control_permitted), and never
 * on a node daemon, whose windows its coordinator plans.
 */
#ifndef PD_CONTROL_H
#define PD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "node.h"

typedef struct pd_control pd_control_t;

/* Listen on the control endpoints (pd_config_check_control has checked the
 * URLs). 0 and *out, or PROFD_* with the reason in err. */
int pd_control_init(pd_control_t **out, pd_node_t *n, char *err, size_t errlen);
/* Stop listening and free. NULL is fine. */
void pd_control_fini(pd_control_t *c);
/* Requests refused by the rate limits so far (0 for NULL). */
int64_t pd_control_limited(const pd_control_t *c);

/* May this peer run mutating requests? ipc://: root, the daemon's uid,
 * security.allow_uids, or security.allow_gids holding the peer's gid or a
 * group of its user in the group database (the kernel gives only the
 * primary gid). tls+tcp://: a certificate that verified against the CA.
 * tcp://: only with security.insecure_tcp_control. */
bool pd_control_permitted(const pd_node_t *n, const pd_peer_t *peer);

#endif
