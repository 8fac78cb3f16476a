// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* What the endpoints of one daemon share (see node.h). */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "node.h"

void pd_node_plan_params(const pd_node_t *n, pd_plan_params_t *p)
{
    memset(p, 0, sizeof(*p));
    p->now_us = pd_now_us();
    p->latency_us = pd_latency_p99(&n->latency);
    if (n->hooks.remote_latency_us) {
        p->latency_us += n->hooks.remote_latency_us(n->hooks.arg);
    }
    p->margin_us = n->cfg->align_margin_ms * 1000;
    /* a request without a job: the planner takes the one job the live
     * ranks run; none live, this one (never a job whose ranks are gone) */
    p->default_job = "default";
    p->custom_tools = n->cfg->custom_tools;
}

static pd_hist_id_t hist_id(const pd_rank_t *k)
{
    pd_hist_id_t id = {k->job, k->role, k->host, k->node, k->rank, k->replica_rank, k->pid};
    return id;
}

pd_hist_rank_t *pd_node_hist(pd_node_t *n, const pd_rank_t *k, int64_t now_ms)
{
    pd_hist_id_t id = hist_id(k);
    if (n->hist && n->wrec && n->hist->n >= n->hist->max_ranks &&
        pd_history_find(n->hist, &id) == NULL) {
        /* a rank is evicted for this one: the records take what they
         * have not yet taken of it first */
        pd_wrecords_take_all(n->wrec, n->hist);
    }
    return n->hist ? pd_history_get(n->hist, &id, now_ms) : NULL;
}

pd_hist_rank_t *pd_node_hist_find(pd_node_t *n, const pd_rank_t *k)
{
    pd_hist_id_t id = hist_id(k);
    return n->hist ? pd_history_find(n->hist, &id) : NULL;
}

void pd_node_hist_gone(pd_node_t *n, const pd_rank_t *k, bool left)
{
    pd_hist_rank_t *r = pd_node_hist_find(n, k);
    if (r) {
        r->gone = true;
        r->left = left;
    }
}

void pd_node_hist_fed(pd_node_t *n, const pd_hist_rank_t *h)
{
    if (n->wrec != NULL) {
        pd_wrecords_sync(n->wrec, n->win, n->hist, n->gen);
        pd_wrecords_feed(n->wrec, n->hist, h);
    }
}

static void ack_msg(const pd_node_t *n, pp_msg_t *m)
{
    pp_msg_init(m, PP_T_ack);
    m->u.ack.gen = n->gen;
    m->u.ack.instance = (char *)n->instance;
    m->u.ack.t_us = pd_now_us(); /* the peer measures its clock against ours */
}

void pd_node_reply_ack(const pd_node_t *n, pd_req_t *req)
{
    pp_msg_t m;
    ack_msg(n, &m);
    pd_req_reply_msg(req, &m);
}

int pd_node_watch(pd_node_t *n, pd_req_t *req, int64_t gen, int64_t hold_ms, int64_t *gen_sample,
                  int64_t *gen_acked, int64_t *deadline_ms)
{
    if (gen == n->gen && *gen_sample == n->gen) {
        pd_latency_sample(&n->latency, pd_now_us() - n->gen_published_us);
    }
    *gen_sample = -1;
    *gen_acked = gen;
    if (gen != n->gen) {
        return PD_WATCH_NEW;
    }
    int64_t hold = hold_ms > 0 && hold_ms < n->cfg->watch_hold_ms ? hold_ms : n->cfg->watch_hold_ms;
    if (!pd_req_park(req)) {
        return PD_WATCH_FULL;
    }
    *deadline_ms = pd_now_ms() + hold;
    return PD_WATCH_PARKED;
}

void pd_node_reply_durable(pd_node_t *n, pd_req_t *req, const pp_msg_t *m)
{
    char *buf;
    size_t len;
    if (n->hooks.reply_durable == NULL) {
        pd_req_reply_msg(req, m);
        return;
    }
    if (pp_msg_encode(m, &buf, &len) != 0) {
        pd_req_reply_error(req, PROFD_ENOMEM, "cannot encode the reply");
        return;
    }
    n->hooks.reply_durable(n->hooks.arg, req, buf, len);
}

void pd_node_reply_ack_durable(pd_node_t *n, pd_req_t *req)
{
    pp_msg_t m;
    ack_msg(n, &m);
    pd_node_reply_durable(n, req, &m);
}

void pd_node_rep_opts(const pd_node_t *n, const char *url, pt_tls_files_t *tls, pd_rep_opts_t *out)
{
    const pd_config_t *cfg = n->cfg;
    *tls = (pt_tls_files_t){cfg->tls_ca_file, cfg->tls_cert_file, cfg->tls_key_file, NULL};
    memset(out, 0, sizeof(*out));
    out->url = url;
    out->max_msg = (size_t)cfg->max_msg_bytes;
    out->max_conns = (int)cfg->max_connections;
    out->max_conns_per_peer = (int)cfg->max_connections_per_peer;
    out->budget = n->budget;
    out->socket_mode = (int)cfg->socket_mode;
    out->chgrp = n->chgrp;
    out->socket_gid = n->socket_gid;
    out->tls = tls;
}

void pd_node_endpoint_opts(pd_node_t *n, pd_endpoint_opts_t *eo)
{
    eo->max_json = (size_t)n->cfg->max_msg_bytes;
    eo->framed = PP_T_NONE;
    eo->bad_requests = &n->bad_requests;
    eo->log = n->log;
}

void pd_node_roster_changed(pd_node_t *n)
{
    if (n->hooks.roster_changed) {
        n->hooks.roster_changed(n->hooks.arg);
    }
}

void pd_node_ranks_changed(pd_node_t *n)
{
    if (n->hooks.ranks_changed) {
        n->hooks.ranks_changed(n->hooks.arg);
    }
}

void pd_node_job_check(pd_node_t *n, const char *job)
{
    char name[PP_MAX_NAME + 1];
    snprintf(name, sizeof(name), "%s", job); /* job may point into a rank being removed */
    for (pd_rank_t *k = pd_registry_next(n->reg, NULL); k; k = pd_registry_next(n->reg, k)) {
        if (k->state == PD_RANK_ACTIVE && strcmp(k->job, name) == 0) {
            return;
        }
    }
    pd_windows_job_gone(n->win, name, pd_now_ms());
}

void pd_node_rank_changed(pd_node_t *n, const pd_rank_t *k)
{
    if (n->hooks.rank_changed) {
        n->hooks.rank_changed(n->hooks.arg, k);
    }
}

void pd_node_rank_gone(pd_node_t *n, int64_t id)
{
    if (n->hooks.rank_gone) {
        n->hooks.rank_gone(n->hooks.arg, id);
    }
}

void pd_node_durable(pd_node_t *n)
{
    if (n->hooks.durable) {
        n->hooks.durable(n->hooks.arg);
    }
}

void pd_node_coordinator_known(pd_node_t *n, const char *instance)
{
    if (n->hooks.coordinator_known) {
        n->hooks.coordinator_known(n->hooks.arg, instance);
    }
}
