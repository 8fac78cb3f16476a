/* The control endpoint (see control.h). */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "control.h"
#include "coord.h"
#include "link.h"
#include "daemon.h"
#include "profcfg.h"
#include "profd/client.h"

typedef void (*handler_fn)(pd_daemon_t *d, pd_req_t *req, pp_msg_t *m);

static bool allowed_gid(const pd_daemon_t *d, int64_t gid)
{
    for (size_t i = 0; i < d->cfg.n_allow_gids; i++) {
        if (d->cfg.allow_gids[i] == gid) {
            return true;
        }
    }
    return false;
}

/* Is the user `uid` a member of an allowed group in the group database?
 * The kernel gives only the primary gid of an ipc:// peer, not the groups
 * of its process. */
static bool allowed_member(const pd_daemon_t *d, int64_t uid, int64_t gid)
{
    struct passwd pw, *res = NULL;
    char buf[16384];
    gid_t groups[256];
    int n = (int)(sizeof(groups) / sizeof(groups[0]));
    if (d->cfg.n_allow_gids == 0 || getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) != 0 ||
        res == NULL) {
        return false;
    }
    /* -1: more groups than fit; n then holds the ones that did */
    if (getgrouplist(pw.pw_name, (gid_t)gid, groups, &n) < 0 &&
        n > (int)(sizeof(groups) / sizeof(groups[0]))) {
        n = (int)(sizeof(groups) / sizeof(groups[0]));
    }
    for (int i = 0; i < n; i++) {
        if (allowed_gid(d, (int64_t)groups[i])) {
            return true;
        }
    }
    return false;
}

bool pd_control_permitted(const pd_daemon_t *d, const pd_peer_t *peer)
{
    switch (peer->via) {
    case PD_VIA_TLS:
        return peer->tls_verified;
    case PD_VIA_TCP:
        return d->cfg.insecure_tcp_control;
    case PD_VIA_IPC:
        break;
    default:
        return false;
    }
    if (peer->uid < 0) {
        return false; /* no credentials to check */
    }
    if (peer->uid == 0 || peer->uid == d->uid) {
        return true;
    }
    for (size_t i = 0; i < d->cfg.n_allow_uids; i++) {
        if (d->cfg.allow_uids[i] == peer->uid) {
            return true;
        }
    }
    return allowed_gid(d, peer->gid) || allowed_member(d, peer->uid, peer->gid);
}

static void reply_started(pd_daemon_t *d, pd_req_t *req, const int64_t *ids, size_t n,
                          char **warnings, size_t nwarnings)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_started);
    pp_window_t *v = n ? calloc(n, sizeof(*v)) : NULL;
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++) {
        pd_window_t *w = pd_windows_get(&d->win, ids[i]);
        if (w) {
            pd_windows_info(w, false, &v[k++]);
        }
    }
    m.u.started.windows = v;
    m.u.started.windows_n = k;
    m.u.started.warnings = warnings;
    m.u.started.warnings_n = nwarnings;
    pd_req_reply_msg(req, &m);
    for (size_t i = 0; i < k; i++) {
        pd_windows_info_free(&v[i]);
    }
    free(v);
}

static void on_status(pd_daemon_t *d, pd_req_t *req, pp_msg_t *in)
{
    pp_msg_t m;
    int64_t now = pd_now_ms();
    size_t n = 0;
    pp_msg_init(&m, PP_T_status_reply);
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = pd_registry_next(&d->reg, k)) {
        n++;
    }
    pp_rank_t *rows = n ? calloc(n, sizeof(*rows)) : NULL;
    size_t i = 0;
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); rows && k;
         k = pd_registry_next(&d->reg, k)) {
        if (in->u.status.job == NULL || strcmp(in->u.status.job, k->job) == 0) {
            pd_registry_row(k, now, &rows[i++]);
        }
    }
    m.u.status_reply.node = d->node;
    m.u.status_reply.instance = d->instance;
    m.u.status_reply.version = PROFD_VERSION_STRING;
    m.u.status_reply.save_path = d->save_path;
    m.u.status_reply.windows = (int64_t)pd_windows_live(&d->win);
    m.u.status_reply.ranks = rows;
    m.u.status_reply.ranks_n = i;
    m.u.status_reply.bad_requests = d->bad_requests;
    m.u.status_reply.mode =
        d->coord ? "coordinator" : (d->cfg.coordinator_url[0] ? "node" : "standalone");
    m.u.status_reply.coordinator = d->cfg.coordinator_url[0] ? d->cfg.coordinator_url : NULL;
    m.u.status_reply.connected = pd_link_connected(d);
    m.u.status_reply.nodes = (int64_t)pd_coord_nodes(d);
    pd_link_backlog(d, &m.u.status_reply.backlog_files, &m.u.status_reply.backlog_bytes);
    pd_req_reply_msg(req, &m);
    free(rows);
}

static void on_windows(pd_daemon_t *d, pd_req_t *req, pp_msg_t *in)
{
    const pp_query_t *q = &in->u.windows;
    pp_msg_t m;
    size_t n = 0;
    pp_msg_init(&m, PP_T_windows_reply);
    if (q->id != PP_NONE && pd_windows_get(&d->win, q->id) == NULL) {
        pd_req_reply_error(req, PROFD_ENOENT, "no window %lld", (long long)q->id);
        return;
    }
    for (pd_window_t *w = d->win.head; w; w = w->next) {
        n++;
    }
    pp_window_t *v = n ? calloc(n, sizeof(*v)) : NULL;
    size_t k = 0;
    for (pd_window_t *w = d->win.head; v && w; w = w->next) {
        if ((q->id != PP_NONE && w->id != q->id) || (q->job && strcmp(q->job, w->job) != 0)) {
            continue;
        }
        pd_windows_info(w, q->id != PP_NONE, &v[k++]);
    }
    m.u.windows_reply.windows = v;
    m.u.windows_reply.windows_n = k;
    pd_req_reply_msg(req, &m);
    for (size_t i = 0; i < k; i++) {
        pd_windows_info_free(&v[i]);
    }
    free(v);
}

static void on_start(pd_daemon_t *d, pd_req_t *req, pp_msg_t *in)
{
    char err[256];
    int64_t *ids;
    size_t n;
    int rv = pd_windows_create(d, &in->u.start, &ids, &n, err, sizeof(err));
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
        return;
    }
    reply_started(d, req, ids, n, NULL, 0);
    free(ids);
}

static void on_stop(pd_daemon_t *d, pd_req_t *req, pp_msg_t *in)
{
    char err[256];
    const pp_stop_t *s = &in->u.stop;
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    if (s->id != PP_NONE) {
        int rv = pd_windows_stop(d, s->id, err, sizeof(err));
        if (rv != 0) {
            pd_req_reply_error(req, rv, "%s", err);
            return;
        }
        reply_started(d, req, &s->id, 1, NULL, 0);
        return;
    }
    for (pd_window_t *w = d->win.head; w; w = w->next) {
        if ((w->state != PD_W_PENDING && w->state != PD_W_ACTIVE) ||
            (s->job && strcmp(s->job, w->job) != 0)) {
            continue;
        }
        if (pd_windows_stop(d, w->id, err, sizeof(err)) == 0) {
            if (n == cap) {
                cap = cap ? 2 * cap : 8;
                int64_t *v = realloc(ids, cap * sizeof(*v));
                if (v == NULL) {
                    break;
                }
                ids = v;
            }
            ids[n++] = w->id;
        }
    }
    reply_started(d, req, ids, n, NULL, 0);
    free(ids);
}

int pd_control_apply_text(pd_daemon_t *d, const char *file, const char *text, size_t len,
                          char *const *overrides, size_t n_overrides, const char *job, bool own,
                          int64_t **ids, size_t *nids, char ***warnings, size_t *nwarnings,
                          char *err, size_t errlen)
{
    pd_profcfg_t cfg;
    int rv = pd_profcfg_load(file ? file : "<apply>", text, len, overrides, n_overrides, &cfg, err,
                             errlen);
    *ids = NULL;
    *nids = 0;
    *warnings = NULL;
    *nwarnings = 0;
    if (rv != 0) {
        return rv;
    }
    char **keys = own ? calloc(cfg.n_specs + 1, sizeof(*keys)) : NULL;
    bool *planned = own ? calloc(cfg.n_specs + 1, sizeof(*planned)) : NULL;
    if (own && (keys == NULL || planned == NULL)) {
        free(keys);
        free(planned);
        pd_profcfg_free(&cfg);
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; own && i < cfg.n_specs; i++) {
        size_t klen;
        if (pp_record_encode(&pp_desc_window_spec, &cfg.specs[i], false, &keys[i], &klen) != 0) {
            keys[i] = NULL; /* planned again: better twice than never */
        }
    }
    for (pd_window_t *w = d->win.head; own && w; w = w->next) {
        bool asked = false;
        for (size_t i = 0; w->origin && i < cfg.n_specs; i++) {
            if (keys[i] && strcmp(keys[i], w->origin) == 0) {
                asked = planned[i] = true;
            }
        }
        if (w->origin && !asked && w->state == PD_W_PENDING) {
            char why[256];
            PD_LOG(&d->log, PD_LOG_INFO, "config", "%s no longer asks for window %s: withdrawn",
                   file, w->name);
            pd_windows_stop(d, w->id, why, sizeof(why));
        }
    }
    for (size_t i = 0; i < cfg.n_specs && rv == 0; i++) {
        int64_t *v;
        size_t n;
        pp_window_spec_t *spec = &cfg.specs[i];
        if (job && spec->job == NULL) {
            spec->job = strdup(job);
        }
        if (own && planned[i]) {
            continue;
        }
        rv = pd_windows_create(d, spec, &v, &n, err, errlen);
        for (size_t k = 0; rv == 0 && own && keys[i] && k < n; k++) {
            pd_window_t *w = pd_windows_get(&d->win, v[k]);
            if (w) {
                w->origin = strdup(keys[i]);
            }
        }
        if (rv == 0) {
            int64_t *all = realloc(*ids, (*nids + n) * sizeof(*all));
            if (all) {
                memcpy(all + *nids, v, n * sizeof(*v));
                *ids = all;
                *nids += n;
            }
            free(v);
        }
    }
    for (size_t i = 0; own && i < cfg.n_specs; i++) {
        free(keys[i]);
    }
    free(keys);
    free(planned);
    /* hand over the file-level warnings */
    *warnings = cfg.warnings;
    *nwarnings = cfg.n_warnings;
    cfg.warnings = NULL;
    cfg.n_warnings = 0;
    pd_profcfg_free(&cfg);
    return rv;
}

static void on_apply(pd_daemon_t *d, pd_req_t *req, pp_msg_t *in)
{
    char err[512];
    const pp_apply_t *a = &in->u.apply;
    int64_t *ids;
    size_t n, nw;
    char **warnings;
    int rv =
        pd_control_apply_text(d, a->file, a->yaml, strlen(a->yaml), a->overrides, a->overrides_n,
                              a->job, false, &ids, &n, &warnings, &nw, err, sizeof(err));
    if (rv != 0) {
        pd_req_reply_error(req, rv, "%s", err);
    } else {
        PD_LOG(&d->log, PD_LOG_INFO, "control", "applied %s: %zu window(s)",
               a->file ? a->file : "config", n);
        reply_started(d, req, ids, n, warnings, nw);
    }
    for (size_t i = 0; i < nw; i++) {
        free(warnings[i]);
    }
    free(warnings);
    free(ids);
}

static const struct {
    pp_type_t type;
    handler_fn fn;
} handlers[] = {
    {PP_T_status, on_status}, {PP_T_windows, on_windows}, {PP_T_start, on_start},
    {PP_T_stop, on_stop},     {PP_T_apply, on_apply},
};

static void refuse(pd_daemon_t *d, pd_req_t *req, const char *what)
{
    const pd_peer_t *p = pd_req_peer(req);
    if (p->via == PD_VIA_IPC) {
        PD_LOG(&d->log, PD_LOG_WARN, "control", "refused '%s' from uid %lld gid %lld pid %lld",
               what, (long long)p->uid, (long long)p->gid, (long long)p->pid);
        pd_req_reply_error(req, PROFD_EPERM,
                           "'%s' is not permitted for uid %lld (see security.allow_uids and "
                           "allow_gids)",
                           what, (long long)p->uid);
    } else if (p->via == PD_VIA_TLS) {
        PD_LOG(&d->log, PD_LOG_WARN, "control",
               "refused '%s' from connection %u: its certificate did not verify", what, p->pipe);
        pd_req_reply_error(req, PROFD_EPERM,
                           "'%s' is not permitted: the client certificate did not verify", what);
    } else {
        PD_LOG(&d->log, PD_LOG_WARN, "control", "refused '%s' from connection %u", what, p->pipe);
        pd_req_reply_error(req, PROFD_EPERM, "'%s' is not permitted over this transport", what);
    }
}

static void on_request(pd_req_t *req, void *arg)
{
    pd_daemon_t *d = arg;
    pp_msg_t m;
    size_t len;
    const void *body = pd_req_body(req, &len);
    if (pd_daemon_decode(d, req, "control", body, len, &m) != 0) {
        return;
    }
    pp_access_t acc = pp_type_access(m.type);
    if (acc != PP_ACC_READ && acc != PP_ACC_WRITE) {
        d->bad_requests++;
        pd_req_reply_error(req, PROFD_ETYPE, "'%s' is not a control request", pp_type_name(m.type));
    } else if (acc == PP_ACC_WRITE && d->cfg.coordinator_url[0]) {
        pd_req_reply_error(req, PROFD_ENOTSUP,
                           "this node daemon's windows are planned by its coordinator (%s): run "
                           "'%s' against the coordinator's control endpoint",
                           d->cfg.coordinator_url, pp_type_name(m.type));
    } else if (acc == PP_ACC_WRITE && !pd_control_permitted(d, pd_req_peer(req))) {
        refuse(d, req, pp_type_name(m.type));
    } else {
        for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
            if (handlers[i].type == m.type) {
                handlers[i].fn(d, req, &m);
                break;
            }
        }
    }
    pp_msg_free(&m);
}

static void on_limited(const pd_peer_t *p, void *arg)
{
    pd_daemon_t *d = arg;
    PD_LOG(&d->log, PD_LOG_WARN, "control",
           "connection %u (uid %lld pid %lld) is over the rate limit of %lld requests/s "
           "(limits.control_requests_per_s)",
           p->pipe, (long long)p->uid, (long long)p->pid, (long long)d->cfg.control_rate);
}

static int listen_on(pd_daemon_t *d, const char *url, pd_rep_t **out, char *err, size_t errlen)
{
    pt_tls_files_t tls = {d->cfg.tls_ca_file, d->cfg.tls_cert_file, d->cfg.tls_key_file, NULL};
    pd_rep_opts_t o = {
        .url = url,
        .max_msg = (size_t)d->cfg.max_msg_bytes,
        .socket_mode = (int)d->cfg.socket_mode,
        .chgrp = d->chgrp,
        .socket_gid = d->socket_gid,
        .initial = 2,
        .max_contexts = 16,
        .rate = d->cfg.control_rate,
        .tls = &tls,
        .handler = on_request,
        .pipe_gone = NULL,
        .limited = on_limited,
        .arg = d,
    };
    if (strncmp(url, "tcp://", 6) == 0) {
        PD_LOG(&d->log, PD_LOG_WARN, "control",
               "%s is plain tcp:// (security.insecure_tcp_control): anyone who can connect to it "
               "controls this daemon",
               url);
    }
    return pd_rep_open(out, &d->loop, &o, err, errlen);
}

/* pd_daemon_init() has checked the URLs (pd_config_check_control). */
int pd_control_init(pd_daemon_t *d, char *err, size_t errlen)
{
    int rv = listen_on(d, d->cfg.control_url, &d->control_ep, err, errlen);
    if (rv == 0 && d->cfg.control_remote_url[0]) {
        rv = listen_on(d, d->cfg.control_remote_url, &d->control_remote_ep, err, errlen);
    }
    return rv;
}

void pd_control_fini(pd_daemon_t *d)
{
    pd_rep_close(d->control_remote_ep);
    d->control_remote_ep = NULL;
    pd_rep_close(d->control_ep);
    d->control_ep = NULL;
}
