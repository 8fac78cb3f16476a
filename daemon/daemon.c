// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The composition root (see daemon.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply.h"
#include "clock.h"
#include "daemon.h"
#include "finish.h"
#include "gather.h"
#include "metrics.h"
#include "profd/errors.h"
#include "profd/version.h"
#include "hook.h"
#include "report.h"
#include "retention.h"
#include "trigger.h"
#include "wcaps.h"

#define TICK_MS               1000
#define STALL_MIN_MS          500 /* a tick this late: the daemon stalled */
#define KEEP_FINISHED_WINDOWS 256

/* ---- hooks: news from the lower layers ---- */

static void on_broadcast(uv_idle_t *h)
{
    pd_daemon_t *d = h->data;
    uv_idle_stop(h);
    d->broadcast_due = false;
    pd_journal_sync(d->journal); /* no worker hears of a plan the daemon could forget */
    d->node.gen_published_us = pd_now_us();
    if (d->worker) {
        pd_worker_broadcast(d->worker);
    }
    pd_coord_broadcast(d->coord);
}

/* The window table: plans changed. A new generation, sent once the current
 * loop iteration is over (changes coalesce), and kept over a restart. */
static void windows_changed(void *arg)
{
    pd_daemon_t *d = arg;
    pd_journal_dirty(d->journal);
    d->node.gen++;
    if (!d->broadcast_due && !d->node.stopping) {
        d->broadcast_due = true;
        uv_idle_start(&d->broadcast, on_broadcast);
    }
}

/* The window table: state worth keeping changed. */
static void state_dirty(void *arg)
{
    pd_journal_dirty(((pd_daemon_t *)arg)->journal);
}

/* A coordinator's node list: a node joined, or went for good. */
static void node_changed(void *arg, const char *name, const char *instance, bool gone)
{
    pd_journal_node(((pd_daemon_t *)arg)->journal, name, instance, gone);
}

/* The registry and the link: what the journal keeps of them. */
static void rank_changed(void *arg, const pd_rank_t *k)
{
    pd_journal_rank(((pd_daemon_t *)arg)->journal, k);
}

static void rank_gone(void *arg, int64_t id)
{
    pd_journal_rank_gone(((pd_daemon_t *)arg)->journal, id);
}

static void durable(void *arg)
{
    pd_journal_sync(((pd_daemon_t *)arg)->journal);
}

/* A reply that acknowledges what a peer then forgets: sent once the
 * journal holds it. */
static void reply_durable(void *arg, pd_req_t *req, char *buf, size_t len)
{
    pd_journal_reply(((pd_daemon_t *)arg)->journal, req, buf, len);
}

static void coordinator_known(void *arg, const char *instance)
{
    pd_journal_coordinator(((pd_daemon_t *)arg)->journal, instance);
}

static void windows_gather(void *arg, pd_window_t *w, pd_member_t *m, size_t cap, int64_t owner)
{
    pd_daemon_t *d = arg;
    pd_finish_gather(&d->node, w, m, cap, owner);
}

/* A window has nothing left to wait for: a node daemon forwards the
 * coordinator's windows, everything else gets its manifest here. */
static void windows_complete(void *arg, pd_window_t *w)
{
    pd_daemon_t *d = arg;
    if (w->mirror) {
        pd_link_forward(d->link, w);
    } else {
        pd_finish_manifest(&d->node, w);
    }
}

static void roster_changed(void *arg)
{
    pd_link_roster_changed(((pd_daemon_t *)arg)->link);
}

static void tick_update(pd_daemon_t *d);

static void ranks_changed(void *arg)
{
    tick_update(arg);
}

static int64_t remote_latency_us(void *arg)
{
    return pd_coord_latency_us(((pd_daemon_t *)arg)->coord);
}

static void status_fill(void *arg, pp_status_reply_t *s)
{
    pd_daemon_t *d = arg;
    s->mode = d->coord ? "coordinator" : (d->cfg.coordinator_url[0] ? "node" : "standalone");
    s->coordinator = d->cfg.coordinator_url[0] ? d->cfg.coordinator_url : NULL;
    s->connected = pd_link_connected(d->link);
    s->nodes = (int64_t)pd_coord_nodes(d->coord);
    pd_link_backlog(d->link, &s->backlog_files, &s->backlog_bytes);
    s->rate_limited = pd_worker_limited(d->worker) + pd_control_limited(d->control);
}

static int metrics_body(void *arg, char **body, size_t *len)
{
    return pd_metrics_text(arg, body, len);
}

/* ---- liveness tick ---- */

/* Until a window is planned, no delivery has been measured and the first
 * on-demand window would be planned with the 2 ms default, however many
 * ranks a plan must reach. So send the unchanged plans once more when the
 * first peers (ranks or node daemons) are registered, and again whenever
 * their number has doubled since: each peer's next long poll is a sample. */
static void probe_latency(pd_daemon_t *d)
{
    int64_t peers = (int64_t)d->reg.count + (int64_t)pd_coord_nodes(d->coord);
    if (peers > 0 && peers >= 2 * d->lat_probe_peers && !d->broadcast_due) {
        d->lat_probe_peers = peers;
        windows_changed(d);
    }
}

/* A tick much later than its period means the daemon itself did not run
 * (SIGSTOP, swap, a slow disk): nothing could be heard meanwhile, so the
 * stall is credited to every rank, node daemon and deadline that counts
 * silence, before any of them is judged. Libuv runs due timers before it
 * polls, so this tick comes before the messages that waited. */
static void credit_stall(pd_daemon_t *d, int64_t now_ms)
{
    int64_t stall = now_ms - d->last_tick_ms - TICK_MS;
    d->last_tick_ms = now_ms;
    if (stall < STALL_MIN_MS) {
        return;
    }
    PD_LOG(&d->log, stall >= 2 * TICK_MS ? PD_LOG_WARN : PD_LOG_DEBUG, "daemon",
           "stalled for %lld ms (stopped, swapping or blocked): not counted as silence",
           (long long)stall);
    d->stalled_ms += stall;
    pd_registry_credit(&d->reg, stall);
    pd_coord_credit(d->coord, stall);
    pd_windows_credit(&d->win, stall);
}

/* A window's report written: the last of its large state (its record of
 * step times, its documents) is free, and glibc keeps the pages it freed
 * in its heaps, so the resident size stays at that window's peak. Give
 * them back, once a report: the next window's peak then starts from what
 * is live (at 16,384 ranks, RSS 62 MiB after a window against 37 before
 * the first; VmHWM 62 after the first window, 73 after the next). */
static void trim_heap(pd_daemon_t *d)
{
    if (d->node.stats.reports == d->trimmed_reports) {
        return;
    }
    d->trimmed_reports = d->node.stats.reports;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

static void on_tick(uv_timer_t *h)
{
    pd_daemon_t *d = h->data;
    credit_stall(d, pd_now_ms());
    probe_latency(d);
    pd_worker_tick(d->worker, pd_now_ms());
    pd_coord_tick(d->coord, pd_now_ms());
    pd_trigger_tick(&d->node, pd_now_ms());
    pd_finish_retry(&d->node, pd_now_ms());
    pd_report_tick(&d->node, pd_now_ms());
    trim_heap(d);
    pd_windows_trim(&d->win, KEEP_FINISHED_WINDOWS);
    if (pd_wcaps_kept(&d->node)) {
        pd_journal_sync(d->journal); /* compacts them again once kept long enough */
    }
    tick_update(d);
}

static void tick_update(pd_daemon_t *d)
{
    bool want = (d->reg.count > 0 || pd_coord_nodes(d->coord) > 0 || d->node.manifests_waiting ||
                 d->wrec.n > 0 || pd_wcaps_kept(&d->node)) &&
                !d->node.stopping;
    if (want && !d->tick_running) {
        d->last_tick_ms = pd_now_ms();
        uv_timer_start(&d->tick, on_tick, TICK_MS, TICK_MS);
        d->tick_running = true;
    } else if (!want && d->tick_running) {
        uv_timer_stop(&d->tick);
        d->tick_running = false;
    }
}

/* ---- start / stop ---- */

static void begin_stop(pd_daemon_t *d)
{
    if (d->node.stopping) {
        return;
    }
    d->node.stopping = true;
    PD_LOG(&d->log, PD_LOG_INFO, "daemon", "stopping");
    d->watchdog = pd_watchdog_start(d->stop_timeout_ms);
    pd_journal_drop_replies(d->journal); /* its held replies go before the endpoints close */
    pd_http_close(d->metrics);
    d->metrics = NULL;
    pd_control_fini(d->control);
    d->control = NULL;
    pd_link_fini(d->link);
    d->link = NULL;
    pd_coord_stop(d->coord);
    pd_worker_fini(d->worker);
    d->worker = NULL;
    uv_idle_stop(&d->broadcast);
    uv_close((uv_handle_t *)&d->broadcast, NULL);
    uv_timer_stop(&d->tick);
    uv_close((uv_handle_t *)&d->tick, NULL);
    uv_close((uv_handle_t *)&d->stop_async, NULL);
    pd_journal_stop(d->journal);
    pd_hook_stop(d->node.hook);
    pd_retention_stop(d->node.retention);
    for (int i = 0; i < d->loop.nsig; i++) {
        uv_signal_stop(&d->loop.sig[i]);
    }
    uv_unref((uv_handle_t *)&d->loop.async); /* let the loop end once work is done */
}

static void on_stop_async(uv_async_t *h)
{
    begin_stop(h->data);
}

static void on_signal(int signum, void *arg)
{
    pd_daemon_t *d = arg;
    if (signum == SIGHUP) {
        d->reload_count++;
        PD_LOG(&d->log, PD_LOG_INFO, "daemon", "SIGHUP: reloading the profiling config");
        pd_apply_own(&d->node);
        pd_retention_kick(d->node.retention); /* and a retention pass now */
        return;
    }
    begin_stop(d);
}

void pd_daemon_request_stop(pd_daemon_t *d)
{
    uv_async_send(&d->stop_async);
}

static void make_instance(pd_daemon_t *d)
{
    unsigned char r[8] = {0};
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r)) {
        int64_t t = pd_now_us() ^ ((int64_t)getpid() << 20);
        memcpy(r, &t, sizeof(r));
    }
    if (fd >= 0) {
        close(fd);
    }
    snprintf(d->instance, sizeof(d->instance), "%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2],
             r[3], r[4], r[5], r[6], r[7]);
}

static int absolute(const char *path, char *out, size_t len)
{
    char cwd[PD_PATH_MAX];
    if (path[0] == '/') {
        return (size_t)snprintf(out, len, "%s", path) < len ? 0 : PROFD_EINVAL;
    }
    if (getcwd(cwd, sizeof(cwd)) == NULL) {
        return PROFD_EIO;
    }
    return (size_t)snprintf(out, len, "%s/%s", cwd, path) < len ? 0 : PROFD_EINVAL;
}

static int prepare_dirs(pd_daemon_t *d, char *err, size_t errlen)
{
    if (pd_mkdirs(d->cfg.run_dir, 0755) != 0) {
        snprintf(err, errlen, "cannot create run dir %s: %s", d->cfg.run_dir, strerror(errno));
        return PROFD_EIO;
    }
    if (absolute(d->cfg.save_path, d->save_path, sizeof(d->save_path)) != 0 ||
        absolute(d->cfg.spool_dir, d->spool, sizeof(d->spool)) != 0) {
        snprintf(err, errlen, "save_path or spool path too long");
        return PROFD_EINVAL;
    }
    if (pd_mkdirs(d->save_path, 0755) != 0) {
        snprintf(err, errlen, "cannot create save_path %s: %s", d->save_path, strerror(errno));
        return PROFD_EIO;
    }
    struct stat st;
    if (stat(d->save_path, &st) == 0 && (st.st_mode & 0002) && !d->cfg.writable_save_path) {
        snprintf(err, errlen,
                 "save_path %s is writable by others (mode %04o): another user could replace the "
                 "daemon's journal there; chmod o-w it, or set security.writable_save_path: true",
                 d->save_path, (unsigned)(st.st_mode & 07777));
        return PROFD_EPATH;
    }
    if (pd_mkdirs(d->spool, 0755) != 0) {
        snprintf(err, errlen, "cannot create spool %s: %s", d->spool, strerror(errno));
        return PROFD_EIO;
    }
    /* workers of any uid write their captures below it, like /tmp */
    if (chmod(d->spool, 01777) != 0) {
        snprintf(err, errlen, "cannot set the mode of spool %s: %s", d->spool, strerror(errno));
        return PROFD_EIO;
    }
    return 0;
}

/* security.socket_group: a group name, or a numeric gid that names none. */
static int socket_group(pd_daemon_t *d, char *err, size_t errlen)
{
    const char *name = d->cfg.socket_group;
    struct group gr, *res = NULL;
    char buf[16384];
    if (name[0] == '\0') {
        return 0;
    }
    int rc = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
    if (res != NULL) {
        d->node.socket_gid = (int64_t)gr.gr_gid;
    } else if (strspn(name, "0123456789") == strlen(name) && strlen(name) <= 10 &&
               strtoll(name, NULL, 10) < 4294967295LL) {
        d->node.socket_gid = strtoll(name, NULL, 10);
    } else {
        snprintf(err, errlen, "security.socket_group: no group named '%s'%s%s", name,
                 rc != 0 ? ": " : "", rc != 0 ? strerror(rc) : "");
        return PROFD_ECONFIG;
    }
    d->node.chgrp = true;
    return 0;
}

static int check_roles(const pd_config_t *cfg, char *err, size_t errlen)
{
    if (cfg->coordinator && cfg->coordinator_url[0]) {
        snprintf(err, errlen, "a daemon is either a coordinator or a node of one, not both");
        return PROFD_ECONFIG;
    }
    if (cfg->coordinator && cfg->coordinator_listen[0] == '\0') {
        snprintf(err, errlen,
                 "a coordinator needs coordinator.listen (e.g. tls+tcp://0.0.0.0:7710)");
        return PROFD_ECONFIG;
    }
    return 0;
}

/* The shared part every endpoint receives, and the hooks news goes up by. */
static void wire(pd_daemon_t *d)
{
    pd_node_t *n = &d->node;
    n->cfg = &d->cfg;
    n->log = &d->log;
    n->loop = &d->loop;
    n->reg = &d->reg;
    n->win = &d->win;
    n->hist = &d->hist;
    n->wrec = &d->wrec;
    n->strag = &d->strag;
    n->instance = d->instance;
    n->name = d->name;
    n->spool = d->spool;
    n->save_path = d->save_path;
    d->budget.cap = d->cfg.request_memory;
    n->budget = &d->budget;
    n->uid = (int64_t)getuid();
    n->gid = (int64_t)getgid();
    n->gen = 1;
    n->hooks = (pd_node_hooks_t){
        .roster_changed = roster_changed,
        .ranks_changed = ranks_changed,
        .remote_latency_us = remote_latency_us,
        .status = status_fill,
        .rank_changed = rank_changed,
        .rank_gone = rank_gone,
        .durable = durable,
        .reply_durable = reply_durable,
        .coordinator_known = coordinator_known,
        .arg = d,
    };
    d->win.follower = d->cfg.coordinator_url[0] != '\0';
    d->win.hooks = (pd_windows_hooks_t){
        .changed = windows_changed,
        .dirty = state_dirty,
        .gather = windows_gather,
        .complete = windows_complete,
        .arg = d,
    };
}

/* The loop and its handles. */
static int loop_start(pd_daemon_t *d, char *err, size_t errlen)
{
    if (pd_loop_init(&d->loop) != 0) {
        snprintf(err, errlen, "cannot initialise the event loop");
        return PROFD_EINTERNAL;
    }
    uv_idle_init(&d->loop.uv, &d->broadcast);
    d->broadcast.data = d;
    uv_timer_init(&d->loop.uv, &d->tick);
    d->tick.data = d;
    uv_async_init(&d->loop.uv, &d->stop_async, on_stop_async);
    d->stop_async.data = d;
    return 0;
}

/* The coordinator's node list, as its journal keeps it. */
static bool journal_node_at(void *arg, size_t i, const char **name, const char **instance)
{
    return pd_coord_node_at(arg, i, name, instance);
}

static int journal_node_restore(void *arg, const char *name, const char *instance)
{
    return pd_coord_await(arg, name, instance, pd_now_ms());
}

/* A coordinator: the node endpoint and the journal a restart left. The
 * loop does not run yet: no node registers before the state is back. */
static int coordinator_start(pd_daemon_t *d, pd_journal_loaded_t *jl, char *err, size_t errlen)
{
    if ((d->coord = pd_coord_new(&d->node, node_changed, d)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    const pd_journal_role_t role = {.file = PD_COORDINATOR_JOURNAL,
                                    .legacy = PD_COORDINATOR_LEGACY,
                                    .coordinator = true,
                                    .node_at = journal_node_at,
                                    .node_restore = journal_node_restore,
                                    .arg = d->coord};
    int rv = pd_journal_open_as(&d->journal, &d->node, &role, d->instance, sizeof(d->instance), jl,
                                err, errlen);
    if (rv == 0) {
        rv = pd_coord_listen(d->coord, err, errlen);
    }
    if (rv == 0 && jl->found) {
        PD_LOG(&d->log, PD_LOG_INFO, "journal",
               "%s/%s: instance %s, %zu unfinished window(s), %zu node(s) awaited", d->save_path,
               PD_COORDINATOR_JOURNAL, d->instance, d->win.count, jl->nodes);
    }
    for (pd_window_t *w = d->win.head, *next; rv == 0 && w; w = next) {
        next = w->next;
        pd_windows_maybe_finish(&d->win, w); /* loaded windows with nothing left to wait for */
    }
    return rv;
}

int pd_daemon_check(const pd_config_t *cfg, char *err, size_t errlen)
{
    int rv;
    pd_daemon_t *d = calloc(1, sizeof(*d)); /* for socket_group's answer only */
    if (d == NULL) {
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    d->cfg = *cfg;
    if ((rv = check_roles(cfg, err, errlen)) == 0 && cfg->job_certificates &&
        !pd_rep_peer_cn_known()) {
        snprintf(err, errlen,
                 "security.job_certificates: this profd's nng cannot read the common name of a "
                 "peer's certificate (NNG_OPT_TLS_PEER_CN, nng 1.6 or later)");
        rv = PROFD_ECONFIG;
    }
    if (rv == 0 && ((rv = socket_group(d, err, errlen)) != 0 ||
                    (rv = pd_config_check_control(cfg, err, errlen)) != 0 ||
                    (rv = pd_config_check_links(cfg, err, errlen)) != 0 ||
                    (rv = pd_hook_check(cfg, err, errlen)) != 0)) {
        /* err says why */
    }
    free(d);
    return rv;
}

int pd_daemon_init(pd_daemon_t *d, const pd_config_t *cfg, char *err, size_t errlen)
{
    int rv;
    memset(d, 0, sizeof(*d));
    if ((rv = check_roles(cfg, err, errlen)) != 0) {
        return rv;
    }
    d->cfg = *cfg;
    pd_log_init(&d->log, cfg->log_level);
    pd_registry_init(&d->reg, (size_t)cfg->max_clients);
    d->reg.max_per_peer = (size_t)cfg->max_clients_per_peer;
    d->reg.shared_jobs = cfg->shared_jobs;
    d->reg.job_cn = cfg->job_certificates;
    pd_windows_init(&d->win, &d->log, (size_t)cfg->max_windows);
    pd_history_init(&d->hist, cfg->history_steps, cfg->history_phase_steps,
                    (size_t)cfg->max_clients);
    pd_wrecords_init(&d->wrec);
    pd_straggler_cfg_t sc;
    pd_trigger_settings(cfg, &sc);
    pd_straggler_init(&d->strag, &sc, cfg->straggler_enable);
    wire(d);
    if (cfg->job_certificates && !pd_rep_peer_cn_known()) {
        snprintf(err, errlen,
                 "security.job_certificates: this profd's nng cannot read the common name of a "
                 "peer's certificate (NNG_OPT_TLS_PEER_CN, nng 1.6 or later)");
        rv = PROFD_ECONFIG;
        goto fail_early;
    }
    if ((rv = socket_group(d, err, errlen)) != 0 ||
        (rv = pd_config_check_control(cfg, err, errlen)) != 0 ||
        (rv = pd_config_check_links(cfg, err, errlen)) != 0 ||
        (rv = pd_hook_init(&d->node.hook, &d->node, err, errlen)) != 0) {
        goto fail_early;
    }
    make_instance(d);
    if (cfg->node_name[0]) {
        snprintf(d->name, sizeof(d->name), "%.64s", cfg->node_name);
    } else if (gethostname(d->name, sizeof(d->name)) != 0) {
        snprintf(d->name, sizeof(d->name), "localhost");
    }
    d->name[sizeof(d->name) - 1] = '\0';
    if ((rv = prepare_dirs(d, err, errlen)) != 0 || (rv = loop_start(d, err, errlen)) != 0) {
        goto fail_early;
    }
    if ((rv = pd_retention_init(&d->node.retention, &d->node)) != 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* what a restart left: before anything serves (a coordinator's journal is
     * opened with its node list, in coordinator_start) */
    pd_journal_loaded_t jl = {0};
    if (!cfg->coordinator && (rv = pd_journal_open(&d->journal, &d->node, d->instance,
                                                   sizeof(d->instance), &jl, err, errlen)) != 0) {
        goto fail;
    }
    if ((rv = pd_worker_init(&d->worker, &d->node, err, errlen)) != 0 ||
        (rv = pd_control_init(&d->control, &d->node, err, errlen)) != 0 ||
        (cfg->coordinator && (rv = coordinator_start(d, &jl, err, errlen)) != 0) ||
        (cfg->coordinator_url[0] && (rv = pd_link_init(&d->link, &d->node, err, errlen)) != 0) ||
        (cfg->metrics_url[0] &&
         (rv = pd_http_open(&d->metrics, &d->loop, cfg->metrics_url, "/metrics",
                            PD_METRICS_CONTENT_TYPE,
                            &(pd_http_limits_t){(int)cfg->max_connections,
                                                (int)cfg->max_connections_per_peer, 10000},
                            metrics_body, &d->node, err, errlen)) != 0)) {
        goto fail;
    }
    if (jl.found) {
        PD_LOG(&d->log, PD_LOG_INFO, "journal",
               "instance %s: %zu window(s) and %zu rank(s) kept over a restart (%zu record(s)%s)",
               d->instance, jl.windows, jl.ranks, jl.lines,
               jl.torn ? ", a torn last one ignored" : "");
    }
    pd_link_set_coordinator(d->link, jl.coordinator[0] ? jl.coordinator : NULL);
    pd_journal_start(d->journal);
    if (!cfg->coordinator) {
        pd_journal_resume(d->journal); /* gatherings a restart cut short, windows to finish */
    }
    pd_hook_resume(d->node.hook); /* hooks a restart cut short */
    tick_update(d);
    pd_apply_own(&d->node);
    pd_finish_remove_spool(&d->node, PD_TRASH); /* copies a stopped daemon had not removed yet */
    PD_LOG(&d->log, PD_LOG_INFO, "daemon",
           "profd %s on %s: workers %s, control %s%s%s, save_path %s, spool %s",
           PROFD_VERSION_STRING, d->name, cfg->worker_url, cfg->control_url,
           cfg->control_remote_url[0] ? " and " : "", cfg->control_remote_url, d->save_path,
           d->spool);
    return 0;

fail:
    begin_stop(d);
    pd_loop_fini(&d->loop);
    pd_journal_fini(d->journal);
    d->journal = NULL;
    pd_watchdog_cancel(d->watchdog);
    pd_coord_free(d->coord);
    pd_retention_fini(d->node.retention);
    d->node.retention = NULL;
fail_early:
    pd_hook_fini(d->node.hook);
    d->node.hook = NULL;
    pd_windows_fini(&d->win);
    pd_registry_fini(&d->reg);
    pd_history_fini(&d->hist);
    pd_wrecords_fini(&d->wrec);
    return rv;
}

int pd_daemon_signals(pd_daemon_t *d)
{
    return pd_loop_signals(&d->loop, on_signal, d);
}

int pd_daemon_run(pd_daemon_t *d)
{
    return pd_loop_run(&d->loop);
}

int pd_daemon_fini(pd_daemon_t *d)
{
    begin_stop(d);
    int rv = pd_loop_fini(&d->loop);
    pd_journal_fini(d->journal);
    d->journal = NULL;
    pd_coord_free(d->coord);
    d->coord = NULL;
    pd_hook_fini(d->node.hook);
    pd_retention_fini(d->node.retention);
    d->node.hook = NULL;
    d->node.retention = NULL;
    pd_windows_fini(&d->win);
    pd_registry_fini(&d->reg);
    pd_history_fini(&d->hist);
    pd_wrecords_fini(&d->wrec);
    pd_watchdog_cancel(d->watchdog);
    d->watchdog = NULL;
    return rv;
}
