/* The coordinator's node endpoint (see coord.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "daemon.h"
#include "remote.h"
#include "reqc.h"
#include "state.h"
#include "windows.h"

typedef struct pd_node {
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
    bool awaited; /* known from the state file, not registered since */
    struct pd_node *next;
} pd_node_t;

struct pd_coord {
    struct pd_daemon *d;
    pd_rep_t *ep;
    pd_node_t *nodes;
    size_t count;
};

static pd_node_t *node_find(pd_coord_t *c, const char *name)
{
    for (pd_node_t *n = c->nodes; n; n = n->next) {
        if (strcmp(n->name, name) == 0) {
            return n;
        }
    }
    return NULL;
}

static void reply_plan(pd_daemon_t *d, pd_node_t *n, pd_req_t *req, bool unchanged)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_node_plan);
    m.u.node_plan.gen = d->gen;
    m.u.node_plan.instance = d->instance;
    m.u.node_plan.unchanged = unchanged;
    if (!unchanged && pd_remote_node_plan(d, n->name, &m.u.node_plan) != 0) {
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory building the plan");
        return;
    }
    pd_req_reply_msg(req, &m);
    pd_remote_node_plan_free(&m.u.node_plan);
}

static void release_watch(pd_daemon_t *d, pd_node_t *n)
{
    if (n->watch) {
        pd_req_t *w = n->watch;
        n->watch = NULL;
        reply_plan(d, n, w, true);
    }
}

/* ---- remote ranks ---- */

static pd_rank_t *remote_rank(pd_daemon_t *d, const char *node, int64_t client)
{
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = pd_registry_next(&d->reg, k)) {
        if (k->node_client == client && strcmp(k->node, node) == 0) {
            return k;
        }
    }
    return NULL;
}

static void rank_gone(pd_daemon_t *d, pd_rank_t *k, const char *reason)
{
    if (k->state != PD_RANK_LOST) {
        k->state = PD_RANK_LOST;
        pd_windows_on_lost(d, k, reason);
    }
}

/* Make the registry's remote ranks of a node match its roster. */
static void apply_roster(pd_daemon_t *d, pd_node_t *n, const pp_node_rank_t *v, size_t count)
{
    int64_t now = pd_now_ms();
    char why[128];
    /* ranks the roster no longer lists are gone */
    pd_rank_t *next;
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = next) {
        next = pd_registry_next(&d->reg, k);
        if (k->node_client == 0 || strcmp(k->node, n->name) != 0) {
            continue;
        }
        bool listed = false;
        for (size_t i = 0; i < count && !listed; i++) {
            listed = v[i].client == k->node_client;
        }
        if (!listed) {
            snprintf(why, sizeof(why), "left node %s", n->name);
            rank_gone(d, k, why);
            pd_registry_remove(&d->reg, k->id);
        }
    }
    for (size_t i = 0; i < count; i++) {
        pd_rank_t *k = remote_rank(d, n->name, v[i].client);
        if (k == NULL) {
            pp_hello_t h;
            pp_record_init(&pp_desc_hello, &h);
            h.job = v[i].job;
            h.role = v[i].role;
            h.rank = v[i].rank;
            h.local_rank = v[i].local_rank;
            h.world_size = v[i].world_size;
            h.replica_rank = v[i].replica_rank;
            h.host = v[i].host;
            h.pid = v[i].pid;
            if (pd_registry_add(&d->reg, &h, n->name, now, &k) != 0) {
                PD_LOG(&d->log, PD_LOG_WARN, "coord", "node %s: rank %lld not registered", n->name,
                       (long long)v[i].rank);
                continue;
            }
            k->node_client = v[i].client;
            if (!v[i].lost) {
                pd_windows_on_register(d, k);
            }
        }
        k->last_seen_ms = now;
        if (v[i].lost) {
            snprintf(why, sizeof(why), "was lost on node %s", n->name);
            rank_gone(d, k, why);
        } else {
            k->state = PD_RANK_ACTIVE;
        }
    }
    pd_daemon_tick_update(d);
}

static void node_lost(pd_daemon_t *d, pd_node_t *n, const char *reason)
{
    char why[160];
    snprintf(why, sizeof(why), "lost with node %s (%s)", n->name, reason);
    PD_LOG(&d->log, PD_LOG_WARN, "coord", "node %s %s", n->name, reason);
    pd_rank_t *next;
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = next) {
        next = pd_registry_next(&d->reg, k);
        if (k->node_client && strcmp(k->node, n->name) == 0) {
            rank_gone(d, k, why);
            pd_registry_remove(&d->reg, k->id);
        }
    }
    pd_remote_node_lost(d, n->name, reason);
    pd_windows_node_gone(d, n->name, why); /* members kept over a restart */
    release_watch(d, n);
}

static void node_remove(pd_coord_t *c, pd_node_t *n)
{
    for (pd_node_t **pp = &c->nodes; *pp; pp = &(*pp)->next) {
        if (*pp == n) {
            *pp = n->next;
            c->count--;
            free(n);
            pd_state_changed(c->d);
            return;
        }
    }
}

static pd_node_t *node_add(pd_coord_t *c, const char *name, const char *instance)
{
    pd_node_t *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        return NULL;
    }
    snprintf(n->name, sizeof(n->name), "%s", name);
    snprintf(n->instance, sizeof(n->instance), "%s", instance);
    n->gen_acked = -1;
    n->next = c->nodes;
    c->nodes = n;
    c->count++;
    pd_state_changed(c->d);
    return n;
}

/* ---- requests ---- */

static pd_node_t *known(pd_daemon_t *d, pd_req_t *req, const char *name, const char *instance)
{
    pd_node_t *n = node_find(d->coord, name);
    if (n == NULL || strcmp(n->instance, instance) != 0) {
        pd_req_reply_error(req, PROFD_ECLIENT, "unknown node %s: register again", name);
        return NULL;
    }
    n->pipe = pd_req_peer(req)->pipe;
    n->last_seen_ms = pd_now_ms();
    n->gone_since_ms = 0;
    return n;
}

static void on_hello(pd_daemon_t *d, pd_req_t *req, const pp_node_hello_t *h)
{
    pd_coord_t *c = d->coord;
    if (!pp_host_ok(h->node)) {
        pd_req_reply_error(req, PROFD_EINVAL, "invalid node name");
        return;
    }
    pd_node_t *n = node_find(c, h->node);
    if (n && strcmp(n->instance, h->instance) != 0) {
        node_lost(d, n, "restarted");
        node_remove(c, n);
        n = NULL;
    }
    if (n == NULL) {
        if ((n = node_add(c, h->node, h->instance)) == NULL) {
            pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
            return;
        }
        PD_LOG(&d->log, PD_LOG_INFO, "coord", "node %s joined with %zu rank(s)", n->name,
               h->ranks_n);
    } else if (n->awaited) {
        PD_LOG(&d->log, PD_LOG_INFO, "coord", "node %s is back with %zu rank(s)", n->name,
               h->ranks_n);
    }
    n->awaited = false;
    n->shared = h->shared;
    n->pipe = pd_req_peer(req)->pipe;
    n->last_seen_ms = pd_now_ms();
    n->gone_since_ms = 0;
    apply_roster(d, n, h->ranks, h->ranks_n);
    pp_msg_t m;
    pp_msg_init(&m, PP_T_node_welcome);
    m.u.node_welcome.instance = d->instance;
    m.u.node_welcome.gen = d->gen;
    m.u.node_welcome.save_path = d->save_path;
    pd_req_reply_msg(req, &m);
}

static void on_roster(pd_daemon_t *d, pd_req_t *req, const pp_node_roster_t *r)
{
    pd_node_t *n = known(d, req, r->node, r->instance);
    if (n) {
        apply_roster(d, n, r->ranks, r->ranks_n);
        pd_daemon_reply_ack(d, req);
    }
}

static void on_summary(pd_daemon_t *d, pd_req_t *req, const pp_node_summary_t *s)
{
    pd_node_t *n = known(d, req, s->node, s->instance);
    if (n == NULL) {
        return;
    }
    int64_t now_us = pd_now_us();
    n->latency_us = s->latency_us;
    for (size_t i = 0; i < s->roles_n; i++) {
        const pp_role_summary_t *r = &s->roles[i];
        for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = pd_registry_next(&d->reg, k)) {
            if (k->node_client == 0 || strcmp(k->node, n->name) != 0 ||
                strcmp(k->job, r->job) != 0 || strcmp(k->role, r->role) != 0) {
                continue;
            }
            int64_t before = k->step;
            /* the role's fastest rank stands for every rank of it: the
             * alignment needs the front, not each straggler */
            k->step = r->step;
            k->step_began_us = now_us - (r->age_us > 0 ? r->age_us : 0);
            k->step_us = r->step_us;
            k->in_step = r->in_step;
            k->last_seen_ms = n->last_seen_ms;
            if (k->step != before) {
                pd_windows_on_step(d, k);
            }
        }
    }
    pd_daemon_reply_ack(d, req);
}

static void on_watch(pd_daemon_t *d, pd_req_t *req, const pp_node_watch_t *w)
{
    pd_node_t *n = known(d, req, w->node, w->instance);
    if (n == NULL) {
        return;
    }
    if (w->gen == d->gen && n->gen_acked != d->gen) {
        /* the hop to the node; its own fan-out is added when planning */
        pd_daemon_latency_sample(d, pd_now_us() - d->gen_published_us);
    }
    n->gen_acked = w->gen;
    release_watch(d, n);
    if (w->gen != d->gen) {
        reply_plan(d, n, req, false);
        return;
    }
    int64_t hold =
        w->hold_ms > 0 && w->hold_ms < d->cfg.watch_hold_ms ? w->hold_ms : d->cfg.watch_hold_ms;
    if (!pd_req_park(req)) {
        reply_plan(d, n, req, true);
        return;
    }
    n->watch = req;
    n->watch_deadline_ms = pd_now_ms() + hold;
}

static void on_result(pd_daemon_t *d, pd_req_t *req, pp_node_result_t *r)
{
    char err[256];
    pd_node_t *n = known(d, req, r->node, r->instance);
    if (n == NULL) {
        return;
    }
    pd_rank_t *k = remote_rank(d, n->name, r->client);
    if (k == NULL) {
        pd_req_reply_error(req, PROFD_ENOENT, "node %s has no client %lld", n->name,
                           (long long)r->client);
        return;
    }
    int rv = pd_remote_on_result(d, k, n->shared, r, err, sizeof(err));
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    pd_daemon_reply_ack(d, req);
}

static void on_bye(pd_daemon_t *d, pd_req_t *req, const pp_node_bye_t *b)
{
    pd_node_t *n = known(d, req, b->node, b->instance);
    if (n == NULL) {
        return;
    }
    node_lost(d, n, "stopped");
    node_remove(d->coord, n);
    pd_daemon_reply_ack(d, req);
}

static void on_request(pd_req_t *req, void *arg)
{
    pd_daemon_t *d = arg;
    pp_msg_t m;
    size_t len, plen;
    const void *payload;
    const void *body = pd_req_body(req, &len);
    /* chunks carry up to chunk_bytes of payload beyond the JSON limit */
    size_t jl = pp_frame_split(body, len, &payload, &plen);
    if (pd_daemon_decode(d, req, "coord", body, jl, &m) != 0) {
        return;
    }
    if (pp_type_access(m.type) != PP_ACC_NODE || (plen && m.type != PP_T_chunk)) {
        d->bad_requests++;
        pd_req_reply_error(req, PROFD_ETYPE, "'%s' is not a request of the node endpoint",
                           pp_type_name(m.type));
        pp_msg_free(&m);
        return;
    }
    switch (m.type) {
    case PP_T_node_hello:
        on_hello(d, req, &m.u.node_hello);
        break;
    case PP_T_node_roster:
        on_roster(d, req, &m.u.node_roster);
        break;
    case PP_T_node_summary:
        on_summary(d, req, &m.u.node_summary);
        break;
    case PP_T_node_watch:
        on_watch(d, req, &m.u.node_watch);
        break;
    case PP_T_node_result:
        on_result(d, req, &m.u.node_result);
        break;
    case PP_T_chunk:
        if (node_find(d->coord, m.u.chunk.node) == NULL) {
            pd_req_reply_error(req, PROFD_ECLIENT, "unknown node %s", m.u.chunk.node);
        } else {
            pd_remote_on_chunk(d, req, &m.u.chunk, payload, plen);
        }
        break;
    case PP_T_node_bye:
        on_bye(d, req, &m.u.node_bye);
        break;
    default:
        pd_req_reply_error(req, PROFD_ETYPE, "unexpected '%s'", pp_type_name(m.type));
        break;
    }
    pp_msg_free(&m);
}

static void on_pipe_gone(uint32_t pipe, void *arg)
{
    pd_daemon_t *d = arg;
    for (pd_node_t *n = d->coord->nodes; n; n = n->next) {
        if (n->pipe == pipe && n->gone_since_ms == 0) {
            n->gone_since_ms = pd_now_ms(); /* lost only if it stays away */
        }
    }
}

int pd_coord_init(pd_daemon_t *d, char *err, size_t errlen)
{
    pt_tls_files_t tls = {d->cfg.tls_ca_file, d->cfg.tls_cert_file, d->cfg.tls_key_file, NULL};
    pd_coord_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return PROFD_ENOMEM;
    }
    pd_rep_opts_t o = {
        .url = d->cfg.coordinator_listen,
        .max_msg = (size_t)d->cfg.max_msg_bytes + (size_t)d->cfg.chunk_bytes,
        .initial = 8,
        .max_contexts = 1024,
        .tls = &tls,
        .handler = on_request,
        .pipe_gone = on_pipe_gone,
        .arg = d,
    };
    c->d = d;
    d->coord = c;
    if (strncmp(o.url, "tcp://", 6) == 0) {
        PD_LOG(&d->log, PD_LOG_WARN, "coord",
               "%s is plain tcp:// (security.insecure_tcp_links): the node links are "
               "unauthenticated and unencrypted, anyone who can connect to it can join as a node",
               o.url);
    }
    int rv = pd_rep_open(&c->ep, &d->loop, &o, err, errlen);
    if (rv != 0) {
        d->coord = NULL;
        free(c);
    }
    return rv;
}

int pd_coord_await(pd_daemon_t *d, const char *name, const char *instance)
{
    pd_coord_t *c = d->coord;
    if (c == NULL || node_find(c, name)) {
        return 0; /* not listening (the state file alone, as in its fuzz test) */
    }
    pd_node_t *n = node_add(c, name, instance);
    if (n == NULL) {
        return PROFD_ENOMEM;
    }
    n->awaited = true;
    n->gone_since_ms = pd_now_ms();
    return 0;
}

bool pd_coord_node_at(const pd_daemon_t *d, size_t i, const char **name, const char **instance)
{
    const pd_node_t *n = d->coord ? d->coord->nodes : NULL;
    for (; n && i > 0; i--) {
        n = n->next;
    }
    if (n == NULL) {
        return false;
    }
    *name = n->name;
    *instance = n->instance;
    return true;
}

void pd_coord_fini(pd_daemon_t *d)
{
    pd_coord_t *c = d->coord;
    if (c == NULL) {
        return;
    }
    for (pd_node_t *n = c->nodes; n; n = n->next) {
        n->watch = NULL; /* freed by pd_rep_close without a reply */
    }
    if (c->ep) {
        pd_rep_close(c->ep);
        c->ep = NULL;
    }
}

void pd_coord_free(pd_daemon_t *d)
{
    pd_coord_t *c = d->coord;
    if (c == NULL) {
        return;
    }
    while (c->nodes) {
        pd_node_t *n = c->nodes;
        c->nodes = n->next;
        free(n);
    }
    free(c);
    d->coord = NULL;
}

void pd_coord_broadcast(pd_daemon_t *d)
{
    for (pd_node_t *n = d->coord ? d->coord->nodes : NULL; n; n = n->next) {
        if (n->watch) {
            pd_req_t *w = n->watch;
            n->watch = NULL;
            reply_plan(d, n, w, false);
        }
    }
}

void pd_coord_tick(pd_daemon_t *d, int64_t now_ms)
{
    char why[96];
    pd_node_t *next;
    if (d->coord == NULL) {
        return;
    }
    for (pd_node_t *n = d->coord->nodes; n; n = next) {
        next = n->next;
        if (n->watch && now_ms >= n->watch_deadline_ms) {
            release_watch(d, n);
        }
        int64_t away = n->gone_since_ms ? now_ms - n->gone_since_ms : now_ms - n->last_seen_ms;
        if (away > d->cfg.node_timeout_ms) {
            if (n->awaited) {
                snprintf(why, sizeof(why), "did not come back within %lld ms of a restart",
                         (long long)away);
            } else {
                snprintf(why, sizeof(why), "was unreachable for %lld ms", (long long)away);
            }
            node_lost(d, n, why);
            node_remove(d->coord, n);
        }
    }
}

size_t pd_coord_nodes(const pd_daemon_t *d)
{
    return d->coord ? d->coord->count : 0;
}

int64_t pd_coord_latency_us(const pd_daemon_t *d)
{
    int64_t max = 0;
    for (pd_node_t *n = d->coord ? d->coord->nodes : NULL; n; n = n->next) {
        if (n->gone_since_ms == 0 && n->latency_us > max) {
            max = n->latency_us;
        }
    }
    return max;
}
