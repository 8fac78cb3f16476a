// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The one HTML escaper of the report (reporthtml.c, reportwhy.c), on the
 * shared string buffer (pu_buf.h), and the page's output as its parts draw
 * it. Pure. */
#ifndef PD_HTMLBUF_H
#define PD_HTMLBUF_H

#include <stdbool.h>

#include "profd/proto.h"
#include "pu_buf.h"

/* Text from outside (a worker's reason, a host name, an operator's name) as
 * HTML text or a quoted attribute value: & < > " ' escaped, control
 * characters as spaces, NULL as "-". */
void pd_html_esc(pu_sbuf_t *b, const char *s);

/* The page's text as its parts write it into `b`: whole in b (no sink), or
 * handed to the sink in pieces of about PP_SINK_PIECE bytes (pd_html_spill,
 * at a row's end): the same bytes either way. A sink's error stops the
 * appends (b.oom) and stays in rv. */
typedef struct pd_hout {
    pu_sbuf_t b; /* first: a part's pu_sbuf_t * is its pd_hout_t's */
    const pp_sink_t *sink;
    int rv;
} pd_hout_t;

/* b, a pd_hout_t's: what it holds to the sink once that is a piece (all:
 * whatever it holds); nothing without a sink. */
void pd_html_spill(pu_sbuf_t *b, bool all);

#endif
