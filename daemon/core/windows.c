// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The window table: windows made, stopped and forgotten (see windows.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pu_buf.h"
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
    pp_records_free(&pp_desc_capture, m->caps, m->ncaps);
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

void pd_windows_drop_members(pd_window_t *w)
{
    pd_uix_free(&w->mix);
    pd_uix_free(&w->hix);
    for (size_t i = 0; i < w->nmembers; i++) {
        member_free(&w->members[i]);
    }
    free(w->members);
    w->members = NULL;
    w->nmembers = w->capm = 0;
    free(w->jmembers);
    w->jmembers = NULL;
    w->njmembers = w->capjmembers = 0;
}

void pd_windows_free_one(pd_window_t *w)
{
    for (size_t i = 0; i < w->nincoming; i++) {
        free(w->incoming[i].path);
        free(w->incoming[i].hash);
    }
    free(w->incoming);
    pd_uix_free(&w->inix);
    pd_windows_drop_members(w);
    pp_record_free(&pp_desc_state_kept, &w->kept);
    free(w->jincoming);
    pu_strv_free(w->warnings, w->nwarnings);
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

bool pd_windows_finished(const pd_window_t *w)
{
    return w->state == PP_WS_DONE || w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED;
}

size_t pd_windows_live(const pd_windows_t *ws)
{
    size_t n = 0;
    for (pd_window_t *w = ws->head; w; w = w->next) {
        n += !pd_windows_finished(w);
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
    w->jdirty = w->jdirty || m == NULL;
    if (m) {
        pd_member_mark(w, m);
    }
    pd_windows_dirty(ws);
}

void pd_member_mark(pd_window_t *w, pd_member_t *m)
{
    if (m->jdirty) {
        return; /* listed already */
    }
    m->jdirty = true;
    if (PU_GROW(w->jmembers, w->capjmembers, w->njmembers + 1) != 0) {
        w->jscan = true;
        return;
    }
    w->jmembers[w->njmembers++] = (size_t)(m - w->members);
}

void pd_incoming_mark(pd_window_t *w, pd_incoming_t *in)
{
    if (in->jdirty) {
        return;
    }
    in->jdirty = true;
    if (PU_GROW(w->jincoming, w->capjincoming, w->njincoming + 1) != 0) {
        w->jscan = true;
        return;
    }
    w->jincoming[w->njincoming++] = (size_t)(in - w->incoming);
}

void pd_windows_marks_clear(pd_window_t *w)
{
    w->jdirty = false;
    for (size_t i = 0; i < w->nmembers; i++) {
        w->members[i].jdirty = false;
    }
    for (size_t i = 0; i < w->nincoming; i++) {
        w->incoming[i].jdirty = false;
    }
    w->njmembers = w->njincoming = 0;
    w->jscan = false;
}

static int add_warning(pd_window_t *w, const char *text)
{
    return pd_strv_add(&w->warnings, &w->nwarnings, text) == 0 ? 0 : PROFD_ENOMEM;
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
        if (pd_strv_add(&out->warnings, &out->n_warnings, buf) != 0) {
            snprintf(err, errlen, "out of memory");
            return PROFD_ENOMEM;
        }
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

/* Can the table forget w? A finished window with nothing pending and no
 * hook running; in the first pass only a pruned one. */
static bool droppable(const pd_window_t *w, bool pruned_only)
{
    return pd_windows_finished(w) && w->pending == 0 && !w->held &&
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
