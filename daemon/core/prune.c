// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Which windows retention prunes (see prune.h). Pure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prune.h"
#include "pu_buf.h"

void pd_prune_fmt_age(int64_t ms, char *buf, size_t len)
{
    static const struct {
        int64_t ms;
        const char *unit;
    } units[] = {{86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (ms != 0 && ms % units[i].ms == 0) {
            snprintf(buf, len, "%lld%s", (long long)(ms / units[i].ms), units[i].unit);
            return;
        }
    }
    snprintf(buf, len, "%lldms", (long long)ms);
}

/* Is item a older than item b (the one to prune first)? */
static bool older(const pd_prune_item_t *a, const pd_prune_item_t *b)
{
    return a->finished_ms != b->finished_ms ? a->finished_ms < b->finished_ms : a->id < b->id;
}

/* The indexes of the prunable items, oldest first (insertion sort: the
 * table holds a few hundred windows at most). */
static size_t prunable(const pd_prune_item_t *items, size_t n, size_t *order)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!items[i].final || items[i].busy) {
            continue;
        }
        size_t j = k++;
        while (j > 0 && older(&items[i], &items[order[j - 1]])) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    return k;
}

static bool same_owner(const pd_prune_item_t *a, const pd_prune_item_t *b)
{
    return a->uid == b->uid &&
           (a->job == b->job || (a->job && b->job && strcmp(a->job, b->job) == 0));
}

/* Each item's owner (the index of the first item of its owner) and the
 * bytes each owner holds (at its first item's index); the number of owners.
 * Quadratic: a few hundred windows at most. */
static size_t owners(const pd_prune_item_t *items, size_t n, size_t *owner, int64_t *held)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < i && !same_owner(&items[j], &items[i])) {
            j++;
        }
        owner[i] = j;
        held[i] = 0;
        k += j == i;
        held[j] += items[i].bytes;
    }
    return k;
}

size_t pd_prune_decide(const pd_prune_item_t *items, size_t n, const pd_prune_limits_t *lim,
                       int64_t now_ms, pd_prune_verdict_t *out)
{
    size_t *order = n ? malloc(n * sizeof(*order)) : NULL;
    bool *gone = n ? calloc(n, sizeof(*gone)) : NULL;
    size_t *owner = n ? malloc(n * sizeof(*owner)) : NULL;
    int64_t *held = n ? malloc(n * sizeof(*held)) : NULL;
    size_t k = 0, nout = 0;
    if (n && (order == NULL || gone == NULL || owner == NULL || held == NULL)) {
        free(order);
        free(gone);
        free(owner);
        free(held);
        return 0; /* out of memory: nothing pruned this time */
    }
    size_t nowners = owners(items, n, owner, held);
    k = prunable(items, n, order);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        total += items[i].bytes;
    }
    char lbl[64];
    if (lim->max_age_ms > 0) {
        pd_prune_fmt_age(lim->max_age_ms, lbl, sizeof(lbl));
        for (size_t i = 0; i < k; i++) {
            const pd_prune_item_t *it = &items[order[i]];
            if (now_ms - it->finished_ms > lim->max_age_ms) {
                gone[order[i]] = true;
                total -= it->bytes;
                held[owner[order[i]]] -= it->bytes;
                out[nout].index = order[i];
                snprintf(out[nout++].reason, sizeof(out[0].reason), "older than %s", lbl);
            }
        }
    }
    if (lim->max_bytes > 0) {
        int64_t share = lim->max_bytes / (int64_t)(nowners ? nowners : 1);
        char sh[32];
        pu_fmt_bytes(lim->max_bytes, lbl, sizeof(lbl));
        pu_fmt_bytes(share, sh, sizeof(sh));
        for (size_t i = 0; i < k && total > lim->max_bytes; i++) {
            size_t o = owner[order[i]];
            if (gone[order[i]] || held[o] <= share) {
                continue; /* within its share: never for another's bytes */
            }
            gone[order[i]] = true;
            total -= items[order[i]].bytes;
            held[o] -= items[order[i]].bytes;
            out[nout].index = order[i];
            if (nowners > 1) {
                snprintf(out[nout++].reason, sizeof(out[0].reason),
                         "save_path over %.40s, job %.24s over its share (%.16s)",
                         lim->max_bytes_label ? lim->max_bytes_label : lbl,
                         items[o].job ? items[o].job : "?", sh);
            } else {
                snprintf(out[nout++].reason, sizeof(out[0].reason), "save_path over %s",
                         lim->max_bytes_label ? lim->max_bytes_label : lbl);
            }
        }
    }
    free(order);
    free(gone);
    free(owner);
    free(held);
    return nout;
}
