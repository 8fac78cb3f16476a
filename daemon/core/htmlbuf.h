// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The one HTML escaper of the report (reporthtml.c, reportwhy.c), on the
 * shared string buffer (pu_buf.h). Pure. */
#ifndef PD_HTMLBUF_H
#define PD_HTMLBUF_H

#include "pu_buf.h"

/* Text from outside (a worker's reason, a host name, an operator's name) as
 * HTML text or a quoted attribute value: & < > " ' escaped, control
 * characters as spaces, NULL as "-". */
void pd_html_esc(pu_sbuf_t *b, const char *s);

#endif
