// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The coordinator's node endpoint (see coord.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coord.h"
#include "remote.h"
#include "uix.h"

#define PD_COORD_RESULTS_MAX 1024 /* results in one node_results request at most */

/* A node daemon, as the coordinator knows it. */
typedef struct peer_node {
    char name[PP_MAX_NAME + 1];
    char instance[64];
    bool shared;
    uint32_t pipe;
    int64_t last_seen_ms;
    int64_t gone_since_ms; /* connection closed at; 0 while connected */
    int64_t latency_us;
    pd_req_t *watch;
    int64_t watch_deadline_ms;
    int64_t gen_acked;
    int64_t gen_sample; /* its long poll was parked when this generation was published */
    bool awaited;       /* known from the journal, not registered since */
    /* its ranks by the client id the node gave them (rosters, summaries and
     * results name them so): open addressing, `client` 0 empty; an entry
     * whose rank the registry no longer has is stale, skipped and reused */
    struct rix {
        int64_t client, id;
    } * rix;
    size_t rix_cap, rix_used; /* power of two; used counts stale entries too */
    uint64_t hash;            /* of name */
    struct peer_node *next;
    struct peer_node *hnext; /* in its bucket of byname */
} peer_node_t;

struct pd_coord {
    pd_node_t *n;
    pd_endpoint_t *ep;
    peer_node_t *nodes;
    size_t count;
    /* the nodes by name: every request names its node, and a linear
     * search of 256 names was 3 % of the coordinator's CPU at a window's
     * end. Chained; nbuckets a power of two, grown with count. */
    peer_node_t **byname;
    size_t nbuckets;
    void (*changed)(void *arg, const char *name, const char *instance, bool gone);
    void *changed_arg;
};

static peer_node_t *node_find(const pd_coord_t *c, const char *name)
{
    if (c->nbuckets == 0) {
        return NULL;
    }
    uint64_t h = pd_uix_hash_str(name);
    for (peer_node_t *p = c->byname[h & (c->nbuckets - 1)]; p; p = p->hnext) {
        if (p->hash == h && strcmp(p->name, name) == 0) {
            return p;
        }
    }
    return NULL;
}

/* p into byname, grown (rehashed) to a bucket a node; false: no memory. */
static bool byname_put(pd_coord_t *c, peer_node_t *p)
{
    if (c->count + 1 > c->nbuckets) {
        size_t cap = c->nbuckets ? 2 * c->nbuckets : 16;
        peer_node_t **b = calloc(cap, sizeof(*b));
        if (b == NULL) {
            return false;
        }
        for (peer_node_t *q = c->nodes; q; q = q->next) {
            q->hnext = b[q->hash & (cap - 1)];
            b[q->hash & (cap - 1)] = q;
        }
        free(c->byname);
        c->byname = b;
        c->nbuckets = cap;
    }
    p->hnext = c->byname[p->hash & (c->nbuckets - 1)];
    c->byname[p->hash & (c->nbuckets - 1)] = p;
    return true;
}

static void byname_drop(pd_coord_t *c, const peer_node_t *p)
{
    for (peer_node_t **pp = &c->byname[p->hash & (c->nbuckets - 1)]; *pp; pp = &(*pp)->hnext) {
        if (*pp == p) {
            *pp = p->hnext;
            return;
        }
    }
}

static void list_changed(pd_coord_t *c, const peer_node_t *p, bool gone)
{
    if (c->changed) {
        c->changed(c->changed_arg, p->name, p->instance, gone);
    }
}

static void reply_plan(pd_coord_t *c, peer_node_t *p, pd_req_t *req, bool unchanged)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_node_plan);
    m.u.node_plan.gen = c->n->gen;
    m.u.node_plan.instance = (char *)c->n->instance;
    m.u.node_plan.unchanged = unchanged;
    if (unchanged) {
        pd_req_reply_msg(req, &m);
        return;
    }
    if (pd_remote_node_plan(c->n, p->name, &m.u.node_plan) != 0) {
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory building the plan");
        return;
    }
    /* no node hears of a window the coordinator could forget */
    pd_node_reply_durable(c->n, req, &m);
    pd_remote_node_plan_free(&m.u.node_plan);
}

static void release_watch(pd_coord_t *c, peer_node_t *p)
{
    if (p->watch) {
        pd_req_t *w = p->watch;
        p->watch = NULL;
        reply_plan(c, p, w, true);
    }
}

/* ---- remote ranks ---- */

static size_t rix_slot(const peer_node_t *p, int64_t client)
{
    uint64_t h = (uint64_t)client * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 17) & (p->rix_cap - 1);
    while (p->rix[i].client != 0 && p->rix[i].client != client) {
        i = (i + 1) & (p->rix_cap - 1);
    }
    return i;
}

/* The rank an index entry stands for; NULL for an empty or stale one. */
static pd_rank_t *rix_rank(const pd_node_t *n, const peer_node_t *p, const struct rix *e)
{
    pd_rank_t *k = e->client ? pd_registry_get(n->reg, e->id) : NULL;
    return k && k->node_client == e->client && strcmp(k->node, p->name) == 0 ? k : NULL;
}

/* The rank node p registered as `client`, or NULL: a lookup in the node's
 * index, not a scan of the registry (at 16,384 ranks, scans per roster and
 * per summary entry took the coordinator's loop for seconds). */
static pd_rank_t *remote_rank(const pd_node_t *n, const peer_node_t *p, int64_t client)
{
    if (p->rix_cap == 0 || client == 0) {
        return NULL;
    }
    return rix_rank(n, p, &p->rix[rix_slot(p, client)]);
}

/* Index k as node p's `client`; rebuilt without stale entries when half
 * full. Out of memory: k is not indexed (the node's next roster adds it
 * again). */
static void rix_put(const pd_node_t *n, peer_node_t *p, int64_t client, const pd_rank_t *k)
{
    if (2 * (p->rix_used + 1) > p->rix_cap) {
        size_t live = 0;
        for (size_t i = 0; i < p->rix_cap; i++) {
            live += rix_rank(n, p, &p->rix[i]) != NULL;
        }
        size_t cap = 64;
        while (cap < 4 * (live + 1)) {
            cap *= 2;
        }
        struct rix *old = p->rix;
        size_t ocap = p->rix_cap;
        if ((p->rix = calloc(cap, sizeof(*p->rix))) == NULL) {
            p->rix = old;
            return;
        }
        p->rix_cap = cap;
        p->rix_used = 0;
        for (size_t i = 0; i < ocap; i++) {
            if (rix_rank(n, p, &old[i]) != NULL) {
                p->rix[rix_slot(p, old[i].client)] = old[i];
                p->rix_used++;
            }
        }
        free(old);
    }
    struct rix *e = &p->rix[rix_slot(p, client)];
    p->rix_used += e->client == 0;
    e->client = client;
    e->id = k->id;
}

static void rank_gone(pd_node_t *n, pd_rank_t *k, const char *reason, bool left)
{
    if (k->state != PD_RANK_LOST) {
        k->state = PD_RANK_LOST;
        pd_windows_on_lost(n->win, k, reason);
        pd_node_hist_gone(n, k, left);
        pd_node_job_check(n, k->job);
    }
}

/* A rank of the roster the registry does not have yet; NULL with *rv. */
static pd_rank_t *rank_add(pd_node_t *n, peer_node_t *p, const pp_node_rank_t *r, int64_t now,
                           int *rv)
{
    pd_rank_t *k;
    pp_hello_t h;
    pp_record_init(&pp_desc_hello, &h);
    h.job = r->job;
    h.role = r->role;
    h.rank = r->rank;
    h.local_rank = r->local_rank;
    h.world_size = r->world_size;
    h.replica_rank = r->replica_rank;
    h.host = r->host;
    h.pid = r->pid;
    h.roles = r->roles; /* borrowed */
    h.roles_n = r->roles_n;
    if ((*rv = pd_registry_add(n->reg, &h, p->name, now, &k)) != 0) {
        return NULL;
    }
    k->node_client = r->client;
    rix_put(n, p, r->client, k);
    if (!r->lost) {
        pd_windows_on_register(n->win, k);
    }
    return k;
}

/* Does the registry's rank know every role the roster lists for it? (A
 * process only adds roles.) */
static bool knows_roles(const pd_rank_t *k, const pp_node_rank_t *r)
{
    for (size_t i = 0; i < r->roles_n; i++) {
        int j = pd_registry_role(k, r->roles[i].role);
        int64_t rank = r->roles[i].rank == PP_NONE ? r->rank : r->roles[i].rank;
        if (j < 0 || k->roles[j].rank != rank) {
            return false;
        }
    }
    return true;
}

/* Rank k stands at `step`, begun age_us ago (no clock is shared between
 * hosts: an age, not a time), its steps taking step_us; the windows hear
 * of a step it had not begun. */
static void stand_at(pd_node_t *n, pd_rank_t *k, int64_t step, int64_t age_us, int64_t step_us,
                     int64_t now_us)
{
    int64_t before = k->step;
    k->step = step;
    k->step_began_us = now_us - (age_us > 0 ? age_us : 0);
    k->step_us = step_us;
    if (step != before) {
        pd_windows_on_step(n->win, k);
    }
}

/* Where a rank stands, as its roster lists it: a rank heard of only now
 * (the node joined, or the coordinator restarted) would otherwise stand at
 * no step until the node's next summary, and a window planned "next" in
 * that gap would start at step 1, behind every rank. A roster only moves a
 * rank forward; the summaries keep it current. */
static void roster_step(pd_node_t *n, pd_rank_t *k, const pp_node_rank_t *r)
{
    if (r->step != PP_NONE && (k->step == PP_NONE || r->step > k->step)) {
        stand_at(n, k, r->step, r->age_us, r->step_us > 0 ? r->step_us : k->step_us, pd_now_us());
    }
}

/* Make the registry's remote ranks of a node match its roster. */
static void apply_roster(pd_coord_t *c, peer_node_t *p, const pp_node_rank_t *v, size_t count)
{
    pd_node_t *n = c->n;
    int64_t now = pd_now_ms();
    char why[128];
    /* ranks the roster no longer lists are gone */
    for (size_t e = 0; e < p->rix_cap; e++) {
        pd_rank_t *k = rix_rank(n, p, &p->rix[e]);
        if (k == NULL) {
            continue;
        }
        bool listed = false;
        for (size_t i = 0; i < count && !listed; i++) {
            listed = v[i].client == k->node_client;
        }
        if (!listed) {
            snprintf(why, sizeof(why), "left node %s", p->name);
            rank_gone(n, k, why, true);
            pd_registry_remove(n->reg, k->id);
        }
    }
    size_t refused = 0;
    int64_t first = 0;
    int rv = 0;
    for (size_t i = 0; i < count; i++) {
        pd_rank_t *k = remote_rank(n, p, v[i].client);
        if ((k == NULL || !knows_roles(k, &v[i])) &&
            (k = rank_add(n, p, &v[i], now, &rv)) == NULL) { /* new, or with a role it added */
            first = refused++ ? first : v[i].rank;
            continue;
        }
        k->last_seen_ms = now;
        if (v[i].lost) {
            snprintf(why, sizeof(why), "was lost on node %s", p->name);
            rank_gone(n, k, why, false);
        } else {
            k->state = PD_RANK_ACTIVE;
            roster_step(n, k, &v[i]);
        }
    }
    if (refused) { /* one line a roster, not one a rank (16,384 ranks over a full registry) */
        PD_LOG(n->log, PD_LOG_WARN, "coord",
               "node %s: %zu rank(s) not registered (rank %lld first): %s (limits.max_clients "
               "is %zu)",
               p->name, refused, (long long)first, profd_strerror(rv), n->reg->max);
    }
    pd_node_ranks_changed(n);
}

static void node_lost(pd_coord_t *c, peer_node_t *p, const char *reason)
{
    pd_node_t *n = c->n;
    char why[160];
    snprintf(why, sizeof(why), "lost with node %s (%s)", p->name, reason);
    PD_LOG(n->log, PD_LOG_WARN, "coord", "node %s %s", p->name, reason);
    pd_rank_t *next;
    for (pd_rank_t *k = pd_registry_next(n->reg, NULL); k; k = next) {
        next = pd_registry_next(n->reg, k);
        if (k->node_client && strcmp(k->node, p->name) == 0) {
            rank_gone(n, k, why, false);
            pd_registry_remove(n->reg, k->id);
        }
    }
    pd_remote_node_lost(n, p->name, reason);
    pd_windows_node_gone(n->win, p->name, why); /* members kept over a restart */
    release_watch(c, p);
}

static void node_remove(pd_coord_t *c, peer_node_t *p)
{
    for (peer_node_t **pp = &c->nodes; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            byname_drop(c, p);
            c->count--;
            list_changed(c, p, true);
            free(p->rix);
            free(p);
            return;
        }
    }
}

static peer_node_t *node_add(pd_coord_t *c, const char *name, const char *instance)
{
    peer_node_t *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return NULL;
    }
    snprintf(p->name, sizeof(p->name), "%s", name);
    snprintf(p->instance, sizeof(p->instance), "%s", instance);
    p->gen_acked = -1;
    p->gen_sample = -1;
    p->hash = pd_uix_hash_str(p->name);
    if (!byname_put(c, p)) {
        free(p);
        return NULL;
    }
    p->next = c->nodes;
    c->nodes = p;
    c->count++;
    list_changed(c, p, false);
    return p;
}

/* ---- requests ---- */

static peer_node_t *known(pd_coord_t *c, pd_req_t *req, const char *name, const char *instance)
{
    peer_node_t *p = node_find(c, name);
    /* a node restored from the journal is heard from once it has joined
     * again: one whose connection came back without it noticing the
     * restart would otherwise go on unregistered (its ranks not bound) */
    if (p == NULL || strcmp(p->instance, instance) != 0 || p->awaited) {
        pd_req_reply_error(req, PROFD_ECLIENT, "unknown node %s: register again", name);
        return NULL;
    }
    p->pipe = pd_req_peer(req)->pipe;
    p->last_seen_ms = pd_now_ms();
    p->gone_since_ms = 0;
    return p;
}

static void on_hello(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_coord_t *c = ctx;
    const pp_node_hello_t *h = &msg->u.node_hello;
    if (!pp_host_ok(h->node)) {
        pd_req_reply_error(req, PROFD_EINVAL, "invalid node name");
        return;
    }
    peer_node_t *p = node_find(c, h->node);
    if (p && strcmp(p->instance, h->instance) != 0) {
        /* a new daemon (its journal lost): it forgot its windows. Members
         * whose capture has not begun are bound again to their processes
         * as they register through it; the others fail. */
        pd_windows_node_restarted(c->n->win, c->n->reg, p->name,
                                  pd_now_ms() + c->n->cfg->node_timeout_ms);
        node_lost(c, p, "restarted");
        node_remove(c, p);
        p = NULL;
    }
    if (p == NULL) {
        if ((p = node_add(c, h->node, h->instance)) == NULL) {
            pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
            return;
        }
        PD_LOG(c->n->log, PD_LOG_INFO, "coord", "node %s joined with %zu rank(s)", p->name,
               h->ranks_n);
    } else if (p->awaited) {
        PD_LOG(c->n->log, PD_LOG_INFO, "coord", "node %s is back with %zu rank(s)", p->name,
               h->ranks_n);
    }
    p->awaited = false;
    p->shared = h->shared;
    p->pipe = pd_req_peer(req)->pipe;
    p->last_seen_ms = pd_now_ms();
    p->gone_since_ms = 0;
    apply_roster(c, p, h->ranks, h->ranks_n);
    pp_msg_t m;
    pp_msg_init(&m, PP_T_node_welcome);
    m.u.node_welcome.instance = (char *)c->n->instance;
    m.u.node_welcome.gen = c->n->gen;
    m.u.node_welcome.save_path = (char *)c->n->save_path;
    m.u.node_welcome.batches = true;
    m.u.node_welcome.files = true;
    pd_node_reply_durable(c->n, req, &m); /* the node list holds it */
}

static void on_roster(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_coord_t *c = ctx;
    const pp_node_roster_t *r = &msg->u.node_roster;
    peer_node_t *p = known(c, req, r->node, r->instance);
    if (p) {
        apply_roster(c, p, r->ranks, r->ranks_n);
        pd_node_reply_ack(c->n, req);
    }
}

/* One role of a node's summary: the role's fastest rank stands for every
 * rank of it (the alignment needs the front, not each straggler). */
static void apply_summary(pd_node_t *n, const peer_node_t *p, const pp_role_summary_t *r,
                          int64_t now_us)
{
    for (size_t e = 0; e < p->rix_cap; e++) { /* the node's ranks, not the registry's */
        pd_rank_t *k = rix_rank(n, p, &p->rix[e]);
        if (k == NULL || strcmp(k->job, r->job) != 0 || strcmp(k->role, r->role) != 0) {
            continue;
        }
        k->in_step = r->in_step;
        k->last_seen_ms = p->last_seen_ms;
        stand_at(n, k, r->step, r->age_us, r->step_us, now_us);
    }
}

/* One worker's steps from a node's summary, into the step-time history;
 * its clock against ours is the node's against ours plus its own against
 * its node's. */
static void apply_times(pd_node_t *n, const peer_node_t *p, const pp_node_summary_t *s,
                        const pp_rank_times_t *t, int64_t now_ms)
{
    pd_rank_t *k = remote_rank(n, p, t->client);
    pd_hist_rank_t *h = k ? pd_node_hist(n, k, now_ms) : NULL;
    if (h == NULL) {
        return;
    }
    for (size_t i = 0; i + 2 <= t->times_n; i += 2) {
        pd_history_put(n->hist, h, t->times[i], t->times[i + 1]);
    }
    pd_history_sections(n->hist, h, t->sections, t->sections_n);
    for (size_t i = 0; i + 3 <= t->phases_n; i += 3) {
        int64_t q = t->phases[i + 1];
        if (q >= 0 && (size_t)q < s->phase_names_n) {
            pd_history_put_phase(n->hist, h, t->phases[i], s->phase_names[q], t->phases[i + 2]);
        }
    }
    pd_history_where(h, t->step, t->in_step, t->age_us / 1000, now_ms);
    if (s->offset_err_us > 0 || t->offset_err_us > 0) {
        h->offset_us = s->offset_us + t->offset_us;
        h->offset_err_us = s->offset_err_us + t->offset_err_us;
    }
    pd_node_hist_fed(n, h);
}

static void on_summary(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_coord_t *c = ctx;
    const pp_node_summary_t *s = &msg->u.node_summary;
    peer_node_t *p = known(c, req, s->node, s->instance);
    if (p == NULL) {
        return;
    }
    int64_t now_us = pd_now_us();
    p->latency_us = s->latency_us;
    for (size_t i = 0; i < s->roles_n; i++) {
        apply_summary(c->n, p, &s->roles[i], now_us);
    }
    for (size_t i = 0; i < s->ranks_n; i++) {
        apply_times(c->n, p, s, &s->ranks[i], now_us / 1000);
    }
    pd_node_reply_ack(c->n, req);
}

static void on_watch(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_coord_t *c = ctx;
    pd_node_t *n = c->n;
    const pp_node_watch_t *w = &msg->u.node_watch;
    peer_node_t *p = known(c, req, w->node, w->instance);
    if (p == NULL) {
        return;
    }
    /* the delivery sample is the hop to the node; its own fan-out is added
     * when planning */
    release_watch(c, p);
    int rv = pd_node_watch(n, req, w->gen, w->hold_ms, &p->gen_sample, &p->gen_acked,
                           &p->watch_deadline_ms);
    if (rv == PD_WATCH_PARKED) {
        p->watch = req;
    } else {
        reply_plan(c, p, req, rv == PD_WATCH_FULL);
    }
}

/* Has rank k of window `window` reported its captures already? A done
 * window compacted with its members freed (windows.h, slim) heard every
 * member it had: a result sent again for it is one it has. */
static bool reported(pd_node_t *n, int64_t window, const pd_rank_t *k)
{
    pd_window_t *w = pd_windows_get(n->win, window);
    if (w && w->slim && w->state == PP_WS_DONE) {
        return true;
    }
    pd_member_t *m = w ? pd_windows_member(w, k->id) : NULL;
    return m && m->state == PP_MS_REPORTED;
}

/* One worker's result from node p: 0, or the code with its reason in err. */
static int take_result(pd_coord_t *c, const peer_node_t *p, pp_node_result_t *r, char *err,
                       size_t errlen)
{
    pd_rank_t *k = remote_rank(c->n, p, r->client);
    if (k == NULL) {
        snprintf(err, errlen, "node %s has no client %lld", p->name, (long long)r->client);
        return PROFD_ENOENT;
    }
    int rv = pd_remote_on_result(c->n, k, p->shared, r, err, errlen);
    if (rv == PROFD_ESTATE && reported(c->n, r->window, k)) {
        rv = 0; /* sent again: our ack was lost, or is waiting for the save below */
    }
    return rv;
}

static void on_result(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_coord_t *c = ctx;
    char err[256];
    pp_node_result_t *r = &msg->u.node_result;
    peer_node_t *p = known(c, req, r->node, r->instance);
    if (p == NULL) {
        return;
    }
    int rv = take_result(c, p, r, err, sizeof(err));
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    pd_node_reply_ack_durable(c->n, req); /* the node forgets the result once acknowledged */
}

/* Several workers' results (node_results): each taken as on_result takes
 * one, then one reply with each outcome in order, sent once the journal
 * holds every result it acknowledges. */
static void on_results(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_coord_t *c = ctx;
    char err[256];
    pp_node_results_t *b = &msg->u.node_results;
    peer_node_t *p = known(c, req, b->node, b->instance);
    if (p == NULL) {
        return;
    }
    if (b->items_n > PD_COORD_RESULTS_MAX) {
        pd_req_reply_error(req, PROFD_EINVAL, "%zu results in one request: at most %d", b->items_n,
                           PD_COORD_RESULTS_MAX);
        return;
    }
    pp_msg_t m;
    pp_msg_init(&m, PP_T_node_results_reply);
    pp_node_results_reply_t *a = &m.u.node_results_reply;
    a->codes = calloc(b->items_n + 1, sizeof(*a->codes));
    a->messages = calloc(b->items_n + 1, sizeof(*a->messages));
    if (a->codes == NULL || a->messages == NULL) {
        pp_msg_free(&m);
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
        return;
    }
    for (size_t i = 0; i < b->items_n; i++) {
        pp_node_result_item_t *it = &b->items[i];
        pp_node_result_t r = {.node = b->node,
                              .instance = b->instance,
                              .window = it->window,
                              .client = it->client,
                              .captures = it->captures,
                              .captures_n = it->captures_n};
        err[0] = '\0';
        int rv = take_result(c, p, &r, err, sizeof(err));
        it->captures = r.captures; /* taken by the window, or still the message's */
        it->captures_n = r.captures_n;
        a->codes[a->codes_n++] = rv;
        if ((a->messages[a->messages_n] = strdup(rv != 0 ? err : "")) != NULL) {
            a->messages_n++;
        }
    }
    if (a->messages_n < b->items_n) {
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
    } else {
        pd_node_reply_durable(c->n, req, &m); /* every result it acknowledges journaled */
    }
    pp_msg_free(&m);
}

static void on_chunk(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_coord_t *c = ctx;
    peer_node_t *p = node_find(c, msg->u.chunk.node);
    if (p == NULL || p->awaited) { /* see known() */
        pd_req_reply_error(req, PROFD_ECLIENT, "unknown node %s", msg->u.chunk.node);
        return;
    }
    pd_remote_on_chunk(c->n, req, &msg->u.chunk, payload, plen);
}

/* Whole small files in one request (chunks): see remote.h. */
static void on_chunks(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_coord_t *c = ctx;
    peer_node_t *p = node_find(c, msg->u.chunks.node);
    if (p == NULL || p->awaited) { /* see known() */
        pd_req_reply_error(req, PROFD_ECLIENT, "unknown node %s", msg->u.chunks.node);
        return;
    }
    pd_remote_on_chunks(c->n, req, &msg->u.chunks, payload, plen);
}

static void on_bye(void *ctx, pd_req_t *req, pp_msg_t *msg, const void *payload, size_t plen)
{
    pd_coord_t *c = ctx;
    const pp_node_bye_t *b = &msg->u.node_bye;
    peer_node_t *p = known(c, req, b->node, b->instance);
    if (p == NULL) {
        return;
    }
    node_lost(c, p, "stopped");
    node_remove(c, p);
    pd_node_reply_ack_durable(c->n, req);
}

static const pd_handler_t handlers[] = {
    {PP_T_node_hello, on_hello}, {PP_T_node_roster, on_roster},   {PP_T_node_summary, on_summary},
    {PP_T_node_watch, on_watch}, {PP_T_node_result, on_result},   {PP_T_chunk, on_chunk},
    {PP_T_node_bye, on_bye},     {PP_T_node_results, on_results}, {PP_T_chunks, on_chunks},
};

static void on_pipe_gone(uint32_t pipe, void *arg)
{
    pd_coord_t *c = arg;
    for (peer_node_t *p = c->nodes; p; p = p->next) {
        if (p->pipe == pipe && p->gone_since_ms == 0) {
            p->gone_since_ms = pd_now_ms(); /* lost only if it stays away */
        }
    }
}

pd_coord_t *pd_coord_new(pd_node_t *n,
                         void (*changed)(void *arg, const char *name, const char *instance,
                                         bool gone),
                         void *arg)
{
    pd_coord_t *c = calloc(1, sizeof(*c));
    if (c) {
        c->n = n;
        c->changed = changed;
        c->changed_arg = arg;
    }
    return c;
}

/* Connections of node daemons at most (two a node). */
#define PD_COORD_MAX_CONNS 65536

int pd_coord_listen(pd_coord_t *c, char *err, size_t errlen)
{
    pd_node_t *n = c->n;
    const pd_config_t *cfg = n->cfg;
    pt_tls_files_t tls = {cfg->tls_ca_file, cfg->tls_cert_file, cfg->tls_key_file, NULL};
    pd_rep_opts_t ro = {
        .url = cfg->coordinator_listen,
        .max_msg = (size_t)cfg->max_msg_bytes + (size_t)cfg->chunk_bytes,
        /* nodes hold two connections each, many from one address behind a
         * NAT or on one host (the scale bench): only a total, far above
         * limits.max_connections; they are authenticated (TLS) */
        .max_conns = PD_COORD_MAX_CONNS,
        .initial = 8,
        .max_contexts = (int)cfg->max_node_requests,
        .tls = &tls,
        .pipe_gone = on_pipe_gone,
    };
    /* chunks carry up to chunk_bytes of payload beyond the JSON limit */
    pd_endpoint_opts_t eo = {
        .name = "coord",
        .what = "a request of the node endpoint",
        .accept = PD_ACCEPT(PP_ACC_NODE),
        .max_json = (size_t)cfg->max_msg_bytes,
        .framed = PP_T_chunk,
        .framed2 = PP_T_chunks,
        .handlers = handlers,
        .nhandlers = sizeof(handlers) / sizeof(handlers[0]),
        .bad_requests = &n->bad_requests,
        .log = n->log,
        .ctx = c,
    };
    if (strncmp(ro.url, "tcp://", 6) == 0) {
        PD_LOG(n->log, PD_LOG_WARN, "coord",
               "%s is plain tcp:// (security.insecure_tcp_links): the node links are "
               "unauthenticated and unencrypted, anyone who can connect to it can join as a node",
               ro.url);
    }
    return pd_endpoint_open(&c->ep, n->loop, &ro, &eo, err, errlen);
}

int pd_coord_await(pd_coord_t *c, const char *name, const char *instance, int64_t now_ms)
{
    if (c == NULL || node_find(c, name)) {
        return 0; /* no node list (the journal alone) */
    }
    peer_node_t *p = node_add(c, name, instance);
    if (p == NULL) {
        return PROFD_ENOMEM;
    }
    p->awaited = true;
    p->gone_since_ms = now_ms;
    return 0;
}

bool pd_coord_node_at(const pd_coord_t *c, size_t i, const char **name, const char **instance)
{
    const peer_node_t *p = c ? c->nodes : NULL;
    for (; p && i > 0; i--) {
        p = p->next;
    }
    if (p == NULL) {
        return false;
    }
    *name = p->name;
    *instance = p->instance;
    return true;
}

void pd_coord_stop(pd_coord_t *c)
{
    if (c == NULL) {
        return;
    }
    for (peer_node_t *p = c->nodes; p; p = p->next) {
        p->watch = NULL; /* freed by the endpoint without a reply */
    }
    pd_endpoint_close(c->ep);
    c->ep = NULL;
}

void pd_coord_free(pd_coord_t *c)
{
    if (c == NULL) {
        return;
    }
    while (c->nodes) {
        peer_node_t *p = c->nodes;
        c->nodes = p->next;
        free(p->rix);
        free(p);
    }
    free(c->byname);
    free(c);
}

void pd_coord_broadcast(pd_coord_t *c)
{
    for (peer_node_t *p = c ? c->nodes : NULL; p; p = p->next) {
        if (p->watch) {
            pd_req_t *w = p->watch;
            p->watch = NULL;
            p->gen_sample = c->n->gen; /* its next poll measures the delivery */
            reply_plan(c, p, w, false);
        }
    }
}

int64_t pd_coord_parked(const pd_coord_t *c)
{
    return c ? pd_endpoint_parked(c->ep) : 0;
}

void pd_coord_credit(pd_coord_t *c, int64_t ms)
{
    for (peer_node_t *p = c ? c->nodes : NULL; p; p = p->next) {
        p->last_seen_ms += ms;
        if (p->gone_since_ms) {
            p->gone_since_ms += ms;
        }
    }
}

void pd_coord_tick(pd_coord_t *c, int64_t now_ms)
{
    char why[96];
    peer_node_t *next;
    if (c == NULL) {
        return;
    }
    pd_windows_rebind_expire(c->n->win, now_ms);
    for (peer_node_t *p = c->nodes; p; p = next) {
        next = p->next;
        if (p->watch && now_ms >= p->watch_deadline_ms) {
            release_watch(c, p);
        }
        int64_t away = p->gone_since_ms ? now_ms - p->gone_since_ms : now_ms - p->last_seen_ms;
        if (away > c->n->cfg->node_timeout_ms) {
            if (p->awaited) {
                snprintf(why, sizeof(why), "did not come back within %lld ms of a restart",
                         (long long)away);
            } else {
                snprintf(why, sizeof(why), "was unreachable for %lld ms", (long long)away);
            }
            node_lost(c, p, why);
            node_remove(c, p);
        }
    }
}

size_t pd_coord_nodes(const pd_coord_t *c)
{
    return c ? c->count : 0;
}

int64_t pd_coord_latency_us(const pd_coord_t *c)
{
    int64_t max = 0;
    for (peer_node_t *p = c ? c->nodes : NULL; p; p = p->next) {
        if (p->gone_since_ms == 0 && p->latency_us > max) {
            max = p->latency_us;
        }
    }
    return max;
}
