// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The straggler trigger of this daemon (straggler.h): armed at start from
 * triggers.straggler.* when enabled, and on demand by `profctl watch`
 * (the `straggler` request); checked every tick against the step-time
 * history, a hit opens a window on the straggler and its healthy peer for
 * the next `steps` steps through pd_start_windows, its spec's `source`
 * saying why (the manifest's window.source too). Not on a node daemon of a
 * coordinator: the coordinator plans its windows. Loop thread only.
 */
#ifndef PD_TRIGGER_H
#define PD_TRIGGER_H

#include <stddef.h>
#include <stdint.h>

#include "node.h"

/* The trigger's settings from the daemon's. */
void pd_trigger_settings(const pd_config_t *cfg, pd_straggler_cfg_t *out);

/* Look for a straggler now; open its window when the trigger allows. */
void pd_trigger_tick(pd_node_t *n, int64_t now_ms);

/* A `straggler` request: arm with its fields over the daemon's settings, or
 * disarm (`off`). 0, or PROFD_EINVAL with the reason in err. */
int pd_trigger_request(pd_node_t *n, const pp_straggler_t *req, char *err, size_t errlen);

#endif
