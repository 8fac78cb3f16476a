// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The after-window hook (see hook.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uv.h>

#include "hook.h"
#include "pu_buf.h"
#include "retention.h"
#include "uix.h"

extern char **environ;

#define DRAIN_MS 1000 /* after it exited: how long its output may still come */

typedef struct run {
    struct pd_hook *h;
    int64_t window;
    uv_process_t proc;
    uv_pipe_t out;
    uv_timer_t timer;
    int open; /* handles not yet closed */
    bool exited, eof, timed_out, recorded, closing;
    int64_t status;
    int signal;
    char buf[2 * PD_HOOK_TAIL];
    size_t len;
    struct run *next;
} run_t;

/* What became of a window's hook: kept here, beside the window table (the
 * core's window holds only `held`), found by window id. */
typedef struct hrec {
    int64_t window;
    /* "running", "exit 0", "exit 3", "killed by signal 9", "timed out after
     * 600s", "not started: ...", PD_HOOK_WAITING; "" none */
    char state[160];
    bool running, exited;
    int64_t exit;                  /* when it exited */
    char output[PD_HOOK_TAIL + 1]; /* the last PD_HOOK_TAIL bytes of its output */
} hrec_t;

struct pd_hook {
    pd_node_t *n;
    bool as_user; /* switch to uid / gid in the child */
    uv_uid_t uid;
    uv_gid_t gid;
    char user[64];
    char home[1024];
    run_t *runs;
    bool stopping;
    hrec_t *recs; /* the windows' hook records */
    size_t nrecs, caprecs;
    pd_uix_t rix; /* their index by window id */
};

/* ---- the windows' records ---- */

static bool rec_index(pd_hook_t *h)
{
    pd_uix_t *x = &h->rix;
    if (x->n > h->nrecs) {
        x->n = h->nrecs;
    }
    if (pd_uix_room(x, h->nrecs, h->nrecs - x->n) < 0) {
        return false;
    }
    for (; x->n < h->nrecs; x->n++) {
        pd_uix_put(x, pd_uix_hash_i64(h->recs[x->n].window), x->n);
    }
    return true;
}

static hrec_t *rec_find(pd_hook_t *h, int64_t window)
{
    if (h == NULL) {
        return NULL;
    }
    if (!rec_index(h)) { /* no memory for the index: a scan */
        for (size_t i = 0; i < h->nrecs; i++) {
            if (h->recs[i].window == window) {
                return &h->recs[i];
            }
        }
        return NULL;
    }
    for (size_t at = pd_uix_first(&h->rix, pd_uix_hash_i64(window)); h->rix.slot[at];
         at = pd_uix_next(&h->rix, at)) {
        size_t i = pd_uix_at(&h->rix, at);
        if (i < h->nrecs && h->recs[i].window == window) {
            return &h->recs[i];
        }
    }
    return NULL;
}

/* The records of windows the table forgot go (before the array grows). */
static void rec_prune(pd_hook_t *h)
{
    size_t k = 0;
    for (size_t i = 0; i < h->nrecs; i++) {
        if (pd_windows_get(h->n->win, h->recs[i].window) != NULL) {
            h->recs[k++] = h->recs[i];
        }
    }
    if (k < h->nrecs) {
        h->nrecs = k;
        pd_uix_free(&h->rix); /* positions moved: put again at the next lookup */
        memset(&h->rix, 0, sizeof(h->rix));
    }
}

/* w's record, made empty when it has none; NULL without memory. */
static hrec_t *rec_of(pd_hook_t *h, pd_window_t *w)
{
    hrec_t *r = rec_find(h, w->id);
    if (r != NULL) {
        return r;
    }
    if (h->nrecs == h->caprecs) {
        rec_prune(h);
    }
    if (PU_GROW(h->recs, h->caprecs, h->nrecs + 1) != 0) {
        return NULL;
    }
    r = &h->recs[h->nrecs++];
    memset(r, 0, sizeof(*r));
    r->window = w->id;
    return r;
}

/* The hook's state changed: the window keeps "held" while it runs (the
 * table does not forget it) and the journal writes its record again. */
static void rec_touch(pd_hook_t *h, pd_window_t *w, const hrec_t *r)
{
    w->held = r->running;
    pd_windows_touch(h->n->win, w, NULL);
}

/* Window `window`'s hook into a record's three fields (borrowed), left as
 * they are when it has none. */
static void rec_out(pd_hook_t *h, int64_t window, char **state, int64_t *exit, char **output)
{
    const hrec_t *r = rec_find(h, window);
    if (r != NULL) {
        *state = r->state[0] ? (char *)r->state : NULL;
        *exit = r->exited ? r->exit : PP_NONE;
        *output = r->output[0] ? (char *)r->output : NULL;
    }
}

void pd_hook_record(pd_hook_t *h, int64_t window, pp_state_window_t *s)
{
    rec_out(h, window, &s->hook, &s->hook_exit, &s->hook_output);
}

void pd_hook_info(pd_hook_t *h, int64_t window, pp_window_t *out)
{
    rec_out(h, window, &out->hook, &out->hook_exit, &out->hook_output);
}

int pd_hook_restore(pd_hook_t *h, pd_window_t *w, const pp_state_window_t *s)
{
    hrec_t *r = rec_find(h, w->id);
    bool any =
        (s->hook && s->hook[0]) || s->hook_exit != PP_NONE || (s->hook_output && s->hook_output[0]);
    if (h == NULL || (r == NULL && !any)) { /* (no hook module: a test's daemon) */
        w->held =
            s->hook && (strcmp(s->hook, "running") == 0 || strcmp(s->hook, PD_HOOK_WAITING) == 0);
        return 0;
    }
    if (r == NULL && (r = rec_of(h, w)) == NULL) {
        return PROFD_ENOMEM;
    }
    snprintf(r->state, sizeof(r->state), "%s", s->hook ? s->hook : "");
    r->running = strcmp(r->state, "running") == 0 || strcmp(r->state, PD_HOOK_WAITING) == 0;
    r->exited = s->hook_exit != PP_NONE;
    r->exit = r->exited ? s->hook_exit : 0;
    snprintf(r->output, sizeof(r->output), "%s", s->hook_output ? s->hook_output : "");
    w->held = r->running;
    return 0;
}

bool pd_hook_waiting(pd_hook_t *h, int64_t window)
{
    const hrec_t *r = rec_find(h, window);
    return r != NULL && strcmp(r->state, PD_HOOK_WAITING) == 0;
}

/* ---- the user ---- */

static int user_check(pd_hook_t *h, const char *user, const char *cmd, char *err, size_t errlen)
{
    uid_t euid = geteuid();
    if (user[0] == '\0') {
        if (euid == 0 && cmd[0]) {
            snprintf(err, errlen,
                     "hooks.after_window.user: must name an unprivileged user when profd runs "
                     "as root (the hook never runs as root)");
            return PROFD_EINVAL;
        }
        struct passwd *pw = getpwuid(euid);
        snprintf(h->user, sizeof(h->user), "%s", pw ? pw->pw_name : "");
        snprintf(h->home, sizeof(h->home), "%s", pw ? pw->pw_dir : "/");
        return 0;
    }
    errno = 0;
    struct passwd *pw = getpwnam(user);
    if (pw == NULL) {
        snprintf(err, errlen, "hooks.after_window.user: no user '%s'", user);
        return PROFD_EINVAL;
    }
    if (pw->pw_uid == 0) {
        snprintf(err, errlen, "hooks.after_window.user: '%s' is root, not an unprivileged user",
                 user);
        return PROFD_EINVAL;
    }
    if (euid != 0 && pw->pw_uid != euid) {
        snprintf(err, errlen,
                 "hooks.after_window.user: '%s' is not the daemon's user (uid %u) and profd "
                 "does not run as root, so it cannot switch to it",
                 user, (unsigned)euid);
        return PROFD_EINVAL;
    }
    h->as_user = euid == 0;
    h->uid = pw->pw_uid;
    h->gid = pw->pw_gid;
    snprintf(h->user, sizeof(h->user), "%s", user);
    snprintf(h->home, sizeof(h->home), "%s", pw->pw_dir ? pw->pw_dir : "/");
    return 0;
}

int pd_hook_check(const pd_config_t *cfg, char *err, size_t errlen)
{
    pd_hook_t *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    int rv = user_check(h, cfg->hook_user, cfg->hook_command, err, errlen);
    free(h);
    return rv;
}

int pd_hook_init(pd_hook_t **out, pd_node_t *n, char *err, size_t errlen)
{
    pd_hook_t *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    h->n = n;
    int rv = user_check(h, n->cfg->hook_user, n->cfg->hook_command, err, errlen);
    if (rv != 0) {
        free(h);
        return rv;
    }
    *out = h;
    return 0;
}

/* ---- the end of a run ---- */

static void run_closed(uv_handle_t *hd)
{
    run_t *r = hd->data;
    if (--r->open > 0) {
        return;
    }
    for (run_t **pp = &r->h->runs; *pp; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    free(r);
}

static void run_close(run_t *r)
{
    if (r->closing) {
        return;
    }
    r->closing = true;
    uv_close((uv_handle_t *)&r->proc, run_closed);
    uv_close((uv_handle_t *)&r->out, run_closed);
    uv_close((uv_handle_t *)&r->timer, run_closed);
}

/* The tail of its output, as text JSON can carry (bytes outside printable
 * ASCII, but for newlines and tabs, become '?'). */
static void tail_copy(const run_t *r, char *dst, size_t cap)
{
    size_t from = r->len > cap - 1 ? r->len - (cap - 1) : 0;
    size_t k = 0;
    for (size_t i = from; i < r->len; i++) {
        unsigned char c = (unsigned char)r->buf[i];
        dst[k++] = (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ? (char)c : '?';
    }
    dst[k] = '\0';
}

static void run_record(run_t *r)
{
    pd_node_t *n = r->h->n;
    pd_window_t *w = pd_windows_get(n->win, r->window);
    hrec_t *hr = w ? rec_of(r->h, w) : NULL;
    r->recorded = true;
    if (w == NULL) {
        return;
    }
    if (hr == NULL) { /* no memory: the window is no longer held, what became of it unknown */
        w->held = false;
        pd_windows_touch(n->win, w, NULL);
        return;
    }
    hr->running = false;
    hr->exited = !r->timed_out && r->signal == 0;
    hr->exit = hr->exited ? r->status : 0;
    if (r->timed_out) {
        snprintf(hr->state, sizeof(hr->state), "timed out after %llds (killed)",
                 (long long)(n->cfg->hook_timeout_ms / 1000));
    } else if (r->signal) {
        snprintf(hr->state, sizeof(hr->state), "killed by signal %d", r->signal);
    } else {
        snprintf(hr->state, sizeof(hr->state), "exit %lld", (long long)r->status);
    }
    tail_copy(r, hr->output, sizeof(hr->output));
    bool ok = hr->exited && hr->exit == 0;
    PD_LOG(n->log, ok ? PD_LOG_INFO : PD_LOG_WARN, "hook", "window %s: after-window hook: %s",
           w->name, hr->state);
    rec_touch(r->h, w, hr);
    pd_retention_kick(n->retention);
}

/* Exited and its output read (or the drain time is over): recorded. */
static void run_maybe_done(run_t *r)
{
    if (r->exited && r->eof && !r->recorded) {
        run_record(r);
        run_close(r);
    }
}

/* Every process of the hook's user still carrying the mark of window's
 * run in its environment (PROFD_HOOK_RUN): killed. A descendant that left
 * the hook's process group and session (setsid) keeps its environment, so
 * it goes with the group at the timeout and at a stop. Best effort: what
 * /proc shows the daemon (under the shipped unit's ProtectProc=invisible,
 * nothing of another user: systemd's KillMode=control-group then kills
 * them at the stop). */
static void kill_marked(const pd_hook_t *h, int64_t window)
{
    char mark[128], path[64];
    int ml =
        snprintf(mark, sizeof(mark), "PROFD_HOOK_RUN=%s-%lld", h->n->instance, (long long)window);
    uid_t uid = h->as_user ? h->uid : geteuid();
    size_t cap = 256 * 1024;
    char *buf = malloc(cap);
    DIR *d = opendir("/proc");
    struct dirent *de;
    struct stat st;
    while (buf && d && ml > 0 && (size_t)ml < sizeof(mark) && (de = readdir(d)) != NULL) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9' || atoi(de->d_name) == getpid()) {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/%.20s", de->d_name);
        if (stat(path, &st) != 0 || st.st_uid != uid) {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/%.20s/environ", de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, cap) : -1;
        if (fd >= 0) {
            close(fd);
        }
        for (ssize_t i = 0; i < n;) {
            size_t l = strnlen(buf + i, (size_t)(n - i));
            if (l == (size_t)ml && memcmp(buf + i, mark, l) == 0) {
                kill((pid_t)atoi(de->d_name), SIGKILL);
                break;
            }
            i += (ssize_t)l + 1;
        }
    }
    if (d) {
        closedir(d);
    }
    free(buf);
}

static void on_timer(uv_timer_t *t)
{
    run_t *r = t->data;
    if (!r->exited) { /* its time is up: the whole process group goes */
        r->timed_out = true;
        if (r->proc.pid > 0) {
            kill(-r->proc.pid, SIGKILL);
        }
        kill_marked(r->h, r->window);
        return; /* its exit follows */
    }
    r->eof = true; /* drained long enough */
    run_maybe_done(r);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
    run_t *r = p->data;
    r->exited = true;
    r->status = status;
    r->signal = sig;
    if (!r->eof) { /* a child of it may hold the pipe: wait a little, no more */
        uv_timer_stop(&r->timer);
        uv_timer_start(&r->timer, on_timer, DRAIN_MS, 0);
    }
    run_maybe_done(r);
}

static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *buf)
{
    run_t *r = hd->data;
    (void)suggested;
    if (r->len > PD_HOOK_TAIL) { /* keep the last PD_HOOK_TAIL bytes, make room */
        memmove(r->buf, r->buf + r->len - PD_HOOK_TAIL, PD_HOOK_TAIL);
        r->len = PD_HOOK_TAIL;
    }
    *buf = uv_buf_init(r->buf + r->len, (unsigned)(sizeof(r->buf) - r->len));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    run_t *r = s->data;
    (void)buf;
    if (nread > 0) {
        r->len += (size_t)nread;
    } else if (nread < 0) {
        uv_read_stop(s);
        r->eof = true;
        run_maybe_done(r);
    }
}

/* ---- starting one ---- */

/* The environment: the daemon's, the window's PROFD_* and, switching
 * users, that user's HOME, USER and LOGNAME. NULL when out of memory. */
static char **env_make(const pd_hook_t *h, const pd_window_t *w)
{
    size_t n = 0;
    while (environ && environ[n]) {
        n++;
    }
    char **env = calloc(n + 10, sizeof(*env));
    char *own[9] = {NULL};
    size_t k = 0, o = 0;
    if (env == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *e = environ[i];
        bool ours = strncmp(e, "PROFD_WINDOW_", 13) == 0 || strncmp(e, "PROFD_JOB=", 10) == 0 ||
                    strncmp(e, "PROFD_SAVE_PATH=", 16) == 0 ||
                    strncmp(e, "PROFD_HOOK_RUN=", 15) == 0;
        bool who = h->as_user && (strncmp(e, "HOME=", 5) == 0 || strncmp(e, "USER=", 5) == 0 ||
                                  strncmp(e, "LOGNAME=", 8) == 0);
        if (!ours && !who) {
            env[k++] = (char *)e;
        }
    }
    char buf[PP_MAX_PATH + 64];
#define PUT(...)                                                                                   \
    (snprintf(buf, sizeof(buf), __VA_ARGS__), own[o] = strdup(buf), env[k++] = own[o++])
    PUT("PROFD_WINDOW_PATH=%s", w->dir);
    PUT("PROFD_WINDOW_ID=%lld", (long long)w->id);
    PUT("PROFD_WINDOW_NAME=%s", w->name);
    PUT("PROFD_JOB=%s", w->job);
    PUT("PROFD_SAVE_PATH=%.*s", (int)w->root_len, w->dir);
    PUT("PROFD_HOOK_RUN=%s-%lld", h->n->instance, (long long)w->id); /* kill_marked */
    if (h->as_user) {
        PUT("HOME=%s", h->home);
        PUT("USER=%s", h->user);
        PUT("LOGNAME=%s", h->user);
    }
#undef PUT
    for (size_t i = 0; i < o; i++) {
        if (own[i] == NULL) {
            for (size_t j = 0; j < o; j++) {
                free(own[j]);
            }
            free(env);
            return NULL;
        }
    }
    return env;
}

static void env_free(char **env)
{
    size_t i = 0;
    while (env[i] && strncmp(env[i], "PROFD_WINDOW_PATH=", 18) != 0) {
        i++;
    }
    for (; env[i]; i++) { /* ours come last */
        free(env[i]);
    }
    free(env);
}

static int spawn(pd_hook_t *h, run_t *r, const pd_window_t *w, uv_file wfd)
{
    char *args[] = {"/bin/sh", "-c", (char *)h->n->cfg->hook_command, NULL};
    char **env = env_make(h, w);
    if (env == NULL) {
        return UV_ENOMEM;
    }
    uv_stdio_container_t io[3] = {{.flags = UV_IGNORE},
                                  {.flags = UV_INHERIT_FD, .data.fd = wfd},
                                  {.flags = UV_INHERIT_FD, .data.fd = wfd}};
    uv_process_options_t o = {.exit_cb = on_exit_cb,
                              .file = args[0],
                              .args = args,
                              .env = env,
                              .cwd = w->dir,
                              .flags = UV_PROCESS_DETACHED,
                              .stdio_count = 3,
                              .stdio = io};
    if (h->as_user) {
        o.flags |= UV_PROCESS_SETUID | UV_PROCESS_SETGID;
        o.uid = h->uid;
        o.gid = h->gid;
    }
    int rv = uv_spawn(&h->n->loop->uv, &r->proc, &o);
    env_free(env);
    return rv;
}

static void not_started(pd_hook_t *h, pd_window_t *w, const char *why)
{
    hrec_t *r = rec_of(h, w);
    PD_LOG(h->n->log, PD_LOG_WARN, "hook", "window %s: after-window hook not started: %.140s",
           w->name, why);
    if (r == NULL) {
        w->held = false;
        pd_windows_touch(h->n->win, w, NULL);
        return;
    }
    r->running = false;
    r->exited = false;
    r->output[0] = '\0';
    snprintf(r->state, sizeof(r->state), "not started: %.140s", why);
    rec_touch(h, w, r);
}

void pd_hook_window(pd_hook_t *h, pd_window_t *w)
{
    if (h == NULL || h->n->cfg->hook_command[0] == '\0' || h->stopping) {
        return;
    }
    uv_loop_t *loop = &h->n->loop->uv;
    uv_file fds[2];
    hrec_t *hr = rec_of(h, w);
    run_t *r = calloc(1, sizeof(*r));
    int rv = r ? uv_pipe(fds, 0, 0) : UV_ENOMEM;
    if (rv != 0) {
        free(r);
        not_started(h, w, uv_strerror(rv));
        return;
    }
    r->h = h;
    r->window = w->id;
    uv_pipe_init(loop, &r->out, 0);
    uv_timer_init(loop, &r->timer);
    r->out.data = r->timer.data = r->proc.data = r;
    r->open = 3;
    r->next = h->runs;
    h->runs = r;
    rv = spawn(h, r, w, fds[1]);
    r->proc.data = r;
    close(fds[1]);
    if (rv != 0) {
        close(fds[0]);
        r->recorded = true;
        run_close(r);
        not_started(h, w, uv_strerror(rv));
        return;
    }
    uv_pipe_open(&r->out, fds[0]);
    uv_read_start((uv_stream_t *)&r->out, on_alloc, on_read);
    uv_timer_start(&r->timer, on_timer, (uint64_t)h->n->cfg->hook_timeout_ms, 0);
    PD_LOG(h->n->log, PD_LOG_INFO, "hook", "window %s: after-window hook started (pid %d)", w->name,
           r->proc.pid);
    if (hr == NULL) {
        return; /* no memory for its record: it runs, unrecorded */
    }
    hr->running = true;
    hr->exited = false;
    hr->output[0] = '\0';
    snprintf(hr->state, sizeof(hr->state), "running");
    rec_touch(h, w, hr);
}

void pd_hook_defer(pd_hook_t *h, pd_window_t *w)
{
    if (h == NULL || h->n->cfg->hook_command[0] == '\0' || h->stopping) {
        return;
    }
    hrec_t *r = rec_of(h, w);
    if (r != NULL) {
        r->running = true;
        snprintf(r->state, sizeof(r->state), "%s", PD_HOOK_WAITING);
        rec_touch(h, w, r);
    }
}

void pd_hook_resume(pd_hook_t *h)
{
    for (pd_window_t *w = h ? h->n->win->head : NULL; w; w = w->next) {
        hrec_t *r = rec_find(h, w->id);
        if (r == NULL || !r->running) {
            continue;
        }
        r->running = false;
        w->held = false;
        if (h->n->cfg->hook_command[0]) {
            pd_hook_window(h, w); /* interrupted by the restart: again */
        } else {
            snprintf(r->state, sizeof(r->state),
                     "not run again after a restart: no hooks.after_window.command");
            rec_touch(h, w, r);
        }
    }
}

void pd_hook_stop(pd_hook_t *h)
{
    if (h == NULL) {
        return;
    }
    h->stopping = true;
    for (run_t *r = h->runs; r; r = r->next) {
        if (!r->exited && r->proc.pid > 0) {
            kill(-r->proc.pid, SIGKILL);
        }
        kill_marked(h, r->window);
        run_close(r); /* unrecorded: its window stays "running", run again after a restart */
    }
}

void pd_hook_fini(pd_hook_t *h)
{
    if (h == NULL) {
        return;
    }
    while (h->runs) { /* only when the loop could not run out */
        run_t *r = h->runs;
        h->runs = r->next;
        free(r);
    }
    free(h->recs);
    pd_uix_free(&h->rix);
    free(h);
}
