// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A trace diff: the traces of a slow rank and of its healthy peer, read
 * event by event (tracemerge.h's scanner: streaming, bounded memory), each
 * name's self time summed per side (an event's duration less the durations
 * of the events nested in it on the same thread: the time the operator,
 * kernel or annotation spent itself), then the names whose time differs
 * most, as tracediff.json's record (messages.def trace_diff). Complete
 * events only ("ph": "X"); profd's own step markers left out.
 *
 * Bounded: at most PD_DIFF_NAMES names are told apart (the rest go to
 * "(other names)"), PD_DIFF_THREADS threads and PD_DIFF_DEPTH levels of
 * nesting per thread are followed (deeper events count whole). Runs on the
 * thread pool as a gather.h job (PD_JOB_DIFF); pd_diff_mem is its entry
 * from memory, for tests and the fuzzer.
 */
#ifndef PD_TRACEDIFF_H
#define PD_TRACEDIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/proto.h"
#include "tracemerge.h"

#define PD_DIFF_NAMES   4096
#define PD_DIFF_THREADS 256
#define PD_DIFF_DEPTH   128
#define PD_DIFF_ROWS    15 /* rows kept from each end of the table */

typedef struct pd_diff_acc pd_diff_acc_t;

/* A diff being made: open, add each side's traces, finish. */
pd_diff_acc_t *pd_diff_open(void);
/* The events of one trace of side 0 (slow) or 1 (peer): their count, or -1
 * with a reason in why. */
int64_t pd_diff_add(pd_diff_acc_t *a, int side, pd_trace_read_fn rd, void *rarg, char *why,
                    size_t whylen);
/* The same from memory. */
int64_t pd_diff_mem(pd_diff_acc_t *a, int side, const char *buf, size_t len);
/* The rows and totals into out (fields other than those left as they are);
 * frees the accumulator. 0 or PROFD_ENOMEM. */
int pd_diff_finish(pd_diff_acc_t *a, pp_trace_diff_t *out);

/* What a PD_JOB_DIFF job reads: files relative to the save tree root. */
typedef struct pd_diff {
    char **files[2]; /* owned */
    size_t nfiles[2];
    pp_trace_diff_t out; /* filled by the job (role, ranks, files: the caller's) */
} pd_diff_t;

void pd_diff_free(pd_diff_t *d);

/* The job's work (gather.h PD_JOB_DIFF): d's files, relative to the save
 * tree at root_path, into d->out. 0, or an error with the reason. */
int pd_diff_run_files(const char *root_path, pd_diff_t *d, char *reason, size_t reasonlen);

#endif
