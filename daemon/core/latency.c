// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The plan delivery latency estimate (see latency.h). */
#include <stdlib.h>
#include <string.h>

#include "latency.h"

void pd_latency_sample(pd_latency_t *l, int64_t us)
{
    if (us < 0 || us > 60 * 1000000LL) {
        return;
    }
    l->samples[l->pos] = us;
    l->pos = (l->pos + 1) % PD_LATENCY_SAMPLES;
    if (l->n < PD_LATENCY_SAMPLES) {
        l->n++;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t pd_latency_p99(const pd_latency_t *l)
{
    int64_t v[PD_LATENCY_SAMPLES];
    int64_t p99 = PD_LATENCY_MIN_US;
    if (l->n > 0) {
        memcpy(v, l->samples, (size_t)l->n * sizeof(v[0]));
        qsort(v, (size_t)l->n, sizeof(v[0]), cmp_i64);
        int i = (l->n * 99) / 100 < l->n ? (l->n * 99) / 100 : l->n - 1;
        if (v[i] > p99) {
            p99 = v[i];
        }
    }
    return p99;
}
