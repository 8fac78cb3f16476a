// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The event clock: step, phase and section time stamps with sub-microsecond
 * resolution at the cost of one counter read on the training thread.
 *
 * The training thread stamps raw ticks (cl_clock_ticks): the TSC where the
 * CPU says it is invariant and the kernel itself keeps time with it (its
 * clocksource is "tsc", so the counter runs at one rate on every core),
 * CLOCK_MONOTONIC in nanoseconds (the vDSO) everywhere else. The background
 * thread turns ticks into CLOCK_MONOTONIC time (cl_clock_ns): it reads both
 * clocks together at each flush (cl_clock_anchor) and interpolates between
 * the last two such pairs, so NTP's slewing of CLOCK_MONOTONIC is followed
 * and no calibration delay is paid at open.
 *
 * PROFD_CLOCK=monotonic (or tsc) forces a source, for measuring both.
 */
#ifndef PROFD_CLIENT_CLOCK_H
#define PROFD_CLIENT_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CL_CLOCK_HAVE_TSC 1
#else
#define CL_CLOCK_HAVE_TSC 0
#endif

typedef struct cl_clock_pair {
    uint64_t tick;
    int64_t ns; /* CLOCK_MONOTONIC */
} cl_clock_pair_t;

typedef struct cl_clock {
    bool tsc; /* immutable after cl_clock_init */
    /* the background thread's (after init): the last two anchors, at
     * least CL_CLOCK_SPAN_NS apart once there have been two */
    cl_clock_pair_t prev, cur;
    double ns_per_tick;
} cl_clock_t;

#define CL_CLOCK_SPAN_NS 1000000 /* 1 ms */

/* The source named by `mode` ("tsc", "monotonic", or NULL / "auto": the TSC
 * where it qualifies), and the first anchor. A forced "tsc" the machine
 * cannot honour falls back to CLOCK_MONOTONIC. */
void cl_clock_init(cl_clock_t *k, const char *mode);

/* CLOCK_MONOTONIC in nanoseconds. */
static inline int64_t cl_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Now, in ticks. Training thread: no syscall, no lock, no allocation. */
static inline uint64_t cl_clock_ticks(const cl_clock_t *k)
{
#if CL_CLOCK_HAVE_TSC
    if (__builtin_expect(k->tsc, 1)) {
        return __rdtsc();
    }
#else
    (void)k;
#endif
    return (uint64_t)cl_clock_mono_ns();
}

/* Background thread: read both clocks (call before taking events off the
 * ring, so the events lie between the last two anchors). */
void cl_clock_anchor(cl_clock_t *k);

/* Background thread: `tick` as CLOCK_MONOTONIC nanoseconds, and a tick
 * count as a duration in nanoseconds. */
int64_t cl_clock_ns(const cl_clock_t *k, uint64_t tick);
int64_t cl_clock_span_ns(const cl_clock_t *k, int64_t ticks);

/* The source's name: "tsc" or "monotonic". */
const char *cl_clock_name(const cl_clock_t *k);

/* Monotonic milliseconds. */
int64_t cl_now_ms(void);
/* Monotonic microseconds: the clock of the markers and of the clock estimate. */
int64_t cl_now_us(void);

#endif
