// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * steps.json: the step times of a window's job over the window's steps and
 * PD_STEPDOC_CONTEXT steps on either side (as far as the history holds
 * them): per rank and role, with each role's median per step, its phases,
 * and each rank's median against its role's. Built from the window and the
 * step-time history; the report (reporthtml.h) is drawn from it. Pure.
 */
#ifndef PD_STEPDOC_H
#define PD_STEPDOC_H

#include "history.h"
#include "profd/proto.h"
#include "windows.h"

#define PD_STEPDOC_CONTEXT   8   /* steps before and after the window */
#define PD_STEPDOC_MAX_STEPS 256 /* the longest range kept (the window's end wins) */
#define PD_STEPDOC_PHASES    16  /* phases per role */

/*
 * Fill *out (owned: free with pd_stepdoc_free) for window w: every rank of
 * its job the history knows, and every member of the window (a member
 * without times has a row of -1). `clock` names the reference clock of the
 * offsets (this daemon's node name). 0 or PROFD_ENOMEM. Its ranks' names
 * and arrays are one allocation (rank 0's step_us starts it; each distinct
 * name once): read them as any document's, never free or replace one.
 */
int pd_stepdoc_build(const pd_window_t *w, const pd_history_t *h, const char *clock,
                     pp_steps_doc_t *out);
/* Free a document pd_stepdoc_build made (a decoded one: pp_record_free). */
void pd_stepdoc_free(pp_steps_doc_t *d);

/* The window's last step: its own, else (open-ended) the last step any
 * capture reached, else its first. */
int64_t pd_stepdoc_window_last(const pd_window_t *w);

#endif
