// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A test's temporary folder: pd_tmp_make makes a fresh /tmp/<prefix>-XXXXXX
 * in dir[len] (NULL when it could not), pd_tmp_remove removes it and all
 * below it (0, or -1 when rm -rf failed). For the unit tests' setup and
 * teardown and the integration fixture's fx_tmp_*.
 */
#ifndef PD_TMP_H
#define PD_TMP_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static inline char *pd_tmp_make(char *dir, size_t len, const char *prefix)
{
    int n = snprintf(dir, len, "/tmp/%s-XXXXXX", prefix);
    if (n < 0 || (size_t)n >= len) {
        return NULL;
    }
    return mkdtemp(dir);
}

static inline int pd_tmp_remove(const char *dir)
{
    char cmd[600];
    int n = snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (n < 0 || (size_t)n >= sizeof(cmd)) {
        return -1;
    }
    return system(cmd) == 0 ? 0 : -1;
}

#endif
