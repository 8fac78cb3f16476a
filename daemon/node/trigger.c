// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The straggler trigger (see trigger.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "start.h"
#include "trigger.h"

void pd_trigger_settings(const pd_config_t *cfg, pd_straggler_cfg_t *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->job, sizeof(out->job), "%s", cfg->straggler_job);
    for (size_t i = 0; i < cfg->n_straggler_roles && i < PD_STRAGGLER_ROLES; i++) {
        snprintf(out->roles[i], sizeof(out->roles[i]), "%s", cfg->straggler_roles[i]);
        out->nroles++;
    }
    out->factor = cfg->straggler_factor;
    out->score = cfg->straggler_score;
    out->consecutive = cfg->straggler_consecutive;
    out->steps = cfg->straggler_steps;
    out->interval_ms = cfg->straggler_interval_ms;
    out->max_bytes = cfg->straggler_max_bytes;
    snprintf(out->tool, sizeof(out->tool), "%s", cfg->straggler_tool);
}

static void open_window(pd_node_t *n, pd_straggler_hit_t *hit, int64_t now_ms)
{
    pd_straggler_t *s = n->strag;
    pp_window_spec_t spec;
    pp_selector_t sel;
    int64_t ranks[2] = {hit->slow->rank, hit->peer->rank};
    char err[256];
    int64_t *ids = NULL;
    size_t nids = 0;
    pp_record_init(&pp_desc_window_spec, &spec);
    pp_record_init(&pp_desc_selector, &sel);
    sel.role = (char *)hit->slow->role;
    sel.ranks = ranks;
    sel.ranks_n = 2;
    spec.job = (char *)hit->slow->job;
    spec.next = s->cfg.steps;
    spec.tool = s->cfg.tool[0] ? s->cfg.tool : "torch";
    spec.selectors = &sel;
    spec.selectors_n = 1;
    spec.source = hit->reason;
    int rv = pd_start_windows(n, &spec, &ids, &nids, err, sizeof(err));
    if (rv != 0 || nids == 0) {
        PD_LOG(n->log, PD_LOG_WARN, "trigger", "%s: no window opened: %s", hit->reason,
               rv != 0 ? err : "nothing planned");
        pd_straggler_fired(s, hit, PP_NONE, now_ms);
    } else {
        PD_LOG(n->log, PD_LOG_INFO, "trigger", "window %lld opened: %s", (long long)ids[0],
               hit->reason);
        pd_straggler_fired(s, hit, ids[0], now_ms);
    }
    free(ids);
}

void pd_trigger_tick(pd_node_t *n, int64_t now_ms)
{
    pd_straggler_t *s = n->strag;
    pd_straggler_hit_t hit;
    if (s == NULL || n->win->follower || n->hist == NULL) {
        return;
    }
    if (s->live) { /* its window is over when it is done, cancelled, failed or forgotten */
        pd_window_t *w = pd_windows_get(n->win, s->last_window);
        if (w == NULL || w->state == PP_WS_DONE || w->state == PP_WS_CANCELLED ||
            w->state == PP_WS_FAILED) {
            pd_straggler_window_done(s, s->last_window, w ? w->bytes : 0);
        }
    }
    if (pd_straggler_check(s, n->hist, now_ms, &hit)) {
        open_window(n, &hit, now_ms);
    }
}

int pd_trigger_request(pd_node_t *n, const pp_straggler_t *req, char *err, size_t errlen)
{
    pd_straggler_cfg_t c;
    if (req->off) {
        pd_straggler_disarm(n->strag);
        return 0;
    }
    pd_trigger_settings(n->cfg, &c);
    if (req->job) {
        if (!pp_ident_ok(req->job)) {
            snprintf(err, errlen, "job must be an identifier [A-Za-z0-9_-]");
            return PROFD_EINVAL;
        }
        snprintf(c.job, sizeof(c.job), "%s", req->job);
    }
    if (req->roles_n > PD_STRAGGLER_ROLES) {
        snprintf(err, errlen, "at most %d roles", PD_STRAGGLER_ROLES);
        return PROFD_EINVAL;
    }
    if (req->roles_n) {
        c.nroles = 0;
        for (size_t i = 0; i < req->roles_n; i++) {
            if (!pp_ident_ok(req->roles[i])) {
                snprintf(err, errlen, "roles must be identifiers [A-Za-z0-9_-]");
                return PROFD_EINVAL;
            }
            snprintf(c.roles[c.nroles++], sizeof(c.roles[0]), "%s", req->roles[i]);
        }
    }
    if (req->factor != 0) {
        if (!(req->factor > 1.0 && req->factor <= 1000.0)) {
            snprintf(err, errlen, "factor must be more than 1 and at most 1000, found %g",
                     req->factor);
            return PROFD_EINVAL;
        }
        c.factor = req->factor;
    }
    if (req->score != 0) {
        if (!(req->score > 0.0 && req->score < 1.0)) {
            snprintf(err, errlen, "score must be more than 0 and less than 1, found %g",
                     req->score);
            return PROFD_EINVAL;
        }
        c.score = req->score;
    }
    if (req->consecutive < 0 || req->steps < 0 || req->interval_ms < 0 || req->max_bytes < 0 ||
        req->consecutive > 10000 || req->steps > 10000) {
        snprintf(err, errlen,
                 "consecutive and steps must be 1..10000, interval_ms and "
                 "max_bytes not negative");
        return PROFD_EINVAL;
    }
    c.consecutive = req->consecutive ? req->consecutive : c.consecutive;
    c.steps = req->steps ? req->steps : c.steps;
    c.interval_ms = req->interval_ms ? req->interval_ms : c.interval_ms;
    c.max_bytes = req->max_bytes ? req->max_bytes : c.max_bytes;
    if (req->tool) {
        if (!pp_ident_ok(req->tool)) {
            snprintf(err, errlen, "tool must be an identifier [A-Za-z0-9_-]");
            return PROFD_EINVAL;
        }
        snprintf(c.tool, sizeof(c.tool), "%s", req->tool);
    }
    pd_straggler_arm(n->strag, &c);
    PD_LOG(n->log, PD_LOG_INFO, "trigger",
           "straggler trigger armed: %.2f x the role's median for %lld step(s), %lld step(s) "
           "of %s, at most one window every %lld ms",
           c.factor, (long long)c.consecutive, (long long)c.steps, c.tool,
           (long long)c.interval_ms);
    return 0;
}
