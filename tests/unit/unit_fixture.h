// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * What the daemon's unit tests share beyond pd_skip.h and pd_tmp.h: a
 * fixture that owns a private folder and the file the module under test
 * saves there, and the exit code of a file whose tests run as two
 * PD_RUN_EACH groups (those without a fixture, then those with one).
 * Includes <cmocka.h>, pd_skip.h and pd_tmp.h.
 */
#ifndef UNIT_FIXTURE_H
#define UNIT_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "pd_skip.h"
#include "pd_tmp.h"

/* A test's private folder and the file in it that the module under test
 * saves: the first member of a fixture that unit_dir_setup makes. */
typedef struct unit_dir {
    char dir[64], path[128];
} unit_dir_t;

/* cmocka setup: *state a zeroed fixture of `size` bytes whose first
 * member is a unit_dir_t, its folder new (/tmp/<prefix>-XXXXXX) and its
 * path <folder>/<file>. */
static inline int unit_dir_setup(void **state, size_t size, const char *prefix, const char *file)
{
    unit_dir_t *d = calloc(1, size);
    assert_non_null(d);
    assert_non_null(pd_tmp_make(d->dir, sizeof(d->dir), prefix));
    snprintf(d->path, sizeof(d->path), "%s/%s", d->dir, file);
    *state = d;
    return 0;
}

/* cmocka teardown of unit_dir_setup's fixture: the folder removed, the
 * fixture freed. */
static inline int unit_dir_teardown(void **state)
{
    unit_dir_t *d = *state;
    int rv = pd_tmp_remove(d->dir);
    free(d);
    return rv;
}

/* The exit code of two PD_RUN_EACH groups run one after the other: 1 when
 * either had a failure, else the second's (pd_test_exit counts the skips
 * of both). */
static inline int unit_exit2(int first, int second)
{
    return first == 1 ? 1 : second;
}

#endif
