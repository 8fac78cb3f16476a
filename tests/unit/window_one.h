// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A window made by hand for the tests of what reads windows (the history's
 * records, the triggers): job "run", named w<id>, its spec empty, appended
 * to `ws` (pd_windows_append). The table frees it (pd_windows_fini).
 */
#ifndef PD_TEST_WINDOW_ONE_H
#define PD_TEST_WINDOW_ONE_H

#include <stdio.h>
#include <stdlib.h>

#include "windows.h"

static inline pd_window_t *window_one(pd_windows_t *ws, int64_t id, pp_window_state_t state,
                                      int64_t first, int64_t last)
{
    pd_window_t *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    w->id = id;
    snprintf(w->job, sizeof(w->job), "run");
    snprintf(w->name, sizeof(w->name), "w%lld", (long long)id);
    pp_record_init(&pp_desc_window_spec, &w->spec);
    w->first = first;
    w->last = last;
    w->state = state;
    pd_windows_append(ws, w);
    return w;
}

#endif
