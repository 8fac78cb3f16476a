/* The control endpoints (see control.h). */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "apply.h"
#include "clock.h"
#include "control.h"
#include "profd/client.h"
#include "start.h"

struct pd_control {
    pd_node_t *n;
    pd_endpoint_t *local;  /* listen.control */
    pd_endpoint_t *remote; /* listen.control_remote, when set */
};

static bool allowed_gid(const pd_node_t *n, int64_t gid)
{
    for (size_t i = 0; i < n->cfg->n_allow_gids; i++) {
        if (n->cfg->allow_gids[i] == gid) {
            return true;
        }
    }
    return false;
}

/* Is the user `uid` a member of an allowed group in the group database?
 * The kernel gives only the primary gid of an ipc:// peer, not the groups
 * of its process. */
static bool allowed_member(const pd_node_t *n, int64_t uid, int64_t gid)
{
    struct passwd pw, *res = NULL;
    char buf[16384];
    gid_t groups[256];
    int ng = (int)(sizeof(groups) / sizeof(groups[0]));
    if (n->cfg->n_allow_gids == 0 || getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) != 0 ||
        res == NULL) {
        return false;
    }
    /* -1: more groups than fit; ng then holds the ones that did */
    if (getgrouplist(pw.pw_name, (gid_t)gid, groups, &ng) < 0 &&
        ng > (int)(sizeof(groups) / sizeof(groups[0]))) {
        ng = (int)(sizeof(groups) / sizeof(groups[0]));
    }
    for (int i = 0; i < ng; i++) {
        if (allowed_gid(n, (int64_t)groups[i])) {
            return true;
        }
    }
    return false;
}

bool pd_control_permitted(const pd_node_t *n, const pd_peer_t *peer)
{
    switch (peer->via) {
    case PD_VIA_TLS:
        return peer->tls_verified;
    case PD_VIA_TCP:
        return n->cfg->insecure_tcp_control;
    case PD_VIA_IPC:
        break;
    default:
        return false;
    }
    if (peer->uid < 0) {
        return false; /* no credentials to check */
    }
    if (peer->uid == 0 || peer->uid == n->uid) {
        return true;
    }
    for (size_t i = 0; i < n->cfg->n_allow_uids; i++) {
        if (n->cfg->allow_uids[i] == peer->uid) {
            return true;
        }
    }
    return allowed_gid(n, peer->gid) || allowed_member(n, peer->uid, peer->gid);
}

static void reply_started(pd_node_t *n, pd_req_t *req, const int64_t *ids, size_t k,
                          char **warnings, size_t nwarnings)
{
    pp_msg_t m;
    pd_node_durable(n); /* a window is kept over a restart before anyone hears of it */
    pp_msg_init(&m, PP_T_started);
    pp_window_t *v = k ? calloc(k, sizeof(*v)) : NULL;
    size_t j = 0;
    for (size_t i = 0; v && i < k; i++) {
        pd_window_t *w = pd_windows_get(n->win, ids[i]);
        if (w) {
            pd_windows_info(w, false, &v[j++]);
        }
    }
    m.u.started.windows = v;
    m.u.started.windows_n = j;
    m.u.started.warnings = warnings;
    m.u.started.warnings_n = nwarnings;
    pd_req_reply_msg(req, &m);
    for (size_t i = 0; i < j; i++) {
        pd_windows_info_free(&v[i]);
    }
    free(v);
}

static void on_status(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_control_t *c = ctx;
    pd_node_t *n = c->n;
    pp_msg_t m;
    int64_t now = pd_now_ms();
    size_t k = 0, i = 0;
    pp_msg_init(&m, PP_T_status_reply);
    for (pd_rank_t *r = pd_registry_next(n->reg, NULL); r; r = pd_registry_next(n->reg, r)) {
        k++;
    }
    pp_rank_t *rows = k ? calloc(k, sizeof(*rows)) : NULL;
    for (pd_rank_t *r = pd_registry_next(n->reg, NULL); rows && r;
         r = pd_registry_next(n->reg, r)) {
        if (in->u.status.job == NULL || strcmp(in->u.status.job, r->job) == 0) {
            pd_registry_row(r, now, &rows[i++]);
        }
    }
    pp_status_reply_t *s = &m.u.status_reply;
    s->node = (char *)n->name;
    s->instance = (char *)n->instance;
    s->version = PROFD_VERSION_STRING;
    s->save_path = (char *)n->save_path;
    s->windows = (int64_t)pd_windows_live(n->win);
    s->ranks = rows;
    s->ranks_n = i;
    s->bad_requests = n->bad_requests;
    s->mode = "standalone";
    if (n->hooks.status) {
        n->hooks.status(n->hooks.arg, s); /* mode, coordinator, link and nodes */
    }
    pd_req_reply_msg(req, &m);
    for (size_t j = 0; j < i; j++) {
        free(rows[j].roles);
    }
    free(rows);
}

static void on_windows(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    const pp_query_t *q = &in->u.windows;
    pp_msg_t m;
    size_t k = 0, j = 0;
    pp_msg_init(&m, PP_T_windows_reply);
    if (q->id != PP_NONE && pd_windows_get(n->win, q->id) == NULL) {
        pd_req_reply_error(req, PROFD_ENOENT, "no window %lld", (long long)q->id);
        return;
    }
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        k++;
    }
    pp_window_t *v = k ? calloc(k, sizeof(*v)) : NULL;
    for (pd_window_t *w = n->win->head; v && w; w = w->next) {
        if ((q->id != PP_NONE && w->id != q->id) || (q->job && strcmp(q->job, w->job) != 0)) {
            continue;
        }
        pd_windows_info(w, q->id != PP_NONE, &v[j++]);
    }
    m.u.windows_reply.windows = v;
    m.u.windows_reply.windows_n = j;
    pd_req_reply_msg(req, &m);
    for (size_t i = 0; i < j; i++) {
        pd_windows_info_free(&v[i]);
    }
    free(v);
}

static void on_start(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    char err[256];
    int64_t *ids;
    size_t k;
    int rv = pd_start_windows(n, &in->u.start, &ids, &k, err, sizeof(err));
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    reply_started(n, req, ids, k, NULL, 0);
    free(ids);
}

static void on_stop(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    char err[256];
    const pp_stop_t *s = &in->u.stop;
    int64_t *ids = NULL;
    size_t k = 0, cap = 0;
    if (s->id != PP_NONE) {
        int rv = pd_start_stop(n, s->id, err, sizeof(err));
        if (rv != 0) {
            pd_req_reply_error(req, rv, "%s", err);
            return;
        }
        reply_started(n, req, &s->id, 1, NULL, 0);
        return;
    }
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        if (!pd_windows_running(w) || (s->job && strcmp(s->job, w->job) != 0)) {
            continue;
        }
        if (pd_start_stop(n, w->id, err, sizeof(err)) == 0) {
            if (k == cap) {
                cap = cap ? 2 * cap : 8;
                int64_t *v = realloc(ids, cap * sizeof(*v));
                if (v == NULL) {
                    break;
                }
                ids = v;
            }
            ids[k++] = w->id;
        }
    }
    reply_started(n, req, ids, k, NULL, 0);
    free(ids);
}

static void on_apply(void *ctx, pd_req_t *req, pp_msg_t *in, const void *payload, size_t plen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    char err[512];
    pp_apply_t *a = &in->u.apply;
    pd_apply_result_t r;
    int rv;
    if (a->yaml != NULL) { /* an older client: the YAML text, read here */
        rv = pd_apply_text(n, a->file, a->yaml, strlen(a->yaml), a->overrides, a->overrides_n,
                           a->job, false, &r, err, sizeof(err));
    } else if (a->specs_n > 0) { /* read by profctl on the caller's side */
        rv = pd_apply_specs(n, a->specs, a->specs_n, a->warnings, a->warnings_n, a->job, &r, err,
                            sizeof(err));
    } else {
        rv = PROFD_EINVAL;
        snprintf(err, sizeof(err), "apply: give the window requests (specs) or the yaml text");
    }
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    PD_LOG(n->log, PD_LOG_INFO, "control", "applied %s: %zu window(s)",
           a->file ? a->file : "config", r.nids);
    reply_started(n, req, r.ids, r.nids, r.warnings, r.nwarnings);
    pd_apply_result_free(&r);
}

static const pd_handler_t handlers[] = {
    {PP_T_status, on_status}, {PP_T_windows, on_windows}, {PP_T_start, on_start},
    {PP_T_stop, on_stop},     {PP_T_apply, on_apply},
};

/* Mutating requests: not on a node daemon, and only for permitted peers. */
static int permit(void *ctx, const pd_peer_t *p, const pp_msg_t *m, char *why, size_t whylen)
{
    pd_node_t *n = ((pd_control_t *)ctx)->n;
    const char *what = pp_type_name(m->type);
    if (pp_type_access(m->type) != PP_ACC_WRITE) {
        return 0;
    }
    if (n->cfg->coordinator_url[0]) {
        snprintf(why, whylen,
                 "this node daemon's windows are planned by its coordinator (%s): run '%s' "
                 "against the coordinator's control endpoint",
                 n->cfg->coordinator_url, what);
        return PROFD_ENOTSUP;
    }
    if (pd_control_permitted(n, p)) {
        return 0;
    }
    if (p->via == PD_VIA_IPC) {
        PD_LOG(n->log, PD_LOG_WARN, "control", "refused '%s' from uid %lld gid %lld pid %lld", what,
               (long long)p->uid, (long long)p->gid, (long long)p->pid);
        snprintf(why, whylen,
                 "'%s' is not permitted for uid %lld (see security.allow_uids and allow_gids)",
                 what, (long long)p->uid);
    } else if (p->via == PD_VIA_TLS) {
        PD_LOG(n->log, PD_LOG_WARN, "control",
               "refused '%s' from connection %u: its certificate did not verify", what, p->pipe);
        snprintf(why, whylen, "'%s' is not permitted: the client certificate did not verify", what);
    } else {
        PD_LOG(n->log, PD_LOG_WARN, "control", "refused '%s' from connection %u", what, p->pipe);
        snprintf(why, whylen, "'%s' is not permitted over this transport", what);
    }
    return PROFD_EPERM;
}

static void on_limited(const pd_peer_t *p, void *arg)
{
    pd_node_t *n = ((pd_control_t *)arg)->n;
    PD_LOG(n->log, PD_LOG_WARN, "control",
           "connection %u (uid %lld pid %lld) is over the rate limit of %lld requests/s "
           "(limits.control_requests_per_s)",
           p->pipe, (long long)p->uid, (long long)p->pid, (long long)n->cfg->control_rate);
}

static int listen_on(pd_control_t *c, const char *url, pd_endpoint_t **out, char *err,
                     size_t errlen)
{
    pd_node_t *n = c->n;
    pt_tls_files_t tls;
    pd_rep_opts_t ro;
    pd_node_rep_opts(n, url, &tls, &ro);
    ro.initial = 2;
    ro.max_contexts = 16;
    ro.rate = n->cfg->control_rate;
    ro.limited = on_limited;
    pd_endpoint_opts_t eo = {
        .name = "control",
        .what = "a control request",
        .accept = PD_ACCEPT(PP_ACC_READ) | PD_ACCEPT(PP_ACC_WRITE),
        .max_json = (size_t)n->cfg->max_msg_bytes,
        .framed = PP_T_NONE,
        .handlers = handlers,
        .nhandlers = sizeof(handlers) / sizeof(handlers[0]),
        .permit = permit,
        .bad_requests = &n->bad_requests,
        .log = n->log,
        .ctx = c,
    };
    if (strncmp(url, "tcp://", 6) == 0) {
        PD_LOG(n->log, PD_LOG_WARN, "control",
               "%s is plain tcp:// (security.insecure_tcp_control): anyone who can connect to it "
               "controls this daemon",
               url);
    }
    return pd_endpoint_open(out, n->loop, &ro, &eo, err, errlen);
}

int pd_control_init(pd_control_t **out, pd_node_t *n, char *err, size_t errlen)
{
    pd_control_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return PROFD_ENOMEM;
    }
    c->n = n;
    int rv = listen_on(c, n->cfg->control_url, &c->local, err, errlen);
    if (rv == 0 && n->cfg->control_remote_url[0]) {
        rv = listen_on(c, n->cfg->control_remote_url, &c->remote, err, errlen);
    }
    if (rv != 0) {
        pd_control_fini(c);
        return rv;
    }
    *out = c;
    return 0;
}

void pd_control_fini(pd_control_t *c)
{
    if (c) {
        pd_endpoint_close(c->remote);
        pd_endpoint_close(c->local);
        free(c);
    }
}

int64_t pd_control_limited(const pd_control_t *c)
{
    return c ? pd_endpoint_limited(c->local) + pd_endpoint_limited(c->remote) : 0;
}
