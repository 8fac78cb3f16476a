// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A coordinator's state on disk (see state.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "confine.h"
#include "gather.h"
#include "hook.h"
#include "jrec.h"
#include "pu_buf.h"
#include "state.h"

#define STATE_FILE    ".profd-coordinator.json"
#define SAVE_DELAY_MS 100
#define RETRY_MS      1000
#define SAVE_GAP_MS   50
#define STATE_MAX     (64u << 20)

static bool kept(const pd_window_t *w)
{
    return w->state == PP_WS_PENDING || w->state == PP_WS_ACTIVE || w->state == PP_WS_GATHERING;
}

/* ---- saving ---- */

/* The member records of one unfinished window as the last save encoded
 * them, by member index (members are only ever appended). */
struct pd_state_wcache {
    int64_t id;
    char **text;
    size_t *len;
    size_t n;
    bool seen; /* by this save: entries of windows no longer kept go */
    pd_state_wcache_t *next;
};

static void wcache_free(pd_state_wcache_t *c)
{
    pu_strv_free(c->text, c->n);
    free(c->len);
    free(c);
}

/* The cache of window w, grown to its members; NULL without memory. */
static pd_state_wcache_t *wcache_get(pd_state_t *s, const pd_window_t *w)
{
    pd_state_wcache_t *c = s->cache;
    while (c && c->id != w->id) {
        c = c->next;
    }
    if (c == NULL) {
        if ((c = calloc(1, sizeof(*c))) == NULL) {
            return NULL;
        }
        c->id = w->id;
        c->next = s->cache;
        s->cache = c;
    }
    if (c->n < w->nmembers) {
        char **t = realloc(c->text, w->nmembers * sizeof(*t));
        if (t == NULL) {
            return NULL;
        }
        c->text = t;
        size_t *l = realloc(c->len, w->nmembers * sizeof(*l));
        if (l == NULL) {
            return NULL;
        }
        c->len = l;
        for (size_t i = c->n; i < w->nmembers; i++) {
            c->text[i] = NULL;
            c->len[i] = 0;
        }
        c->n = w->nmembers;
    }
    c->seen = true;
    return c;
}

/* After a save: the entries of windows it did not keep go. */
static void wcache_sweep(pd_state_t *s)
{
    for (pd_state_wcache_t **p = &s->cache; *p;) {
        pd_state_wcache_t *c = *p;
        if (!c->seen) {
            *p = c->next;
            wcache_free(c);
        } else {
            c->seen = false;
            p = &c->next;
        }
    }
}

/* One member's record as the state file keeps it (the journal's, from
 * core/jrec.c), encoded. */
static int encode_member(const pd_window_t *w, size_t i, char **out, size_t *len)
{
    pp_state_member_t sm;
    int rv = pd_jrec_member(w, i, &sm);
    if (rv == 0) {
        rv = pp_record_encode(&pp_desc_state_member, &sm, false, out, len);
    }
    pd_jrec_member_free(&sm);
    return rv;
}

/* A save in progress: the kept windows, in the order of the records. */
typedef struct enc_ctx {
    pd_state_t *s;
    pd_window_t **wins;
    pd_state_wcache_t **caches;
    const pp_state_window_t *recs;
    size_t n;
    bool fresh; /* every member encoded again, the cache neither read nor kept */
    char *tmp;  /* fresh: the last member's text */
} enc_ctx_t;

/* The codec's hook: a member's text from the cache, encoded again when
 * the member changed since. */
static int member_text(void *arg, const pp_field_t *f, const void *rec, size_t i, const char **text,
                       size_t *len)
{
    enc_ctx_t *x = arg;
    if (f->sub != &pp_desc_state_member) {
        return 0;
    }
    size_t k = (size_t)((const pp_state_window_t *)rec - x->recs);
    pd_window_t *w = k < x->n ? x->wins[k] : NULL;
    if (w && i < w->nmembers && x->fresh) {
        free(x->tmp);
        x->tmp = NULL;
        if (encode_member(w, i, &x->tmp, len) != 0) {
            return -1;
        }
        *text = x->tmp;
        return 1;
    }
    pd_state_wcache_t *c = w ? x->caches[k] : NULL;
    if (c == NULL || i >= c->n || i >= w->nmembers) {
        return -1;
    }
    pd_member_t *m = &w->members[i];
    if (c->text[i] == NULL || m->sdirty) {
        char *t;
        size_t tl;
        if (encode_member(w, i, &t, &tl) != 0) {
            return -1;
        }
        free(c->text[i]);
        c->text[i] = t;
        c->len[i] = tl;
        m->sdirty = false;
        x->s->n->stats.state_encoded++;
    } else {
        x->s->n->stats.state_cached++;
    }
    *text = c->text[i];
    *len = c->len[i];
    return 1;
}

/* One window's record but its members, which the hook gives (strings and
 * captures borrowed from the window; the incoming array is the caller's
 * to free). */
static int encode_window(pd_node_t *n, const pd_window_t *w, pp_state_window_t *s)
{
    pd_jrec_window(w, s);
    pd_hook_record(n->hook, w->id, s);
    s->members = NULL;
    s->members_n = w->nmembers;
    s->incoming = w->nincoming ? calloc(w->nincoming, sizeof(*s->incoming)) : NULL;
    if (w->nincoming && s->incoming == NULL) {
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < w->nincoming; i++) {
        const pd_incoming_t *in = &w->incoming[i];
        pp_state_incoming_t *si = &s->incoming[i];
        pp_record_init(&pp_desc_state_incoming, si);
        si->path = (char *)in->path;
        si->member = (int64_t)in->member;
        si->cap = (int64_t)in->cap;
        si->file = (int64_t)in->file;
        si->size = in->size;
        si->checksum = in->checksum[0] ? (char *)in->checksum : NULL;
        si->done = in->done;
    }
    s->incoming_n = w->nincoming;
    return 0;
}

/* The state as JSON: the nodes, and every unfinished window with its
 * members (those unchanged since the last save from the cache, unless
 * fresh). */
static int encode_with(pd_state_t *s0, bool fresh, char **out, size_t *len)
{
    pp_state_t st;
    size_t n = 0, k = 0, nn = 0;
    pd_windows_t *ws = s0->n->win;
    const char *name, *inst;
    pp_record_init(&pp_desc_state, &st);
    for (pd_window_t *w = ws->head; w; w = w->next) {
        n += kept(w);
    }
    while (pd_coord_node_at(s0->coord, nn, &name, &inst)) {
        nn++;
    }
    enc_ctx_t x = {.s = s0, .n = n, .fresh = fresh};
    st.version = 1;
    st.instance = s0->instance;
    st.next_id = ws->next_id;
    st.windows = n ? calloc(n, sizeof(*st.windows)) : NULL;
    st.nodes = nn ? calloc(nn, sizeof(*st.nodes)) : NULL;
    x.wins = n ? calloc(n, sizeof(*x.wins)) : NULL;
    x.caches = n ? calloc(n, sizeof(*x.caches)) : NULL;
    x.recs = st.windows;
    int rv = (n && (st.windows == NULL || x.wins == NULL || x.caches == NULL)) ||
                     (nn && st.nodes == NULL)
                 ? PROFD_ENOMEM
                 : 0;
    for (size_t i = 0; rv == 0 && i < nn && pd_coord_node_at(s0->coord, i, &name, &inst); i++) {
        st.nodes[i].name = (char *)name;
        st.nodes[i].instance = (char *)inst;
        st.nodes_n = i + 1;
    }
    for (pd_window_t *w = ws->head; w && rv == 0; w = w->next) {
        if (kept(w)) {
            x.wins[k] = w;
            if (!fresh && (x.caches[k] = wcache_get(s0, w)) == NULL) {
                rv = PROFD_ENOMEM;
            }
            rv = rv ? rv : encode_window(s0->n, w, &st.windows[k]);
            k++;
        }
    }
    st.windows_n = k;
    if (rv == 0) {
        pp_elem_hook_t hook = {.elem = member_text, .arg = &x};
        rv = pp_record_encode_hooked(&pp_desc_state, &st, &hook, out, len);
    }
    if (rv == 0 && !fresh) {
        wcache_sweep(s0);
    }
    for (size_t i = 0; i < k; i++) {
        free(st.windows[i].incoming);
    }
    free(st.windows);
    free(st.nodes);
    free(x.wins);
    free(x.caches);
    free(x.tmp);
    return rv;
}

static void cache_drop(pd_state_t *s)
{
    while (s->cache) {
        pd_state_wcache_t *c = s->cache;
        s->cache = c->next;
        wcache_free(c);
    }
}

/* The state as JSON, for a save. Debug builds (the tests) encode it afresh
 * as well and compare: a member changed without being marked
 * (pd_windows_touch, pd_member_mark) is a bug, logged as one, and the
 * fresh text is saved. */
static int encode(pd_state_t *s0, char **out, size_t *len)
{
    int rv = encode_with(s0, false, out, len);
#ifndef NDEBUG
    char *f = NULL;
    size_t fl = 0;
    if (rv == 0 && encode_with(s0, true, &f, &fl) == 0) {
        if (fl != *len || memcmp(f, *out, fl) != 0) {
            size_t at = 0;
            while (at < fl && at < *len && f[at] == (*out)[at]) {
                at++;
            }
            PD_LOG(s0->n->log, PD_LOG_ERROR, "state",
                   "BUG: a member changed without being marked: the cached state differs from "
                   "a fresh encoding at byte %zu (%.80s)",
                   at, f + (at > 40 ? at - 40 : 0));
            free(*out);
            *out = f;
            *len = fl;
            f = NULL;
            cache_drop(s0);
        }
    }
    free(f);
#endif
    return rv;
}

/* ---- replies held until a save ---- */

struct pd_state_held {
    pd_req_t *req;
    char *buf;
    size_t len;
    pd_state_held_t *next;
};

static void release_held(pd_state_t *s, bool send)
{
    while (s->held) {
        pd_state_held_t *h = s->held;
        s->held = h->next;
        if (send) {
            pd_req_reply(h->req, h->buf, h->len);
        } /* else the endpoint frees its parked requests as it closes */
        free(h->buf);
        free(h);
    }
    s->held_tail = &s->held;
    s->nheld = 0;
}

/* ---- saving ---- */

static void sync_work(uv_work_t *w)
{
    pd_state_t *s = w->data;
    char path[PD_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", s->n->save_path, STATE_FILE);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fdatasync(fd);
        close(fd);
    }
    if ((fd = open(s->n->save_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
        (void)fsync(fd); /* the rename */
        close(fd);
    }
}

static void sync_after(uv_work_t *w, int status)
{
    pd_state_t *s = w->data;
    (void)status;
    s->syncing = false;
    if (s->sync_again) {
        s->sync_again = false;
        s->syncing = uv_queue_work(&s->n->loop->uv, &s->sync, sync_work, sync_after) == 0;
    }
}

/* Write the state now, on the loop thread, into the page cache (a killed
 * daemon does not lose it); the file's fsync follows on the thread pool. A
 * save costs one encoding of the unfinished windows: saves coalesce, at most
 * one a loop iteration for held replies, else one per SAVE_DELAY_MS. */
static int save_now(pd_state_t *s)
{
    int64_t t0 = pd_now_us();
    pd_write_job_t *j = (pd_write_job_t *)pd_job_new(PD_JOB_WRITE);
    bool was_dirty = s->dirty;
    s->dirty = false;
    if (j == NULL || encode(s, &j->data, &j->len) != 0) {
        PD_LOG(s->n->log, PD_LOG_ERROR, "state", "cannot encode the coordinator state");
        pd_job_free(PD_JOB(j));
        s->dirty = was_dirty;
        return PROFD_ENOMEM;
    }
    j->no_sync = true;
    snprintf(j->root, sizeof(j->root), "%s", s->n->save_path);
    snprintf(j->dst, sizeof(j->dst), "%s", STATE_FILE);
    pd_write_run(j);
    int rv = j->rv;
    if (rv != 0) {
        s->dirty = true;
        if (!s->errlogged) { /* once a streak: retried every RETRY_MS */
            PD_LOG(s->n->log, PD_LOG_ERROR, "state",
                   "cannot save the coordinator state: %s (%zu repl%s held until it can)",
                   j->reason, s->nheld, s->nheld == 1 ? "y" : "ies");
        }
        s->errlogged = true;
    } else {
        if (s->errlogged) {
            PD_LOG(s->n->log, PD_LOG_INFO, "state", "the coordinator state is saved again");
        }
        s->errlogged = false;
        s->saves++;
        s->saved_us = pd_now_us();
        s->save_cost_us = s->saved_us - t0;
        s->n->stats.state_saves++;
        s->n->stats.state_save_us += s->save_cost_us;
        if (s->syncing) {
            s->sync_again = true;
        } else {
            s->sync.data = s;
            s->syncing = uv_queue_work(&s->n->loop->uv, &s->sync, sync_work, sync_after) == 0;
        }
    }
    pd_job_free(PD_JOB(j));
    return rv;
}

static void on_timer(uv_timer_t *t);

/* Save, then send the replies that waited for it; on failure try again
 * in RETRY_MS, the replies still held. */
static void flush(pd_state_t *s)
{
    if (!s->dirty && s->held == NULL) {
        return;
    }
    if (save_now(s) != 0) {
        s->retrying = true;
        uv_timer_start(&s->timer, on_timer, RETRY_MS, 0);
        return;
    }
    s->retrying = false;
    release_held(s, true);
}

static void on_timer(uv_timer_t *t)
{
    flush(t->data);
}

static void on_idle(uv_idle_t *h)
{
    uv_idle_stop(h);
    flush(h->data);
}

void pd_state_init(pd_state_t *s, pd_node_t *n, pd_coord_t *coord, char *instance,
                   size_t instance_len)
{
    memset(s, 0, sizeof(*s));
    s->n = n;
    s->coord = coord;
    s->instance = instance;
    s->instance_len = instance_len;
    s->held_tail = &s->held;
}

void pd_state_start(pd_state_t *s)
{
    uv_timer_init(&s->n->loop->uv, &s->timer);
    s->timer.data = s;
    uv_idle_init(&s->n->loop->uv, &s->idle);
    s->idle.data = s;
    s->timer_ready = true;
}

/* How long the next save waits after the last: at least SAVE_GAP_MS, and
 * 3 times the last save's cost, so that saving takes at most a quarter of
 * the loop's time however large the state. */
static int64_t save_wait_ms(const pd_state_t *s)
{
    int64_t gap_us =
        3 * s->save_cost_us > SAVE_GAP_MS * 1000 ? 3 * s->save_cost_us : SAVE_GAP_MS * 1000;
    return (s->saved_us + gap_us - pd_now_us()) / 1000;
}

void pd_state_changed(pd_state_t *s)
{
    if (s->n->stopping || !s->timer_ready) {
        return;
    }
    s->dirty = true;
    if (!uv_is_active((uv_handle_t *)&s->timer)) {
        int64_t wait_ms = save_wait_ms(s);
        uv_timer_start(&s->timer, on_timer,
                       wait_ms > SAVE_DELAY_MS ? (uint64_t)wait_ms : SAVE_DELAY_MS, 0);
    }
}

void pd_state_reply_saved(pd_state_t *s, pd_req_t *req, char *buf, size_t len)
{
    pd_state_held_t *h = NULL;
    if (!s->timer_ready || (!s->dirty && s->held == NULL)) {
        pd_req_reply(req, buf, len); /* the file holds everything already */
        free(buf);
        return;
    }
    if ((h = calloc(1, sizeof(*h))) == NULL || !pd_req_park(req)) {
        /* no memory, or the endpoint's pool is at its bound: save here */
        free(h);
        if (save_now(s) == 0) {
            release_held(s, true);
            pd_req_reply(req, buf, len);
        } else {
            pd_req_reply_error(req, PROFD_EIO, "the coordinator cannot save its state");
        }
        free(buf);
        return;
    }
    h->req = req;
    h->buf = buf;
    h->len = len;
    *s->held_tail = h;
    s->held_tail = &h->next;
    s->nheld++;
    if (s->retrying) {
        return; /* the retry sends them */
    }
    /* saved once this loop iteration's requests are in, unless the last
     * save is recent (save_wait_ms): a stream of replies shares few saves */
    int64_t wait_ms = save_wait_ms(s);
    if (wait_ms <= 0) {
        uv_idle_start(&s->idle, on_idle);
    } else if (!uv_is_active((uv_handle_t *)&s->timer) ||
               uv_timer_get_due_in(&s->timer) > (uint64_t)wait_ms) {
        uv_timer_start(&s->timer, on_timer, (uint64_t)wait_ms, 0);
    }
}

void pd_state_stop(pd_state_t *s)
{
    if (!s->timer_ready) {
        return;
    }
    /* before the endpoints close: what can be saved is; the held replies
     * are not sent (a reply still in nng's queue as the socket closes was
     * seen leaked by nng 1.5.2): their nodes ask again after the restart,
     * and a result or file already held is acknowledged then */
    if (s->held || s->dirty) {
        (void)save_now(s);
    }
    release_held(s, false);
    uv_timer_stop(&s->timer);
    uv_close((uv_handle_t *)&s->timer, NULL);
    uv_idle_stop(&s->idle);
    uv_close((uv_handle_t *)&s->idle, NULL);
    s->timer_ready = false;
}

void pd_state_fini(pd_state_t *s)
{
    pd_write_job_t *j = (pd_write_job_t *)pd_job_new(PD_JOB_WRITE);
    if (j && encode(s, &j->data, &j->len) == 0) {
        snprintf(j->root, sizeof(j->root), "%s", s->n->save_path);
        snprintf(j->dst, sizeof(j->dst), "%s", STATE_FILE);
        pd_write_run(j);
        if (j->rv != 0) {
            PD_LOG(s->n->log, PD_LOG_ERROR, "state", "cannot save the coordinator state: %s",
                   j->reason);
        }
    }
    pd_job_free(PD_JOB(j));
    cache_drop(s);
}

/* ---- loading ---- */

static int64_t part_size(const pd_window_t *w, const char *path)
{
    char root[PD_PATH_MAX], rel[PD_PATH_MAX + 700], why[128];
    int rfd = -1, fd = -1;
    struct stat st;
    int64_t size = 0;
    snprintf(root, sizeof(root), "%.*s", (int)w->root_len, w->dir);
    snprintf(rel, sizeof(rel), "%s/%s/%s.part", w->job, w->name, path);
    if (pd_confine_root(root, &rfd, why, sizeof(why)) == 0 &&
        pd_confine_open_file(rfd, rel, &fd, &st, why, sizeof(why)) == 0) {
        size = (int64_t)st.st_size;
    }
    if (fd >= 0) {
        close(fd);
    }
    if (rfd >= 0) {
        close(rfd);
    }
    return size;
}

static int bad(char *err, size_t errlen, const char *file, const char *what)
{
    snprintf(err, errlen, "coordinator state %s: %s (move the file away to start afresh)", file,
             what);
    return PROFD_ECONFIG;
}

/* The members of a window from the file (their captures moved). false
 * when one is not valid. */
static bool load_members(pd_window_t *w, pp_state_window_t *s)
{
    for (size_t i = 0; i < s->members_n; i++) {
        pp_state_member_t *sm = &s->members[i];
        pd_member_t *m = &w->members[w->nmembers++];
        if (sm->state == PP_MS_NONE || sm->selector < -1 ||
            sm->selector >= (int64_t)w->spec.selectors_n || !pp_ident_ok(sm->role) ||
            (sm->host && !pp_host_ok(sm->host)) || (sm->node && !pp_host_ok(sm->node))) {
            return false;
        }
        m->client = 0; /* bound again when its rank registers */
        snprintf(m->role, sizeof(m->role), "%s", sm->role);
        snprintf(m->host, sizeof(m->host), "%s", sm->host ? sm->host : "");
        snprintf(m->node, sizeof(m->node), "%s", sm->node ? sm->node : "");
        m->node_client = sm->node_client;
        m->rank = sm->rank;
        m->replica_rank = sm->replica_rank;
        m->pid = sm->pid;
        m->selector = (int)sm->selector;
        m->state = sm->state;
        m->caps = sm->captures; /* moved */
        m->ncaps = sm->captures_n;
        sm->captures = NULL;
        sm->captures_n = 0;
        m->pid_dir = sm->pid_dir;
        if (sm->roles_n > 1) {
            pd_role_t roles[PP_MAX_ROLES];
            if (sm->roles_n > PP_MAX_ROLES) {
                return false;
            }
            for (size_t r = 0; r < sm->roles_n; r++) {
                if (!pp_ident_ok(sm->roles[r].role) || sm->roles[r].rank < 0) {
                    return false;
                }
                snprintf(roles[r].name, sizeof(roles[r].name), "%s", sm->roles[r].role);
                roles[r].rank = sm->roles[r].rank;
            }
            if (pd_windows_member_roles(m, roles, sm->roles_n, (uint32_t)sm->selected) != 0) {
                return false;
            }
        }
    }
    return true;
}

/* The files of a window still arriving; each resumes from its .part.
 * false when one is not valid. */
static bool load_incoming(pd_window_t *w, const pp_state_window_t *s)
{
    for (size_t i = 0; i < s->incoming_n; i++) {
        const pp_state_incoming_t *si = &s->incoming[i];
        pd_incoming_t *in;
        if (si->member < 0 || (size_t)si->member >= w->nmembers || si->cap < 0 ||
            (size_t)si->cap >= w->members[si->member].ncaps || !pd_confine_rel_ok(si->path) ||
            (in = pd_windows_add_incoming(w, si->path)) == NULL) {
            return false;
        }
        in->member = (size_t)si->member;
        in->cap = (size_t)si->cap;
        in->file = (size_t)si->file;
        in->size = si->size;
        snprintf(in->checksum, sizeof(in->checksum), "%s", si->checksum ? si->checksum : "");
        in->done = si->done;
        in->have = in->done ? in->size : part_size(w, in->path);
        w->pending += !in->done;
    }
    return true;
}

/* One window from the file; members are bound again as their ranks return. */
static int load_window(pd_state_t *st0, pp_state_window_t *s, const char *file, char *err,
                       size_t errlen)
{
    if (s->state == PP_WS_NONE || !pp_ident_ok(s->job) || strlen(s->name) > PP_MAX_NAME ||
        strlen(s->dir) >= sizeof(((pd_window_t *)0)->dir) || s->root_len < 1 ||
        (size_t)s->root_len > strlen(s->dir)) {
        return bad(err, errlen, file, "a window is not valid");
    }
    if (!pd_confine_window_dir(s->dir, (size_t)s->root_len, s->job, s->name)) {
        return bad(err, errlen, file, "a window's folder is not <save_path>/<job>/<window>");
    }
    pd_window_t *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        return PROFD_ENOMEM;
    }
    w->id = s->id;
    pd_jrec_window_base(w, s);
    w->created_ms = pd_now_ms();
    w->capm = s->members_n;
    w->capincoming = s->incoming_n;
    if ((s->members_n && (w->members = calloc(s->members_n, sizeof(*w->members))) == NULL) ||
        (s->incoming_n && (w->incoming = calloc(s->incoming_n, sizeof(*w->incoming))) == NULL)) {
        pd_windows_free_one(w);
        return PROFD_ENOMEM;
    }
    const char *invalid = !load_members(w, s)    ? "a window member is not valid"
                          : !load_incoming(w, s) ? "an incoming file is not valid"
                                                 : NULL;
    if (invalid) {
        pd_windows_free_one(w);
        return bad(err, errlen, file, invalid);
    }
    pd_windows_append(st0->n->win, w);
    if (w->id > st0->n->win->next_id) {
        st0->n->win->next_id = w->id;
    }
    return 0;
}

int pd_state_load(pd_state_t *s0, char *err, size_t errlen)
{
    char path[PD_PATH_MAX + 64], e[256];
    pp_state_t st;
    snprintf(path, sizeof(path), "%s/%s", s0->n->save_path, STATE_FILE);
    struct stat fst;
    int fd, orv = pd_confine_own_file("coordinator state", path, STATE_MAX, &fd, &fst, err, errlen);
    if (orv != 0) {
        return orv == PROFD_ENOENT ? 0 : orv;
    }
    FILE *f = fdopen(fd, "r");
    if (f == NULL) {
        close(fd);
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return PROFD_EIO;
    }
    char *buf = malloc(STATE_MAX);
    size_t len = buf ? fread(buf, 1, STATE_MAX, f) : 0;
    fclose(f);
    if (buf == NULL) {
        return PROFD_ENOMEM;
    }
    int rv = pp_record_decode(&pp_desc_state, buf, len, &st, e, sizeof(e));
    free(buf);
    if (rv != 0) {
        return bad(err, errlen, path, e);
    }
    if (st.version != 1 || strlen(st.instance) >= s0->instance_len || st.instance[0] == '\0') {
        pp_record_free(&pp_desc_state, &st);
        return bad(err, errlen, path, "unknown version or instance");
    }
    snprintf(s0->instance, s0->instance_len, "%s", st.instance);
    s0->n->win->next_id = st.next_id;
    for (size_t i = 0; i < st.nodes_n && rv == 0; i++) {
        if (!pp_host_ok(st.nodes[i].name) || strlen(st.nodes[i].instance) >= 64) {
            rv = bad(err, errlen, path, "a node is not valid");
        } else {
            rv = pd_coord_await(s0->coord, st.nodes[i].name, st.nodes[i].instance, pd_now_ms());
        }
    }
    for (size_t i = 0; i < st.windows_n && rv == 0; i++) {
        rv = load_window(s0, &st.windows[i], path, err, errlen);
    }
    size_t st_nodes = st.nodes_n;
    pp_record_free(&pp_desc_state, &st);
    if (rv != 0) {
        return rv;
    }
    PD_LOG(s0->n->log, PD_LOG_INFO, "state",
           "%s: instance %s, %zu unfinished window(s), %zu node(s) awaited", path, s0->instance,
           s0->n->win->count, st_nodes);
    return 0;
}
