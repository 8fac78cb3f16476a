// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A finished window's captures, kept on disk: once the journal holds a
 * done window (its manifest written), the window is compacted (its
 * members' captures and incoming files freed, its counts kept:
 * pd_windows_compact); a reader that needs its captures (the detail of
 * `profctl windows ID`, a report, a merge, a chunk sent again) reads them
 * back from its manifest for as long as it works on them. Loop thread
 * only.
 */
#ifndef PD_WCAPS_H
#define PD_WCAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node.h"

/* The file `name` of w's own folder, <dir>/<name>, read whole (at most
 * max_bytes) below its save_path without following a symlink
 * (pd_confine_read_file: its codes, and why). */
int pd_wcaps_read_file(const pd_window_t *w, const char *name, int64_t max_bytes, char **buf,
                       size_t *len, char *why, size_t whylen);
/* The manifest of w, <dir>/manifest.json, decoded into *man (free with
 * pp_record_free). 0, or PROFD_ENOENT / PROFD_EIO / PROFD_EINVAL /
 * PROFD_ENOMEM with why. */
int pd_wcaps_read(const pd_window_t *w, pp_manifest_t *man, char *err, size_t errlen);
/* w's captures in its members for a reader: read back from its manifest
 * when it is compacted (*back true: pd_wcaps_done compacts it again), as
 * they are otherwise. 0, or an error with why ("window 3: its captures
 * cannot be read back: ..."), w still compacted. */
int pd_wcaps_open(pd_window_t *w, bool *back, char *err, size_t errlen);
/* The reader is done. Captures read back stay PD_WCAPS_KEEP_MS (a burst of
 * readers: chunks sent again by many nodes after lost replies, a report
 * then a merge, decodes the manifest once), then pd_wcaps_settle compacts
 * the window again. */
void pd_wcaps_done(pd_window_t *w, bool back);
#define PD_WCAPS_KEEP_MS 2000
/* Compact the done windows whose manifest the journal holds as written
 * (their records, which carry their counts, written: none marked), once
 * nothing works on them any more (no job pending, no record of step times
 * open, none read back in the last PD_WCAPS_KEEP_MS). */
void pd_wcaps_settle(pd_node_t *n);
/* Whether a window's captures are kept read back (the daemon's tick then
 * has the journal settle them once PD_WCAPS_KEEP_MS is over). */
bool pd_wcaps_kept(const pd_node_t *n);

#endif
