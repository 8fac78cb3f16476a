// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Text fit for logs and manifests (see text.h). */
#include "text.h"

void pd_quote(char *out, size_t len, const char *in)
{
    static const char hex[] = "0123456789abcdef";
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
        } else {
            if (n + 4 >= len) {
                break;
            }
            out[n++] = '\\';
            out[n++] = 'x';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
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
    static const char hex[] = "0123456789abcdef";
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
        } else {
            if (n + 4 >= len) {
                break;
            }
            out[n++] = '\\';
            out[n++] = 'x';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
            p++;
        }
    }
    out[n] = '\0';
}
