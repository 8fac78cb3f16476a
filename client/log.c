// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * libprofd's log: the user's hook, if any (it never prints otherwise).
 * Used by both threads (client.c, io.c and the files below it).
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

void cl_log(profd_client_t *c, int level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    if (c->log == NULL || level > c->log_level) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    c->log(c->log_arg, level, msg);
}
