// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A window's members: who joins, the indexes over them, ranks coming and
 * going (see windows.h). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pu_buf.h"
#include "text.h"
#include "windows.h"
#include "winpriv.h"

int pd_windows_member_roles(pd_member_t *m, const pd_role_t *roles, size_t n, uint32_t selected)
{
    pd_role_t *v = NULL;
    char **names = NULL;
    size_t nn = 0;
    if (n > 1) {
        uint32_t all = n >= 32 ? UINT32_MAX : (((uint32_t)1 << n) - 1);
        selected = (selected & all) ? (selected & all) : all;
        if ((v = malloc(n * sizeof(*v))) == NULL) {
            return PROFD_ENOMEM;
        }
        memcpy(v, roles, n * sizeof(*v));
        if (selected != all) { /* every role captured: no list in the plan */
            if ((names = calloc(n, sizeof(*names))) == NULL) {
                free(v);
                return PROFD_ENOMEM;
            }
            for (size_t i = 0; i < n && i < 32; i++) {
                if (selected & ((uint32_t)1 << i)) {
                    names[nn++] = v[i].name;
                }
            }
        }
    }
    free(m->roles);
    free(m->selnames);
    m->roles = v;
    m->nroles = v ? n : 0;
    m->selected = v ? selected : 0;
    m->selnames = names;
    m->nselnames = nn;
    return 0;
}

int64_t pd_windows_role_rank(const pd_member_t *m, const char *role)
{
    if (role == NULL || strcmp(role, "e2e") == 0) {
        return m->rank;
    }
    if (m->nroles == 0) {
        return strcmp(role, m->role) == 0 ? m->rank : -1;
    }
    for (size_t i = 0; i < m->nroles; i++) {
        if (strcmp(m->roles[i].name, role) == 0) {
            return m->roles[i].rank;
        }
    }
    return -1;
}

/* Would member m and rank k write into the same folder? */
static bool same_folder(const pd_member_t *m, const pd_rank_t *k)
{
    if (strcmp(m->host, k->host) != 0 || m->replica_rank != k->replica_rank) {
        return false;
    }
    if (m->rank == k->rank) {
        return true; /* end to end: e2e/rank<R>-<host> */
    }
    for (size_t i = 0; i < k->nroles; i++) {
        if (pd_windows_role_rank(m, k->roles[i].name) == k->roles[i].rank) {
            return true; /* discrete: <role>.<phase>/rank<R>-<host> */
        }
    }
    return false;
}

static uint64_t host_key(const pd_window_t *w, size_t i)
{
    return pd_uix_hash_str(w->members[i].host);
}

static bool folder_scan(const pd_window_t *w, const pd_rank_t *k)
{
    for (size_t i = 0; i < w->nmembers; i++) {
        if (same_folder(&w->members[i], k)) {
            return true;
        }
    }
    return false;
}

/* Does a member already write into the folder rank k would? Only members
 * of k's host can: found through the host index (a scan of every member
 * made a window of 16,384 ranks 134 M comparisons). */
static bool folder_taken(pd_window_t *w, const pd_rank_t *k)
{
    if (!pd_windows_index(w, &w->hix, w->nmembers, host_key)) {
        return folder_scan(w, k); /* no memory for the index */
    }
    bool taken = false;
    for (size_t at = pd_uix_first(&w->hix, pd_uix_hash_str(k->host)); w->hix.slot[at] && !taken;
         at = pd_uix_next(&w->hix, at)) {
        size_t i = pd_uix_at(&w->hix, at);
        taken = i < w->nmembers && same_folder(&w->members[i], k);
    }
    assert(taken == folder_scan(w, k)); /* debug builds: the index finds what a scan finds */
    return taken;
}

pd_member_t *pd_windows_add_member(pd_window_t *w, const pd_rank_t *k, int selector, uint32_t roles)
{
    bool pid_dir = folder_taken(w, k);
    if (PU_GROW(w->members, w->capm, w->nmembers + 1) != 0) {
        return NULL;
    }
    pd_member_t *m = &w->members[w->nmembers++];
    memset(m, 0, sizeof(*m));
    m->client = k->id;
    m->role = k->role;
    m->host = k->host;
    m->node = k->node;
    m->node_client = k->node_client;
    m->rank = k->rank;
    m->replica_rank = k->replica_rank;
    m->pid = k->pid;
    m->selector = selector;
    m->state = PP_MS_EXPECTED;
    m->pid_dir = pid_dir;
    m->uid = k->uid;
    pd_member_mark(w, m);
    if (pd_windows_member_roles(m, k->roles, k->nroles, roles) != 0) {
        w->nmembers--;
        return NULL;
    }
    return m;
}

static uint64_t member_key(const pd_window_t *w, size_t i)
{
    return pd_uix_hash_i64(w->members[i].client);
}

/* Index x over the window's first `live` members or files, brought up to
 * date: the positions not in yet are put in (all of them after a rebuild);
 * false without memory. */
bool pd_windows_index(pd_window_t *w, pd_uix_t *x, size_t live,
                      uint64_t (*key)(const pd_window_t *, size_t))
{
    if (x->n > live) {
        x->n = live; /* elements dropped (an addition undone): put again when back */
    }
    if (pd_uix_room(x, live, live - x->n) < 0) {
        return false;
    }
    for (; x->n < live; x->n++) {
        pd_uix_put(x, key(w, x->n), x->n);
    }
    return true;
}

static pd_member_t *member_scan(pd_window_t *w, int64_t client)
{
    for (size_t i = 0; i < w->nmembers; i++) {
        if (w->members[i].client == client) {
            return &w->members[i];
        }
    }
    return NULL;
}

pd_member_t *pd_windows_member(pd_window_t *w, int64_t client)
{
    if (client == 0 || !pd_windows_index(w, &w->mix, w->nmembers, member_key)) {
        return member_scan(w, client); /* members loaded unbound; no memory for the index */
    }
    size_t best = SIZE_MAX;
    for (size_t at = pd_uix_first(&w->mix, pd_uix_hash_i64(client)); w->mix.slot[at];
         at = pd_uix_next(&w->mix, at)) {
        size_t i = pd_uix_at(&w->mix, at);
        if (i < w->nmembers && w->members[i].client == client && i < best) {
            best = i; /* the first member of that client, as a scan finds it */
        }
    }
    pd_member_t *found = best != SIZE_MAX ? &w->members[best] : NULL;
    assert(found == member_scan(w, client)); /* debug builds: a member bound unannounced */
    return found;
}

void pd_windows_member_bound(pd_window_t *w, size_t i)
{
    if (w->mix.slot == NULL || i >= w->mix.n) {
        return; /* put in with the others at the next lookup */
    }
    /* rebuilt empty (1): every member is put in at the next lookup; no
     * memory (-1): no index, rebuilt (or a scan) at the next lookup */
    int rv = pd_uix_room(&w->mix, w->nmembers, 1);
    if (rv == 0) {
        pd_uix_put(&w->mix, member_key(w, i), i);
    } else if (rv < 0) {
        pd_uix_free(&w->mix);
    }
}

/* ---- ranks come and go ---- */

void pd_windows_on_register(pd_windows_t *ws, const pd_rank_t *k)
{
    pd_plan_rank_t pr;
    bool changed = false;
    if (ws->follower) {
        return; /* a node daemon: the coordinator decides who joins */
    }
    /* a rank of a window this daemon kept over a restart, or whose node came
     * back: its plan changes */
    changed = pd_windows_rebind(ws, k);
    pd_registry_plan_rank(k, &pr);
    for (pd_window_t *w = ws->head; w; w = w->next) {
        pd_member_t *m;
        uint32_t roles = 0;
        if (!pd_windows_running(w)) {
            continue;
        }
        int sel = pd_plan_match_roles(&w->spec, w->job, &pr, &roles);
        if ((m = pd_windows_member(w, k->id)) != NULL) {
            /* registered again, maybe with a role it added: the window
             * captures the roles it selects now */
            if (m->state == PP_MS_EXPECTED && sel != -2 && k->nroles > 1 &&
                (k->nroles != m->nroles || roles != m->selected) &&
                pd_windows_member_roles(m, k->roles, k->nroles, roles) == 0) {
                pd_member_mark(w, m);
                changed = true;
            }
            continue;
        }
        if (sel != -2 && pd_windows_add_member(w, k, sel, roles)) {
            changed = true;
            PD_LOG(ws->log, PD_LOG_DEBUG, "windows", "rank %lld (%s) joins window %s",
                   (long long)k->rank, k->role, w->name);
        }
    }
    if (changed) {
        pd_windows_changed(ws);
    }
}

void pd_windows_on_step(pd_windows_t *ws, const pd_rank_t *k)
{
    for (pd_window_t *w = ws->head; w; w = w->next) {
        if (w->state == PP_WS_PENDING && k->step != PP_NONE && k->step >= w->first &&
            pd_windows_member(w, k->id)) {
            w->state = PP_WS_ACTIVE;
            w->jdirty = true;
        }
    }
}

/* An expected member will not report: one failed capture says why. */
static void member_lost(pd_windows_t *ws, pd_window_t *w, pd_member_t *m, const char *why)
{
    if ((m->caps = calloc(1, sizeof(*m->caps))) != NULL) {
        pp_capture_t *c = &m->caps[0];
        pp_record_init(&pp_desc_capture, c);
        c->role = strdup(m->role);
        c->rank = m->rank;
        c->replica_rank = m->replica_rank;
        c->host = strdup(m->host);
        c->pid = m->pid;
        c->tool = strdup(pd_plan_tool(&w->spec, m->selector));
        c->status = PP_CAP_FAILED;
        c->reason = strdup(why);
        m->ncaps = 1;
    }
    m->state = PP_MS_LOST;
    pd_windows_touch(ws, w, m);
    PD_LOG(ws->log, PD_LOG_WARN, "windows", "window %s: rank %lld %s", w->name, (long long)m->rank,
           why);
    pd_windows_maybe_finish(ws, w);
}

void pd_windows_on_lost(pd_windows_t *ws, const pd_rank_t *k, const char *reason)
{
    char why[256];
    for (pd_window_t *w = ws->head; w; w = w->next) {
        pd_member_t *m;
        if (!pd_windows_running(w) || (m = pd_windows_member(w, k->id)) == NULL ||
            m->state != PP_MS_EXPECTED || m->rebind_until_ms) {
            continue;
        }
        if (k->step != PP_NONE) {
            snprintf(why, sizeof(why), "%s (last step begun: %lld)", reason, (long long)k->step);
        } else {
            snprintf(why, sizeof(why), "%s (before its first step)", reason);
        }
        member_lost(ws, w, m, why);
    }
}

void pd_windows_node_gone(pd_windows_t *ws, const char *node, const char *reason)
{
    for (pd_window_t *w = ws->head; w; w = w->next) {
        for (size_t i = 0; pd_windows_running(w) && i < w->nmembers; i++) {
            pd_member_t *m = &w->members[i];
            if (m->state == PP_MS_EXPECTED && m->node_client && !m->rebind_until_ms &&
                strcmp(m->node, node) == 0) {
                member_lost(ws, w, m, reason);
            }
        }
    }
}

void pd_windows_node_restarted(pd_windows_t *ws, const pd_registry_t *reg, const char *node,
                               int64_t until_ms)
{
    for (pd_window_t *w = ws->head; w; w = w->next) {
        for (size_t i = 0; pd_windows_running(w) && i < w->nmembers; i++) {
            pd_member_t *m = &w->members[i];
            if (m->state != PP_MS_EXPECTED || !m->node_client || strcmp(m->node, node) != 0) {
                continue;
            }
            const pd_rank_t *k = pd_registry_get(reg, m->client);
            bool begun = k == NULL || (k->step != PP_NONE && k->step >= w->first);
            if (!begun) {
                m->rebind_until_ms = until_ms;
            }
        }
    }
}

void pd_windows_credit(pd_windows_t *ws, int64_t ms)
{
    for (pd_window_t *w = ws->head; w; w = w->next) {
        for (size_t i = 0; i < w->nmembers; i++) {
            if (w->members[i].rebind_until_ms) {
                w->members[i].rebind_until_ms += ms;
            }
        }
    }
}

void pd_windows_rebind_expire(pd_windows_t *ws, int64_t now_ms)
{
    char why[PP_MAX_NAME + 96];
    for (pd_window_t *w = ws->head; w; w = w->next) {
        for (size_t i = 0; i < w->nmembers; i++) {
            pd_member_t *m = &w->members[i];
            if (m->rebind_until_ms && now_ms >= m->rebind_until_ms) {
                m->rebind_until_ms = 0;
                if (m->state == PP_MS_EXPECTED) {
                    snprintf(why, sizeof(why),
                             "lost with node %s (restarted): its worker did not register again",
                             m->node);
                    member_lost(ws, w, m, why);
                }
            }
        }
    }
}

void pd_windows_job_gone(pd_windows_t *ws, const char *job, int64_t now_ms)
{
    char why[PP_MAX_NAME + 64];
    bool changed = false;
    if (ws->follower) {
        return;
    }
    snprintf(why, sizeof(why), "expired: job %s has no registered rank left", job);
    for (pd_window_t *w = ws->head; w; w = w->next) {
        if (!pd_windows_running(w) || strcmp(w->job, job) != 0) {
            continue;
        }
        if (w->nmembers == 0) {
            pd_windows_cancel(ws, w, now_ms, why);
            PD_LOG(ws->log, PD_LOG_INFO, "windows", "window %s %s", w->name, why);
            changed = true;
        } else {
            pd_windows_maybe_finish(ws, w); /* every member reported or lost */
        }
    }
    if (changed) {
        pd_windows_changed(ws);
    }
}

bool pd_windows_rebind(pd_windows_t *ws, const pd_rank_t *k)
{
    bool changed = false;
    for (pd_window_t *w = ws->head; w; w = w->next) {
        if (pd_windows_finished(w)) {
            continue;
        }
        for (size_t i = 0; i < w->nmembers; i++) {
            pd_member_t *m = &w->members[i];
            bool process = m->rank == k->rank && m->pid == k->pid &&
                           strcmp(m->role, k->role) == 0 && strcmp(m->host, k->host) == 0;
            bool same =
                m->rebind_until_ms ? k->node_client && strcmp(m->node, k->node) == 0 && process
                : k->node_client ? m->node_client == k->node_client && strcmp(m->node, k->node) == 0
                                 : m->node_client == 0 && process;
            if (same && (m->client != k->id || m->rebind_until_ms)) {
                m->client = k->id;
                pd_windows_member_bound(w, i);
                m->node_client = k->node_client;
                m->rebind_until_ms = 0;
                pd_member_mark(w, m);
                pd_windows_dirty(ws);
                changed = changed || m->state == PP_MS_EXPECTED;
            }
        }
    }
    return changed;
}
