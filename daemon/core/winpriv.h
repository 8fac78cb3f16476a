// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* What the window table's own files share (windows.c, winmember.c,
 * winreport.c, winview.c); nobody else includes it. */
#ifndef PD_WINPRIV_H
#define PD_WINPRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uix.h"

struct pd_window;

/* Index x over the window's first `live` members or files, brought up to
 * date: the positions not in yet are put in (all of them after a rebuild);
 * false without memory. key(w, i) is the hash of the i-th element. */
bool pd_windows_index(struct pd_window *w, pd_uix_t *x, size_t live,
                      uint64_t (*key)(const struct pd_window *, size_t));

#endif
