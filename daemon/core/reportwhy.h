// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The "why" part of a window's report (an HTML fragment report.html holds):
 *  - where the time goes: each rank's sections (data, forward, backward,
 *    optimizer, comm, and compute and the rest, as scores.h makes them), the
 *    median of each over the window's steps, from steps.json;
 *  - with a trace diff (tracediff.json): the slow rank beside its healthy
 *    peer, section by section, and the names whose self time differs most
 *    between their traces, with the traces' totals;
 *  - the window's traces: a link to each, to the merged timeline, and how
 *    to open them in Perfetto and TensorBoard.
 * Pure: text in, text out.
 */
#ifndef PD_REPORTWHY_H
#define PD_REPORTWHY_H

#include <stddef.h>

#include "profd/proto.h"
#include "pu_buf.h"

/* The fragment into b, a pd_hout_t's (htmlbuf.h: spilled to its sink at
 * the rows' ends, never whole in memory with one; see
 * pd_report_html_part_to). `diff` may be NULL. */
void pd_report_why_draw(pu_sbuf_t *b, const pp_steps_doc_t *doc, const pp_manifest_t *man,
                        const pp_trace_diff_t *diff);

/* The median over the window's steps of section `sec` (scores.h numbering:
 * PD_SEC_COMPUTE and PD_SEC_OTHER made from the others) of rank `r`, in us;
 * -1 when the rank has no sections there. */
int64_t pd_report_section_us(const pp_steps_doc_t *doc, const pp_steps_rank_t *r, int sec);

#endif
