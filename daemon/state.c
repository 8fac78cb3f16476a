/* A coordinator's state on disk (see state.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine.h"
#include "coord.h"
#include "daemon.h"
#include "gather.h"
#include "state.h"

#define STATE_FILE    ".profd-coordinator.json"
#define SAVE_DELAY_MS 100
#define STATE_MAX     (64u << 20)

static const char *const wstates[] = {"pending", "active", "gathering", "done", "cancelled"};
static const char *const mstates[] = {"expected", "reported", "lost"};

static bool kept(const pd_window_t *w)
{
    return w->state == PD_W_PENDING || w->state == PD_W_ACTIVE || w->state == PD_W_GATHERING;
}

static int index_of(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++) {
        if (strcmp(names[i], s) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* ---- saving ---- */

/* The state as JSON; strings and arrays are borrowed from the windows. */
static int encode(pd_daemon_t *d, char **out, size_t *len)
{
    pp_state_t st;
    size_t n = 0, k = 0;
    pp_record_init(&pp_desc_state, &st);
    for (pd_window_t *w = d->win.head; w; w = w->next) {
        n += kept(w);
    }
    st.version = 1;
    st.instance = d->instance;
    st.next_id = d->win.next_id;
    const char *name, *inst;
    size_t nn = 0;
    while (pd_coord_node_at(d, nn, &name, &inst)) {
        nn++;
    }
    st.windows = n ? calloc(n, sizeof(*st.windows)) : NULL;
    st.nodes = nn ? calloc(nn, sizeof(*st.nodes)) : NULL;
    int rv = (n && st.windows == NULL) || (nn && st.nodes == NULL) ? PROFD_ENOMEM : 0;
    for (size_t i = 0; rv == 0 && i < nn && pd_coord_node_at(d, i, &name, &inst); i++) {
        st.nodes[i].name = (char *)name;
        st.nodes[i].instance = (char *)inst;
        st.nodes_n = i + 1;
    }
    for (pd_window_t *w = d->win.head; w && rv == 0; w = w->next) {
        if (!kept(w)) {
            continue;
        }
        pp_state_window_t *s = &st.windows[k++];
        pp_record_init(&pp_desc_state_window, s);
        s->id = w->id;
        s->name = w->name;
        s->job = w->job;
        s->spec = w->spec;
        s->first = w->first;
        s->last = w->last;
        s->state = (char *)wstates[w->state];
        s->dir = w->dir;
        s->root_len = (int64_t)w->root_len;
        s->warnings = w->warnings;
        s->warnings_n = w->nwarnings;
        s->reason = w->reason[0] ? w->reason : NULL;
        s->bytes = w->bytes;
        s->members = w->nmembers ? calloc(w->nmembers, sizeof(*s->members)) : NULL;
        s->incoming = w->nincoming ? calloc(w->nincoming, sizeof(*s->incoming)) : NULL;
        if ((w->nmembers && s->members == NULL) || (w->nincoming && s->incoming == NULL)) {
            rv = PROFD_ENOMEM;
            break;
        }
        for (size_t i = 0; i < w->nmembers; i++) {
            const pd_member_t *m = &w->members[i];
            pp_state_member_t *sm = &s->members[i];
            pp_record_init(&pp_desc_state_member, sm);
            sm->node = m->node[0] ? (char *)m->node : NULL; /* "": a local worker */
            sm->node_client = m->node_client;
            sm->role = (char *)m->role;
            sm->host = m->host[0] ? (char *)m->host : NULL;
            sm->rank = m->rank;
            sm->replica_rank = m->replica_rank;
            sm->pid = m->pid;
            sm->selector = m->selector;
            sm->state = (char *)mstates[m->state];
            sm->captures = m->caps;
            sm->captures_n = m->ncaps;
        }
        s->members_n = w->nmembers;
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
    }
    st.windows_n = k;
    if (rv == 0) {
        rv = pp_record_encode(&pp_desc_state, &st, false, out, len);
    }
    for (size_t i = 0; i < k; i++) {
        free(st.windows[i].members);
        free(st.windows[i].incoming);
    }
    free(st.windows);
    free(st.nodes);
    return rv;
}

static void save_done(pd_job_t *j)
{
    pd_daemon_t *d = j->arg;
    if (j->rv != 0) {
        PD_LOG(&d->log, PD_LOG_ERROR, "state", "cannot save the coordinator state: %s", j->reason);
    }
    d->state_saving = false;
    pd_job_free(j);
    if (d->state_dirty) {
        pd_state_changed(d);
    }
}

static pd_job_t *save_job(pd_daemon_t *d)
{
    pd_job_t *j = calloc(1, sizeof(*j));
    if (j == NULL || encode(d, &j->data, &j->len) != 0) {
        free(j);
        return NULL;
    }
    j->kind = PD_JOB_WRITE;
    snprintf(j->root, sizeof(j->root), "%s", d->save_path);
    snprintf(j->dst, sizeof(j->dst), "%s", STATE_FILE);
    j->done = save_done;
    j->arg = d;
    return j;
}

static void on_save(uv_timer_t *t)
{
    pd_daemon_t *d = t->data;
    if (d->state_saving) {
        return; /* save_done() comes back here */
    }
    d->state_dirty = false;
    pd_job_t *j = save_job(d);
    if (j == NULL) {
        PD_LOG(&d->log, PD_LOG_ERROR, "state", "cannot encode the coordinator state");
        return;
    }
    d->state_saving = true;
    if (pd_job_submit(&d->loop.uv, j) != 0) {
        pd_write_run(j);
        save_done(j);
    }
}

void pd_state_changed(pd_daemon_t *d)
{
    if (!d->cfg.coordinator || d->stopping || !d->state_timer_ready) {
        return;
    }
    d->state_dirty = true;
    if (!uv_is_active((uv_handle_t *)&d->state_timer)) {
        uv_timer_start(&d->state_timer, on_save, SAVE_DELAY_MS, 0);
    }
}

void pd_state_fini(pd_daemon_t *d)
{
    if (!d->cfg.coordinator) {
        return;
    }
    pd_job_t *j = save_job(d);
    if (j) {
        pd_write_run(j);
        if (j->rv != 0) {
            PD_LOG(&d->log, PD_LOG_ERROR, "state", "cannot save the coordinator state: %s",
                   j->reason);
        }
        pd_job_free(j);
    }
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

/* One window from the file; members are bound again as their ranks return. */
static int load_window(pd_daemon_t *d, pp_state_window_t *s, const char *file, char *err,
                       size_t errlen)
{
    int st = index_of(wstates, 5, s->state);
    if (st < 0 || !pp_ident_ok(s->job) || strlen(s->name) > PP_MAX_NAME ||
        strlen(s->dir) >= sizeof(((pd_window_t *)0)->dir) || s->root_len < 1 ||
        (size_t)s->root_len > strlen(s->dir)) {
        return bad(err, errlen, file, "a window is not valid");
    }
    pd_window_t *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        return PROFD_ENOMEM;
    }
    w->id = s->id;
    snprintf(w->name, sizeof(w->name), "%s", s->name);
    snprintf(w->job, sizeof(w->job), "%s", s->job);
    w->spec = s->spec; /* moved */
    pp_record_init(&pp_desc_window_spec, &s->spec);
    w->first = s->first;
    w->last = s->last;
    w->state = (pd_wstate_t)st;
    snprintf(w->dir, sizeof(w->dir), "%s", s->dir);
    w->root_len = (size_t)s->root_len;
    w->warnings = s->warnings; /* moved */
    w->nwarnings = s->warnings_n;
    s->warnings = NULL;
    s->warnings_n = 0;
    snprintf(w->reason, sizeof(w->reason), "%s", s->reason ? s->reason : "");
    w->bytes = s->bytes;
    w->created_ms = pd_now_ms();
    if (s->members_n && (w->members = calloc(s->members_n, sizeof(*w->members))) == NULL) {
        pd_windows_free_one(w);
        return PROFD_ENOMEM;
    }
    w->capm = s->members_n;
    for (size_t i = 0; i < s->members_n; i++) {
        pp_state_member_t *sm = &s->members[i];
        pd_member_t *m = &w->members[w->nmembers++];
        int ms = index_of(mstates, 3, sm->state);
        if (ms < 0 || sm->selector < -1 || sm->selector >= (int64_t)w->spec.selectors_n ||
            !pp_ident_ok(sm->role) || (sm->host && !pp_host_ok(sm->host)) ||
            (sm->node && !pp_host_ok(sm->node))) {
            pd_windows_free_one(w);
            return bad(err, errlen, file, "a window member is not valid");
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
        m->state = (pd_mstate_t)ms;
        m->caps = sm->captures; /* moved */
        m->ncaps = sm->captures_n;
        sm->captures = NULL;
        sm->captures_n = 0;
    }
    if (s->incoming_n && (w->incoming = calloc(s->incoming_n, sizeof(*w->incoming))) == NULL) {
        pd_windows_free_one(w);
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; i < s->incoming_n; i++) {
        pp_state_incoming_t *si = &s->incoming[i];
        pd_incoming_t *in = &w->incoming[w->nincoming++];
        if (si->member < 0 || (size_t)si->member >= w->nmembers || si->cap < 0 ||
            (size_t)si->cap >= w->members[si->member].ncaps ||
            strlen(si->path) >= sizeof(in->path) || !pd_confine_rel_ok(si->path)) {
            pd_windows_free_one(w);
            return bad(err, errlen, file, "an incoming file is not valid");
        }
        snprintf(in->path, sizeof(in->path), "%s", si->path);
        in->member = (size_t)si->member;
        in->cap = (size_t)si->cap;
        in->file = (size_t)si->file;
        in->size = si->size;
        snprintf(in->checksum, sizeof(in->checksum), "%s", si->checksum ? si->checksum : "");
        in->done = si->done;
        in->have = in->done ? in->size : part_size(w, in->path);
        w->pending += !in->done;
    }
    pd_windows_append(&d->win, w);
    if (w->id > d->win.next_id) {
        d->win.next_id = w->id;
    }
    return 0;
}

int pd_state_load(pd_daemon_t *d, char *err, size_t errlen)
{
    char path[PD_PATH_MAX + 64], e[256];
    pp_state_t st;
    snprintf(path, sizeof(path), "%s/%s", d->save_path, STATE_FILE);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        if (errno == ENOENT) {
            return 0;
        }
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
    if (st.version != 1 || strlen(st.instance) >= sizeof(d->instance) || st.instance[0] == '\0') {
        pp_record_free(&pp_desc_state, &st);
        return bad(err, errlen, path, "unknown version or instance");
    }
    snprintf(d->instance, sizeof(d->instance), "%s", st.instance);
    d->win.next_id = st.next_id;
    for (size_t i = 0; i < st.nodes_n && rv == 0; i++) {
        if (!pp_host_ok(st.nodes[i].name) || strlen(st.nodes[i].instance) >= 64) {
            rv = bad(err, errlen, path, "a node is not valid");
        } else {
            rv = pd_coord_await(d, st.nodes[i].name, st.nodes[i].instance);
        }
    }
    for (size_t i = 0; i < st.windows_n && rv == 0; i++) {
        rv = load_window(d, &st.windows[i], path, err, errlen);
    }
    size_t st_nodes = st.nodes_n;
    pp_record_free(&pp_desc_state, &st);
    if (rv != 0) {
        return rv;
    }
    PD_LOG(&d->log, PD_LOG_INFO, "state",
           "%s: instance %s, %zu unfinished window(s), %zu node(s) awaited", path, d->instance,
           d->win.count, st_nodes);
    return 0;
}
