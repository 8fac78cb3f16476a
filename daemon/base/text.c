// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Text fit for logs and manifests (see text.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* c as \xHH at out[*n], when it fits below len with the NUL. */
static bool put_hex(char *out, size_t len, size_t *n, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    if (*n + 4 >= len) {
        return false;
    }
    out[(*n)++] = '\\';
    out[(*n)++] = 'x';
    out[(*n)++] = hex[c >> 4];
    out[(*n)++] = hex[c & 15];
    return true;
}

void pd_quote(char *out, size_t len, const char *in)
{
    size_t n = 0;
    if (len == 0) {
        return;
    }
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
            if (n + 1 >= len) {
                break;
            }
            out[n++] = (char)*p;
        } else if (!put_hex(out, len, &n, *p)) {
            break;
        }
    }
    out[n] = '\0';
}

/* The length of the valid UTF-8 sequence at p (not NUL), 0 when invalid. */
static size_t utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n = c < 0x80                 ? 1
               : c >= 0xc2 && c <= 0xdf ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return 0;
        }
    }
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || (c == 0xf0 && p[1] < 0x90) ||
        (c == 0xf4 && p[1] > 0x8f)) {
        return 0; /* overlong, a surrogate, past U+10FFFF */
    }
    return n;
}

void pd_text_utf8(char *out, size_t len, const char *in)
{
    size_t n = 0;
    if (len == 0) {
        return;
    }
    for (const unsigned char *p = (const unsigned char *)in; *p;) {
        size_t k = utf8_len(p);
        if (k == 1 && (*p < 0x20 || *p == 0x7f) && *p != '\t' && *p != '\n') {
            k = 0; /* a control character */
        }
        if (k > 0) {
            if (n + k >= len) {
                break;
            }
            for (size_t i = 0; i < k; i++) {
                out[n++] = (char)p[i];
            }
            p += k;
        } else if (put_hex(out, len, &n, *p)) {
            p++;
        } else {
            break;
        }
    }
    out[n] = '\0';
}

int pd_strv_add(char ***v, size_t *n, const char *s)
{
    char **grown = realloc(*v, (*n + 1) * sizeof(*grown));
    if (grown == NULL) {
        return -1;
    }
    *v = grown;
    if ((grown[*n] = strdup(s)) == NULL) {
        return -1;
    }
    (*n)++;
    return 0;
}

int pd_errf(char *err, size_t errlen, int rv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) {
        vsnprintf(err, errlen, fmt, ap);
    }
    va_end(ap);
    return rv;
}
