// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * report.html of a window: one self-contained page (inline CSS and SVG,
 * nothing fetched, no script) drawn from the window's steps.json and its
 * manifest: a rank x step heatmap of step times (one cell per rank and
 * step, coloured by the time against the role's median at that step; the
 * window's steps framed), each role's phase breakdown, the slowest ranks
 * against their role's median, and the window's captures with their status
 * and reasons. Pure: text in, text out.
 */
#ifndef PD_REPORTHTML_H
#define PD_REPORTHTML_H

#include <stddef.h>

#include "profd/proto.h"
#include "pu_buf.h"

#define PD_REPORT_MAX_ROWS 4096 /* heatmap rows drawn; steps.json has every rank */
#define PD_REPORT_SLOWEST  20   /* rows of the slowest-ranks table */

/* The page, malloc'ed and NUL-terminated (*len without the NUL). `version`
 * goes into its footer. 0 or PROFD_ENOMEM. */
int pd_report_html(const pp_steps_doc_t *doc, const pp_manifest_t *man, const char *version,
                   char **out, size_t *len);

/* The same with `extra` (an HTML fragment: reportwhy.h's) before the
 * captures; NULL none. */
int pd_report_html_with(const pp_steps_doc_t *doc, const pp_manifest_t *man, const char *version,
                        const char *extra, char **out, size_t *len);

/* The same page handed to sink->put in pieces as it is built (each about
 * PP_SINK_PIECE bytes, a row's end past it at most, or `extra` whole past
 * it; never the whole text at once: megabytes at thousands of ranks), the
 * bytes pd_report_html_with gives, in order. 0, PROFD_EINVAL, PROFD_ENOMEM or
 * put's error (which stops the page). */
int pd_report_html_to(const pp_steps_doc_t *doc, const pp_manifest_t *man, const char *version,
                      const char *extra, const pp_sink_t *sink);

/* A part of the page another module draws (reportwhy.h's) where `extra`
 * goes: into b, a pd_hout_t's (htmlbuf.h), which it spills at its rows'
 * ends, so that it is never whole in memory either. */
typedef struct pd_report_part {
    void (*draw)(pu_sbuf_t *b, const void *arg);
    const void *arg;
} pd_report_part_t;

/* pd_report_html_to with `part` drawn in the place of `extra`. */
int pd_report_html_part_to(const pp_steps_doc_t *doc, const pp_manifest_t *man, const char *version,
                           const pd_report_part_t *part, const pp_sink_t *sink);

#endif
