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
