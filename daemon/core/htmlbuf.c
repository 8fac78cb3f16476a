// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The report's HTML escaper (see htmlbuf.h). */
#include "htmlbuf.h"

void pd_html_esc(pu_sbuf_t *b, const char *s)
{
    static const char *const entity[128] = {
        ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;",
    };
    if (s == NULL) {
        pu_sbuf_str(b, "-");
        return;
    }
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 128 && entity[c] != NULL) {
            pu_sbuf_str(b, entity[c]);
        } else if (c < 0x20) {
            pu_sbuf_str(b, " ");
        } else {
            pu_sbuf_put(b, s, 1);
        }
    }
}
