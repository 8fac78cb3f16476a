// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* What the window table shows: a rank's plan, a window's record (see
 * windows.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "windows.h"

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
    if (w->slim) { /* its members are gone, or rebuilt without their selectors */
        return w->kept.tool ? w->kept.tool : pd_plan_tool(&w->spec, -1);
    }
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
    if (w->slim) {
        return w->kept.mode != PP_MODE_NONE ? w->kept.mode : pd_plan_mode(&w->spec, -1);
    }
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
    size_t cap = w->slim ? w->kept.roles_n : w->spec.selectors_n + w->nmembers;
    char **v = cap || w->slim ? calloc(cap ? cap : 1, sizeof(*v)) : NULL;
    *n = 0;
    if (v == NULL) {
        return NULL;
    }
    if (w->slim) { /* as they were when its members were freed */
        for (size_t i = 0; i < cap; i++) {
            v[i] = w->kept.roles[i];
        }
        *n = cap;
        return v;
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
    out->selected = (int64_t)pd_windows_ranks(w);
    for (size_t i = 0; i < w->nmembers; i++) {
        out->reported += w->members[i].state != PP_MS_EXPECTED;
    }
    if (w->slim) { /* done: every member reported or was lost */
        out->reported = out->selected;
    }
    int64_t by[5];
    pd_windows_captured(w, by); /* kept when compacted */
    out->complete = by[PP_CAP_COMPLETE];
    out->failed = by[PP_CAP_FAILED];
    out->missed = by[PP_CAP_MISSED];
    out->truncated = by[PP_CAP_TRUNCATED];
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
