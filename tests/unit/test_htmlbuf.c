// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The report's HTML text buffer (daemon/core/htmlbuf.c): appends and
 * escaping of text from outside (the one escaper of report.html and its
 * "why" part: before it was shared, the "why" part had its own that left '
 * and control characters as they were). Long formatted text is the shared
 * buffer's: test_pu_buf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "htmlbuf.h"

static void test_htmlbuf_appends(void **state)
{
    (void)state;
    pu_sbuf_t b = {0};
    pu_sbuf_str(&b, "rank ");
    pu_sbuf_fmt(&b, "%d: %.1f ms", 3, 12.25);
    pu_sbuf_put(&b, "!?", 1);
    assert_false(b.oom);
    assert_string_equal(b.p, "rank 3: 12.2 ms!");
    assert_int_equal(b.len, 16);
    free(b.p);
}

static void test_htmlbuf_escapes(void **state)
{
    (void)state;
    pu_sbuf_t b = {0};
    pd_html_esc(&b, "a<b>&\"c\"'d'\te\n");
    pu_sbuf_str(&b, "|");
    pd_html_esc(&b, NULL);
    assert_string_equal(b.p, "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39; e |-");
    free(b.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_htmlbuf_appends),
        cmocka_unit_test(test_htmlbuf_escapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
