// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Skipped tests that ctest reports as skipped. cmocka's skip() marks a test
 * SKIPPED, but cmocka_run_group_tests() returns only the number of tests
 * that failed: an executable whose tests skipped would exit 0 and count as
 * passed. Include this after <cmocka.h>: pd_skip(reason...) says why and
 * counts the skip (so does a plain skip(), without a reason), and
 * PD_RUN_TESTS() exits 1 when a test failed, whatever else skipped, else
 * PD_TEST_SKIPPED (the SKIP_RETURN_CODE of every profd_unit_test) when one
 * skipped, else 0.
 *
 * PD_RUN_EACH(setup, teardown, test_a, test_b, ...) is PD_RUN_TESTS over
 * the listed test functions, each run between the file's setup and
 * teardown, each named as written (what cmocka_unit_test_setup_teardown
 * would name it).
 */
#ifndef PD_SKIP_H
#define PD_SKIP_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define PD_TEST_SKIPPED 77

static int pd_test_skips;

#define pd_skip(...)                                                                               \
    do {                                                                                           \
        print_message("skipped: " __VA_ARGS__);                                                    \
        print_message("\n");                                                                       \
        pd_test_skips++;                                                                           \
        _skip(__FILE__, __LINE__);                                                                 \
    } while (0)

#undef skip
#define skip() pd_skip("no reason given")

static inline int pd_test_exit(int failed)
{
    if (failed != 0) {
        return 1;
    }
    if (pd_test_skips > 0) {
        print_message("%d test(s) skipped, none failed: exit %d (skipped)\n", pd_test_skips,
                      PD_TEST_SKIPPED);
        return PD_TEST_SKIPPED;
    }
    return 0;
}

#define PD_RUN_TESTS(tests, setup, teardown)                                                       \
    pd_test_exit(cmocka_run_group_tests(tests, setup, teardown))

/* names: the functions' names as the preprocessor writes the list, "a, b" */
static inline int pd_run_each(const char *names, const CMUnitTestFunction *fns, size_t n,
                              CMFixtureFunction setup, CMFixtureFunction teardown)
{
    struct CMUnitTest *tests = calloc(n, sizeof(*tests));
    char *copy = strdup(names);
    char *save = NULL;
    char *name = copy != NULL ? strtok_r(copy, ", \t\n", &save) : NULL;
    int rc = 1;
    if (tests != NULL && name != NULL) {
        for (size_t i = 0; i < n && name != NULL; i++) {
            tests[i] = (struct CMUnitTest){
                .name = name, .test_func = fns[i], .setup_func = setup, .teardown_func = teardown};
            name = strtok_r(NULL, ", \t\n", &save);
        }
        rc = pd_test_exit(_cmocka_run_group_tests("tests", tests, n, NULL, NULL));
    }
    free(copy);
    free(tests);
    return rc;
}

#define PD_RUN_EACH(setup, teardown, ...)                                                          \
    pd_run_each(#__VA_ARGS__, (const CMUnitTestFunction[]){__VA_ARGS__},                           \
                sizeof((const CMUnitTestFunction[]){__VA_ARGS__}) / sizeof(CMUnitTestFunction),    \
                setup, teardown)

#endif
