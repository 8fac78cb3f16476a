// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Retention: which finished windows are pruned, by a table (the pure core). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "prune.h"
#include "pu_buf.h"

#define DAY  86400000LL
#define NOW  (1000 * DAY)
#define MIB  (1024LL * 1024)
#define MAXW 8

typedef struct prune_case {
    const char *what;
    pd_prune_item_t items[MAXW];
    size_t n;
    pd_prune_limits_t lim;
    size_t nout;
    struct {
        int64_t id;
        const char *reason;
    } want[MAXW];
} prune_case_t;

/* finished d days before NOW, b MiB */
#define W(id, d, b, final, busy)                                                                   \
    {                                                                                              \
        id, NOW - (int64_t)((d)*DAY), (b)*MIB, final, busy, NULL, 0                                \
    }

/* the same, charged to job j of uid u */
#define WJ(id, d, b, j, u)                                                                         \
    {                                                                                              \
        id, NOW - (int64_t)((d)*DAY), (b)*MIB, true, false, j, u                                   \
    }

static const prune_case_t cases[] = {
    {"nothing to do without limits",
     {W(1, 90, 500, true, false), W(2, 1, 500, true, false)},
     2,
     {0, 0, NULL},
     0,
     {{0, NULL}}},
    {"older than the maximum age, oldest first",
     {W(3, 31, 1, true, false), W(1, 40, 1, true, false), W(2, 29, 1, true, false)},
     3,
     {30 * DAY, 0, NULL},
     2,
     {{1, "older than 30d"}, {3, "older than 30d"}}},
    {"exactly the maximum age is kept",
     {W(1, 30, 1, true, false)},
     1,
     {30 * DAY, 0, NULL},
     0,
     {{0, NULL}}},
    {"over the total: the oldest until under it",
     {W(1, 3, 40, true, false), W(2, 2, 40, true, false), W(3, 1, 40, true, false)},
     3,
     {0, 100 * MIB, NULL},
     1,
     {{1, "save_path over 100MiB"}}},
    {"a window in progress counts but is never pruned",
     {W(1, 5, 60, false, false), W(2, 3, 30, true, false), W(3, 1, 30, true, false)},
     3,
     {0, 50 * MIB, NULL},
     2,
     {{2, "save_path over 50MiB"}, {3, "save_path over 50MiB"}}},
    {"a window whose hook runs is kept, the next oldest goes",
     {W(1, 9, 10, true, true), W(2, 8, 10, true, false), W(3, 7, 10, true, false)},
     3,
     {5 * DAY, 15 * MIB, NULL},
     2,
     {{2, "older than 5d"}, {3, "older than 5d"}}},
    {"age first, then size among the rest, with a label",
     {W(1, 40, 10, true, false), W(2, 10, 10, true, false), W(3, 5, 10, true, false),
      W(4, 1, 10, true, false)},
     4,
     {30 * DAY, 25 * MIB, "50% of the file system (25MiB)"},
     2,
     {{1, "older than 30d"}, {2, "save_path over 50% of the file system (25MiB)"}}},
    {"same age: the lower id first",
     {W(7, 2, 10, true, false), W(5, 2, 10, true, false)},
     2,
     {0, 15 * MIB, NULL},
     1,
     {{5, "save_path over 15MiB"}}},
    {"under the total: nothing",
     {W(1, 2, 10, true, false), W(2, 2, 10, true, false)},
     2,
     {0, 20 * MIB, NULL},
     0,
     {{0, NULL}}},
    /* issue 28, break 1: job b's bytes (uid 65534) over the total never
     * prune job a's older window; b's own oldest go until b is within its
     * share (half of 100MiB) */
    {"another job's bytes prune only that job's windows",
     {WJ(1, 9, 40, "a", 0), WJ(2, 8, 50, "b", 65534), WJ(3, 7, 60, "b", 65534),
      WJ(4, 1, 30, "b", 65534)},
     4,
     {0, 100 * MIB, NULL},
     2,
     {{2, "save_path over 100MiB, job b over its share (50MiB)"},
      {3, "save_path over 100MiB, job b over its share (50MiB)"}}},
    {"a job within its share keeps its windows though the total stays over",
     {WJ(1, 9, 40, "a", 0),
      WJ(2, 8, 20, "b", 65534),
      {3, NOW - DAY, 90 * MIB, false, false, "b", 65534}},
     3,
     {0, 100 * MIB, NULL},
     1,
     {{2, "save_path over 100MiB, job b over its share (50MiB)"}}},
    {"the same job name under another uid is another owner",
     {WJ(1, 9, 30, "a", 0), WJ(2, 8, 80, "a", 65534)},
     2,
     {0, 100 * MIB, NULL},
     1,
     {{2, "save_path over 100MiB, job a over its share (50MiB)"}}},
    {"two jobs both over their share: the oldest first",
     {WJ(1, 9, 60, "a", 0), WJ(2, 8, 60, "b", 0), WJ(3, 1, 10, "b", 0)},
     3,
     {0, 100 * MIB, NULL},
     1,
     {{1, "save_path over 100MiB, job a over its share (50MiB)"}}},
    {"only unfinished windows over the total: nothing can go",
     {W(1, 2, 100, false, false), W(2, 2, 100, true, true)},
     2,
     {DAY, 20 * MIB, NULL},
     0,
     {{0, NULL}}},
};

static void test_prune_decide(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const prune_case_t *t = &cases[c];
        pd_prune_verdict_t out[MAXW];
        size_t n = pd_prune_decide(t->items, t->n, &t->lim, NOW, out);
        print_message("case: %s\n", t->what);
        assert_int_equal(n, t->nout);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(t->items[out[i].index].id, t->want[i].id);
            assert_string_equal(out[i].reason, t->want[i].reason);
        }
    }
}

static void test_prune_fmt(void **state)
{
    (void)state;
    char b[32];
    pd_prune_fmt_age(30 * DAY, b, sizeof(b));
    assert_string_equal(b, "30d");
    pd_prune_fmt_age(36 * 3600000LL, b, sizeof(b));
    assert_string_equal(b, "36h");
    pd_prune_fmt_age(90000, b, sizeof(b));
    assert_string_equal(b, "90s");
    pd_prune_fmt_age(1500, b, sizeof(b));
    assert_string_equal(b, "1500ms");
    pu_fmt_bytes(100LL * 1024 * MIB, b, sizeof(b));
    assert_string_equal(b, "100GiB");
    pu_fmt_bytes(1000, b, sizeof(b));
    assert_string_equal(b, "1000");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prune_decide),
        cmocka_unit_test(test_prune_fmt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
