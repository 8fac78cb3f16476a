// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The composer's messages: errors with the defaults chain that led to them,
 * warnings, out of memory. Below compose.c, compose_elem.c, compose_ovr.c
 * and hydra_rt.c; calls nothing of theirs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compose_int.h"
#include "profd/errors.h"

/* ---- messages -------------------------------------------------------------------- */

/* "primary.yaml -> tool/npu.yaml -> ..." of a tree node; NULL for the
 * primary alone (or out of memory). */
const char *hc_chain(hc_t *hc, const tnode_t *t, const char *leaf)
{
    const char *names[HY_MAX_DEPTH + 2];
    size_t n = 0;
    if (leaf != NULL) {
        names[n++] = leaf;
    }
    for (; t != NULL && n < HY_MAX_DEPTH + 1; t = t->parent) {
        if (t->cf != NULL) {
            names[n++] = t->cf->name;
        }
    }
    if (n < 2) {
        return NULL;
    }
    char *s = ar_strdup(&hc->keep, names[n - 1]);
    for (size_t i = n - 1; s != NULL && i-- > 0;) {
        s = ar_printf(&hc->keep, "%s -> %s", s, names[i]);
    }
    return s;
}

int hc_fail(hc_t *hc, const tnode_t *t, const elem_t *at, const char *fmt, ...)
{
    char where[400] = "";
    size_t off;
    va_list ap;
    if (at != NULL && at->origin != NULL) {
        snprintf(where, sizeof(where), "override '%s': ", at->origin);
    } else if (at != NULL && at->at != NULL) {
        oc_where("?", at->at, where, sizeof(where) - 2);
        strcat(where, ": ");
    }
    snprintf(hc->err, hc->errlen, "%s", where);
    off = strlen(hc->err);
    va_start(ap, fmt);
    vsnprintf(hc->err + off, hc->errlen - off, fmt, ap);
    va_end(ap);
    const char *chain = t ? hc_chain(hc, t, NULL) : NULL;
    off = strlen(hc->err);
    if (chain != NULL && off < hc->errlen) {
        snprintf(hc->err + off, hc->errlen - off, " (defaults: %s)", chain);
    }
    yt_one_line(hc->err);
    return PROFD_ECONFIG;
}

int hc_nomem(hc_t *hc)
{
    snprintf(hc->err, hc->errlen, "out of memory");
    return PROFD_ENOMEM;
}

void hc_warn(hc_t *hc, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    yt_one_line(line);
    if (hc->nwarn < sizeof(hc->warn) / sizeof(hc->warn[0])) {
        hc->warn[hc->nwarn] = ar_strdup(&hc->ar, line);
        hc->nwarn += hc->warn[hc->nwarn] != NULL;
    }
}
