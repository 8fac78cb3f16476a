// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The windows a request makes (see proto.h). Pure. */
#include <stdlib.h>
#include <string.h>

#include "profd/proto.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* start/end or next: one window. */
static int one(const pp_window_spec_t *spec, int64_t next_start, pp_segment_t **out, size_t *n)
{
    pp_segment_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return PROFD_ENOMEM;
    }
    if (spec->next > 0) {
        s->first = next_start;
        if (__builtin_add_overflow(next_start, spec->next - 1, &s->last)) {
            free(s);
            return PROFD_EINVAL; /* past any step (the planner bounds them first) */
        }
    } else {
        s->first = spec->start;
        s->last = (spec->end == PP_NONE || spec->end == -1 || spec->end == INT64_MIN + 1)
                      ? PP_NONE
                      : spec->end - 1;
    }
    *out = s;
    *n = 1;
    return 0;
}

int pp_spec_segments(const pp_window_spec_t *spec, int64_t next_start, pp_segment_t **out,
                     size_t *n)
{
    size_t k = spec->steps_n, u = 0, m = 0;
    *out = NULL;
    *n = 0;
    if (k == 0) {
        return spec->next > 0 || spec->start != PP_NONE ? one(spec, next_start, out, n)
                                                        : PROFD_EINVAL;
    }
    int64_t *s = malloc(k * sizeof(*s));
    pp_segment_t *seg = calloc(k, sizeof(*seg));
    if (s == NULL || seg == NULL) {
        free(s);
        free(seg);
        return PROFD_ENOMEM;
    }
    memcpy(s, spec->steps, k * sizeof(*s));
    qsort(s, k, sizeof(*s), cmp_i64);
    for (size_t i = 0; i < k; i++) { /* each step once */
        if (u == 0 || s[i] != s[u - 1]) {
            s[u++] = s[i];
        }
    }
    for (size_t i = 0; i < u; i++) {
        if (spec->continuous && m > 0 && seg[m - 1].last + 1 == s[i]) {
            seg[m - 1].last = s[i];
            continue;
        }
        seg[m].first = seg[m].last = s[i];
        m++;
    }
    free(s);
    *out = seg;
    *n = m;
    return 0;
}
