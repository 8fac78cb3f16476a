/* Which windows retention prunes (see prune.h). Pure. */
#include <stdio.h>
#include <stdlib.h>

#include "prune.h"

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

void pd_prune_fmt_bytes(int64_t v, char *buf, size_t len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = -1;
    while (v != 0 && u < 4 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%lld%s", (long long)v, u < 0 ? "" : units[u]);
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

size_t pd_prune_decide(const pd_prune_item_t *items, size_t n, const pd_prune_limits_t *lim,
                       int64_t now_ms, pd_prune_verdict_t *out)
{
    size_t *order = n ? malloc(n * sizeof(*order)) : NULL;
    bool *gone = n ? calloc(n, sizeof(*gone)) : NULL;
    size_t k = 0, nout = 0;
    if (n && (order == NULL || gone == NULL)) {
        free(order);
        free(gone);
        return 0; /* out of memory: nothing pruned this time */
    }
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
                out[nout].index = order[i];
                snprintf(out[nout++].reason, sizeof(out[0].reason), "older than %s", lbl);
            }
        }
    }
    if (lim->max_bytes > 0) {
        pd_prune_fmt_bytes(lim->max_bytes, lbl, sizeof(lbl));
        for (size_t i = 0; i < k && total > lim->max_bytes; i++) {
            if (!gone[order[i]]) {
                gone[order[i]] = true;
                total -= items[order[i]].bytes;
                out[nout].index = order[i];
                snprintf(out[nout++].reason, sizeof(out[0].reason), "save_path over %s",
                         lim->max_bytes_label ? lim->max_bytes_label : lbl);
            }
        }
    }
    free(order);
    free(gone);
    return nout;
}
