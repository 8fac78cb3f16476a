// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Mirror windows on a node daemon (see mirror.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "mirror.h"

static bool same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static bool same_phases(const pp_selector_t *s, const pp_plan_entry_t *e)
{
    if (s->phases_n != e->phases_n) {
        return false;
    }
    for (size_t i = 0; i < s->phases_n; i++) {
        if (strcmp(s->phases[i], e->phases[i]) != 0) {
            return false;
        }
    }
    return true;
}

/* The selector carrying this entry's settings (added when new). */
static int selector_for(pd_window_t *w, const pp_plan_entry_t *e)
{
    pp_window_spec_t *spec = &w->spec;
    for (size_t i = 0; i < spec->selectors_n; i++) {
        const pp_selector_t *s = &spec->selectors[i];
        if (same(s->tool, e->tool) && s->mode == e->mode && same(s->settings, e->settings) &&
            memcmp(&s->schedule, &e->schedule, sizeof(s->schedule)) == 0 && same_phases(s, e)) {
            return (int)i;
        }
    }
    pp_selector_t *v = realloc(spec->selectors, (spec->selectors_n + 1) * sizeof(*v));
    if (v == NULL) {
        return -1;
    }
    spec->selectors = v;
    pp_selector_t *s = &v[spec->selectors_n];
    pp_record_init(&pp_desc_selector, s);
    s->tool = e->tool ? strdup(e->tool) : NULL;
    s->mode = e->mode;
    s->settings = e->settings ? strdup(e->settings) : NULL;
    s->schedule = e->schedule;
    if (e->phases_n && (s->phases = calloc(e->phases_n, sizeof(char *))) != NULL) {
        for (size_t i = 0; i < e->phases_n; i++) {
            s->phases[i] = strdup(e->phases[i]);
        }
        s->phases_n = e->phases_n;
    }
    return (int)spec->selectors_n++;
}

static pd_window_t *mirror_new(pd_node_t *n, const pp_plan_entry_t *e)
{
    pd_window_t *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        return NULL;
    }
    pp_record_init(&pp_desc_window_spec, &w->spec);
    w->spec.source = strdup("coordinator");
    /* a local id: the coordinator's ids start again when it restarts */
    w->id = ++n->win->next_id;
    w->remote_id = e->window;
    snprintf(w->name, sizeof(w->name), "%s", e->name);
    snprintf(w->job, sizeof(w->job), "%s", e->job);
    w->first = e->first_step;
    w->last = e->last_step;
    w->state = PP_WS_PENDING;
    w->mirror = true;
    w->created_ms = pd_now_ms();
    snprintf(w->dir, sizeof(w->dir), "%.800s/%s/%s", n->save_path, w->job, w->name);
    w->root_len = strnlen(n->save_path, 800);
    w->jdirty = true;
    pd_windows_append(n->win, w);
    PD_LOG(n->log, PD_LOG_INFO, "mirror", "window %s from the coordinator", w->name);
    return w;
}

static pd_window_t *mirror_find(pd_node_t *n, int64_t remote_id)
{
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        if (w->mirror && w->remote_id == remote_id) {
            return w;
        }
    }
    return NULL;
}

void pd_mirror_reset(pd_node_t *n)
{
    bool changed = false;
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        if (!w->mirror) {
            continue;
        }
        if (pd_windows_running(w)) {
            pd_windows_cancel(n->win, w, pd_now_ms(), "the coordinator restarted");
            changed = true;
        }
        w->remote_id = -1;
        pd_windows_touch(n->win, w, NULL);
    }
    if (changed) {
        pd_windows_changed(n->win);
    }
}

/* Member m joined window w after the node finished it: one missed capture. */
static bool missed_late(pd_window_t *w, pd_member_t *m, const pp_plan_entry_t *e)
{
    pp_capture_t *c = calloc(1, sizeof(*c));
    char why[PP_MAX_NAME + 96];
    if (c == NULL) {
        return false;
    }
    pp_record_init(&pp_desc_capture, c);
    snprintf(why, sizeof(why), "joined window %s after its node had finished it", w->name);
    c->role = strdup(e->mode == PP_MODE_DISCRETE ? m->role : "e2e");
    c->status = PP_CAP_MISSED;
    c->reason = strdup(why);
    c->first_step = w->first;
    m->caps = c;
    m->ncaps = 1;
    m->state = PP_MS_REPORTED;
    return c->role != NULL && c->reason != NULL;
}

void pd_mirror_apply(pd_node_t *n, const pp_node_plan_t *plan,
                     void (*late)(void *arg, pd_window_t *w, pd_member_t *m), void *arg)
{
    bool changed = false;
    for (size_t i = 0; i < plan->entries_n; i++) {
        const pp_node_entry_t *ne = &plan->entries[i];
        const pp_plan_entry_t *e = &ne->entry;
        pd_window_t *w = mirror_find(n, e->window);
        if (w == NULL) {
            if (!pp_ident_ok(e->job) || strlen(e->name) > PP_MAX_NAME ||
                (w = mirror_new(n, e)) == NULL) {
                continue;
            }
            changed = true;
        }
        bool done = !pd_windows_running(w);
        if (done && (w->state == PP_WS_CANCELLED || late == NULL)) {
            continue;
        }
        int sel = selector_for(w, e);
        if (!done && w->last != e->last_step) {
            w->last = e->last_step; /* stopped by the coordinator */
            pd_windows_touch(n->win, w, NULL);
            changed = true;
        }
        for (size_t c = 0; sel >= 0 && c < ne->clients_n; c++) {
            pd_rank_t *k = pd_registry_get(n->reg, ne->clients[c]);
            pd_member_t *m;
            if (k == NULL || pd_windows_member(w, k->id) != NULL) {
                continue;
            }
            /* the coordinator chose its roles and whether its folders carry
             * its pid */
            uint32_t roles = 0;
            for (size_t r = 0; r < e->roles_n; r++) {
                int ri = pd_registry_role(k, e->roles[r]);
                roles |= ri >= 0 && ri < 32 ? (uint32_t)1 << ri : 0;
            }
            if ((m = pd_windows_add_member(w, k, sel, roles)) != NULL) {
                m->pid_dir = e->pid_dir;
                pd_windows_touch(n->win, w, NULL); /* its selectors too */
                changed = true;
                if (done && missed_late(w, m, e)) {
                    PD_LOG(n->log, PD_LOG_INFO, "mirror",
                           "rank %lld joins window %s after it ended here: missed",
                           (long long)k->rank, w->name);
                    if (w->forwarded) {
                        late(arg, w, m); /* else it goes with the window's results */
                    }
                }
            }
        }
    }
    /* live mirrors the coordinator no longer lists: cancelled there */
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        if (!w->mirror || !pd_windows_running(w)) {
            continue;
        }
        bool listed = false;
        for (size_t i = 0; i < plan->entries_n && !listed; i++) {
            listed = plan->entries[i].entry.window == w->remote_id;
        }
        if (!listed) {
            pd_windows_cancel(n->win, w, pd_now_ms(), "cancelled by the coordinator");
            changed = true;
        }
    }
    if (changed) {
        pd_windows_changed(n->win);
    }
}
