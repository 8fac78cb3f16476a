// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Applying a profiling config (verl / MindSpeed / Megatron YAML): its window
 * requests read by the configuration library, then started as windows. Used
 * by the control endpoint's `apply` and for the daemon's own
 * profile_config at start and on SIGHUP. Loop thread only.
 */
#ifndef PD_APPLY_H
#define PD_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node.h"

/* What an apply made: the new windows and the config's warnings (both
 * malloc'ed; free with pd_apply_result_free). */
typedef struct pd_apply_result {
    int64_t *ids;
    size_t nids;
    char **warnings;
    size_t nwarnings;
} pd_apply_result_t;

/*
 * Load a profiling config text and create its windows. own: the daemon's
 * own profiling config, read again on SIGHUP: its windows remember the
 * request that made them; a request the file still makes is not planned
 * twice, and a window of a request it no longer makes is withdrawn when it
 * has not started (one that runs finishes). Returns 0 with *out filled, or
 * PROFD_ECONFIG / PROFD_EINVAL / PROFD_ELIMIT / PROFD_ENOMEM with the reason
 * in err (*out untouched; windows of earlier requests of the same config
 * may have been created).
 */
int pd_apply_text(pd_node_t *n, const char *file, const char *text, size_t len,
                  char *const *overrides, size_t n_overrides, const char *job, bool own,
                  pd_apply_result_t *out, char *err, size_t errlen);
void pd_apply_result_free(pd_apply_result_t *r);

/*
 * Create the windows of requests a client already read from its config
 * (profctl composes on the caller's side): each spec is planned as
 * `profctl start` would (job: when a spec names none), and the file-level
 * warnings are copied into *out. The specs stay the caller's (their job may
 * be set). Returns 0 or the planner's error with the reason in err.
 */
int pd_apply_specs(pd_node_t *n, pp_window_spec_t *specs, size_t n_specs, char *const *warnings,
                   size_t n_warnings, const char *job, pd_apply_result_t *out, char *err,
                   size_t errlen);

/* The daemon's own profiling config (cfg.profile_config), at start and on
 * SIGHUP: read, applied with own = true, and the outcome logged. */
void pd_apply_own(pd_node_t *n);

#endif
