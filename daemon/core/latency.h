// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The plan delivery latency estimate: the recent samples of how long a new
 * plan took to reach a worker (or a node daemon), and their 99th
 * percentile, at least PD_LATENCY_MIN_US. Pure.
 */
#ifndef PD_LATENCY_H
#define PD_LATENCY_H

#include <stdint.h>

#define PD_LATENCY_SAMPLES 64
#define PD_LATENCY_MIN_US  2000

typedef struct pd_latency {
    int64_t samples[PD_LATENCY_SAMPLES]; /* a ring of microseconds */
    int n, pos;
} pd_latency_t;

/* Keep one sample; values outside 0..60 s are ignored. */
void pd_latency_sample(pd_latency_t *l, int64_t us);
/* The p99 of the samples kept, at least PD_LATENCY_MIN_US. */
int64_t pd_latency_p99(const pd_latency_t *l);

#endif
