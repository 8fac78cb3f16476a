// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A done window compacted, and its captures put back from its manifest
 * (see windows.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "windows.h"

static int status_of(const pp_capture_t *c)
{
    int st = (int)c->status;
    return st >= 0 && st < 5 ? st : 0;
}

void pd_windows_captured(const pd_window_t *w, int64_t by_status[5])
{
    memset(by_status, 0, 5 * sizeof(*by_status));
    if (w->compact) {
        memcpy(by_status, w->captured, 5 * sizeof(*by_status));
        return;
    }
    for (size_t i = 0; i < w->nmembers; i++) {
        for (size_t c = 0; c < w->members[i].ncaps; c++) {
            by_status[status_of(&w->members[i].caps[c])]++;
        }
    }
}

void pd_windows_compact(pd_window_t *w)
{
    w->read_back_ms = 0;
    if (!w->compact) {
        pd_windows_captured(w, w->captured);
        w->compact = true;
    }
    for (size_t i = 0; i < w->nmembers; i++) {
        pd_member_t *m = &w->members[i];
        pp_records_free(&pp_desc_capture, m->caps, m->ncaps);
        m->caps = NULL;
        m->ncaps = 0;
        free(m->gathered);
        m->gathered = NULL;
    }
    pd_windows_drop_incoming(w);
}

void pd_windows_drop_incoming(pd_window_t *w)
{
    for (size_t i = 0; i < w->nincoming; i++) {
        free(w->incoming[i].path);
        free(w->incoming[i].hash);
    }
    free(w->incoming);
    w->incoming = NULL;
    w->nincoming = w->capincoming = 0;
    pd_uix_free(&w->inix);
    free(w->jincoming);
    w->jincoming = NULL;
    w->njincoming = w->capjincoming = 0;
}

/* Who captured: what check_capture (winreport.c) stamped on each capture. */
static uint64_t who_key(const char *host, int64_t pid, int64_t replica)
{
    return pd_uix_hash_str(host ? host : "") ^ pd_uix_hash_i64(pid) ^
           ((uint64_t)replica * 31 + 7) * 0xC2B2AE3D27D4EB4FULL;
}

static bool made_by(const pd_member_t *m, const pp_capture_t *c)
{
    if (strcmp(m->host, c->host ? c->host : "") != 0 || m->pid != c->pid ||
        m->replica_rank != c->replica_rank) {
        return false;
    }
    bool e2e = strcmp(c->role, "e2e") == 0;
    return c->rank == m->rank || c->rank == pd_windows_role_rank(m, e2e ? NULL : c->role);
}

/* The member of w that made c (the first one that fits), SIZE_MAX none. */
static size_t maker(const pd_window_t *w, const pd_uix_t *x, const pp_capture_t *c)
{
    if (x->cap == 0) {
        for (size_t i = 0; i < w->nmembers; i++) {
            if (made_by(&w->members[i], c)) {
                return i;
            }
        }
        return SIZE_MAX;
    }
    size_t best = SIZE_MAX;
    for (size_t at = pd_uix_first(x, who_key(c->host, c->pid, c->replica_rank)); x->slot[at];
         at = pd_uix_next(x, at)) {
        size_t i = pd_uix_at(x, at);
        if (i < w->nmembers && i < best && made_by(&w->members[i], c)) {
            best = i;
        }
    }
    return best;
}

static int refuse(char *err, size_t errlen, const char *fmt, const char *a, long long b)
{
    snprintf(err, errlen, fmt, a, b);
    return PROFD_EINVAL;
}

int pd_windows_uncompact(pd_window_t *w, pp_manifest_t *man, char *err, size_t errlen)
{
    int64_t by[5] = {0, 0, 0, 0, 0};
    if (man->window.id != w->id || man->job == NULL || strcmp(man->job, w->job) != 0 ||
        man->window.name == NULL || strcmp(man->window.name, w->name) != 0) {
        return refuse(err, errlen, "its manifest is another window's (%s %lld)",
                      man->window.name ? man->window.name : "?", (long long)man->window.id);
    }
    for (size_t k = 0; k < man->captures_n; k++) {
        by[status_of(&man->captures[k])]++;
    }
    if (memcmp(by, w->captured, sizeof(by)) != 0) {
        return refuse(err, errlen, "its manifest lists %s%lld capture(s), not the ones it had", "",
                      (long long)man->captures_n);
    }
    /* the members by who they are: host, pid and replica rank */
    pd_uix_t x = {0};
    if (pd_uix_room(&x, w->nmembers, w->nmembers) >= 0) {
        for (size_t i = 0; i < w->nmembers; i++) {
            const pd_member_t *m = &w->members[i];
            pd_uix_put(&x, who_key(m->host, m->pid, m->replica_rank), i);
        }
    } else {
        pd_uix_free(&x); /* no memory: a scan */
        x.cap = 0;
    }
    size_t *of = man->captures_n ? calloc(man->captures_n, sizeof(*of)) : NULL;
    size_t *count = w->nmembers ? calloc(w->nmembers, sizeof(*count)) : NULL;
    int rv = (man->captures_n && of == NULL) || (w->nmembers && count == NULL) ? PROFD_ENOMEM : 0;
    if (rv != 0) {
        snprintf(err, errlen, "out of memory");
    }
    for (size_t k = 0; rv == 0 && k < man->captures_n; k++) {
        const pp_capture_t *c = &man->captures[k];
        if ((of[k] = maker(w, &x, c)) == SIZE_MAX) {
            rv = refuse(err, errlen, "a capture of its manifest (%s rank %lld) is no member's",
                        c->role, (long long)c->rank);
        } else {
            count[of[k]]++;
        }
    }
    pd_uix_free(&x);
    for (size_t i = 0; rv == 0 && i < w->nmembers; i++) {
        pd_member_t *m = &w->members[i];
        if (count[i] && (m->caps = calloc(count[i], sizeof(*m->caps))) == NULL) {
            snprintf(err, errlen, "out of memory");
            rv = PROFD_ENOMEM;
        }
    }
    if (rv != 0) {
        for (size_t i = 0; i < w->nmembers; i++) {
            free(w->members[i].caps);
            w->members[i].caps = NULL;
        }
        free(of);
        free(count);
        return rv;
    }
    for (size_t k = 0; k < man->captures_n; k++) { /* moved, in the manifest's order */
        pd_member_t *m = &w->members[of[k]];
        m->caps[m->ncaps++] = man->captures[k];
    }
    free(man->captures);
    man->captures = NULL;
    man->captures_n = 0;
    free(of);
    free(count);
    w->compact = false;
    return 0;
}
