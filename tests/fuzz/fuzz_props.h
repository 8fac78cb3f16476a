// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The properties the fuzz targets check besides the sanitizers: a violated
 * one aborts with what it was (libFuzzer then keeps the input). */
#ifndef PROFD_FUZZ_PROPS_H
#define PROFD_FUZZ_PROPS_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "property violated: %s\n", what);
        abort();
    }
}

/* A message for people: one non-empty line, no control characters. */
static inline void check_line(const char *s)
{
    check(s != NULL && s[0] != '\0', "a message is empty");
    for (; *s != '\0'; s++) {
        check((unsigned char)*s >= 0x20 && *s != 0x7f, "a message is not one line");
    }
}

/* A private folder for the target's files, made once: under /dev/shm
 * (else /tmp) as profd-fuzz-NAME-XXXXXX; `gone` (atexit) removes it. */
static inline void fuzz_tmpdir(char *dir, size_t len, const char *name, void (*gone)(void))
{
    if (dir[0] == '\0') {
        snprintf(dir, len, "%s/profd-fuzz-%s-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", name);
        if (mkdtemp(dir) == NULL) {
            abort();
        }
        atexit(gone);
    }
}

/* A daemon that refuses its state file says so in one line that names the
 * file and what to do about it. */
static inline void check_refusal(const char *err, const char *path)
{
    if (strstr(err, path) == NULL || strchr(err, '\n') != NULL ||
        (strstr(err, "move the file away") == NULL && strstr(err, "remove") == NULL &&
         strstr(err, "chmod") == NULL && strstr(err, "chown") == NULL)) {
        fprintf(stderr, "a refusal that does not name the file and what to do: %s\n", err);
        abort();
    }
}

#endif
