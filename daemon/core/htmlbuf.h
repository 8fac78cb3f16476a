// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A growing text buffer for the HTML the report writes (reporthtml.c,
 * reportwhy.c): appends never fail on their own; the first allocation
 * failure sticks in `oom` and later appends do nothing. Pure. */
#ifndef PD_HTMLBUF_H
#define PD_HTMLBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pd_hb {
    char *p; /* NUL-terminated once anything was appended; the caller frees */
    size_t len, cap;
    bool oom;
} pd_hb_t;

void pd_hb_put(pd_hb_t *b, const char *s, size_t n);
void pd_hb_str(pd_hb_t *b, const char *s);
void pd_hb_fmt(pd_hb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text from outside (a worker's reason, a host name, an operator's name) as
 * HTML text or a quoted attribute value: & < > " ' escaped, control
 * characters as spaces, NULL as "-". */
void pd_hb_esc(pd_hb_t *b, const char *s);

#endif
