// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A finished window's captures, kept on disk (see wcaps.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "confine.h"
#include "wcaps.h"

#define MANIFEST_MAX ((int64_t)1 << 30) /* bytes of a manifest read back */

int pd_wcaps_read_file(const pd_window_t *w, const char *name, int64_t max_bytes, char **buf,
                       size_t *len, char *why, size_t whylen)
{
    char root[PD_PATH_MAX], rel[2 * PP_MAX_NAME + 64];
    *buf = NULL;
    *len = 0;
    if ((size_t)snprintf(root, sizeof(root), "%.*s", (int)w->root_len, w->dir) >= sizeof(root) ||
        (size_t)snprintf(rel, sizeof(rel), "%s/%s/%s", w->job, w->name, name) >= sizeof(rel)) {
        snprintf(why, whylen, "'%.128s/%.40s' is too long a path", w->dir, name);
        return PROFD_EPATH;
    }
    return pd_confine_read_file(root, rel, max_bytes, buf, len, why, whylen);
}

int pd_wcaps_read(const pd_window_t *w, pp_manifest_t *man, char *err, size_t errlen)
{
    char why[200], derr[200];
    char *buf;
    size_t len;
    int rv = pd_wcaps_read_file(w, "manifest.json", MANIFEST_MAX, &buf, &len, why, sizeof(why));
    switch (rv) {
    case 0:
        break;
    case PROFD_ELIMIT:
        snprintf(err, errlen, "%s/manifest.json: larger than %lld bytes", w->dir,
                 (long long)MANIFEST_MAX);
        return PROFD_EINVAL;
    case PROFD_ENOMEM:
        snprintf(err, errlen, "out of memory");
        return rv;
    case PROFD_EIO:
        snprintf(err, errlen, "%s/manifest.json: %s", w->dir, why);
        return rv;
    default: /* not there, or not reached without a symlink */
        snprintf(err, errlen, "%s/manifest.json: %s", w->dir, why);
        return PROFD_ENOENT;
    }
    if (pp_record_decode(&pp_desc_manifest, buf, len, man, derr, sizeof(derr)) != 0) {
        snprintf(err, errlen, "%s/manifest.json: %s", w->dir, derr);
        rv = PROFD_EINVAL;
    }
    free(buf);
    return rv;
}

int pd_wcaps_open(pd_window_t *w, bool *back, char *err, size_t errlen)
{
    pp_manifest_t man;
    char why[400];
    *back = false;
    if (!w->compact) {
        return 0;
    }
    int rv = pd_wcaps_read(w, &man, why, sizeof(why));
    if (rv == 0) {
        rv = pd_windows_uncompact(w, &man, why, sizeof(why));
        pp_record_free(&pp_desc_manifest, &man);
    }
    if (rv != 0) {
        snprintf(err, errlen, "window %lld: its captures cannot be read back: %s", (long long)w->id,
                 why);
        return rv;
    }
    *back = true;
    return 0;
}

void pd_wcaps_done(pd_window_t *w, bool back)
{
    if (back) {
        w->read_back_ms = pd_now_ms(); /* compacted again by pd_wcaps_settle */
    }
}

void pd_wcaps_settle(pd_node_t *n)
{
    int64_t now = pd_now_ms();
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        if (w->compact || w->state != PP_WS_DONE || w->mirror || w->pending > 0 || w->jdirty ||
            w->njmembers || w->njincoming || w->jscan ||
            (w->read_back_ms && now - w->read_back_ms < PD_WCAPS_KEEP_MS)) {
            continue;
        }
        /* its files all arrived: their list goes at once (a chunk sent
         * again is answered from its captures); the captures once its
         * record of step times, which the report's last write reads them
         * for, is closed */
        pd_windows_drop_incoming(w);
        if (n->wrec == NULL || pd_wrecords_get(n->wrec, w->id) == NULL) {
            pd_windows_compact(w); /* its record holds its counts (journal.c, put_window) */
        }
    }
}

bool pd_wcaps_kept(const pd_node_t *n)
{
    for (const pd_window_t *w = n->win->head; w; w = w->next) {
        if (!w->compact && w->read_back_ms) {
            return true;
        }
    }
    return false;
}
