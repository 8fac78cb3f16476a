// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A window's report, written into its folder when its manifest is (and
 * again on `profctl report`): steps.json (stepdoc.h) and report.html
 * (reporthtml.h), built on the loop thread from the window, its manifest
 * record and the step-time history, written on the thread pool; and
 * TensorBoard's run folder, <window>/tensorboard/, holding a link to every
 * *.pt.trace.json[.gz] of the window's captures (their names carry rank
 * and role, so the profiler plugin sees one worker per rank). Loop thread.
 */
#ifndef PD_REPORT_H
#define PD_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "node.h"

#define PD_REPORT_TB_DIR "tensorboard"
/* How long a window's record waits, after its end, for the steps after it */
#define PD_REPORT_RECORD_WAIT_MS 30000

typedef struct pd_report_result {
    int rv; /* 0, or the first error of the writes */
    char reason[256];
    int64_t ranks, steps; /* rows and steps of steps.json */
    int64_t links;        /* traces linked into the TensorBoard folder */
} pd_report_result_t;

/* Called on the loop thread once every write is over. */
typedef void (*pd_report_done_fn)(pd_node_t *n, int64_t window, const pd_report_result_t *r,
                                  void *arg);

/* Write w's report (with the TensorBoard folder when `links`); done() runs
 * once everything is written or failed.
 *  - final (the window's end): steps.json from the window's record of step
 *    times (wrecord.h; the live history where it has none), kept with the
 *    window as its record (w->record: the checksum of those bytes, journaled);
 *  - again (`profctl report`): report.html from that record, read back and
 *    checked, steps.json left as it is; PROFD_ESTATE when it is gone or was
 *    changed. A window without a record is built from the live history,
 *    and refused (PROFD_ESTATE) when that holds fewer times than the
 *    steps.json already there.
 * 0, or PROFD_ENOMEM / PROFD_EINTERNAL / PROFD_ESTATE with the reason in
 * err (done() is then not called). */
int pd_report_write(pd_node_t *n, const pd_window_t *w, const pp_manifest_t *man, bool links,
                    bool final, pd_report_done_fn done, void *arg, char *err, size_t errlen);

/* The same where the caller keeps `man` (and the strings it points to)
 * unchanged until done() runs: report.html is drawn from it on the pool
 * (pd_report_write copies it for that). */
int pd_report_write_kept(pd_node_t *n, const pd_window_t *w, const pp_manifest_t *man, bool links,
                         bool final, pd_report_done_fn done, void *arg, char *err, size_t errlen);

/* Records whose window has ended and whose steps after it are in (or
 * waited for long enough): the report written once more, the record kept
 * as it is from then on. The periodic tick. */
void pd_report_tick(pd_node_t *n, int64_t now_ms);

#endif
