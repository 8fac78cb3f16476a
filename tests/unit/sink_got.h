// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A pp_sink_t that collects what a document encoded in pieces handed it
 * (pp_record_encode_to, pd_report_html_to): the pieces' bytes in order,
 * their count and the largest. Include after <cmocka.h>.
 */
#ifndef SINK_GOT_H
#define SINK_GOT_H

#include <stdlib.h>
#include <string.h>

#include "profd/errors.h"

/* fail_at: the piece put refuses with PROFD_EIO (1 the first), 0 none. */
typedef struct sink_got {
    char *text;
    size_t len, pieces, largest, fail_at;
} sink_got_t;

static inline int sink_got_put(void *arg, const char *text, size_t len)
{
    sink_got_t *g = arg;
    if (++g->pieces == g->fail_at) {
        return PROFD_EIO;
    }
    g->text = realloc(g->text, g->len + len + 1);
    assert_non_null(g->text);
    memcpy(g->text + g->len, text, len);
    g->len += len;
    g->text[g->len] = '\0';
    g->largest = len > g->largest ? len : g->largest;
    return 0;
}

#endif
