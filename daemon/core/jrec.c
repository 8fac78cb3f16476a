// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Journal records (see jrec.h). Pure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jrec.h"
#include "pu_buf.h"

/* ---- building (borrowing) ---- */

void pd_jrec_window(const pd_window_t *w, pp_state_window_t *s)
{
    pp_record_init(&pp_desc_state_window, s);
    s->id = w->id;
    s->name = (char *)w->name;
    s->job = (char *)w->job;
    s->spec = w->spec;
    s->first = w->first;
    s->last = w->last;
    s->state = w->state;
    s->dir = (char *)w->dir;
    s->root_len = (int64_t)w->root_len;
    s->warnings = w->warnings;
    s->warnings_n = w->nwarnings;
    s->reason = w->reason[0] ? (char *)w->reason : NULL;
    s->bytes = w->bytes;
    s->mirror = w->mirror;
    s->remote_id = w->remote_id;
    s->forwarded = w->forwarded;
    s->trash = w->trash;
    s->origin = w->origin;
    s->pruned = w->pruned[0] ? (char *)w->pruned : NULL;
    s->record = w->record[0] ? (char *)w->record : NULL;
    s->record_bytes = w->record_bytes;
}

int pd_jrec_member(const pd_window_t *w, size_t i, pp_state_member_t *sm)
{
    const pd_member_t *m = &w->members[i];
    pp_record_init(&pp_desc_state_member, sm);
    sm->node = m->node[0] ? (char *)m->node : NULL;
    sm->node_client = m->node_client;
    sm->role = (char *)m->role;
    sm->host = m->host[0] ? (char *)m->host : NULL;
    sm->rank = m->rank;
    sm->replica_rank = m->replica_rank;
    sm->pid = m->pid;
    sm->selector = m->selector;
    sm->state = m->state;
    sm->captures = m->caps;
    sm->captures_n = m->ncaps;
    sm->pid_dir = m->pid_dir;
    sm->selected = m->selected;
    sm->client = m->client;
    sm->uid = m->uid >= 0 ? m->uid : PP_NONE;
    if (m->nroles) {
        if ((sm->roles = calloc(m->nroles, sizeof(*sm->roles))) == NULL) {
            return PROFD_ENOMEM;
        }
        for (size_t r = 0; r < m->nroles; r++) {
            pp_record_init(&pp_desc_role_rank, &sm->roles[r]);
            sm->roles[r].role = (char *)m->roles[r].name;
            sm->roles[r].rank = m->roles[r].rank;
        }
        sm->roles_n = m->nroles;
    }
    size_t ng = 0;
    for (size_t c = 0; m->gathered && c < m->ncaps; c++) {
        ng += m->gathered[c];
    }
    if (ng) {
        if ((sm->gathered = calloc(ng, sizeof(*sm->gathered))) == NULL) {
            free(sm->roles);
            sm->roles = NULL;
            return PROFD_ENOMEM;
        }
        for (size_t c = 0; c < m->ncaps; c++) {
            if (m->gathered[c]) {
                sm->gathered[sm->gathered_n++] = (int64_t)c;
            }
        }
    }
    return 0;
}

void pd_jrec_member_free(pp_state_member_t *m)
{
    free(m->roles);
    free(m->gathered);
    m->roles = NULL;
    m->gathered = NULL;
    m->roles_n = m->gathered_n = 0;
}

int pd_jrec_rank(const pd_rank_t *k, pp_jrank_t *r)
{
    pp_record_init(&pp_desc_jrank, r);
    r->id = k->id;
    r->job = (char *)k->job;
    r->role = (char *)k->role;
    r->rank = k->rank;
    r->local_rank = k->local_rank;
    r->world_size = k->world_size;
    r->replica_rank = k->replica_rank;
    r->host = (char *)k->host;
    r->pid = k->pid;
    r->uid = k->uid >= 0 ? k->uid : PP_NONE;
    r->peer_pid = k->peer_pid >= 0 ? k->peer_pid : PP_NONE;
    r->cn = k->cn[0] ? (char *)k->cn : NULL;
    if (k->nroles) {
        if ((r->roles = calloc(k->nroles, sizeof(*r->roles))) == NULL) {
            return PROFD_ENOMEM;
        }
        for (size_t i = 0; i < k->nroles; i++) {
            pp_record_init(&pp_desc_role_rank, &r->roles[i]);
            r->roles[i].role = (char *)k->roles[i].name;
            r->roles[i].rank = k->roles[i].rank;
        }
        r->roles_n = k->nroles;
    }
    return 0;
}

void pd_jrec_rank_free(pp_jrank_t *r)
{
    free(r->roles);
    r->roles = NULL;
    r->roles_n = 0;
}

void pd_jrec_incoming(const pd_window_t *w, size_t i, pp_state_incoming_t *si)
{
    const pd_incoming_t *in = &w->incoming[i];
    pp_record_init(&pp_desc_state_incoming, si);
    si->path = in->path;
    si->member = (int64_t)in->member;
    si->cap = (int64_t)in->cap;
    si->file = (int64_t)in->file;
    si->size = in->size;
    si->checksum = in->checksum[0] ? (char *)in->checksum : NULL;
    si->done = in->done;
}

/* ---- restoring (moving) ---- */

static int bad(char *err, size_t errlen, const char *what)
{
    if (err && errlen) {
        snprintf(err, errlen, "%s", what);
    }
    return PROFD_EINVAL;
}

/* A compacted window's counts: five, none negative, of a done window. */
static bool captured_ok(const pp_state_window_t *s)
{
    for (size_t i = 0; i < s->captured_n; i++) {
        if (s->captured[i] < 0) {
            return false;
        }
    }
    return s->captured_n == 0 || (s->captured_n == 5 && s->state == PP_WS_DONE);
}

/* What a compacted window keeps of its members: of a compacted one, at
 * least one member, a selector of its request, no more roles than its
 * selectors and members name, names fit for them, [host, node] pairs. */
static bool kept_ok(const pp_state_window_t *s)
{
    const pp_state_kept_t *k = &s->kept;
    if (k->ranks == 0) {
        return k->roles_n == 0 && k->nodes_n == 0 && k->tool == NULL; /* none */
    }
    if (k->ranks < 0 || s->captured_n != 5 || k->selector < -1 ||
        k->selector >= (int64_t)s->spec.selectors_n || k->nodes_n % 2 != 0 ||
        k->roles_n > s->spec.selectors_n + (size_t)k->ranks) {
        return false;
    }
    for (size_t i = 0; i < k->roles_n; i++) {
        if (!pp_ident_ok(k->roles[i])) {
            return false;
        }
    }
    for (size_t i = 0; i < k->nodes_n; i++) {
        if (k->nodes[i][0] != '\0' && !pp_host_ok(k->nodes[i])) {
            return false;
        }
    }
    return true;
}

static bool window_ok(const pp_state_window_t *s)
{
    return s->id > 0 && s->state != PP_WS_NONE && pp_ident_ok(s->job) &&
           strlen(s->name) <= PP_MAX_NAME && strlen(s->dir) < sizeof(((pd_window_t *)0)->dir) &&
           s->root_len >= 1 && (size_t)s->root_len <= strlen(s->dir) && s->incoming_n == 0 &&
           (s->record == NULL || strlen(s->record) < sizeof(((pd_window_t *)0)->record)) &&
           captured_ok(s) && kept_ok(s);
}

/* name, job, spec, steps, state, folder, warnings, reason, bytes; strings
 * moved out of s, w's own freed */
static void window_base(pd_window_t *w, pp_state_window_t *s)
{
    snprintf(w->name, sizeof(w->name), "%s", s->name);
    snprintf(w->job, sizeof(w->job), "%s", s->job);
    pp_record_free(&pp_desc_window_spec, &w->spec);
    w->spec = s->spec; /* moved */
    pp_record_init(&pp_desc_window_spec, &s->spec);
    w->first = s->first;
    w->last = s->last;
    w->state = s->state;
    snprintf(w->dir, sizeof(w->dir), "%s", s->dir);
    w->root_len = (size_t)s->root_len;
    pu_strv_free(w->warnings, w->nwarnings);
    w->warnings = s->warnings; /* moved */
    w->nwarnings = s->warnings_n;
    s->warnings = NULL;
    s->warnings_n = 0;
    snprintf(w->reason, sizeof(w->reason), "%s", s->reason ? s->reason : "");
    w->bytes = s->bytes;
}

/* The window-level fields of s into w (strings moved). */
static void window_fields(pd_window_t *w, pp_state_window_t *s)
{
    window_base(w, s);
    w->mirror = s->mirror;
    w->remote_id = s->remote_id;
    w->forwarded = s->forwarded;
    w->trash = s->trash;
    free(w->origin);
    w->origin = s->origin; /* moved */
    s->origin = NULL;
    snprintf(w->pruned, sizeof(w->pruned), "%s", s->pruned ? s->pruned : "");
    snprintf(w->record, sizeof(w->record), "%s", s->record ? s->record : "");
    w->record_bytes = s->record_bytes > 0 ? s->record_bytes : 0;
    if (s->captured_n == 5) { /* compacted: the load ends compacting it (node/jload.c) */
        memcpy(w->captured, s->captured, sizeof(w->captured));
        w->compact = true;
    }
    if (s->kept.ranks > 0) { /* its members were freed: none follow */
        pp_record_free(&pp_desc_state_kept, &w->kept);
        w->kept = s->kept; /* moved */
        pp_record_init(&pp_desc_state_kept, &s->kept);
        w->slim = true;
    }
}

pd_window_t *pd_jrec_window_restore(pd_registry_t *reg, pp_state_window_t *s, int64_t now_ms,
                                    char *err, size_t errlen)
{
    if (!window_ok(s)) {
        bad(err, errlen, "a window is not valid");
        return NULL;
    }
    pd_window_t *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        bad(err, errlen, "out of memory");
        return NULL;
    }
    pp_record_init(&pp_desc_window_spec, &w->spec);
    w->id = s->id;
    window_fields(w, s);
    w->created_ms = now_ms;
    for (size_t i = 0; i < s->members_n; i++) {
        if (pd_jrec_member_restore(reg, w, i, &s->members[i]) != 0) {
            pd_windows_free_one(w);
            bad(err, errlen, "a window member is not valid");
            return NULL;
        }
    }
    return w;
}

int pd_jrec_window_update(pd_registry_t *reg, pd_window_t *w, pp_state_window_t *s, char *err,
                          size_t errlen)
{
    if (!window_ok(s) || s->id != w->id) {
        return bad(err, errlen, "a window is not valid");
    }
    window_fields(w, s);
    for (size_t i = 0; i < s->members_n; i++) {
        if (pd_jrec_member_restore(reg, w, i, &s->members[i]) != 0) {
            return bad(err, errlen, "a window member is not valid");
        }
    }
    return 0;
}

int pd_jrec_member_restore(pd_registry_t *reg, pd_window_t *w, size_t index, pp_state_member_t *sm)
{
    pd_member_t m;
    if (index > w->nmembers || sm->state == PP_MS_NONE || sm->selector < -1 ||
        sm->selector >= (int64_t)w->spec.selectors_n || !pp_ident_ok(sm->role) ||
        (sm->host && !pp_host_ok(sm->host)) || (sm->node && !pp_host_ok(sm->node)) ||
        sm->roles_n > PP_MAX_ROLES) {
        return PROFD_EINVAL;
    }
    for (size_t i = 0; i < sm->gathered_n; i++) {
        if (sm->gathered[i] < 0 || (size_t)sm->gathered[i] >= sm->captures_n) {
            return PROFD_EINVAL;
        }
    }
    memset(&m, 0, sizeof(m));
    m.client = sm->client;
    m.role = pd_registry_name(reg, sm->role);
    m.host = pd_registry_name(reg, sm->host);
    m.node = pd_registry_name(reg, sm->node);
    if (!m.role || !m.host || !m.node) {
        return PROFD_ENOMEM;
    }
    m.node_client = sm->node_client;
    m.rank = sm->rank;
    m.replica_rank = sm->replica_rank;
    m.pid = sm->pid;
    m.selector = (int)sm->selector;
    m.state = sm->state;
    m.pid_dir = sm->pid_dir;
    m.uid = sm->uid == PP_NONE ? -1 : sm->uid;
    if (sm->roles_n > 1) {
        pd_role_t roles[PP_MAX_ROLES];
        for (size_t r = 0; r < sm->roles_n; r++) {
            if (!pp_ident_ok(sm->roles[r].role) || sm->roles[r].rank < 0) {
                return PROFD_EINVAL;
            }
            snprintf(roles[r].name, sizeof(roles[r].name), "%s", sm->roles[r].role);
            roles[r].rank = sm->roles[r].rank;
        }
        if (pd_windows_member_roles(&m, roles, sm->roles_n, (uint32_t)sm->selected) != 0) {
            return PROFD_ENOMEM;
        }
    }
    if (sm->captures_n && (m.gathered = calloc(sm->captures_n, sizeof(*m.gathered))) == NULL) {
        free(m.roles);
        free(m.selnames);
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < sm->gathered_n; i++) {
        m.gathered[sm->gathered[i]] = true;
    }
    m.caps = sm->captures; /* moved */
    m.ncaps = sm->captures_n;
    sm->captures = NULL;
    sm->captures_n = 0;
    if (index == w->nmembers) {
        if (PU_GROW(w->members, w->capm, w->nmembers + 1) != 0) {
            pp_records_free(&pp_desc_capture, m.caps, m.ncaps);
            free(m.gathered);
            free(m.roles);
            free(m.selnames);
            return PROFD_ENOMEM;
        }
        w->nmembers++;
    } else {
        pd_member_t *old = &w->members[index];
        pp_records_free(&pp_desc_capture, old->caps, old->ncaps);
        free(old->gathered);
        free(old->roles);
        free(old->selnames);
    }
    w->members[index] = m;
    return 0;
}

int pd_jrec_incoming_restore(pd_window_t *w, size_t index, const pp_state_incoming_t *si)
{
    pd_incoming_t *in;
    if (index > w->nincoming || si->member < 0 || (size_t)si->member >= w->nmembers ||
        si->cap < 0 || (size_t)si->cap >= w->members[si->member].ncaps || si->file < 0 ||
        si->size < 0 || (si->checksum && strlen(si->checksum) >= sizeof(in->checksum))) {
        return PROFD_EINVAL;
    }
    if (index < w->nincoming) {
        in = &w->incoming[index];
        if (strcmp(in->path, si->path) != 0) {
            return PROFD_EINVAL; /* a file's path does not change */
        }
        w->pending -= !in->done;
    } else if ((in = pd_windows_add_incoming(w, si->path)) == NULL) {
        return strlen(si->path) > PD_INCOMING_PATH_MAX ? PROFD_EINVAL : PROFD_ENOMEM;
    }
    in->member = (size_t)si->member;
    in->cap = (size_t)si->cap;
    in->file = (size_t)si->file;
    in->size = si->size;
    snprintf(in->checksum, sizeof(in->checksum), "%s", si->checksum ? si->checksum : "");
    in->done = si->done;
    in->have = in->done ? in->size : 0;
    in->jdirty = false;
    w->pending += !in->done;
    /* a file received whole: its checksum is in this record, not in its
     * member's (cluster/remote.c does not write the member again for each
     * file of a capture) */
    pd_member_t *m = in->member < w->nmembers ? &w->members[in->member] : NULL;
    if (in->done && in->checksum[0] && m && in->cap < m->ncaps &&
        in->file < m->caps[in->cap].files_n) {
        pp_file_t *f = &m->caps[in->cap].files[in->file];
        if (f->checksum == NULL || strcmp(f->checksum, in->checksum) != 0) {
            char *c = strdup(in->checksum);
            if (c == NULL) {
                return PROFD_ENOMEM;
            }
            free(f->checksum);
            f->checksum = c;
        }
    }
    return 0;
}

int pd_jrec_rank_restore(pd_registry_t *reg, const pp_jrank_t *r, const char *node, int64_t now_ms)
{
    if (!pp_ident_ok(r->job) || !pp_ident_ok(r->role) || !pp_host_ok(r->host) || r->rank < 0 ||
        r->pid <= 0 || r->roles_n > PP_MAX_ROLES || (r->cn && strlen(r->cn) > PP_MAX_NAME)) {
        return PROFD_EINVAL;
    }
    pd_rank_t *k = calloc(1, sizeof(*k));
    size_t n = r->roles_n ? r->roles_n : 1;
    if (k == NULL || (k->roles = calloc(n, sizeof(*k->roles))) == NULL) {
        free(k);
        return PROFD_ENOMEM;
    }
    k->nroles = n;
    for (size_t i = 0; i < r->roles_n; i++) {
        if (!pp_ident_ok(r->roles[i].role)) {
            free(k->roles);
            free(k);
            return PROFD_EINVAL;
        }
        snprintf(k->roles[i].name, sizeof(k->roles[i].name), "%s", r->roles[i].role);
        k->roles[i].rank = r->roles[i].rank == PP_NONE ? r->rank : r->roles[i].rank;
    }
    if (r->roles_n == 0) {
        snprintf(k->roles[0].name, sizeof(k->roles[0].name), "%s", r->role);
        k->roles[0].rank = r->rank;
    }
    k->id = r->id;
    k->job = pd_registry_name(reg, r->job);
    k->role = pd_registry_name(reg, r->role);
    k->host = pd_registry_name(reg, r->host);
    k->node = pd_registry_name(reg, node);
    k->cn = pd_registry_name(reg, r->cn);
    if (!k->job || !k->role || !k->host || !k->node || !k->cn) {
        free(k->roles);
        free(k);
        return PROFD_ENOMEM;
    }
    k->rank = r->rank;
    k->local_rank = r->local_rank;
    k->world_size = r->world_size;
    k->replica_rank = r->replica_rank;
    k->pid = r->pid;
    k->uid = r->uid == PP_NONE ? -1 : r->uid;
    k->peer_pid = r->peer_pid == PP_NONE ? -1 : r->peer_pid;
    k->state = PD_RANK_ACTIVE;
    k->restored = true;
    k->step = PP_NONE;
    k->gen_acked = -1;
    k->gen_sample = -1;
    k->last_seen_ms = k->registered_ms = now_ms;
    int rv = pd_registry_insert(reg, k);
    if (rv != 0) {
        free(k->roles);
        free(k);
    }
    return rv;
}
