// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The merge's clock shift (daemon/base/tracemerge.c): a file whose profd
 * marker says its clock is not the rank's, and a rank whose clock is not
 * the reference. Guards: the file-to-rank shift with its sign flipped
 * (profd-sim's markers always give a shift of 0: a system test cannot see
 * it). Worked by hand from the formula in tracemerge.h:
 *     ts_out = ts + (profd_mono_us - ts_marker) + offset_us */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracemerge.h"

typedef struct sink {
    char buf[4096];
    size_t len;
} sink_t;

static int wr(void *arg, const char *buf, size_t len)
{
    sink_t *s = arg;
    assert_true(s->len + len < sizeof(s->buf));
    memcpy(s->buf + s->len, buf, len);
    s->len += len;
    s->buf[s->len] = '\0';
    return 0;
}

/* The marker at the file's ts 1000 is the rank's monotonic 5000: the file
 * runs 4000 us behind the rank; the rank runs 250 us behind the reference.
 * The kernel at the file's 1500 is at 1500 + 4000 + 250 = 5750; flipped,
 * 1500 - 4000 + 250 = -2250. A float ts moves alike. */
static void test_merge_shift_file_to_rank_to_reference(void **state)
{
    static const char trace[] =
        "{\"traceEvents\":["
        "{\"name\":\"profd_clock\",\"ph\":\"i\",\"ts\":1000,\"pid\":7,\"tid\":7,"
        "\"args\":{\"profd_mono_us\":5000}},"
        "{\"name\":\"kernel\",\"ph\":\"X\",\"ts\":1500,\"dur\":10,\"pid\":7,\"tid\":7},"
        "{\"name\":\"memcpy\",\"ph\":\"X\",\"ts\":2000.5,\"dur\":1,\"pid\":7,\"tid\":7}]}";
    pd_trace_mem_t m = {trace, sizeof(trace) - 1, 0};
    sink_t s = {.len = 0};
    pd_merge_input_t in;
    memset(&in, 0, sizeof(in));
    snprintf(in.path, sizeof(in.path), "w1/rank3.pt.trace.json");
    in.rank = 3;
    in.pid = 7;
    snprintf(in.role, sizeof(in.role), "actor");
    snprintf(in.host, sizeof(in.host), "h3");
    in.offset_us = 250;
    in.err_us = 10;
    bool first = true, aligned = false;
    char why[256] = "";
    int64_t n = pd_trace_merge_one(pd_trace_mem_read, &m, pd_trace_mem_rewind, wr, &s, &in, 0,
                                   &first, &aligned, why, sizeof(why));
    assert_true(n >= 3);
    assert_true(aligned);
    const char *k = strstr(s.buf, "\"name\":\"kernel\"");
    assert_non_null(k);
    const char *e = strchr(k, '}');
    char ev[256];
    snprintf(ev, sizeof(ev), "%.*s", (int)(e - k), k);
    if (strstr(ev, "\"ts\":5750,") == NULL) {
        fail_msg("kernel not at 5750: %s", ev);
    }
    k = strstr(s.buf, "\"name\":\"memcpy\"");
    assert_non_null(k);
    e = strchr(k, '}');
    snprintf(ev, sizeof(ev), "%.*s", (int)(e - k), k);
    if (strstr(ev, "\"ts\":6250.5,") == NULL) {
        fail_msg("memcpy not at 6250.5: %s", ev);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_shift_file_to_rank_to_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
