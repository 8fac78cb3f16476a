// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The report's HTML escaper and output (see htmlbuf.h). */
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

void pd_html_spill(pu_sbuf_t *b, bool all)
{
    pd_hout_t *o = (pd_hout_t *)b;
    if (o->sink == NULL || b->oom || b->len == 0 || (!all && b->len < PP_SINK_PIECE)) {
        return;
    }
    o->rv = o->sink->put(o->sink->arg, b->p, b->len);
    pu_sbuf_truncate(b, 0);
    if (o->rv != 0) {
        b->oom = true;
    }
}
