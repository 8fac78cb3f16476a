// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Daemon logging (see log.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

static const char *const names[] = {"error", "warn", "info", "debug"};
/* syslog priorities for journald: err, warning, info, debug */
static const int prio[] = {3, 4, 6, 7};

void pd_log_init(pd_log_t *log, int level)
{
    log->level = level;
    /* under systemd, stderr goes to the journal: use <N> prefixes, no time */
    log->journal = getenv("JOURNAL_STREAM") != NULL || getenv("INVOCATION_ID") != NULL;
}

int pd_log_level_parse(const char *s)
{
    for (int i = 0; s && i < 4; i++) {
        if (strcmp(s, names[i]) == 0) {
            return i;
        }
    }
    if (s && strcmp(s, "warning") == 0) {
        return PD_LOG_WARN;
    }
    return -1;
}

void pd_log_write(const pd_log_t *log, int level, const char *tag, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    if (level < 0) {
        level = 0;
    }
    if (level > 3) {
        level = 3;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++) { /* one record per line */
        if (*p == '\n' || *p == '\r') {
            *p = ' ';
        }
    }
    if (log->journal) {
        fprintf(stderr, "<%d>%s: %s\n", prio[level], tag, msg);
    } else {
        struct timespec ts;
        struct tm tm;
        char when[32];
        clock_gettime(CLOCK_REALTIME, &ts);
        localtime_r(&ts.tv_sec, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf(stderr, "%s.%03ld profd %s %s: %s\n", when, ts.tv_nsec / 1000000, names[level], tag,
                msg);
    }
}
