// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The merged timeline of a finished window (profctl merge): every trace of
 * its captures (*.pt.trace.json[.gz], torch_npu's trace_view.json and
 * profd's marker files) read on the thread pool and written as one Chrome /
 * Perfetto trace, <window>/merged.trace.json (tracemerge.h): a process per
 * rank, each rank's clock moved onto this daemon's with the offset the
 * step-time history measured for it. Loop thread.
 */
#ifndef PD_MERGE_H
#define PD_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "node.h"
#include "tracemerge.h"

#define PD_MERGE_FILE "merged.trace.json"

/* Called on the loop thread when the merge is over (rv 0: written). */
typedef void (*pd_merge_done_fn)(pd_node_t *n, int64_t window, int rv, const char *reason,
                                 const pd_merge_t *m, void *arg);

/* Merge window w. 0 (done() will run), or PROFD_ESTATE (not done yet),
 * PROFD_ENOMEM, PROFD_EINTERNAL with the reason in err. */
int pd_merge_window(pd_node_t *n, const pd_window_t *w, pd_merge_done_fn done, void *arg, char *err,
                    size_t errlen);

/* Is `path` (a capture's file) a trace the merge reads? */
bool pd_merge_is_trace(const char *path);

#endif
