// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A growing text buffer for the report's HTML (see htmlbuf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htmlbuf.h"

static void grow(pd_hb_t *b, size_t need)
{
    if (b->oom || b->len + need + 1 <= b->cap) {
        return;
    }
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + need + 1) {
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = true;
        return;
    }
    b->p = p;
    b->cap = cap;
}

void pd_hb_put(pd_hb_t *b, const char *s, size_t n)
{
    grow(b, n);
    if (!b->oom) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
    }
}

void pd_hb_str(pd_hb_t *b, const char *s)
{
    pd_hb_put(b, s, strlen(s));
}

void pd_hb_fmt(pd_hb_t *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t)n < sizeof(tmp)) {
        pd_hb_put(b, tmp, (size_t)n);
        return;
    }
    grow(b, (size_t)n);
    if (!b->oom) {
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
        b->len += (size_t)n;
    }
}

void pd_hb_esc(pd_hb_t *b, const char *s)
{
    if (s == NULL) {
        pd_hb_str(b, "-");
        return;
    }
    for (; *s; s++) {
        switch (*s) {
        case '&':
            pd_hb_str(b, "&amp;");
            break;
        case '<':
            pd_hb_str(b, "&lt;");
            break;
        case '>':
            pd_hb_str(b, "&gt;");
            break;
        case '"':
            pd_hb_str(b, "&quot;");
            break;
        case '\'':
            pd_hb_str(b, "&#39;");
            break;
        default:
            if ((unsigned char)*s < 0x20) {
                pd_hb_str(b, " ");
            } else {
                pd_hb_put(b, s, 1);
            }
        }
    }
}
