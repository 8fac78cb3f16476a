// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The event clock (clock.h): choosing the source, anchoring it to
 * CLOCK_MONOTONIC, and converting ticks.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "pu_clock.h"

#if CL_CLOCK_HAVE_TSC
#include <cpuid.h>

/* The CPU's invariant TSC (CPUID 0x80000007, EDX bit 8) and the kernel
 * keeping time with it: then the counter has one rate on every core, and
 * the kernel has checked the cores agree. */
static bool tsc_usable(void)
{
    unsigned a, b, c, d;
    if ((unsigned)__get_cpuid_max(0x80000000, NULL) < 0x80000007 ||
        !__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8))) {
        return false;
    }
    char buf[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
    if (f == NULL) {
        return false;
    }
    bool ok = fgets(buf, sizeof(buf), f) != NULL && strcmp(buf, "tsc\n") == 0;
    fclose(f);
    return ok;
}
#endif

/* Both clocks at once: the TSC read on either side of CLOCK_MONOTONIC, the
 * narrowest of three tries (a try the scheduler cut in two is wide). */
static cl_clock_pair_t pair_now(const cl_clock_t *k)
{
    cl_clock_pair_t p, best = {0, 0};
    uint64_t width = UINT64_MAX;
    if (!k->tsc) {
        p.ns = cl_clock_mono_ns();
        p.tick = (uint64_t)p.ns;
        return p;
    }
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = cl_clock_ticks(k);
        p.ns = cl_clock_mono_ns();
        uint64_t t1 = cl_clock_ticks(k);
        p.tick = t0 + (t1 - t0) / 2;
        if (t1 - t0 < width) {
            width = t1 - t0;
            best = p;
        }
    }
    return best;
}

void cl_clock_init(cl_clock_t *k, const char *mode)
{
    memset(k, 0, sizeof(*k));
#if CL_CLOCK_HAVE_TSC
    if (mode != NULL && strcmp(mode, "monotonic") == 0) {
        k->tsc = false;
    } else if (mode != NULL && strcmp(mode, "tsc") == 0) {
        unsigned a, b, c, d;
        k->tsc = (unsigned)__get_cpuid_max(0x80000000, NULL) >= 0x80000007 &&
                 __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
    } else {
        k->tsc = tsc_usable();
    }
#else
    (void)mode;
#endif
    k->cur = pair_now(k);
    k->prev = k->cur;
    k->ns_per_tick = 1.0;
}

void cl_clock_anchor(cl_clock_t *k)
{
    if (!k->tsc) {
        return;
    }
    cl_clock_pair_t p = pair_now(k);
    if (p.ns - k->cur.ns >= CL_CLOCK_SPAN_NS) {
        k->prev = k->cur;
    }
    k->cur = p;
    if (k->cur.tick > k->prev.tick && k->cur.ns > k->prev.ns) {
        k->ns_per_tick = (double)(k->cur.ns - k->prev.ns) / (double)(k->cur.tick - k->prev.tick);
    }
}

int64_t cl_clock_ns(const cl_clock_t *k, uint64_t tick)
{
    if (!k->tsc) {
        return (int64_t)tick;
    }
    int64_t d = (int64_t)(tick - k->prev.tick);
    return k->prev.ns + (int64_t)((double)d * k->ns_per_tick);
}

int64_t cl_clock_span_ns(const cl_clock_t *k, int64_t ticks)
{
    return k->tsc ? (int64_t)((double)ticks * k->ns_per_tick) : ticks;
}

const char *cl_clock_name(const cl_clock_t *k)
{
    return k->tsc ? "tsc" : "monotonic";
}

int64_t cl_now_ms(void)
{
    return pu_now_ms();
}

int64_t cl_now_us(void)
{
    return pu_now_us();
}
