// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Daemon logging: one macro that checks the level before formatting, with a
 * component tag; lines go to stderr in a journald-friendly form
 * ("<3>profd[plan]: message" when run under systemd, plain otherwise).
 */
#ifndef PD_LOG_H
#define PD_LOG_H

#include <stdarg.h>

enum { PD_LOG_ERROR = 0, PD_LOG_WARN = 1, PD_LOG_INFO = 2, PD_LOG_DEBUG = 3 };

typedef struct pd_log {
    int level;
    int journal; /* prefix lines with <N> syslog priorities */
} pd_log_t;

void pd_log_init(pd_log_t *log, int level);
void pd_log_write(const pd_log_t *log, int level, const char *tag, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Level from "error|warn|info|debug"; -1 when unknown. */
int pd_log_level_parse(const char *s);

#define PD_LOG(log, lvl, tag, ...)                                                                 \
    do {                                                                                           \
        if ((log) != NULL && (lvl) <= (log)->level) {                                              \
            pd_log_write((log), (lvl), (tag), __VA_ARGS__);                                        \
        }                                                                                          \
    } while (0)

#endif
