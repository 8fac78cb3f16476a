// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The client's event clock (client/clock.h): ticks read on the training
 * thread come back as CLOCK_MONOTONIC time within a microsecond, from
 * either source, and durations likewise. The truth is CLOCK_MONOTONIC read
 * on either side of the tick.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* 50 ticks, each read between two CLOCK_MONOTONIC reads and converted
 * after the background thread's anchor: within 1 us of that bracket. */
static void tracks(const char *mode)
{
    cl_clock_t k;
    cl_clock_init(&k, mode);
    for (int i = 0; i < 50; i++) {
        sleep_us(i % 2 ? 300 : 1700);
        int64_t a = cl_clock_mono_ns();
        uint64_t t = cl_clock_ticks(&k);
        int64_t b = cl_clock_mono_ns();
        sleep_us(200);
        cl_clock_anchor(&k);
        int64_t ns = cl_clock_ns(&k, t);
        assert_true(ns >= a - 1000);
        assert_true(ns <= b + 1000);
    }
}

static void test_clock_tsc_tracks_monotonic(void **state)
{
    (void)state;
    cl_clock_t k;
    cl_clock_init(&k, "tsc");
    if (!k.tsc) {
        skip(); /* no invariant TSC here */
    }
    assert_string_equal(cl_clock_name(&k), "tsc");
    tracks("tsc");
}

static void test_clock_monotonic_tracks_monotonic(void **state)
{
    (void)state;
    cl_clock_t k;
    cl_clock_init(&k, "monotonic");
    assert_false(k.tsc);
    assert_string_equal(cl_clock_name(&k), "monotonic");
    assert_int_equal(cl_clock_ns(&k, 123456789), 123456789); /* ticks are its ns */
    assert_int_equal(cl_clock_span_ns(&k, 7300000), 7300000);
    tracks("monotonic");
}

/* A 7.3 ms span, in ticks, as nanoseconds: within 1 us of CLOCK_MONOTONIC's
 * inner and outer brackets, whichever source auto picks. */
static void test_clock_span(void **state)
{
    (void)state;
    cl_clock_t k;
    cl_clock_init(&k, NULL);
    sleep_us(2000);
    cl_clock_anchor(&k);
    int64_t a0 = cl_clock_mono_ns();
    uint64_t t0 = cl_clock_ticks(&k);
    int64_t a1 = cl_clock_mono_ns();
    sleep_us(7300);
    int64_t b0 = cl_clock_mono_ns();
    uint64_t t1 = cl_clock_ticks(&k);
    int64_t b1 = cl_clock_mono_ns();
    cl_clock_anchor(&k);
    int64_t d = cl_clock_span_ns(&k, (int64_t)(t1 - t0));
    assert_true(d >= b0 - a1 - 1000);
    assert_true(d <= b1 - a0 + 1000);
    assert_true(d >= 7300000);
}

/* An unknown mode is auto; auto is the TSC only where the kernel keeps
 * time with it. */
static void test_clock_auto(void **state)
{
    (void)state;
    cl_clock_t k, a;
    cl_clock_init(&k, "bogus");
    cl_clock_init(&a, NULL);
    assert_int_equal(k.tsc, a.tsc);
    char buf[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) == NULL) {
            buf[0] = '\0';
        }
        fclose(f);
    }
    if (strcmp(buf, "tsc\n") != 0) {
        assert_false(a.tsc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_tsc_tracks_monotonic),
        cmocka_unit_test(test_clock_monotonic_tracks_monotonic),
        cmocka_unit_test(test_clock_span),
        cmocka_unit_test(test_clock_auto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
