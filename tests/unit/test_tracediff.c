// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The trace diff (daemon/base/tracediff.c): self times per name from two
 * traces in memory, worked by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracediff.h"

/* slow side: a step annotation (ignored), forward 0..100 holding linear
 * 10..40 which holds addmm 12..32, and a slowdown 50..90 inside forward;
 * another thread's all_reduce 0..5; profd's own marker (ignored) */
static const char slow_trace[] =
    "{\"traceEvents\":["
    "{\"name\":\"ProfilerStep#3\",\"ph\":\"X\",\"ts\":0,\"dur\":200,\"pid\":1,\"tid\":1},"
    "{\"name\":\"forward\",\"ph\":\"X\",\"cat\":\"user_annotation\",\"ts\":0,\"dur\":100,"
    "\"pid\":1,\"tid\":1},"
    "{\"name\":\"aten::linear\",\"ph\":\"X\",\"cat\":\"cpu_op\",\"ts\":10,\"dur\":30,\"pid\":1,"
    "\"tid\":1},"
    "{\"name\":\"aten::addmm\",\"ph\":\"X\",\"cat\":\"cpu_op\",\"ts\":12,\"dur\":20,\"pid\":1,"
    "\"tid\":1},"
    "{\"name\":\"slowdown\",\"ph\":\"X\",\"ts\":50,\"dur\":40,\"pid\":1,\"tid\":1},"
    "{\"name\":\"all_reduce\",\"ph\":\"X\",\"ts\":0,\"dur\":5,\"pid\":1,\"tid\":2},"
    "{\"name\":\"mark\",\"ph\":\"X\",\"cat\":\"profd\",\"ts\":0,\"dur\":500,\"pid\":1,\"tid\":3},"
    "{\"name\":\"counter\",\"ph\":\"C\",\"ts\":3,\"pid\":1,\"tid\":1}]}";

/* peer: forward 0..30 holding linear 5..25 (addmm 6..26 overlaps its end:
 * not nested, counted whole), all_reduce 0..60.5 */
static const char peer_trace[] =
    "[{\"name\":\"forward\",\"ph\":\"X\",\"ts\":0,\"dur\":30,\"pid\":\"CPU\",\"tid\":0},"
    "{\"name\":\"aten::linear\",\"ph\":\"X\",\"ts\":5,\"dur\":20,\"pid\":\"CPU\",\"tid\":0},"
    "{\"name\":\"aten::addmm\",\"ph\":\"X\",\"ts\":6,\"dur\":20,\"pid\":\"CPU\",\"tid\":0},"
    "{\"name\":\"all_reduce\",\"ph\":\"X\",\"ts\":0,\"dur\":60.5,\"pid\":\"CPU\",\"tid\":1}]";

static void test_tracediff_self_times(void **state)
{
    (void)state;
    pd_diff_acc_t *a = pd_diff_open();
    assert_non_null(a);
    assert_int_equal(pd_diff_mem(a, 0, slow_trace, strlen(slow_trace)), 7);
    assert_int_equal(pd_diff_mem(a, 1, peer_trace, strlen(peer_trace)), 4);
    assert_int_equal(pd_diff_mem(a, 1, "not a trace", 11), -1);
    pp_trace_diff_t d;
    pp_record_init(&pp_desc_trace_diff, &d);
    assert_int_equal(pd_diff_finish(a, &d), 0);
    /* slow: forward 100 - 30 - 40 = 30, linear 30 - 20 = 10, addmm 20,
     * slowdown 40, all_reduce 5; total 105.
     * peer: forward 30 - 20 = 10 (addmm overlapping linear's end pops
     * linear and forward: it stands alone), linear 20, addmm 20,
     * all_reduce 60.5; total 110.5 */
    assert_int_equal(d.rows_n, 4);
    assert_string_equal(d.rows[0].name, "slowdown");
    assert_int_equal(d.rows[0].slow_us, 40);
    assert_int_equal(d.rows[0].peer_us, 0);
    assert_int_equal(d.rows[0].slow_n, 1);
    assert_int_equal(d.rows[0].peer_n, 0);
    assert_string_equal(d.rows[1].name, "forward");
    assert_int_equal(d.rows[1].slow_us, 30);
    assert_int_equal(d.rows[1].peer_us, 10);
    assert_string_equal(d.rows[1].cat, "user_annotation");
    /* addmm 20 vs 20: no difference, not a row; then the peer's */
    assert_string_equal(d.rows[2].name, "aten::linear");
    assert_int_equal(d.rows[2].slow_us, 10);
    assert_int_equal(d.rows[2].peer_us, 20);
    assert_string_equal(d.rows[3].name, "all_reduce");
    assert_int_equal(d.rows[3].slow_us, 5);
    assert_int_equal(d.rows[3].peer_us, 61); /* 60.5 rounded */
    assert_int_equal(d.slow_total_us, 105);
    assert_int_equal(d.peer_total_us, 111); /* 110.5 */
    assert_int_equal(d.slow_events, 5);
    assert_int_equal(d.peer_events, 4);
    assert_int_equal(d.names, 5);
    assert_false(d.truncated);
    pp_record_free(&pp_desc_trace_diff, &d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tracediff_self_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
