// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The properties the config fuzz targets check besides the sanitizers
 * (fuzz_profcfg, fuzz_compose, fuzz_launch): a violated one aborts with
 * its name, which libFuzzer reports as a crash.
 */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static inline void check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "property violated: %s\n", what);
        abort();
    }
}

/* A message is one non-empty line of printable characters. */
static inline void check_line(const char *s)
{
    check(s != NULL && s[0] != '\0', "a message is empty");
    for (; *s != '\0'; s++) {
        check((unsigned char)*s >= 0x20 && *s != 0x7f, "a message is not one line");
    }
}

#endif
