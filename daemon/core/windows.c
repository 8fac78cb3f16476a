// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Windows and their captures (see windows.h). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "windows.h"

void pd_windows_init(pd_windows_t *ws, pd_log_t *log, size_t max_live)
{
    memset(ws, 0, sizeof(*ws));
    ws->log = log;
    ws->max_live = max_live;
}

static void member_free(pd_member_t *m)
{
    for (size_t i = 0; i < m->ncaps; i++) {
        pp_record_free(&pp_desc_capture, &m->caps[i]);
    }
    free(m->caps);
    m->caps = NULL;
    m->ncaps = 0;
    free(m->gathered);
    m->gathered = NULL;
    free(m->roles);
    free(m->selnames);
    m->roles = NULL;
    m->selnames = NULL;
    m->nroles = m->nselnames = 0;
}

void pd_windows_free_one(pd_window_t *w)
{
    for (size_t i = 0; i < w->nincoming; i++) {
        free(w->incoming[i].path);
        free(w->incoming[i].hash);
    }
    free(w->incoming);
    pd_uix_free(&w->inix);
    pd_uix_free(&w->mix);
    pd_uix_free(&w->hix);
    for (size_t i = 0; i < w->nmembers; i++) {
        member_free(&w->members[i]);
    }
    free(w->members);
    for (size_t i = 0; i < w->nwarnings; i++) {
        free(w->warnings[i]);
    }
    free(w->warnings);
    pp_record_free(&pp_desc_window_spec, &w->spec);
    free(w->origin);
    free(w);
}

void pd_windows_fini(pd_windows_t *ws)
{
    while (ws->head) {
        pd_window_t *w = ws->head;
        ws->head = w->next;
        pd_windows_free_one(w);
    }
    memset(ws, 0, sizeof(*ws));
}

pd_window_t *pd_windows_get(const pd_windows_t *ws, int64_t id)
{
    for (pd_window_t *w = ws->head; w; w = w->next) {
        if (w->id == id) {
            return w;
        }
    }
    return NULL;
}

bool pd_windows_running(const pd_window_t *w)
{
    return w->state == PP_WS_PENDING || w->state == PP_WS_ACTIVE;
}

static bool finished(const pd_window_t *w)
{
    return w->state == PP_WS_DONE || w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED;
}

size_t pd_windows_live(const pd_windows_t *ws)
{
    size_t n = 0;
    for (pd_window_t *w = ws->head; w; w = w->next) {
        n += !finished(w);
    }
    return n;
}

void pd_windows_changed(pd_windows_t *ws)
{
    if (ws->hooks.changed) {
        ws->hooks.changed(ws->hooks.arg);
    }
}

void pd_windows_dirty(pd_windows_t *ws)
{
    if (ws->hooks.dirty) {
        ws->hooks.dirty(ws->hooks.arg);
    }
}

void pd_windows_touch(pd_windows_t *ws, pd_window_t *w, pd_member_t *m)
{
    if (w) {
        w->jdirty = w->jdirty || m == NULL;
    }
    if (m) {
        pd_member_mark(m);
    }
    pd_windows_dirty(ws);
}

static int add_warning(pd_window_t *w, const char *text)
{
    char **v = realloc(w->warnings, (w->nwarnings + 1) * sizeof(*v));
    if (v == NULL) {
        return PROFD_ENOMEM;
    }
    w->warnings = v;
    if ((v[w->nwarnings] = strdup(text)) == NULL) {
        return PROFD_ENOMEM;
    }
    w->nwarnings++;
    return 0;
}

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

static bool index_update(pd_window_t *w, pd_uix_t *x, size_t live,
                         uint64_t (*key)(const pd_window_t *, size_t));

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
    if (!index_update(w, &w->hix, w->nmembers, host_key)) {
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
    if (w->nmembers == w->capm) {
        size_t n = w->capm ? w->capm * 2 : 8;
        pd_member_t *v = realloc(w->members, n * sizeof(*v));
        if (v == NULL) {
            return NULL;
        }
        w->members = v;
        w->capm = n;
    }
    pd_member_t *m = &w->members[w->nmembers++];
    memset(m, 0, sizeof(*m));
    m->client = k->id;
    snprintf(m->role, sizeof(m->role), "%s", k->role);
    snprintf(m->host, sizeof(m->host), "%s", k->host);
    snprintf(m->node, sizeof(m->node), "%s", k->node);
    m->node_client = k->node_client;
    m->rank = k->rank;
    m->replica_rank = k->replica_rank;
    m->pid = k->pid;
    m->selector = selector;
    m->state = PP_MS_EXPECTED;
    m->pid_dir = pid_dir;
    m->uid = k->uid;
    pd_member_mark(m);
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

static uint64_t incoming_key(const pd_window_t *w, size_t i)
{
    return pd_uix_hash_str(w->incoming[i].path);
}

/* Index x over the window's first `live` members or files, brought up to
 * date: the positions not in yet are put in (all of them after a rebuild);
 * false without memory. */
static bool index_update(pd_window_t *w, pd_uix_t *x, size_t live,
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
    if (client == 0 || !index_update(w, &w->mix, w->nmembers, member_key)) {
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

void pd_windows_append(pd_windows_t *ws, pd_window_t *w)
{
    if (ws->tail) {
        ws->tail->next = w;
    } else {
        ws->head = w;
    }
    ws->tail = w;
    ws->count++;
}

/* ---- creating ---- */

/* The live window of out's job whose steps meet one of out's segments on
 * one of out's members (*shared of them), or NULL. */
static const pd_window_t *overlapping(const pd_windows_t *ws, const pd_plan_out_t *out,
                                      size_t *shared)
{
    for (const pd_window_t *w = ws->head; w; w = w->next) {
        if (!pd_windows_running(w) || strcmp(w->job, out->job) != 0) {
            continue;
        }
        bool meets = false;
        for (size_t s = 0; s < out->n_segments && !meets; s++) {
            const pd_plan_segment_t *g = &out->segments[s];
            meets = (w->last == PP_NONE || g->first <= w->last) &&
                    (g->last == PP_NONE || w->first <= g->last);
        }
        *shared = 0;
        for (size_t i = 0; meets && i < out->n_members; i++) {
            for (size_t m = 0; m < w->nmembers; m++) {
                if (w->members[m].client == out->members[i].id) {
                    (*shared)++;
                    break;
                }
            }
        }
        if (*shared) {
            return w;
        }
    }
    return NULL;
}

/* Two windows capturing the same process at the same steps fail (one
 * profiler per thread): refused naming the window in the way, or with
 * spec->queue moved to begin after it (and after any it then meets). */
static int no_overlap(const pd_windows_t *ws, const pp_window_spec_t *spec, pd_plan_out_t *out,
                      char *err, size_t errlen)
{
    const pd_window_t *w;
    size_t shared, moves = 0;
    int64_t was = out->n_segments ? out->segments[0].first : PP_NONE;
    while ((w = overlapping(ws, out, &shared)) != NULL) {
        char steps[64];
        if (w->last == PP_NONE) {
            snprintf(steps, sizeof(steps), "steps %lld-", (long long)w->first);
        } else {
            snprintf(steps, sizeof(steps), "steps %lld-%lld", (long long)w->first,
                     (long long)w->last);
        }
        if (!spec->queue || w->last == PP_NONE || moves++ > ws->count) {
            snprintf(err, errlen,
                     "overlaps window %lld (%s, %s) on %zu of its rank(s): stop it (profctl "
                     "stop %lld)%s",
                     (long long)w->id, w->name, steps, shared, (long long)w->id,
                     w->last == PP_NONE ? "; an open-ended window cannot be queued after"
                                        : " or pass --queue to begin after it");
            return PROFD_ESTATE;
        }
        int64_t delta = w->last + 1 - out->segments[0].first;
        for (size_t s = 0; s < out->n_segments; s++) {
            out->segments[s].first += delta;
            if (out->segments[s].last != PP_NONE) {
                out->segments[s].last += delta;
            }
        }
    }
    if (moves && was != PP_NONE) {
        char buf[160];
        snprintf(buf, sizeof(buf), "queued: begins at step %lld instead of %lld",
                 (long long)out->segments[0].first, (long long)was);
        char **v = realloc(out->warnings, (out->n_warnings + 1) * sizeof(*v));
        if (v == NULL || (v[out->n_warnings] = strdup(buf)) == NULL) {
            if (v) {
                out->warnings = v;
            }
            snprintf(err, errlen, "out of memory");
            return PROFD_ENOMEM;
        }
        out->warnings = v;
        out->n_warnings++;
    }
    return 0;
}

int pd_windows_plan(pd_windows_t *ws, const pd_registry_t *reg, const pp_window_spec_t *spec,
                    const pd_plan_params_t *p, pd_plan_out_t *out, char *err, size_t errlen)
{
    size_t n = 0, i = 0;
    for (pd_rank_t *k = pd_registry_next(reg, NULL); k; k = pd_registry_next(reg, k)) {
        n += k->state == PD_RANK_ACTIVE;
    }
    pd_plan_rank_t *ranks = n ? calloc(n, sizeof(*ranks)) : NULL;
    if (n && ranks == NULL) {
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    for (pd_rank_t *k = pd_registry_next(reg, NULL); k; k = pd_registry_next(reg, k)) {
        if (k->state == PD_RANK_ACTIVE) {
            pd_registry_plan_rank(k, &ranks[i++]);
        }
    }
    int rv = pd_plan_resolve(spec, ranks, n, p, out, err, errlen);
    free(ranks);
    if (rv != 0) {
        return rv;
    }
    if ((rv = no_overlap(ws, spec, out, err, errlen)) != 0) {
        pd_plan_out_free(out);
        return rv;
    }
    if (ws->max_live && pd_windows_live(ws) + out->n_segments > ws->max_live) {
        snprintf(err, errlen, "%zu window(s) would exceed the limit of %zu unfinished windows",
                 out->n_segments, ws->max_live);
        pd_plan_out_free(out);
        return PROFD_ELIMIT;
    }
    return 0;
}

/* One window of a request: members, warnings, and the name below root. */
static pd_window_t *window_new(pd_windows_t *ws, const pd_registry_t *reg,
                               const pp_window_spec_t *spec, const pd_plan_out_t *out,
                               const pd_plan_segment_t *seg, const char *root, int64_t now_ms)
{
    char buf[320];
    pd_window_t *w = calloc(1, sizeof(*w));
    if (w == NULL || pp_record_copy(&pp_desc_window_spec, &w->spec, spec) != 0) {
        free(w);
        return NULL;
    }
    w->id = ws->next_id + 1;
    w->first = seg->first;
    w->last = seg->last;
    pp_window_name(w->name, sizeof(w->name), w->id, w->first, w->last);
    snprintf(w->job, sizeof(w->job), "%s", out->job);
    if ((size_t)snprintf(w->dir, sizeof(w->dir), "%s/%s/%s", root, w->job, w->name) >=
        sizeof(w->dir)) {
        pd_windows_free_one(w);
        return NULL; /* the caller leaves room below root */
    }
    ws->next_id = w->id;
    w->root_len = strlen(root);
    w->state = PP_WS_PENDING;
    w->jdirty = true;
    w->created_ms = now_ms;
    int late = 0;
    for (size_t m = 0; m < out->n_members; m++) {
        pd_rank_t *k = pd_registry_get(reg, out->members[m].id);
        if (k && pd_windows_add_member(w, k, out->members[m].selector, out->members[m].roles) &&
            k->step != PP_NONE && k->step >= w->first) {
            late++;
        }
    }
    for (size_t k = 0; k < out->n_warnings; k++) {
        add_warning(w, out->warnings[k]);
    }
    if (late) {
        snprintf(buf, sizeof(buf),
                 "%d selected rank(s) already began step %lld or later: they will report missed",
                 late, (long long)w->first);
        add_warning(w, buf);
    }
    return w;
}

int pd_windows_add(pd_windows_t *ws, const pd_registry_t *reg, const pp_window_spec_t *spec,
                   pd_plan_out_t *out, const char *root, int64_t now_ms, int64_t **ids,
                   size_t *nids)
{
    int64_t *v = calloc(out->n_segments ? out->n_segments : 1, sizeof(*v));
    size_t n = 0;
    if (v == NULL) {
        pd_plan_out_free(out);
        return PROFD_ENOMEM;
    }
    for (size_t s = 0; s < out->n_segments; s++) {
        pd_window_t *w = window_new(ws, reg, spec, out, &out->segments[s], root, now_ms);
        if (w == NULL) {
            break;
        }
        pd_windows_append(ws, w);
        v[n++] = w->id;
        PD_LOG(ws->log, PD_LOG_INFO, "windows", "window %s of job %s: %zu rank(s)%s", w->name,
               w->job, w->nmembers, w->nmembers ? "" : " (none registered yet)");
    }
    pd_plan_out_free(out);
    *ids = v;
    *nids = n;
    pd_windows_changed(ws);
    return 0;
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
                pd_member_mark(m);
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
        if (finished(w)) {
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
                pd_member_mark(m);
                pd_windows_dirty(ws);
                changed = changed || m->state == PP_MS_EXPECTED;
            }
        }
    }
    return changed;
}

/* ---- reports ---- */

void pd_windows_set_status(pp_capture_t *c, pp_capture_status_t status, const char *reason)
{
    c->status = status;
    free(c->reason);
    c->reason = reason ? strdup(reason) : NULL;
}

/* ---- files arriving (coordinator) ---- */

pd_incoming_t *pd_windows_add_incoming(pd_window_t *w, const char *path)
{
    size_t len = strlen(path);
    if (len > PD_INCOMING_PATH_MAX) {
        return NULL;
    }
    if (w->nincoming == w->capincoming) { /* 16,384 ranks: grown by one, it was O(n^2) */
        size_t cap = w->capincoming ? 2 * w->capincoming : 64;
        pd_incoming_t *v = realloc(w->incoming, cap * sizeof(*v));
        if (v == NULL) {
            return NULL;
        }
        w->incoming = v;
        w->capincoming = cap;
    }
    pd_incoming_t *in = &w->incoming[w->nincoming];
    memset(in, 0, sizeof(*in));
    if ((in->path = strdup(path)) == NULL) {
        return NULL;
    }
    w->nincoming++;
    return in;
}

pd_incoming_t *pd_windows_incoming(pd_window_t *w, const char *path, size_t *idx)
{
    if (!index_update(w, &w->inix, w->nincoming, incoming_key)) { /* no memory: a scan */
        for (size_t i = 0; i < w->nincoming; i++) {
            if (strcmp(w->incoming[i].path, path) == 0) {
                *idx = i;
                return &w->incoming[i];
            }
        }
        return NULL;
    }
    for (size_t at = pd_uix_first(&w->inix, pd_uix_hash_str(path)); w->inix.slot[at];
         at = pd_uix_next(&w->inix, at)) {
        size_t i = pd_uix_at(&w->inix, at);
        if (i < w->nincoming && strcmp(w->incoming[i].path, path) == 0) {
            *idx = i;
            return &w->incoming[i];
        }
    }
    return NULL;
}

/* Where a capture of this member must be: "<job>/<window>/<capdir>[/step<N>]". */
bool pd_windows_capdir_ok(const pd_window_t *w, const pd_member_t *m, const pp_capture_t *c,
                          bool rel)
{
    char capdir[PP_MAX_PATH], a[PP_MAX_PATH], b[PP_MAX_PATH + 32];
    int n;
    int64_t rank = pd_windows_role_rank(m, c->phase ? c->role : NULL);
    if (c->dir == NULL || rank < 0 ||
        pp_capture_dir(capdir, sizeof(capdir), c->role, c->phase, rank, m->replica_rank, m->host,
                       m->pid_dir ? m->pid : 0) != 0) {
        return false;
    }
    if (rel) {
        n = snprintf(a, sizeof(a), "%s", capdir);
    } else {
        n = snprintf(a, sizeof(a), "%s/%s/%s", w->job, w->name, capdir);
    }
    if (n < 0 || (size_t)n >= sizeof(a) ||
        (size_t)snprintf(b, sizeof(b), "%s/step%lld", a, (long long)c->first_step) >= sizeof(b)) {
        return false;
    }
    return strcmp(c->dir, a) == 0 || (c->phase && strcmp(c->dir, b) == 0);
}

/* Check one reported capture and stamp who captured it; NULL when it
 * passes, else why it failed (in `why` or a constant). */
static const char *check_capture(pd_windows_t *ws, const pd_window_t *w, const pd_member_t *m,
                                 pp_capture_t *c, bool rel, char *why, size_t whylen)
{
    if (!rel) { /* a worker's: the files are the daemon's listing, never the report's */
        for (size_t f = 0; f < c->files_n; f++) {
            pp_record_free(&pp_desc_file, &c->files[f]);
        }
        free(c->files);
        c->files = NULL;
        c->files_n = 0;
    }
    if (c->reason) { /* free text from the worker: fit for logs and JSON */
        char q[512];
        pd_quote(q, sizeof(q), c->reason);
        free(c->reason);
        c->reason = strdup(q);
    }
    /* who captured is the daemon's knowledge, not the report's */
    bool e2e = strcmp(c->role, "e2e") == 0;
    int64_t rank = pd_windows_role_rank(m, e2e ? NULL : c->role);
    c->rank = rank >= 0 ? rank : m->rank;
    c->replica_rank = m->replica_rank;
    c->pid = m->pid;
    free(c->host);
    c->host = strdup(m->host);
    free(c->tool);
    c->tool = strdup(pd_plan_tool(&w->spec, m->selector));
    for (size_t i = 0; i < c->roles_n; i++) {
        free(c->roles[i]);
    }
    free(c->roles);
    c->roles = NULL;
    c->roles_n = 0;
    size_t nroles = m->nroles ? m->nroles : 1;
    if (e2e && (c->roles = calloc(nroles, sizeof(*c->roles))) != NULL) {
        for (size_t i = 0; i < nroles; i++) { /* the roles an e2e capture covers */
            if ((c->roles[c->roles_n] = strdup(m->nroles ? m->roles[i].name : m->role)) != NULL) {
                c->roles_n++;
            }
        }
    }
    if (c->status == PP_CAP_NONE) {
        return "unknown capture status in the report";
    }
    if ((!e2e && rank < 0) || (c->phase && !pp_ident_ok(c->phase))) {
        return "capture role or phase does not match the rank";
    }
    if (c->dir && c->status != PP_CAP_MISSED && !pd_windows_capdir_ok(w, m, c, rel)) {
        char q[160];
        pd_quote(q, sizeof(q), c->dir);
        snprintf(why, whylen, "capture folder '%s' is not where this capture belongs", q);
        PD_LOG(ws->log, PD_LOG_WARN, "windows", "window %s rank %lld: %s", w->name,
               (long long)m->rank, why);
        return why;
    }
    return NULL;
}

int pd_windows_report(pd_windows_t *ws, const pd_rank_t *k, int64_t window, pp_capture_t **caps,
                      size_t *ncaps, bool rel, pd_window_t **wout, pd_member_t **mout, char *err,
                      size_t errlen)
{
    char why[256];
    pd_window_t *w = pd_windows_get(ws, window);
    if (w == NULL) {
        snprintf(err, errlen, "no window %lld", (long long)window);
        return PROFD_ENOENT;
    }
    pd_member_t *m = pd_windows_member(w, k->id);
    if (m == NULL) {
        snprintf(err, errlen, "client %lld is not a member of window %s", (long long)k->id,
                 w->name);
        return PROFD_ESTATE;
    }
    if (m->state != PP_MS_EXPECTED) {
        snprintf(err, errlen, "window %s already has the captures of rank %lld", w->name,
                 (long long)m->rank);
        return PROFD_ESTATE;
    }
    m->caps = *caps; /* moved */
    m->ncaps = *ncaps;
    *caps = NULL;
    *ncaps = 0;
    free(m->gathered);
    m->gathered = m->ncaps ? calloc(m->ncaps, sizeof(*m->gathered)) : NULL;
    m->state = PP_MS_REPORTED;
    if (w->state == PP_WS_PENDING) {
        w->state = PP_WS_ACTIVE;
        w->jdirty = true;
    }
    pd_windows_touch(ws, w, m); /* kept over a restart */
    for (size_t i = 0; i < m->ncaps; i++) {
        pp_capture_t *c = &m->caps[i];
        const char *failure = check_capture(ws, w, m, c, rel, why, sizeof(why));
        if (failure) {
            pd_windows_set_status(c, PP_CAP_FAILED, failure);
        }
        if (failure || c->status == PP_CAP_MISSED) {
            free(c->dir);
            c->dir = NULL;
        }
    }
    *wout = w;
    *mout = m;
    return 0;
}

int pd_windows_on_result(pd_windows_t *ws, const pd_rank_t *k, pp_result_t *res, char *err,
                         size_t errlen)
{
    pd_window_t *w;
    pd_member_t *m;
    int rv = pd_windows_report(ws, k, res->window, &res->captures, &res->captures_n, false, &w, &m,
                               err, errlen);
    if (rv != 0) {
        return rv;
    }
    for (size_t i = 0; i < m->ncaps; i++) {
        if (m->caps[i].dir && ws->hooks.gather) {
            ws->hooks.gather(ws->hooks.arg, w, m, i, k->uid);
        }
    }
    /* No new plan generation: a report changes no other rank's plan, and the
     * reporting rank is done with the window (its engine keeps it as done
     * until the next plan drops it). Bumping the generation here re-sent
     * every plan to every rank once per burst of reports: up to N^2 plan
     * messages for a window over N ranks (about 4N measured with 64 ranks
     * reporting together, instead of N). */
    pd_windows_maybe_finish(ws, w);
    return 0;
}

void pd_windows_maybe_finish(pd_windows_t *ws, pd_window_t *w)
{
    if (finished(w) || w->nmembers == 0 || w->forwarded) {
        return;
    }
    for (size_t i = 0; i < w->nmembers; i++) {
        if (w->members[i].state == PP_MS_EXPECTED) {
            return;
        }
    }
    if (w->state != PP_WS_GATHERING) {
        w->state = PP_WS_GATHERING;
        pd_windows_touch(ws, w, NULL);
    }
    if (w->pending == 0 && ws->hooks.complete) {
        ws->hooks.complete(ws->hooks.arg, w);
    }
}

/* ---- stop ---- */

void pd_windows_cancel(pd_windows_t *ws, pd_window_t *w, int64_t now_ms, const char *reason)
{
    w->state = PP_WS_CANCELLED;
    w->done_ms = now_ms;
    snprintf(w->reason, sizeof(w->reason), "%s", reason);
    pd_windows_touch(ws, w, NULL);
}

int pd_windows_stop(pd_windows_t *ws, const pd_registry_t *reg, int64_t id,
                    const pd_plan_params_t *p, int64_t now_ms, char *err, size_t errlen)
{
    char why[96];
    pd_window_t *w = pd_windows_get(ws, id);
    if (w == NULL) {
        snprintf(err, errlen, "no window %lld", (long long)id);
        return PROFD_ENOENT;
    }
    if (!pd_windows_running(w)) {
        snprintf(err, errlen, "window %s is already %s", w->name,
                 pp_enum_name(&pp_enum_window_state, w->state));
        return PROFD_ESTATE;
    }
    pd_plan_rank_t *ranks = w->nmembers ? calloc(w->nmembers, sizeof(*ranks)) : NULL;
    size_t n = 0;
    bool started = false;
    for (size_t i = 0; i < w->nmembers; i++) {
        pd_rank_t *k = pd_registry_get(reg, w->members[i].client);
        if (k && ranks && w->members[i].state == PP_MS_EXPECTED) {
            pd_registry_plan_rank(k, &ranks[n++]);
            started = started || (k->step != PP_NONE && k->step >= w->first);
        }
        started = started || w->members[i].state == PP_MS_REPORTED;
    }
    int64_t stop = pd_plan_stop_step(ranks, n, p);
    free(ranks);
    if (!started && (stop == PP_NONE || stop < w->first)) {
        snprintf(why, sizeof(why), "cancelled before step %lld", (long long)w->first);
        pd_windows_cancel(ws, w, now_ms, why);
        PD_LOG(ws->log, PD_LOG_INFO, "windows", "window %s cancelled", w->name);
    } else {
        if (stop == PP_NONE || stop < w->first) {
            stop = w->first;
        }
        if (w->last == PP_NONE || stop < w->last) {
            w->last = stop;
            pd_windows_touch(ws, w, NULL);
            PD_LOG(ws->log, PD_LOG_INFO, "windows", "window %s stops after step %lld", w->name,
                   (long long)stop);
        }
    }
    pd_windows_changed(ws);
    return 0;
}

/* ---- views ---- */

int pd_windows_plan_for(const pd_windows_t *ws, const pd_rank_t *k, pp_plan_t *out)
{
    size_t n = 0;
    for (pd_window_t *w = ws->head; w; w = w->next) {
        pd_member_t *m = pd_windows_running(w) ? pd_windows_member(w, k->id) : NULL;
        n += m && m->state == PP_MS_EXPECTED;
    }
    out->entries = n ? calloc(n, sizeof(*out->entries)) : NULL;
    if (n && out->entries == NULL) {
        return PROFD_ENOMEM;
    }
    out->entries_n = 0;
    for (pd_window_t *w = ws->head; w; w = w->next) {
        pd_member_t *m = pd_windows_running(w) ? pd_windows_member(w, k->id) : NULL;
        if (m == NULL || m->state != PP_MS_EXPECTED) {
            continue;
        }
        pp_plan_entry_t *e = &out->entries[out->entries_n++];
        pp_record_init(&pp_desc_plan_entry, e);
        e->window = w->id;
        e->name = (char *)w->name;
        e->job = (char *)w->job;
        e->first_step = w->first;
        e->last_step = w->last;
        e->tool = (char *)pd_plan_tool(&w->spec, m->selector);
        e->mode = pd_plan_mode(&w->spec, m->selector);
        e->settings = (char *)pd_plan_settings(&w->spec, m->selector);
        e->schedule = *pd_plan_schedule(&w->spec, m->selector);
        if (m->selector >= 0) {
            e->phases = w->spec.selectors[m->selector].phases;
            e->phases_n = w->spec.selectors[m->selector].phases_n;
        }
        e->roles = m->selnames;
        e->roles_n = m->nselnames;
        e->pid_dir = m->pid_dir;
    }
    return 0;
}

const char *pd_windows_tool(const pd_window_t *w)
{
    const char *v = NULL;
    for (size_t i = 0; i < w->nmembers; i++) {
        const char *x = pd_plan_tool(&w->spec, w->members[i].selector);
        if (v && strcmp(v, x) != 0) {
            return "mixed";
        }
        v = x;
    }
    return v ? v : pd_plan_tool(&w->spec, -1);
}

pp_mode_t pd_windows_mode(const pd_window_t *w)
{
    pp_mode_t v = PP_MODE_NONE;
    for (size_t i = 0; i < w->nmembers; i++) {
        pp_mode_t x = pd_plan_mode(&w->spec, w->members[i].selector);
        if (v != PP_MODE_NONE && v != x) {
            return PP_MODE_MIXED;
        }
        v = x;
    }
    return v != PP_MODE_NONE ? v : pd_plan_mode(&w->spec, -1);
}

char **pd_windows_roles(const pd_window_t *w, size_t *n)
{
    size_t cap = w->spec.selectors_n + w->nmembers;
    char **v = cap ? calloc(cap, sizeof(*v)) : NULL;
    *n = 0;
    if (v == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < w->spec.selectors_n + w->nmembers; i++) {
        const char *r = i < w->spec.selectors_n ? w->spec.selectors[i].role
                                                : w->members[i - w->spec.selectors_n].role;
        if (r == NULL || (i >= w->spec.selectors_n && w->spec.selectors_n > 0)) {
            continue;
        }
        bool dup = false;
        for (size_t j = 0; j < *n; j++) {
            dup = dup || strcmp(v[j], r) == 0;
        }
        if (!dup) {
            v[(*n)++] = (char *)r;
        }
    }
    return v;
}

void pd_windows_info(const pd_window_t *w, bool detail, pp_window_t *out)
{
    size_t nroles;
    pp_record_init(&pp_desc_window, out);
    out->id = w->id;
    out->name = (char *)w->name;
    out->job = (char *)w->job;
    out->state = w->state;
    out->first_step = w->first;
    out->last_step = w->last;
    out->tool = (char *)pd_windows_tool(w);
    out->mode = pd_windows_mode(w);
    out->roles = pd_windows_roles(w, &nroles);
    out->roles_n = nroles;
    out->settings = (char *)pd_plan_settings(&w->spec, -1);
    out->selected = (int64_t)w->nmembers;
    for (size_t i = 0; i < w->nmembers; i++) {
        const pd_member_t *m = &w->members[i];
        out->reported += m->state != PP_MS_EXPECTED;
        for (size_t c = 0; c < m->ncaps; c++) {
            pp_capture_status_t s = m->caps[c].status;
            out->complete += s == PP_CAP_COMPLETE;
            out->failed += s == PP_CAP_FAILED;
            out->missed += s == PP_CAP_MISSED;
            out->truncated += s == PP_CAP_TRUNCATED;
        }
    }
    out->bytes = w->bytes;
    for (size_t i = 0; i < w->nincoming; i++) {
        if (!w->incoming[i].done) {
            out->pending_files++;
            out->pending_bytes += w->incoming[i].size - w->incoming[i].have;
        }
    }
    out->path = (char *)w->dir;
    out->warnings = w->warnings;
    out->warnings_n = w->nwarnings;
    out->reason = w->reason[0] ? (char *)w->reason : NULL;
    out->pruned = w->pruned[0] ? (char *)w->pruned : NULL;
    out->hook = w->hook[0] ? (char *)w->hook : NULL;
    out->hook_exit = w->hook_exited ? w->hook_exit : PP_NONE;
    out->hook_output = w->hook_output[0] ? (char *)w->hook_output : NULL;
    out->source = w->spec.source;
    out->selectors = w->spec.selectors; /* borrowed: what the request selects */
    out->selectors_n = w->spec.selectors_n;
    if (detail && w->nmembers && (out->ranks = calloc(w->nmembers, sizeof(*out->ranks)))) {
        for (size_t i = 0; i < w->nmembers; i++) {
            pp_rank_state_t *r = &out->ranks[i];
            pp_record_init(&pp_desc_rank_state, r);
            r->role = (char *)w->members[i].role;
            r->rank = w->members[i].rank;
            r->replica_rank = w->members[i].replica_rank;
            r->host = (char *)w->members[i].host;
            r->state = w->members[i].state;
        }
        out->ranks_n = w->nmembers;
    }
}

void pd_windows_info_free(pp_window_t *out)
{
    free(out->roles);
    free(out->ranks);
    out->roles = NULL;
    out->ranks = NULL;
}

/* Can the table forget w? A finished window with nothing pending and no
 * hook running; in the first pass only a pruned one. */
static bool droppable(const pd_window_t *w, bool pruned_only)
{
    return finished(w) && w->pending == 0 && !w->hook_running &&
           (!pruned_only || w->pruned[0] != '\0');
}

static size_t trim_pass(pd_windows_t *ws, size_t done, size_t keep, bool pruned_only)
{
    pd_window_t **pp = &ws->head, *prev = NULL;
    while (*pp && done > keep) {
        pd_window_t *w = *pp;
        if (droppable(w, pruned_only)) {
            *pp = w->next;
            if (ws->tail == w) {
                ws->tail = prev;
            }
            pd_windows_free_one(w);
            ws->count--;
            done--;
        } else {
            prev = w;
            pp = &w->next;
        }
    }
    return done;
}

void pd_windows_trim(pd_windows_t *ws, size_t keep)
{
    size_t done = 0;
    for (pd_window_t *w = ws->head; w; w = w->next) {
        done += droppable(w, false);
    }
    done = trim_pass(ws, done, keep, true);
    trim_pass(ws, done, keep, false);
}
