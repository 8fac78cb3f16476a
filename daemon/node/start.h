// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Starting and stopping windows on behalf of a request (profctl start, a
 * profiling config, a trigger): the planner over the registered ranks, the
 * request's save_path made below the daemon's, the windows created.
 * Loop thread only.
 */
#ifndef PD_START_H
#define PD_START_H

#include <stddef.h>
#include <stdint.h>

#include "node.h"

/*
 * Resolve `spec` and create its windows. Returns 0 with the new windows'
 * ids in *ids (malloc'ed, *nids of them), or PROFD_EINVAL / PROFD_ELIMIT /
 * PROFD_EIO / PROFD_ENOMEM with a one-line reason in `err` (nothing
 * created, *ids and *nids untouched).
 */
int pd_start_windows(pd_node_t *n, const pp_window_spec_t *spec, int64_t **ids, size_t *nids,
                     char *err, size_t errlen);

/* Stop window `id` at an aligned step (see pd_windows_stop). */
int pd_start_stop(pd_node_t *n, int64_t id, char *err, size_t errlen);

#endif
