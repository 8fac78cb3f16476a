// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The shared containers (common/pu_buf.c): the growing array, the string
 * buffer (its failure sticks: nothing half appended) and byte sizes as the
 * configuration writes them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pu_buf.h"

static void test_grow_doubles_from_8(void **state)
{
    (void)state;
    int64_t *v = NULL;
    size_t cap = 0;
    assert_int_equal(PU_GROW(v, cap, 1), 0);
    assert_int_equal(cap, 8);
    assert_int_equal(PU_GROW(v, cap, 8), 0);
    assert_int_equal(cap, 8); /* enough already: untouched */
    assert_int_equal(PU_GROW(v, cap, 9), 0);
    assert_int_equal(cap, 16);
    assert_int_equal(PU_GROW(v, cap, 100), 0);
    assert_int_equal(cap, 128);
    for (int i = 0; i < 100; i++) {
        v[i] = i;
    }
    assert_int_equal(v[99], 99);
    free(v);
}

static void test_grow_refuses_overflow(void **state)
{
    (void)state;
    int64_t *v = NULL;
    size_t cap = 0;
    assert_int_equal(PU_GROW(v, cap, SIZE_MAX / 4), -1); /* * 8 bytes overflows */
    assert_null(v);
    assert_int_equal(cap, 0);
    assert_int_equal(PU_GROW(v, cap, SIZE_MAX), -1);
    assert_int_equal(cap, 0);
}

static void test_sbuf_appends_and_takes(void **state)
{
    (void)state;
    pu_sbuf_t b = {0};
    size_t len = 99;
    char *s = pu_sbuf_take(&b, &len); /* nothing appended: "" */
    assert_string_equal(s, "");
    assert_int_equal(len, 0);
    free(s);
    pu_sbuf_str(&b, "rank ");
    pu_sbuf_fmt(&b, "%d: %.1f ms", 3, 12.25);
    pu_sbuf_ch(&b, '!');
    pu_sbuf_put(&b, "?x", 1);
    assert_false(b.oom);
    assert_string_equal(b.p, "rank 3: 12.2 ms!?");
    pu_sbuf_truncate(&b, 6);
    assert_string_equal(b.p, "rank 3");
    pu_sbuf_truncate(&b, 60); /* longer than the text: unchanged */
    assert_int_equal(b.len, 6);
    char *at = pu_sbuf_reserve(&b, 3);
    memcpy(at, "abc", 3);
    pu_sbuf_commit(&b, 2);
    s = pu_sbuf_take(&b, &len);
    assert_string_equal(s, "rank 3ab");
    assert_int_equal(len, 8);
    assert_null(b.p);
    assert_int_equal(b.len, 0);
    free(s);
}

/* A large text keeps no doubling's slack: 600 KiB grown to a 1 MiB buffer
 * is handed over in a block of about its size; a small one as it was. */
static void test_sbuf_take_gives_slack_back(void **state)
{
    (void)state;
    pu_sbuf_t b = {0};
    static char chunk[1024];
    memset(chunk, 'x', sizeof(chunk));
    for (int i = 0; i < 600; i++) {
        pu_sbuf_put(&b, chunk, sizeof(chunk));
    }
    assert_int_equal(b.len, 600 * 1024);
    assert_true(b.cap >= 1024 * 1024); /* grown by doubling */
    size_t len;
    char *s = pu_sbuf_take(&b, &len);
    assert_int_equal(len, 600 * 1024);
    assert_int_equal(s[len], '\0');
    assert_int_equal(s[len - 1], 'x');
    assert_true(malloc_usable_size(s) < len + 4096);
    free(s);

    pu_sbuf_put(&b, chunk, 100); /* 100 bytes in a small buffer: not worth a realloc */
    size_t cap = b.cap;
    s = pu_sbuf_take(&b, &len);
    assert_int_equal(len, 100);
    assert_true(malloc_usable_size(s) >= cap);
    free(s);
}

/* Formatted text past pu_sbuf_fmt's stack buffer, n characters between the
 * brackets (2000: test_htmlbuf's case before the report shared this buffer). */
static void test_sbuf_long_format(void **state)
{
    (void)state;
    static const size_t lens[] = {2000, 3000};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t n = lens[i];
        pu_sbuf_t b = {0};
        char big[3001];
        memset(big, 'x', n);
        big[n] = '\0';
        pu_sbuf_fmt(&b, "<%s>", big);
        assert_false(b.oom);
        assert_int_equal(b.len, n + 2);
        assert_int_equal(b.p[0], '<');
        assert_int_equal(b.p[n + 1], '>');
        assert_int_equal(b.p[n + 2], '\0');
        pu_sbuf_free(&b);
        assert_null(b.p);
    }
}

static void test_sbuf_failure_sticks(void **state)
{
    (void)state;
    pu_sbuf_t b = {0};
    pu_sbuf_str(&b, "kept?");
    assert_null(pu_sbuf_reserve(&b, SIZE_MAX - 2)); /* cannot be had */
    assert_true(b.oom);
    pu_sbuf_str(&b, "more");
    assert_int_equal(b.len, 5); /* later appends do nothing */
    size_t len = 7;
    assert_null(pu_sbuf_take(&b, &len));
    assert_int_equal(len, 0);
    assert_null(b.p);
    assert_false(b.oom); /* empty and usable again */
}

static void test_fmt_bytes(void **state)
{
    (void)state;
    static const struct {
        int64_t v;
        const char *want;
    } cases[] = {
        {0, "0"},
        {1000, "1000"},
        {1024, "1KiB"},
        {1536 * 1024LL, "1536KiB"},
        {1024LL * 1024, "1MiB"},
        {64LL << 30, "64GiB"},
        {3LL << 40, "3TiB"},
        {1LL << 50, "1PiB"},
        {1LL << 60, "1024PiB"},
        {-4096, "-4KiB"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char b[32];
        pu_fmt_bytes(cases[i].v, b, sizeof(b));
        assert_string_equal(b, cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_doubles_from_8),
        cmocka_unit_test(test_grow_refuses_overflow),
        cmocka_unit_test(test_sbuf_appends_and_takes),
        cmocka_unit_test(test_sbuf_take_gives_slack_back),
        cmocka_unit_test(test_sbuf_long_format),
        cmocka_unit_test(test_sbuf_failure_sticks),
        cmocka_unit_test(test_fmt_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
