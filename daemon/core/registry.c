// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The rank registry (see registry.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "text.h"

#define SLOT_OF(id) ((size_t)((uint64_t)(id)&0xffffffffu) - 1)
#define GEN_OF(id)  ((uint32_t)((uint64_t)(id) >> 32))

void pd_registry_init(pd_registry_t *r, size_t max)
{
    memset(r, 0, sizeof(*r));
    r->max = max ? max : 4096;
}

static void rank_free(pd_rank_t *k)
{
    if (k) {
        free(k->roles);
        free(k);
    }
}

void pd_registry_fini(pd_registry_t *r)
{
    for (size_t i = 0; i < r->cap; i++) {
        rank_free(r->slots[i]);
    }
    free(r->slots);
    free(r->gens);
    pd_intern_fini(&r->names);
    memset(r, 0, sizeof(*r));
}

const char *pd_registry_name(pd_registry_t *r, const char *s)
{
    return pd_intern(&r->names, s);
}

pd_rank_t *pd_registry_get(const pd_registry_t *r, int64_t id)
{
    if (id <= 0) {
        return NULL;
    }
    size_t i = SLOT_OF(id);
    if (i >= r->cap || r->slots[i] == NULL || r->gens[i] != GEN_OF(id)) {
        return NULL;
    }
    return r->slots[i];
}

static int grow(pd_registry_t *r)
{
    size_t n = r->cap ? r->cap * 2 : 64;
    pd_rank_t **s = realloc(r->slots, n * sizeof(*s));
    if (s == NULL) {
        return PROFD_ENOMEM;
    }
    r->slots = s;
    uint32_t *g = realloc(r->gens, n * sizeof(*g));
    if (g == NULL) {
        return PROFD_ENOMEM;
    }
    r->gens = g;
    for (size_t i = r->cap; i < n; i++) {
        s[i] = NULL;
        g[i] = r->gen_floor;
    }
    r->cap = n;
    return 0;
}

void pd_registry_floor(pd_registry_t *r, uint32_t floor)
{
    if (floor > r->gen_floor) {
        r->gen_floor = floor;
    }
    for (size_t i = 0; i < r->cap; i++) {
        if (r->slots[i] == NULL && r->gens[i] < r->gen_floor) {
            r->gens[i] = r->gen_floor;
        }
    }
}

int pd_registry_insert(pd_registry_t *r, pd_rank_t *k)
{
    if (k->id <= 0 || (uint64_t)k->id >> 32 == 0 || ((uint64_t)k->id & 0xffffffffu) == 0) {
        return PROFD_EINVAL;
    }
    size_t i = SLOT_OF(k->id);
    if (i >= 65536 * 4) {
        return PROFD_EINVAL; /* no registry grows that far */
    }
    if (r->count >= r->max) {
        return PROFD_ELIMIT;
    }
    while (i >= r->cap) {
        if (grow(r) != 0) {
            return PROFD_ENOMEM;
        }
    }
    if (r->slots[i] != NULL) {
        return PROFD_EINVAL;
    }
    r->slots[i] = k;
    r->gens[i] = GEN_OF(k->id);
    r->count++;
    return 0;
}

/* The roles of a hello: the primary one first, then the others in order. */
static int hello_roles(const pp_hello_t *h, pd_role_t **out, size_t *nout)
{
    if (h->roles_n + 1 > PP_MAX_ROLES) {
        return PROFD_EINVAL;
    }
    pd_role_t *v = calloc(h->roles_n + 1, sizeof(*v));
    size_t n = 1;
    bool primary_listed = false;
    if (v == NULL) {
        return PROFD_ENOMEM;
    }
    snprintf(v[0].name, sizeof(v[0].name), "%s", h->role);
    v[0].rank = h->rank;
    for (size_t i = 0; i < h->roles_n; i++) {
        const pp_role_rank_t *x = &h->roles[i];
        int64_t rank = x->rank == PP_NONE ? h->rank : x->rank;
        size_t j;
        if (!pp_ident_ok(x->role) || rank < 0) {
            free(v);
            return PROFD_EINVAL;
        }
        for (j = 0; j < n && strcmp(v[j].name, x->role) != 0; j++) {
        }
        if (j < n && (j > 0 || primary_listed)) {
            free(v); /* listed twice (the primary may be listed once more, with its rank) */
            return PROFD_EINVAL;
        }
        primary_listed = primary_listed || j == 0;
        if (j == n) {
            snprintf(v[n].name, sizeof(v[n].name), "%s", x->role);
            n++;
        }
        v[j].rank = rank;
    }
    *out = v;
    *nout = n;
    return 0;
}

/* ---- who may register what ---- */

/* Whose a registration is: a uid, a certificate's name, or nobody's. */
static bool has_uid(const pd_rank_t *k)
{
    return k->uid >= 0;
}

static bool owner_has_cn(const pd_owner_t *o)
{
    return o && o->uid < 0 && o->cn && o->cn[0];
}

/* Does `o` stand for the same principal as the one that registered k? NULL
 * or none on either side: no principal to compare (true). */
static bool same_principal(const pd_rank_t *k, const pd_owner_t *o)
{
    if (o == NULL || k->node_client) {
        return true;
    }
    if (has_uid(k)) {
        return o->uid == k->uid;
    }
    if (k->cn[0]) {
        return owner_has_cn(o) && strcmp(o->cn, k->cn) == 0;
    }
    return true;
}

/* May `o` register k again (the same process after a reconnect, a role
 * added, a daemon restart)? 0 or PROFD_EPERM with the reason. */
static int may_register_again(const pd_rank_t *k, const pd_owner_t *o, char *err, size_t errlen)
{
    if (o == NULL || k->node_client) {
        return 0;
    }
    if (has_uid(k) && o->uid != k->uid) {
        return pd_errf(err, errlen, PROFD_EPERM,
                       "rank %lld of job %s (pid %lld) is registered by uid %lld: another uid may "
                       "not register it again",
                       (long long)k->rank, k->job, (long long)k->pid, (long long)k->uid);
    }
    if (has_uid(k) && k->peer_pid >= 0 && o->pid >= 0 && o->pid != k->peer_pid) {
        return pd_errf(
            err, errlen, PROFD_EPERM,
            "rank %lld of job %s (pid %lld) is registered by another process (pid %lld): "
            "only that process may register it again",
            (long long)k->rank, k->job, (long long)k->pid, (long long)k->peer_pid);
    }
    if (!has_uid(k) && k->cn[0] && !same_principal(k, o)) {
        return pd_errf(err, errlen, PROFD_EPERM,
                       "rank %lld of job %s (pid %lld) is registered with certificate '%s': "
                       "another may not register it again",
                       (long long)k->rank, k->job, (long long)k->pid, k->cn);
    }
    return 0;
}

/* May `o` add a rank to job h->job, and does it hold fewer than
 * max_per_peer registrations? */
static int may_register_new(const pd_registry_t *r, const pp_hello_t *h, const pd_owner_t *o,
                            char *err, size_t errlen)
{
    size_t held = 0;
    if (o == NULL) {
        return 0;
    }
    if (r->job_cn && owner_has_cn(o) && strcmp(o->cn, h->job) != 0) {
        return pd_errf(err, errlen, PROFD_EPERM,
                       "certificate '%s' may register ranks of job %s only, not of job %s "
                       "(security.job_certificates)",
                       o->cn, o->cn, h->job);
    }
    bool principal = o->uid >= 0 || owner_has_cn(o);
    for (pd_rank_t *k = pd_registry_next(r, NULL); k; k = pd_registry_next(r, k)) {
        if (k->node_client) {
            continue; /* a coordinator's remote rank: its node answers for it */
        }
        bool owned = has_uid(k) || k->cn[0];
        if (!r->shared_jobs && principal && owned && strcmp(k->job, h->job) == 0 &&
            !same_principal(k, o)) {
            if (has_uid(k)) {
                return pd_errf(err, errlen, PROFD_EPERM,
                               "job %s belongs to uid %lld: another uid may not register ranks "
                               "of it (security.shared_jobs)",
                               h->job, (long long)k->uid);
            }
            return pd_errf(err, errlen, PROFD_EPERM,
                           "job %s belongs to certificate '%s': another may not register ranks "
                           "of it (security.shared_jobs)",
                           h->job, k->cn);
        }
        held += principal ? (owned && same_principal(k, o))
                          : (!owned && o->pipe != 0 && k->pipe == o->pipe);
    }
    if (r->max_per_peer && o->pipe != 0 && held >= r->max_per_peer) {
        if (o->uid >= 0) {
            return pd_errf(err, errlen, PROFD_ELIMIT,
                           "uid %lld already holds %zu registrations (limits.max_clients_per_peer)",
                           (long long)o->uid, held);
        }
        if (owner_has_cn(o)) {
            return pd_errf(err, errlen, PROFD_ELIMIT,
                           "certificate '%s' already holds %zu registrations "
                           "(limits.max_clients_per_peer)",
                           o->cn, held);
        }
        return pd_errf(err, errlen, PROFD_ELIMIT,
                       "this connection already holds %zu registrations "
                       "(limits.max_clients_per_peer)",
                       held);
    }
    return 0;
}

int pd_registry_add(pd_registry_t *r, const pp_hello_t *h, const char *node, int64_t now_ms,
                    pd_rank_t **out)
{
    return pd_registry_register(r, h, node, NULL, now_ms, out, NULL, 0);
}

int pd_registry_register(pd_registry_t *r, const pp_hello_t *h, const char *node,
                         const pd_owner_t *owner, int64_t now_ms, pd_rank_t **out, char *err,
                         size_t errlen)
{
    pd_role_t *roles;
    size_t nroles;
    int rv;
    if (!pp_ident_ok(h->job) || !pp_ident_ok(h->role) || !pp_host_ok(h->host) || h->rank < 0 ||
        (h->replica_rank != PP_NONE && h->replica_rank < 0) || h->pid <= 0) {
        return PROFD_EINVAL;
    }
    if ((rv = hello_roles(h, &roles, &nroles)) != 0) {
        return rv;
    }
    /* the same process registering again */
    for (pd_rank_t *k = pd_registry_next(r, NULL); k; k = pd_registry_next(r, k)) {
        if (k->rank == h->rank && k->pid == h->pid && strcmp(k->job, h->job) == 0 &&
            strcmp(k->role, h->role) == 0 && strcmp(k->host, h->host) == 0) {
            if ((rv = may_register_again(k, owner, err, errlen)) != 0) {
                free(roles);
                return rv;
            }
            if (owner && has_uid(k) && k->peer_pid < 0) {
                k->peer_pid = owner->pid;
            }
            k->state = PD_RANK_ACTIVE;
            k->last_seen_ms = now_ms;
            k->replica_rank = h->replica_rank;
            free(k->roles);
            k->roles = roles;
            k->nroles = nroles;
            *out = k;
            return 0;
        }
    }
    if ((rv = may_register_new(r, h, owner, err, errlen)) != 0) {
        free(roles);
        return rv;
    }
    if (r->count >= r->max) {
        free(roles);
        return pd_errf(err, errlen, PROFD_ELIMIT,
                       "registry full: %zu ranks registered (limits.max_clients)", r->count);
    }
    size_t i;
    for (i = 0; i < r->cap && r->slots[i]; i++) {
    }
    if (i == r->cap && grow(r) != 0) {
        free(roles);
        return PROFD_ENOMEM;
    }
    const char *job = pd_intern(&r->names, h->job);
    const char *role = pd_intern(&r->names, h->role);
    const char *host = pd_intern(&r->names, h->host);
    const char *nodename = pd_intern(&r->names, node);
    const char *cn = pd_intern(&r->names, owner_has_cn(owner) ? owner->cn : "");
    pd_rank_t *k = NULL;
    if (!job || !role || !host || !nodename || !cn || (k = calloc(1, sizeof(*k))) == NULL) {
        free(roles);
        return PROFD_ENOMEM;
    }
    k->roles = roles;
    k->nroles = nroles;
    r->gens[i]++;
    k->id = (int64_t)(((uint64_t)r->gens[i] << 32) | (uint64_t)(i + 1));
    k->job = job;
    k->role = role;
    k->host = host;
    k->node = nodename;
    k->cn = cn;
    k->rank = h->rank;
    k->local_rank = h->local_rank;
    k->world_size = h->world_size;
    k->replica_rank = h->replica_rank;
    k->pid = h->pid;
    k->uid = owner ? owner->uid : -1;
    k->peer_pid = owner && owner->uid >= 0 ? owner->pid : -1;
    k->pipe = owner ? owner->pipe : 0;
    k->state = PD_RANK_ACTIVE;
    k->step = PP_NONE;
    k->gen_acked = -1;
    k->gen_sample = -1;
    k->last_seen_ms = k->registered_ms = now_ms;
    r->slots[i] = k;
    r->count++;
    *out = k;
    return 0;
}

void pd_registry_remove(pd_registry_t *r, int64_t id)
{
    pd_rank_t *k = pd_registry_get(r, id);
    if (k) {
        r->slots[SLOT_OF(id)] = NULL;
        r->count--;
        rank_free(k);
    }
}

void pd_registry_credit(pd_registry_t *r, int64_t ms)
{
    for (pd_rank_t *k = pd_registry_next(r, NULL); k; k = pd_registry_next(r, k)) {
        k->last_seen_ms += ms;
    }
}

pd_rank_t *pd_registry_next(const pd_registry_t *r, const pd_rank_t *prev)
{
    size_t i = prev ? SLOT_OF(prev->id) + 1 : 0;
    for (; i < r->cap; i++) {
        if (r->slots[i]) {
            return r->slots[i];
        }
    }
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The step time is the median of the recent ones: a burst of stale events
 * or one slow step does not swing it. */
static void add_sample(pd_rank_t *k, int64_t us)
{
    int64_t v[PD_STEP_SAMPLES];
    k->recent_us[k->recent_pos] = us;
    k->recent_pos = (k->recent_pos + 1) % PD_STEP_SAMPLES;
    if (k->nrecent < PD_STEP_SAMPLES) {
        k->nrecent++;
    }
    memcpy(v, k->recent_us, (size_t)k->nrecent * sizeof(v[0]));
    qsort(v, (size_t)k->nrecent, sizeof(v[0]), cmp_i64);
    k->step_us = v[k->nrecent / 2];
}

int pd_registry_events(pd_rank_t *k, const int64_t *ev, size_t n, int64_t now_ms)
{
    k->last_seen_ms = now_ms;
    if (k->state == PD_RANK_LOST) {
        k->state = PD_RANK_ACTIVE;
    }
    for (size_t i = 0; i + 3 <= n; i += 3) {
        int64_t kind = ev[i], step = ev[i + 1], t = ev[i + 2];
        /* bounded (the codec bounds the wire's integers; this is called
         * with anything): the differences below cannot overflow */
        if (step < 0 || step > PP_INT_MAX || t < 0 || t > PP_INT_MAX) {
            return PROFD_EPROTO;
        }
        if (kind == 1) { /* step begin */
            if (k->step != PP_NONE && step > k->step && t > k->step_began_us) {
                add_sample(k, (t - k->step_began_us) / (step - k->step));
            }
            if (k->step == PP_NONE || step >= k->step) {
                k->step = step;
                k->step_began_us = t;
                k->in_step = true;
            }
        } else if (kind == 2) { /* step end */
            if (step == k->step) {
                k->in_step = false;
                if (k->nrecent == 0 && t > k->step_began_us) {
                    /* the first step's own length, until a second step
                     * begins (the history and profctl status have it
                     * from here too); not a sample */
                    k->step_us = t - k->step_began_us;
                }
            }
        } else {
            return PROFD_EPROTO;
        }
        k->events++;
    }
    return n % 3 ? PROFD_EPROTO : 0;
}

int pd_registry_role(const pd_rank_t *k, const char *role)
{
    for (size_t i = 0; role && i < k->nroles; i++) {
        if (strcmp(k->roles[i].name, role) == 0) {
            return (int)i;
        }
    }
    return -1;
}

void pd_registry_plan_rank(const pd_rank_t *k, pd_plan_rank_t *out)
{
    out->id = k->id;
    out->job = k->job;
    out->role = k->role;
    out->roles = k->roles;
    out->nroles = k->nroles;
    out->rank = k->rank;
    out->replica_rank = k->replica_rank;
    out->step = k->step;
    out->in_step = k->in_step;
    out->step_began_us = k->step_began_us;
    out->step_us = k->step_us;
}

void pd_registry_row(const pd_rank_t *k, int64_t now_ms, pp_rank_t *out)
{
    pp_record_init(&pp_desc_rank, out);
    out->client = k->id;
    out->job = (char *)k->job;
    out->role = (char *)k->role;
    out->rank = k->rank;
    out->local_rank = k->local_rank;
    out->world_size = k->world_size;
    out->replica_rank = k->replica_rank;
    out->host = (char *)k->host;
    out->pid = k->pid;
    out->node = k->node[0] ? (char *)k->node : NULL;
    out->step = k->step;
    out->step_ms = (double)k->step_us / 1000.0;
    out->rate = k->step_us > 0 ? 1e6 / (double)k->step_us : 0.0;
    out->state = k->state == PD_RANK_LOST ? PP_RA_LOST : k->in_step ? PP_RA_RUNNING : PP_RA_IDLE;
    out->age_ms = now_ms - k->last_seen_ms;
    out->events = k->events;
    out->dropped = k->dropped;
    if (k->nroles > 1 && (out->roles = calloc(k->nroles, sizeof(*out->roles))) != NULL) {
        for (size_t i = 0; i < k->nroles; i++) {
            pp_record_init(&pp_desc_role_rank, &out->roles[i]);
            out->roles[i].role = (char *)k->roles[i].name;
            out->roles[i].rank = k->roles[i].rank;
        }
        out->roles_n = k->nroles;
    }
}
