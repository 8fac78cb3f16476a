// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The manifest record of a finished window (manifest.json): its steps, roles,
 * tool, mode, settings and warnings, and every member's captures sorted by
 * role, phase, rank, replica and first step. Pure: the caller encodes and
 * writes it.
 */
#ifndef PD_MANIFEST_H
#define PD_MANIFEST_H

#include "profd/proto.h"
#include "windows.h"

/* Fill *out from w. Strings are borrowed from the window; the arrays are
 * the caller's to free with pd_manifest_free() (not pp_record_free). 0 or
 * PROFD_ENOMEM (*out untouched). */
int pd_manifest_build(const pd_window_t *w, pp_manifest_t *out);
void pd_manifest_free(pp_manifest_t *m);
/* Manifest order of two captures (pp_capture_t): role, phase, rank,
 * replica, first step. */
int pd_manifest_cmp(const void *a, const void *b);

#endif
