// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Merging a window's traces into one Chrome / Perfetto trace, streaming:
 * each input (a Chrome trace in the JSON object or array format, plain or
 * gzip-compressed) is read event by event, in bounded memory whatever its
 * size, and its events are written out with their process ids remapped (a
 * process per rank, named "rank R role host"; other processes of the same
 * file, such as device streams, named after it) and their times moved onto
 * one reference clock:
 *
 *     ts_out = ts + (profd_mono_us - ts_marker) + offset_us
 *
 * where a profd marker in the file (an event whose args hold
 * "profd_mono_us": the rank's CLOCK_MONOTONIC microseconds at the marker's
 * ts) maps the file's own clock onto the rank's, and offset_us (reference
 * clock - rank clock, measured by the daemons) the rank's onto the
 * reference. A file without a marker keeps its own clock and is counted
 * unaligned. The inputs' own process_name, process_labels and
 * process_sort_index events are replaced by profd's; every other event is
 * kept as it is but for pid and ts.
 *
 * Runs on the thread pool as a gather.h job (PD_JOB_MERGE); the scanner is
 * also reachable from memory for the fuzzer (pd_trace_merge_mem).
 */
#ifndef PD_TRACEMERGE_H
#define PD_TRACEMERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/proto.h"

#define PD_TRACE_MAX_EVENT (1 << 20) /* longest event kept; longer ones are skipped */

/* One trace file of a rank. */
typedef struct pd_merge_input {
    char path[PP_MAX_PATH]; /* relative to the save tree root, like the job's dst */
    int64_t rank, pid;
    char role[PP_MAX_NAME + 1]; /* the capture's role ("e2e" for end to end) */
    char phase[PP_MAX_NAME + 1];
    char host[PP_MAX_NAME + 1];
    int64_t offset_us, err_us; /* reference - rank clock; err 0: not measured */
} pd_merge_input_t;

/* What a merge reads and what it found. */
typedef struct pd_merge {
    pd_merge_input_t *inputs;
    size_t ninputs;
    char job[PP_MAX_NAME + 1];
    char window[PP_MAX_NAME + 1];
    char clock[PP_MAX_NAME + 1]; /* the reference clock's node */
    /* bounds: the merged file at most max_bytes (the window's byte budget,
     * the free space above the floor); an input that decompresses to more
     * than max_ratio times its size on disk is skipped; 0 = no bound */
    int64_t max_bytes, max_ratio;
    /* out */
    int64_t files, events, bytes, unaligned, skipped, err_us;
    char warnings[4][256];
    int nwarnings;
} pd_merge_t;

/* Free a merge and its inputs. NULL is fine. */
void pd_merge_free(pd_merge_t *m);

/* Where the scanner writes. */
typedef int (*pd_trace_write_fn)(void *arg, const char *buf, size_t len);
/* Where it reads: bytes read, 0 at the end, -1 on error. */
typedef long (*pd_trace_read_fn)(void *arg, char *buf, size_t len);

/* A trace held in memory, read through pd_trace_mem_read (arg: the
 * pd_trace_mem_t, pos 0 to start). */
typedef struct pd_trace_mem {
    const char *p;
    size_t len, pos;
} pd_trace_mem_t;
long pd_trace_mem_read(void *arg, char *buf, size_t len);
/* pd_trace_mem_t back to its start: 0. */
int pd_trace_mem_rewind(void *arg);

/*
 * The events of one input, rewritten (see above) and written through `wr`,
 * each preceded by ",\n" unless *first (then cleared). `index` numbers the
 * input (its processes get ids (index + 1) * 16 + k). Returns the events
 * written, or -1 when the input is not a trace or cannot be read (a
 * reason in `why`), -2 when writing failed; *aligned says whether a marker
 * was found. The reader is rewound once (`rewind`, called between the
 * marker search and the copy).
 */
int64_t pd_trace_merge_one(pd_trace_read_fn rd, void *rarg, int (*rewind)(void *rarg),
                           pd_trace_write_fn wr, void *warg, const pd_merge_input_t *in,
                           size_t index, bool *first, bool *aligned, char *why, size_t whylen);

/* One complete event ("ph": "X") of a trace, as pd_trace_each_x finds it:
 * spans of its raw JSON text (name and cat with their quotes stripped,
 * escapes left as they are; NULL when absent), ts and dur in microseconds. */
typedef struct pd_trace_x {
    const char *name, *cat, *pid, *tid;
    size_t name_n, cat_n, pid_n, tid_n;
    double ts, dur;
} pd_trace_x_t;
typedef void (*pd_trace_x_fn)(void *arg, const pd_trace_x_t *x);

/* Each complete event of one trace (the same scanner, streaming, bounded
 * memory) to fn, in the file's order. Returns how many, or -1 when the
 * input is not a trace or cannot be read (a reason in `why`). */
int64_t pd_trace_each_x(pd_trace_read_fn rd, void *rarg, pd_trace_x_fn fn, void *arg, char *why,
                        size_t whylen);

/* The same over a buffer in memory (the fuzzer's entry): events written to
 * `wr`. */
int64_t pd_trace_merge_mem(const char *buf, size_t len, pd_trace_write_fn wr, void *warg, char *why,
                           size_t whylen);

#endif
