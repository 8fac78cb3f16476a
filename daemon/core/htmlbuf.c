// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The report's HTML escaper (see htmlbuf.h). */
#include "htmlbuf.h"

void pd_html_esc(pu_sbuf_t *b, const char *s)
{
    if (s == NULL) {
        pu_sbuf_str(b, "-");
        return;
    }
    for (; *s; s++) {
        switch (*s) {
        case '&':
            pu_sbuf_str(b, "&amp;");
            break;
        case '<':
            pu_sbuf_str(b, "&lt;");
            break;
        case '>':
            pu_sbuf_str(b, "&gt;");
            break;
        case '"':
            pu_sbuf_str(b, "&quot;");
            break;
        case '\'':
            pu_sbuf_str(b, "&#39;");
            break;
        default:
            if ((unsigned char)*s < 0x20) {
                pu_sbuf_str(b, " ");
            } else {
                pu_sbuf_put(b, s, 1);
            }
        }
    }
}
