/* Windows and their captures (see windows.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "gather.h"
#include "link.h"
#include "state.h"
#include "windows.h"

static const char *const state_names[] = {"pending", "active", "gathering", "done", "cancelled"};

const char *pd_windows_state_name(pd_wstate_t s)
{
    return state_names[s];
}

void pd_windows_init(pd_windows_t *ws)
{
    memset(ws, 0, sizeof(*ws));
}

static void member_free(pd_member_t *m)
{
    for (size_t i = 0; i < m->ncaps; i++) {
        pp_record_free(&pp_desc_capture, &m->caps[i]);
    }
    free(m->caps);
    m->caps = NULL;
    m->ncaps = 0;
}

void pd_windows_free_one(pd_window_t *w)
{
    free(w->incoming);
    for (size_t i = 0; i < w->nmembers; i++) {
        member_free(&w->members[i]);
    }
    free(w->members);
    for (size_t i = 0; i < w->nwarnings; i++) {
        free(w->warnings[i]);
    }
    free(w->warnings);
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

static bool live(const pd_window_t *w)
{
    return w->state == PD_W_PENDING || w->state == PD_W_ACTIVE;
}

size_t pd_windows_live(const pd_windows_t *ws)
{
    size_t n = 0;
    for (pd_window_t *w = ws->head; w; w = w->next) {
        n += live(w) || w->state == PD_W_GATHERING;
    }
    return n;
}

static int add_warning(pd_window_t *w, const char *text)
{
    char **v = realloc(w->warnings, (w->nwarnings + 1) * sizeof(*v));
    if (v == NULL) {
        return PROFD_ENOMEM;
    }
    w->warnings = v;
    if ((v[w->nwarnings] = strdup(text)) == NULL) {
        return PROFD_ENOMEM;
    }
    w->nwarnings++;
    return 0;
}

pd_member_t *pd_windows_add_member(pd_window_t *w, const pd_rank_t *k, int selector)
{
    if (w->nmembers == w->capm) {
        size_t n = w->capm ? w->capm * 2 : 8;
        pd_member_t *v = realloc(w->members, n * sizeof(*v));
        if (v == NULL) {
            return NULL;
        }
        w->members = v;
        w->capm = n;
    }
    pd_member_t *m = &w->members[w->nmembers++];
    memset(m, 0, sizeof(*m));
    m->client = k->id;
    snprintf(m->role, sizeof(m->role), "%s", k->role);
    snprintf(m->host, sizeof(m->host), "%s", k->host);
    snprintf(m->node, sizeof(m->node), "%s", k->node);
    m->node_client = k->node_client;
    m->rank = k->rank;
    m->replica_rank = k->replica_rank;
    m->pid = k->pid;
    m->selector = selector;
    m->state = PD_M_EXPECTED;
    return m;
}

pd_member_t *pd_windows_member(pd_window_t *w, int64_t client)
{
    for (size_t i = 0; i < w->nmembers; i++) {
        if (w->members[i].client == client) {
            return &w->members[i];
        }
    }
    return NULL;
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

/* The tree root of a request: its save_path (relative to the daemon's
 * folder), else the daemon's. Windows go below it with room to spare. */
static int save_root(const pd_daemon_t *d, const pp_window_spec_t *spec, char *buf, size_t len)
{
    const char *sp = spec->save_path && spec->save_path[0] ? spec->save_path : NULL;
    int n;
    if (sp == NULL) {
        n = snprintf(buf, len, "%s", d->save_path);
    } else if (sp[0] == '/') {
        n = snprintf(buf, len, "%s", sp);
    } else {
        /* a request's relative save_path (verl's default outputs/profile)
         * lives below the daemon's: the daemon's folder is not the job's */
        while (sp[0] == '.' && sp[1] == '/') {
            sp += 2;
        }
        if (strcmp(sp, "..") == 0 || strncmp(sp, "../", 3) == 0 || strstr(sp, "/../") ||
            (strlen(sp) >= 3 && strcmp(sp + strlen(sp) - 3, "/..") == 0)) {
            return PROFD_EPATH;
        }
        n = snprintf(buf, len, "%s/%s", d->save_path, sp);
    }
    return (n < 0 || (size_t)n + 2 * PP_MAX_NAME + 256 >= len) ? PROFD_EINVAL : 0;
}

int pd_windows_create(pd_daemon_t *d, const pp_window_spec_t *spec, int64_t **ids, size_t *nids,
                      char *err, size_t errlen)
{
    pd_windows_t *ws = &d->win;
    pd_plan_params_t params;
    pd_plan_out_t out;
    char root[PD_PATH_MAX], buf[320];
    int rv;

    *ids = NULL;
    *nids = 0;
    size_t n = 0;
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = pd_registry_next(&d->reg, k)) {
        n += k->state == PD_RANK_ACTIVE;
    }
    pd_plan_rank_t *ranks = n ? calloc(n, sizeof(*ranks)) : NULL;
    if (n && ranks == NULL) {
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    size_t i = 0;
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = pd_registry_next(&d->reg, k)) {
        if (k->state == PD_RANK_ACTIVE) {
            pd_registry_plan_rank(k, &ranks[i++]);
        }
    }
    pd_daemon_plan_params(d, &params);
    rv = pd_plan_resolve(spec, ranks, n, &params, &out, err, errlen);
    free(ranks);
    if (rv != 0) {
        return rv;
    }
    if (pd_windows_live(ws) + out.n_segments > (size_t)d->cfg.max_windows) {
        snprintf(err, errlen, "%zu window(s) would exceed the limit of %lld unfinished windows",
                 out.n_segments, (long long)d->cfg.max_windows);
        pd_plan_out_free(&out);
        return PROFD_ELIMIT;
    }
    if ((*ids = calloc(out.n_segments, sizeof(**ids))) == NULL) {
        pd_plan_out_free(&out);
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    if ((rv = save_root(d, spec, root, sizeof(root))) != 0) {
        snprintf(err, errlen,
                 rv == PROFD_EPATH ? "a relative save_path must stay below the daemon's save_path "
                                     "(no '..')"
                                   : "save_path is too long");
        free(*ids);
        *ids = NULL;
        pd_plan_out_free(&out);
        return PROFD_EINVAL;
    }
    /* the root of a request's own save_path is made now: the tree below it
     * is then only ever reached from it, never through a symlink */
    if (pd_mkdirs(root, 0755) != 0) {
        snprintf(err, errlen, "cannot create save_path %.200s: %s", root, strerror(errno));
        free(*ids);
        *ids = NULL;
        pd_plan_out_free(&out);
        return PROFD_EIO;
    }
    for (size_t s = 0; s < out.n_segments; s++) {
        pd_window_t *w = calloc(1, sizeof(*w));
        if (w == NULL || pp_record_copy(&pp_desc_window_spec, &w->spec, spec) != 0) {
            free(w);
            break;
        }
        w->id = ++ws->next_id;
        w->first = out.segments[s].first;
        w->last = out.segments[s].last;
        pp_window_name(w->name, sizeof(w->name), w->id, w->first, w->last);
        snprintf(w->job, sizeof(w->job), "%s", out.job);
        if ((size_t)snprintf(w->dir, sizeof(w->dir), "%s/%s/%s", root, w->job, w->name) >=
            sizeof(w->dir)) {
            pd_windows_free_one(w);
            break; /* cannot happen: save_root() leaves room */
        }
        w->root_len = strlen(root);
        w->state = PD_W_PENDING;
        w->created_ms = pd_now_ms();
        int late = 0;
        for (size_t m = 0; m < out.n_members; m++) {
            pd_rank_t *k = pd_registry_get(&d->reg, out.members[m].id);
            if (k && pd_windows_add_member(w, k, out.members[m].selector) && k->step != PP_NONE &&
                k->step >= w->first) {
                late++;
            }
        }
        for (size_t k = 0; k < out.n_warnings; k++) {
            add_warning(w, out.warnings[k]);
        }
        if (late) {
            snprintf(buf, sizeof(buf),
                     "%d selected rank(s) already began step %lld or later: they will report "
                     "missed",
                     late, (long long)w->first);
            add_warning(w, buf);
        }
        pd_windows_append(ws, w);
        (*ids)[(*nids)++] = w->id;
        PD_LOG(&d->log, PD_LOG_INFO, "windows", "window %s of job %s: %zu rank(s)%s", w->name,
               w->job, w->nmembers, w->nmembers ? "" : " (none registered yet)");
    }
    pd_plan_out_free(&out);
    pd_daemon_plans_changed(d);
    return 0;
}

void pd_windows_on_register(pd_daemon_t *d, const pd_rank_t *k)
{
    pd_plan_rank_t pr;
    bool changed = false;
    if (d->link) {
        return; /* a node daemon: the coordinator decides who joins */
    }
    pd_windows_rebind(d, k); /* a rank of a window this daemon kept over a restart */
    pd_registry_plan_rank(k, &pr);
    for (pd_window_t *w = d->win.head; w; w = w->next) {
        if (!live(w) || pd_windows_member(w, k->id)) {
            continue;
        }
        int sel = pd_plan_match(&w->spec, w->job, &pr);
        if (sel != -2 && pd_windows_add_member(w, k, sel)) {
            changed = true;
            PD_LOG(&d->log, PD_LOG_DEBUG, "windows", "rank %lld (%s) joins window %s",
                   (long long)k->rank, k->role, w->name);
        }
    }
    if (changed) {
        pd_daemon_plans_changed(d);
    }
}

void pd_windows_on_step(pd_daemon_t *d, const pd_rank_t *k)
{
    for (pd_window_t *w = d->win.head; w; w = w->next) {
        if (w->state == PD_W_PENDING && k->step != PP_NONE && k->step >= w->first &&
            pd_windows_member(w, k->id)) {
            w->state = PD_W_ACTIVE;
        }
    }
}

/* ---- finishing ---- */

static char *distinct_tool(const pd_window_t *w, bool mode)
{
    const char *v = NULL;
    for (size_t i = 0; i < w->nmembers; i++) {
        int sel = w->members[i].selector;
        const char *x = mode ? pd_plan_mode(&w->spec, sel) : pd_plan_tool(&w->spec, sel);
        if (v && strcmp(v, x) != 0) {
            return "mixed";
        }
        v = x;
    }
    return (char *)(v ? v : (mode ? pd_plan_mode(&w->spec, -1) : pd_plan_tool(&w->spec, -1)));
}

/* Roles of the window: the selectors', else the members'. Borrowed strings. */
static char **window_roles(const pd_window_t *w, size_t *n)
{
    size_t cap = w->spec.selectors_n + w->nmembers;
    char **v = cap ? calloc(cap, sizeof(*v)) : NULL;
    *n = 0;
    if (v == NULL) {
        return NULL;
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

static void remove_done(pd_job_t *j)
{
    pd_daemon_t *d = j->arg;
    if (j->rv != 0) {
        PD_LOG(&d->log, PD_LOG_WARN, "gather", "spool: %s", j->reason);
    }
    pd_job_free(j);
}

void pd_windows_remove_spool(pd_daemon_t *d, const char *rel)
{
    pd_job_t *j = calloc(1, sizeof(*j));
    if (j == NULL) {
        return; /* left for the next start */
    }
    j->kind = PD_JOB_REMOVE;
    snprintf(j->spool, sizeof(j->spool), "%s", d->spool);
    snprintf(j->src, sizeof(j->src), "%s", rel);
    j->done = remove_done;
    j->arg = d;
    if (pd_job_submit(&d->loop.uv, j) != 0) {
        pd_job_free(j);
    }
}

static void manifest_done(pd_job_t *j)
{
    pd_daemon_t *d = j->arg;
    pd_window_t *w = pd_windows_get(&d->win, j->window);
    pd_state_changed(d);
    if (w && w->trash) {
        char rel[64];
        snprintf(rel, sizeof(rel), "%s/w%lld", PD_TRASH, (long long)w->id);
        w->trash = false;
        pd_windows_remove_spool(d, rel);
    }
    if (w) {
        w->pending--;
        w->state = PD_W_DONE;
        w->done_ms = pd_now_ms();
        if (j->rv != 0) {
            snprintf(w->reason, sizeof(w->reason), "manifest not written: %.200s", j->reason);
            PD_LOG(&d->log, PD_LOG_ERROR, "windows", "window %s: %s", w->name, w->reason);
        } else {
            PD_LOG(&d->log, PD_LOG_INFO, "windows", "window %s done: %s/manifest.json", w->name,
                   w->dir);
        }
    }
    pd_job_free(j);
}

/* Manifest order: role, phase, rank, replica, first step. */
static int cmp_capture(const void *a, const void *b)
{
    const pp_capture_t *x = a, *y = b;
    int c = strcmp(x->role, y->role);
    if (c == 0) {
        c = strcmp(x->phase ? x->phase : "", y->phase ? y->phase : "");
    }
    if (c == 0) {
        c = (x->rank > y->rank) - (x->rank < y->rank);
    }
    if (c == 0) {
        c = (x->replica_rank > y->replica_rank) - (x->replica_rank < y->replica_rank);
    }
    if (c == 0) {
        c = (x->first_step > y->first_step) - (x->first_step < y->first_step);
    }
    return c;
}

static void write_manifest(pd_daemon_t *d, pd_window_t *w)
{
    pp_manifest_t man;
    size_t ncap = 0, k = 0, nroles;
    int64_t steps[2];

    for (size_t i = 0; i < w->nmembers; i++) {
        ncap += w->members[i].ncaps;
    }
    pp_record_init(&pp_desc_manifest, &man);
    man.version = 1;
    man.job = w->job;
    man.window.id = w->id;
    man.window.name = w->name;
    steps[0] = w->first;
    steps[1] = w->last == PP_NONE ? -1 : w->last + 1;
    pp_capture_t *caps = ncap ? calloc(ncap, sizeof(*caps)) : NULL;
    for (size_t i = 0; caps && i < w->nmembers; i++) {
        for (size_t c = 0; c < w->members[i].ncaps; c++) {
            caps[k] = w->members[i].caps[c]; /* shallow: borrowed */
            if (w->last == PP_NONE && caps[k].last_step != PP_NONE &&
                caps[k].last_step + 1 > steps[1]) {
                steps[1] = caps[k].last_step + 1;
            }
            k++;
        }
    }
    if (k > 1) {
        qsort(caps, k, sizeof(*caps), cmp_capture);
    }
    man.window.steps = steps;
    man.window.steps_n = 2;
    man.window.roles = window_roles(w, &nroles);
    man.window.roles_n = nroles;
    man.window.tool = distinct_tool(w, false);
    man.window.mode = distinct_tool(w, true);
    man.window.settings =
        (char *)pd_plan_settings(&w->spec, w->nmembers ? w->members[0].selector : -1);
    man.window.warnings = w->warnings;
    man.window.warnings_n = w->nwarnings;
    man.captures = caps;
    man.captures_n = k;

    pd_job_t *j = calloc(1, sizeof(*j));
    char *text = NULL;
    size_t len = 0;
    int rv =
        (j == NULL) ? PROFD_ENOMEM : pp_record_encode(&pp_desc_manifest, &man, true, &text, &len);
    free(caps);
    free(man.window.roles);
    if (rv != 0) {
        free(text);
        free(j);
        w->state = PD_W_DONE;
        snprintf(w->reason, sizeof(w->reason), "manifest not written: out of memory");
        PD_LOG(&d->log, PD_LOG_ERROR, "windows", "window %s: %s", w->name, w->reason);
        return;
    }
    j->kind = PD_JOB_WRITE;
    j->data = text;
    j->len = len;
    /* fits: save_root() left room below w->dir */
    snprintf(j->root, sizeof(j->root), "%.*s", (int)w->root_len, w->dir);
    snprintf(j->dst, sizeof(j->dst), "%s/%s/manifest.json", w->job, w->name);
    /* what is left of the window in the spool: empty folders */
    snprintf(j->spool, sizeof(j->spool), "%s", d->spool);
    snprintf(j->prune, sizeof(j->prune), "%s/%s", w->job, w->name);
    j->done = manifest_done;
    j->arg = d;
    j->window = w->id;
    w->pending++;
    w->state = PD_W_GATHERING;
    if (pd_job_submit(&d->loop.uv, j) != 0) {
        pd_write_run(j); /* the pool is gone: do it here */
        manifest_done(j);
    }
}

void pd_windows_maybe_finish(pd_daemon_t *d, pd_window_t *w)
{
    if (w->state == PD_W_DONE || w->state == PD_W_CANCELLED || w->nmembers == 0 || w->forwarded) {
        return;
    }
    for (size_t i = 0; i < w->nmembers; i++) {
        if (w->members[i].state == PD_M_EXPECTED) {
            return;
        }
    }
    w->state = PD_W_GATHERING;
    if (w->pending == 0) {
        if (w->mirror) {
            pd_link_forward(d, w); /* the coordinator writes the manifest */
        } else {
            write_manifest(d, w);
        }
    }
}

/* ---- results ---- */

void pd_windows_set_status(pp_capture_t *c, const char *status, const char *reason)
{
    free(c->status);
    c->status = strdup(status);
    free(c->reason);
    c->reason = reason ? strdup(reason) : NULL;
}

static void gather_done(pd_job_t *j)
{
    pd_daemon_t *d = j->arg;
    pd_window_t *w = pd_windows_get(&d->win, j->window);
    pd_member_t *m = w ? pd_windows_member(w, j->client) : NULL;
    if (m && j->cap < m->ncaps) {
        pp_capture_t *c = &m->caps[j->cap];
        if (j->rv == 0) {
            c->files = j->files; /* moved */
            c->files_n = j->nfiles;
            j->files = NULL;
            j->nfiles = 0;
            w->bytes += j->bytes;
            w->trash |= j->trashed;
            if (j->incomplete && strcmp(c->status, "complete") == 0) {
                pd_windows_set_status(c, "truncated",
                                      "the profiler left an incomplete (.part) file");
            }
            if (j->left) {
                PD_LOG(&d->log, PD_LOG_WARN, "gather", "window %s rank %lld: %s", w->name,
                       (long long)m->rank, j->reason);
            }
        } else {
            pd_windows_set_status(c, j->rv == PROFD_ELIMIT ? "truncated" : "failed", j->reason);
            free(c->dir);
            c->dir = NULL;
            PD_LOG(&d->log, j->rv == PROFD_EPATH ? PD_LOG_WARN : PD_LOG_INFO, "gather",
                   "window %s rank %lld: %s", w->name, (long long)m->rank, j->reason);
        }
    }
    if (w) {
        w->pending--;
        pd_windows_maybe_finish(d, w);
    }
    pd_job_free(j);
}

/* Where a capture of this member must be: "<job>/<window>/<capdir>[/step<N>]". */
bool pd_windows_capdir_ok(const pd_window_t *w, const pd_member_t *m, const pp_capture_t *c,
                          bool rel)
{
    char capdir[PP_MAX_PATH], a[PP_MAX_PATH], b[PP_MAX_PATH + 32];
    int n;
    if (c->dir == NULL || pp_capture_dir(capdir, sizeof(capdir), c->role, c->phase, m->rank,
                                         m->replica_rank, m->host) != 0) {
        return false;
    }
    if (rel) {
        n = snprintf(a, sizeof(a), "%s", capdir);
    } else {
        n = snprintf(a, sizeof(a), "%s/%s/%s", w->job, w->name, capdir);
    }
    if (n < 0 || (size_t)n >= sizeof(a) ||
        (size_t)snprintf(b, sizeof(b), "%s/step%lld", a, (long long)c->first_step) >= sizeof(b)) {
        return false;
    }
    return strcmp(c->dir, a) == 0 || (c->phase && strcmp(c->dir, b) == 0);
}

static bool status_ok(const char *s)
{
    return s && (strcmp(s, "complete") == 0 || strcmp(s, "failed") == 0 ||
                 strcmp(s, "missed") == 0 || strcmp(s, "truncated") == 0);
}

static void submit_gather(pd_daemon_t *d, pd_window_t *w, pd_member_t *m, size_t ci, int64_t owner)
{
    pp_capture_t *c = &m->caps[ci];
    size_t prefix = strlen(w->job) + 1 + strlen(w->name) + 1;
    pd_job_t *j = calloc(1, sizeof(*j));
    if (j == NULL) {
        pd_windows_set_status(c, "failed", "out of memory while gathering");
        return;
    }
    j->kind = PD_JOB_GATHER;
    /* c->dir is "<job>/<window>/<capdir>", the same below the spool and the
     * save tree; gathering checks it again, component by component */
    snprintf(j->spool, sizeof(j->spool), "%s", d->spool);
    snprintf(j->root, sizeof(j->root), "%.*s", (int)w->root_len, w->dir);
    if ((size_t)snprintf(j->src, sizeof(j->src), "%s", c->dir) >= sizeof(j->src) ||
        (size_t)snprintf(j->dst, sizeof(j->dst), "%s", c->dir) >= sizeof(j->dst)) {
        pd_windows_set_status(c, "failed", "capture path too long");
        free(c->dir);
        c->dir = NULL;
        pd_job_free(j);
        return;
    }
    j->checksum = strcmp(d->cfg.checksum, "none") != 0;
    /* a node streams its captures to the coordinator: list them in place */
    j->list_only = w->mirror && !d->cfg.shared_save_path;
    if (j->list_only) {
        j->checksum = true; /* the coordinator verifies every file */
    }
    j->owner = owner;
    j->max_files = d->cfg.max_capture_files;
    j->min_free = d->cfg.min_free_bytes;
    j->budget = d->cfg.window_byte_budget > 0 ? d->cfg.window_byte_budget : -1;
    j->used = &w->claimed;
    j->done = gather_done;
    j->arg = d;
    j->window = w->id;
    j->client = m->client;
    j->cap = ci;
    /* the manifest names folders relative to the window */
    memmove(c->dir, c->dir + prefix, strlen(c->dir + prefix) + 1);
    w->pending++;
    if (pd_job_submit(&d->loop.uv, j) != 0) {
        w->pending--;
        pd_windows_set_status(c, "failed", "cannot queue the gathering");
        pd_job_free(j);
    }
}

pd_member_t *pd_windows_report(pd_daemon_t *d, const pd_rank_t *k, int64_t window,
                               pp_capture_t **caps, size_t *ncaps, bool rel, pd_window_t **wout,
                               int *rv, char *err, size_t errlen)
{
    char why[256];
    pd_window_t *w = pd_windows_get(&d->win, window);
    *rv = 0;
    if (w == NULL) {
        snprintf(err, errlen, "no window %lld", (long long)window);
        *rv = PROFD_ENOENT;
        return NULL;
    }
    pd_member_t *m = pd_windows_member(w, k->id);
    if (m == NULL) {
        snprintf(err, errlen, "client %lld is not a member of window %s", (long long)k->id,
                 w->name);
        *rv = PROFD_ESTATE;
        return NULL;
    }
    if (m->state != PD_M_EXPECTED) {
        snprintf(err, errlen, "window %s already has the captures of rank %lld", w->name,
                 (long long)m->rank);
        *rv = PROFD_ESTATE;
        return NULL;
    }
    m->caps = *caps; /* moved */
    m->ncaps = *ncaps;
    *caps = NULL;
    *ncaps = 0;
    m->state = PD_M_REPORTED;
    pd_state_changed(d); /* the coordinator keeps reports over a restart */
    if (w->state == PD_W_PENDING) {
        w->state = PD_W_ACTIVE;
    }
    for (size_t i = 0; i < m->ncaps; i++) {
        pp_capture_t *c = &m->caps[i];
        if (!rel) { /* a worker's: the files are the daemon's listing, never the report's */
            for (size_t f = 0; f < c->files_n; f++) {
                pp_record_free(&pp_desc_file, &c->files[f]);
            }
            free(c->files);
            c->files = NULL;
            c->files_n = 0;
        }
        if (c->reason) { /* free text from the worker: fit for logs and JSON */
            char q[512];
            pd_quote(q, sizeof(q), c->reason);
            free(c->reason);
            c->reason = strdup(q);
        }
        /* who captured is the daemon's knowledge, not the report's */
        c->rank = m->rank;
        c->replica_rank = m->replica_rank;
        c->pid = m->pid;
        free(c->host);
        c->host = strdup(m->host);
        free(c->tool);
        c->tool = strdup(pd_plan_tool(&w->spec, m->selector));
        const char *failure = NULL;
        if (!status_ok(c->status)) {
            failure = "unknown capture status in the report";
        } else if ((strcmp(c->role, "e2e") != 0 && strcmp(c->role, m->role) != 0) ||
                   (c->phase && !pp_ident_ok(c->phase))) {
            failure = "capture role or phase does not match the rank";
        } else if (c->dir && strcmp(c->status, "missed") != 0 &&
                   !pd_windows_capdir_ok(w, m, c, rel)) {
            char q[160];
            pd_quote(q, sizeof(q), c->dir);
            snprintf(why, sizeof(why), "capture folder '%s' is not where this capture belongs", q);
            PD_LOG(&d->log, PD_LOG_WARN, "windows", "window %s rank %lld: %s", w->name,
                   (long long)m->rank, why);
            failure = why;
        }
        if (failure) {
            pd_windows_set_status(c, "failed", failure);
        }
        if (failure || strcmp(c->status, "missed") == 0) {
            free(c->dir);
            c->dir = NULL;
        }
    }
    *wout = w;
    return m;
}

int pd_windows_on_result(pd_daemon_t *d, const pd_rank_t *k, pp_result_t *res, char *err,
                         size_t errlen)
{
    pd_window_t *w;
    int rv;
    pd_member_t *m = pd_windows_report(d, k, res->window, &res->captures, &res->captures_n, false,
                                       &w, &rv, err, errlen);
    if (m == NULL) {
        return rv;
    }
    for (size_t i = 0; i < m->ncaps; i++) {
        if (m->caps[i].dir) {
            submit_gather(d, w, m, i, k->uid);
        }
    }
    /* No new plan generation: a report changes no other rank's plan, and the
     * reporting rank is done with the window (its engine keeps it as done
     * until the next plan drops it). Bumping the generation here re-sent
     * every plan to every rank once per burst of reports: up to N^2 plan
     * messages for a window over N ranks (about 4N measured with 64 ranks
     * reporting together, instead of N). */
    pd_windows_maybe_finish(d, w);
    return 0;
}

/* An expected member will not report: one failed capture says why. */
static void member_lost(pd_daemon_t *d, pd_window_t *w, pd_member_t *m, const char *why)
{
    if ((m->caps = calloc(1, sizeof(*m->caps))) != NULL) {
        pp_capture_t *c = &m->caps[0];
        pp_record_init(&pp_desc_capture, c);
        c->role = strdup(m->role);
        c->rank = m->rank;
        c->replica_rank = m->replica_rank;
        c->host = strdup(m->host);
        c->pid = m->pid;
        c->tool = strdup(pd_plan_tool(&w->spec, m->selector));
        c->status = strdup("failed");
        c->reason = strdup(why);
        m->ncaps = 1;
    }
    m->state = PD_M_LOST;
    pd_state_changed(d);
    PD_LOG(&d->log, PD_LOG_WARN, "windows", "window %s: rank %lld %s", w->name, (long long)m->rank,
           why);
    pd_windows_maybe_finish(d, w);
}

void pd_windows_on_lost(pd_daemon_t *d, const pd_rank_t *k, const char *reason)
{
    char why[256];
    for (pd_window_t *w = d->win.head; w; w = w->next) {
        pd_member_t *m;
        if (!live(w) || (m = pd_windows_member(w, k->id)) == NULL || m->state != PD_M_EXPECTED) {
            continue;
        }
        if (k->step != PP_NONE) {
            snprintf(why, sizeof(why), "%s (last step begun: %lld)", reason, (long long)k->step);
        } else {
            snprintf(why, sizeof(why), "%s (before its first step)", reason);
        }
        member_lost(d, w, m, why);
    }
}

void pd_windows_node_gone(pd_daemon_t *d, const char *node, const char *reason)
{
    for (pd_window_t *w = d->win.head; w; w = w->next) {
        for (size_t i = 0; live(w) && i < w->nmembers; i++) {
            pd_member_t *m = &w->members[i];
            if (m->state == PD_M_EXPECTED && m->node_client && strcmp(m->node, node) == 0) {
                member_lost(d, w, m, reason);
            }
        }
    }
}

void pd_windows_rebind(pd_daemon_t *d, const pd_rank_t *k)
{
    for (pd_window_t *w = d->win.head; w; w = w->next) {
        if (w->state == PD_W_DONE || w->state == PD_W_CANCELLED) {
            continue;
        }
        for (size_t i = 0; i < w->nmembers; i++) {
            pd_member_t *m = &w->members[i];
            bool same = k->node_client
                            ? m->node_client == k->node_client && strcmp(m->node, k->node) == 0
                            : m->node_client == 0 && m->rank == k->rank && m->pid == k->pid &&
                                  strcmp(m->role, k->role) == 0 && strcmp(m->host, k->host) == 0;
            if (same && m->client != k->id) {
                m->client = k->id;
            }
        }
    }
}

/* ---- stop ---- */

int pd_windows_stop(pd_daemon_t *d, int64_t id, char *err, size_t errlen)
{
    pd_window_t *w = pd_windows_get(&d->win, id);
    pd_plan_params_t params;
    if (w == NULL) {
        snprintf(err, errlen, "no window %lld", (long long)id);
        return PROFD_ENOENT;
    }
    if (!live(w)) {
        snprintf(err, errlen, "window %s is already %s", w->name, state_names[w->state]);
        return PROFD_ESTATE;
    }
    pd_plan_rank_t *ranks = w->nmembers ? calloc(w->nmembers, sizeof(*ranks)) : NULL;
    size_t n = 0;
    bool started = false;
    for (size_t i = 0; i < w->nmembers; i++) {
        pd_rank_t *k = pd_registry_get(&d->reg, w->members[i].client);
        if (k && ranks && w->members[i].state == PD_M_EXPECTED) {
            pd_registry_plan_rank(k, &ranks[n++]);
            started = started || (k->step != PP_NONE && k->step >= w->first);
        }
        started = started || w->members[i].state == PD_M_REPORTED;
    }
    pd_daemon_plan_params(d, &params);
    int64_t stop = pd_plan_stop_step(ranks, n, &params);
    free(ranks);
    if (!started && (stop == PP_NONE || stop < w->first)) {
        w->state = PD_W_CANCELLED;
        w->done_ms = pd_now_ms();
        snprintf(w->reason, sizeof(w->reason), "cancelled before step %lld", (long long)w->first);
        PD_LOG(&d->log, PD_LOG_INFO, "windows", "window %s cancelled", w->name);
    } else {
        if (stop == PP_NONE || stop < w->first) {
            stop = w->first;
        }
        if (w->last == PP_NONE || stop < w->last) {
            w->last = stop;
            PD_LOG(&d->log, PD_LOG_INFO, "windows", "window %s stops after step %lld", w->name,
                   (long long)stop);
        }
    }
    pd_daemon_plans_changed(d);
    return 0;
}

/* ---- views ---- */

int pd_windows_plan_for(const pd_windows_t *ws, const pd_rank_t *k, pp_plan_t *out)
{
    size_t n = 0;
    for (pd_window_t *w = ws->head; w; w = w->next) {
        pd_member_t *m = live(w) ? pd_windows_member(w, k->id) : NULL;
        n += m && m->state == PD_M_EXPECTED;
    }
    out->entries = n ? calloc(n, sizeof(*out->entries)) : NULL;
    if (n && out->entries == NULL) {
        return PROFD_ENOMEM;
    }
    out->entries_n = 0;
    for (pd_window_t *w = ws->head; w; w = w->next) {
        pd_member_t *m = live(w) ? pd_windows_member(w, k->id) : NULL;
        if (m == NULL || m->state != PD_M_EXPECTED) {
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
        e->mode = (char *)pd_plan_mode(&w->spec, m->selector);
        e->settings = (char *)pd_plan_settings(&w->spec, m->selector);
        e->schedule = *pd_plan_schedule(&w->spec, m->selector);
        if (m->selector >= 0) {
            e->phases = w->spec.selectors[m->selector].phases;
            e->phases_n = w->spec.selectors[m->selector].phases_n;
        }
    }
    return 0;
}

void pd_windows_info(const pd_window_t *w, bool detail, pp_window_t *out)
{
    static const char *const mnames[] = {"expected", "reported", "lost"};
    size_t nroles;
    pp_record_init(&pp_desc_window, out);
    out->id = w->id;
    out->name = (char *)w->name;
    out->job = (char *)w->job;
    out->state = (char *)state_names[w->state];
    out->first_step = w->first;
    out->last_step = w->last;
    out->tool = distinct_tool(w, false);
    out->mode = distinct_tool(w, true);
    out->roles = window_roles(w, &nroles);
    out->roles_n = nroles;
    out->settings = (char *)pd_plan_settings(&w->spec, -1);
    out->selected = (int64_t)w->nmembers;
    for (size_t i = 0; i < w->nmembers; i++) {
        const pd_member_t *m = &w->members[i];
        out->reported += m->state != PD_M_EXPECTED;
        for (size_t c = 0; c < m->ncaps; c++) {
            const char *s = m->caps[c].status;
            out->complete += strcmp(s, "complete") == 0;
            out->failed += strcmp(s, "failed") == 0;
            out->missed += strcmp(s, "missed") == 0;
            out->truncated += strcmp(s, "truncated") == 0;
        }
    }
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
            r->state = (char *)mnames[w->members[i].state];
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

void pd_windows_trim(pd_windows_t *ws, size_t keep)
{
    size_t done = 0;
    for (pd_window_t *w = ws->head; w; w = w->next) {
        done += (w->state == PD_W_DONE || w->state == PD_W_CANCELLED) && w->pending == 0;
    }
    pd_window_t **pp = &ws->head, *prev = NULL;
    while (*pp && done > keep) {
        pd_window_t *w = *pp;
        if ((w->state == PD_W_DONE || w->state == PD_W_CANCELLED) && w->pending == 0) {
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
}
