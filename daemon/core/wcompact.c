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

size_t pd_windows_ranks(const pd_window_t *w)
{
    return w->slim ? (size_t)w->kept.ranks : w->nmembers;
}

int64_t pd_windows_owner_uid(const pd_window_t *w)
{
    if (w->slim) {
        return w->kept.uid >= 0 ? w->kept.uid : -1;
    }
    for (size_t i = 0; i < w->nmembers; i++) {
        if (w->members[i].uid >= 0) {
            return w->members[i].uid;
        }
    }
    return -1;
}

static int dup_into(char **to, const char *s)
{
    return (*to = strdup(s ? s : "")) != NULL ? 0 : PROFD_ENOMEM;
}

/* Each host whose members' node daemon is not named as it is: the host
 * and the first such member's node, once a host. */
static int keep_nodes(const pd_window_t *w, pp_state_kept_t *k)
{
    size_t n = 0;
    for (size_t i = 0; i < w->nmembers; i++) {
        n += strcmp(w->members[i].node, w->members[i].host) != 0;
    }
    if (n == 0) {
        return 0;
    }
    pd_uix_t x = {0};
    if ((k->nodes = calloc(2 * n, sizeof(*k->nodes))) == NULL || pd_uix_room(&x, n, n) < 0) {
        pd_uix_free(&x);
        return PROFD_ENOMEM;
    }
    int rv = 0;
    for (size_t i = 0; rv == 0 && i < w->nmembers; i++) {
        const pd_member_t *m = &w->members[i];
        uint64_t h = pd_uix_hash_str(m->host);
        bool seen = false;
        if (strcmp(m->node, m->host) == 0) {
            continue;
        }
        for (size_t at = pd_uix_first(&x, h); x.slot[at] && !seen; at = pd_uix_next(&x, at)) {
            seen = strcmp(k->nodes[2 * pd_uix_at(&x, at)], m->host) == 0;
        }
        if (!seen && (rv = dup_into(&k->nodes[k->nodes_n], m->host)) == 0) {
            k->nodes_n++;
            if ((rv = dup_into(&k->nodes[k->nodes_n], m->node)) == 0) {
                pd_uix_put(&x, h, k->nodes_n / 2);
            }
            k->nodes_n++;
        }
    }
    pd_uix_free(&x);
    return rv;
}

int pd_windows_keep(const pd_window_t *w, pp_state_kept_t *out)
{
    pp_state_kept_t k;
    size_t nroles = 0;
    pp_record_init(&pp_desc_state_kept, &k);
    k.ranks = (int64_t)w->nmembers;
    k.uid = pd_windows_owner_uid(w);
    k.mode = pd_windows_mode(w);
    k.selector = w->nmembers ? w->members[0].selector : -1;
    char **roles = pd_windows_roles(w, &nroles);
    int rv = dup_into(&k.tool, pd_windows_tool(w));
    if (rv == 0 && nroles && (k.roles = calloc(nroles, sizeof(*k.roles))) == NULL) {
        rv = PROFD_ENOMEM;
    }
    for (size_t i = 0; rv == 0 && i < nroles; i++) {
        if ((rv = dup_into(&k.roles[i], roles[i])) == 0) {
            k.roles_n++;
        }
    }
    free(roles);
    if (rv == 0) {
        rv = keep_nodes(w, &k);
    }
    if (rv != 0) {
        pp_record_free(&pp_desc_state_kept, &k);
        return rv;
    }
    *out = k;
    return 0;
}

void pd_windows_compact(pd_window_t *w)
{
    w->read_back_ms = 0;
    if (!w->compact) {
        pd_windows_captured(w, w->captured);
        w->compact = true;
    }
    pp_state_kept_t k;
    if (!w->slim && w->nmembers > 0 && pd_windows_keep(w, &k) == 0) {
        pp_record_free(&pp_desc_state_kept, &w->kept);
        w->kept = k; /* as the journal has it since the window is done (put_window) */
        w->slim = true;
    }
    if (w->slim) {
        pd_windows_drop_members(w);
    }
    for (size_t i = 0; i < w->nmembers; i++) { /* no memory to keep their summary */
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

/* The node daemon a rebuilt member of `host` came through (w->kept). */
static const char *node_of(const pd_window_t *w, const char *host)
{
    for (size_t i = 0; i + 1 < w->kept.nodes_n; i += 2) {
        if (strcmp(w->kept.nodes[i], host) == 0) {
            return w->kept.nodes[i + 1];
        }
    }
    return host;
}

static bool same_member(const pp_capture_t *a, const pp_capture_t *b, bool by_rank)
{
    return a->pid == b->pid && a->replica_rank == b->replica_rank &&
           (!by_rank || a->rank == b->rank) &&
           strcmp(a->host ? a->host : "", b->host ? b->host : "") == 0;
}

/* The captures of man grouped: of[k] the group of capture k, first[g]
 * the first capture of group g, by process (host, pid, replica rank) and,
 * by_rank, by rank (ranks of one process, as clients of it). Their count. */
static size_t group(const pp_manifest_t *man, bool by_rank, pd_uix_t *x, size_t *of, size_t *first)
{
    size_t np = 0;
    for (size_t k = 0; k < man->captures_n; k++) {
        const pp_capture_t *c = &man->captures[k];
        uint64_t h = who_key(c->host, c->pid, c->replica_rank) ^
                     (by_rank ? pd_uix_hash_i64(c->rank + 1) : 0);
        of[k] = SIZE_MAX;
        for (size_t at = pd_uix_first(x, h); x->slot[at] && of[k] == SIZE_MAX;
             at = pd_uix_next(x, at)) {
            size_t j = pd_uix_at(x, at);
            of[k] = same_member(&man->captures[first[j]], c, by_rank) ? j : SIZE_MAX;
        }
        if (of[k] == SIZE_MAX) {
            first[np] = k;
            pd_uix_put(x, h, np);
            of[k] = np++;
        }
    }
    return np;
}

/* A slim window's members again, one per process its captures name (in
 * the order they come), of[k] the one of capture k: one per rank of a
 * process while that makes no more than it had (several clients of one
 * process), else one per process (a process of several roles, with a rank
 * in each). */
static int rebuild(pd_window_t *w, const pp_manifest_t *man, size_t *of, char *err, size_t errlen)
{
    size_t n = man->captures_n, np = 0;
    size_t *first = calloc(n ? n : 1, sizeof(*first)); /* a process's first capture */
    pd_uix_t x = {0};
    if (first == NULL || pd_uix_room(&x, n, n) < 0) {
        free(first);
        pd_uix_free(&x);
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    np = group(man, true, &x, of, first);
    if ((int64_t)np > w->kept.ranks) {
        pd_uix_free(&x);
        if (pd_uix_room(&x, n, n) < 0) {
            free(first);
            snprintf(err, errlen, "out of memory");
            return PROFD_ENOMEM;
        }
        np = group(man, false, &x, of, first);
    }
    pd_uix_free(&x);
    if ((int64_t)np > w->kept.ranks) { /* each member has a capture or none: not more */
        free(first);
        snprintf(err, errlen, "its manifest names %zu process(es), more than its %lld member(s)",
                 np, (long long)w->kept.ranks);
        return PROFD_EINVAL;
    }
    if (np && (w->members = calloc(np, sizeof(*w->members))) == NULL) {
        free(first);
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    w->nmembers = w->capm = np;
    for (size_t j = 0; j < np; j++) {
        const pp_capture_t *c = &man->captures[first[j]];
        pd_member_t *m = &w->members[j];
        m->host = c->host ? c->host : ""; /* the strings of its captures, freed with them */
        m->node = node_of(w, m->host);
        m->pid = c->pid;
        m->replica_rank = c->replica_rank;
        m->role = strcmp(c->role, "e2e") == 0 && c->roles_n ? c->roles[0] : c->role;
        m->rank = c->rank;
        m->selector = (int)w->kept.selector;
        m->uid = -1;
        m->state = PP_MS_REPORTED;
    }
    for (size_t k = 0; k < n; k++) { /* an end-to-end capture names the primary role */
        const pp_capture_t *c = &man->captures[k];
        if (strcmp(c->role, "e2e") == 0 && c->roles_n) {
            w->members[of[k]].role = c->roles[0];
            w->members[of[k]].rank = c->rank;
        }
    }
    free(first);
    return 0;
}

static int cmp_member(const void *a, const void *b)
{
    const pd_member_t *x = a, *y = b;
    int c = (x->rank > y->rank) - (x->rank < y->rank);
    if (c == 0) {
        c = (x->replica_rank > y->replica_rank) - (x->replica_rank < y->replica_rank);
    }
    if (c == 0) {
        c = strcmp(x->host, y->host);
    }
    return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

/* A rebuilt member lost: one failed capture with no phase, folder or file
 * (what a member that will not report is given, winmember.c). */
static bool lost(const pd_member_t *m)
{
    const pp_capture_t *c = &m->caps[0];
    return m->ncaps == 1 && c->status == PP_CAP_FAILED && c->phase == NULL && c->dir == NULL &&
           c->files_n == 0 && strcmp(c->role, "e2e") != 0;
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
    size_t *of = man->captures_n ? calloc(man->captures_n, sizeof(*of)) : NULL;
    int rv = man->captures_n && of == NULL ? PROFD_ENOMEM : 0;
    bool rebuilt = w->slim && w->nmembers == 0;
    if (rv != 0) {
        snprintf(err, errlen, "out of memory");
    } else if (rebuilt) {
        rv = rebuild(w, man, of, err, errlen);
    }
    size_t *count = w->nmembers ? calloc(w->nmembers, sizeof(*count)) : NULL;
    if (rv == 0 && w->nmembers && count == NULL) {
        snprintf(err, errlen, "out of memory");
        rv = PROFD_ENOMEM;
    }
    if (rv == 0 && !rebuilt) { /* the members by who they are: host, pid and replica rank */
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
        for (size_t k = 0; rv == 0 && k < man->captures_n; k++) {
            const pp_capture_t *c = &man->captures[k];
            if ((of[k] = maker(w, &x, c)) == SIZE_MAX) {
                rv = refuse(err, errlen, "a capture of its manifest (%s rank %lld) is no member's",
                            c->role, (long long)c->rank);
            }
        }
        pd_uix_free(&x);
    }
    for (size_t k = 0; rv == 0 && k < man->captures_n; k++) {
        count[of[k]]++;
    }
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
        if (rebuilt) {
            pd_windows_drop_members(w);
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
    if (rebuilt) {
        for (size_t i = 0; i < w->nmembers; i++) {
            w->members[i].state = lost(&w->members[i]) ? PP_MS_LOST : PP_MS_REPORTED;
        }
        if (w->nmembers > 1) {
            qsort(w->members, w->nmembers, sizeof(*w->members), cmp_member);
        }
    }
    w->compact = false;
    return 0;
}
