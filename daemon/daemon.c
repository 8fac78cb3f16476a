/* The daemon context: init, run, stop, fini (see daemon.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "coord.h"
#include "link.h"
#include "state.h"
#include "profd/client.h"
#include "daemon.h"
#include "gather.h"
#include "worker.h"

#define TICK_MS               1000
#define KEEP_FINISHED_WINDOWS 256

int64_t pd_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t pd_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- plan broadcast ---- */

static void on_broadcast(uv_idle_t *h)
{
    pd_daemon_t *d = h->data;
    uv_idle_stop(h);
    d->broadcast_due = false;
    d->gen_published_us = pd_now_us();
    pd_worker_broadcast(d);
    pd_coord_broadcast(d);
}

void pd_daemon_plans_changed(pd_daemon_t *d)
{
    pd_state_changed(d);
    d->gen++;
    if (!d->broadcast_due && !d->stopping) {
        d->broadcast_due = true;
        uv_idle_start(&d->broadcast, on_broadcast);
    }
}

/* ---- latency estimate ---- */

void pd_daemon_latency_sample(pd_daemon_t *d, int64_t us)
{
    if (us < 0 || us > 60 * 1000000LL) {
        return;
    }
    d->lat_samples[d->lat_pos] = us;
    d->lat_pos = (d->lat_pos + 1) % PD_LATENCY_SAMPLES;
    if (d->lat_n < PD_LATENCY_SAMPLES) {
        d->lat_n++;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t pd_daemon_latency_us(const pd_daemon_t *d)
{
    int64_t v[PD_LATENCY_SAMPLES];
    int64_t p99 = 2000;
    if (d->lat_n > 0) {
        memcpy(v, d->lat_samples, (size_t)d->lat_n * sizeof(v[0]));
        qsort(v, (size_t)d->lat_n, sizeof(v[0]), cmp_i64);
        int64_t x = v[(d->lat_n * 99) / 100 < d->lat_n ? (d->lat_n * 99) / 100 : d->lat_n - 1];
        if (x > p99) {
            p99 = x;
        }
    }
    return p99;
}

void pd_daemon_plan_params(const pd_daemon_t *d, pd_plan_params_t *p)
{
    memset(p, 0, sizeof(*p));
    p->now_us = pd_now_us();
    p->latency_us = pd_daemon_latency_us(d) + pd_coord_latency_us(d);
    p->margin_us = d->cfg.align_margin_ms * 1000;
    /* the default job: the one every registered rank shares, if any */
    const char *job = NULL;
    for (pd_rank_t *k = pd_registry_next(&d->reg, NULL); k; k = pd_registry_next(&d->reg, k)) {
        if (job == NULL) {
            job = k->job;
        } else if (strcmp(job, k->job) != 0) {
            job = NULL;
            break;
        }
    }
    p->default_job = job ? job : "default";
}

int pd_daemon_decode(pd_daemon_t *d, pd_req_t *req, const char *endpoint, const void *body,
                     size_t len, pp_msg_t *m)
{
    char err[256];
    int rv = pp_msg_decode(body, len, (size_t)d->cfg.max_msg_bytes, m, err, sizeof(err));
    if (rv != 0) {
        d->bad_requests++;
        PD_LOG(&d->log, PD_LOG_DEBUG, endpoint, "bad request: %s", err);
        pd_req_reply_error(req, rv, "%s", err);
    }
    return rv;
}

void pd_daemon_reply_ack(pd_daemon_t *d, pd_req_t *req)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_ack);
    m.u.ack.gen = d->gen;
    m.u.ack.instance = d->instance;
    pd_req_reply_msg(req, &m);
}

/* ---- liveness tick ---- */

/* Until a window is planned, no delivery has been measured and the first
 * on-demand window would be planned with the 2 ms default, however many
 * ranks a plan must reach. So send the unchanged plans once more when the
 * first peers (ranks or node daemons) are registered, and again whenever
 * their number has doubled since: each peer's next long poll is a sample. */
static void probe_latency(pd_daemon_t *d)
{
    int64_t peers = (int64_t)d->reg.count + (int64_t)pd_coord_nodes(d);
    if (peers > 0 && peers >= 2 * d->lat_probe_peers && !d->broadcast_due) {
        d->lat_probe_peers = peers;
        pd_daemon_plans_changed(d);
    }
}

static void on_tick(uv_timer_t *h)
{
    pd_daemon_t *d = h->data;
    probe_latency(d);
    pd_worker_tick(d, pd_now_ms());
    pd_coord_tick(d, pd_now_ms());
    pd_windows_trim(&d->win, KEEP_FINISHED_WINDOWS);
    pd_daemon_tick_update(d);
}

void pd_daemon_tick_update(pd_daemon_t *d)
{
    bool want = (d->reg.count > 0 || pd_coord_nodes(d) > 0) && !d->stopping;
    if (want && !d->tick_running) {
        uv_timer_start(&d->tick, on_tick, TICK_MS, TICK_MS);
        d->tick_running = true;
    } else if (!want && d->tick_running) {
        uv_timer_stop(&d->tick);
        d->tick_running = false;
    }
}

/* ---- profiling config at start and on SIGHUP ---- */

static void load_profile_config(pd_daemon_t *d)
{
    char err[512];
    int64_t *ids;
    size_t n, nw;
    char **warnings;
    if (d->cfg.profile_config[0] == '\0') {
        return;
    }
    if (d->cfg.coordinator_url[0]) {
        PD_LOG(&d->log, PD_LOG_WARN, "config",
               "%s ignored: windows of a node daemon are planned by its coordinator",
               d->cfg.profile_config);
        return;
    }
    FILE *f = fopen(d->cfg.profile_config, "r");
    if (f == NULL) {
        PD_LOG(&d->log, PD_LOG_ERROR, "config", "cannot read %s: %s", d->cfg.profile_config,
               strerror(errno));
        return;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    char buf[8192];
    size_t k;
    while (mem && (k = fread(buf, 1, sizeof(buf), f)) > 0 && len < (size_t)d->cfg.max_msg_bytes) {
        fwrite(buf, 1, k, mem);
    }
    fclose(f);
    if (mem == NULL || fclose(mem) != 0) {
        free(text);
        return;
    }
    int rv = pd_control_apply_text(d, d->cfg.profile_config, text, len, NULL, 0, NULL, true, &ids,
                                   &n, &warnings, &nw, err, sizeof(err));
    if (rv != 0) {
        PD_LOG(&d->log, PD_LOG_ERROR, "config", "%s", err);
    } else {
        PD_LOG(&d->log, PD_LOG_INFO, "config", "%s: %zu new window(s)", d->cfg.profile_config, n);
    }
    for (size_t i = 0; i < nw; i++) {
        PD_LOG(&d->log, PD_LOG_WARN, "config", "%s", warnings[i]);
        free(warnings[i]);
    }
    free(warnings);
    free(ids);
    free(text);
}

/* ---- start / stop ---- */

/* The last resort of a stop that does not end: a library call that never
 * returns (seen once in nng's close under heavy load) must not keep a
 * service from stopping. */
typedef struct watchdog {
    _Atomic bool stopped; /* set by pd_daemon_fini(); the thread frees it */
    int64_t timeout_ms;
} watchdog_t;

static void *stop_watchdog(void *arg)
{
    watchdog_t *w = arg;
    struct timespec ts = {(time_t)(w->timeout_ms / 1000), (long)(w->timeout_ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    if (!atomic_load(&w->stopped)) {
        static const char msg[] = "profd: stopping did not finish in time; exiting\n";
        (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(1);
    }
    free(w);
    return NULL;
}

static void begin_stop(pd_daemon_t *d)
{
    if (d->stopping) {
        return;
    }
    d->stopping = true;
    PD_LOG(&d->log, PD_LOG_INFO, "daemon", "stopping");
    pthread_t t;
    watchdog_t *w = d->stop_timeout_ms > 0 ? calloc(1, sizeof(*w)) : NULL;
    if (w) {
        w->timeout_ms = d->stop_timeout_ms;
        if (pthread_create(&t, NULL, stop_watchdog, w) == 0) {
            pthread_detach(t);
            d->watchdog = w;
        } else {
            free(w);
        }
    }
    pd_control_fini(d);
    pd_link_fini(d);
    pd_coord_fini(d);
    pd_worker_fini(d);
    uv_idle_stop(&d->broadcast);
    uv_close((uv_handle_t *)&d->broadcast, NULL);
    uv_timer_stop(&d->tick);
    uv_close((uv_handle_t *)&d->tick, NULL);
    uv_close((uv_handle_t *)&d->stop_async, NULL);
    if (d->state_timer_ready) {
        uv_timer_stop(&d->state_timer);
        uv_close((uv_handle_t *)&d->state_timer, NULL);
    }
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
        load_profile_config(d);
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
        d->socket_gid = (int64_t)gr.gr_gid;
    } else if (strspn(name, "0123456789") == strlen(name) && strlen(name) <= 10 &&
               strtoll(name, NULL, 10) < 4294967295LL) {
        d->socket_gid = strtoll(name, NULL, 10);
    } else {
        snprintf(err, errlen, "security.socket_group: no group named '%s'%s%s", name,
                 rc != 0 ? ": " : "", rc != 0 ? strerror(rc) : "");
        return PROFD_ECONFIG;
    }
    d->chgrp = true;
    return 0;
}

int pd_daemon_init(pd_daemon_t *d, const pd_config_t *cfg, char *err, size_t errlen)
{
    int rv;
    memset(d, 0, sizeof(*d));
    if (cfg->coordinator && cfg->coordinator_url[0]) {
        snprintf(err, errlen, "a daemon is either a coordinator or a node of one, not both");
        return PROFD_ECONFIG;
    }
    if (cfg->coordinator && cfg->coordinator_listen[0] == '\0') {
        snprintf(err, errlen,
                 "a coordinator needs coordinator.listen (e.g. tls+tcp://0.0.0.0:7710)");
        return PROFD_ECONFIG;
    }
    d->cfg = *cfg;
    pd_log_init(&d->log, cfg->log_level);
    d->uid = (int64_t)getuid();
    d->gid = (int64_t)getgid();
    if ((rv = socket_group(d, err, errlen)) != 0 ||
        (rv = pd_config_check_control(cfg, err, errlen)) != 0 ||
        (rv = pd_config_check_links(cfg, err, errlen)) != 0) {
        return rv;
    }
    make_instance(d);
    if (cfg->node_name[0]) {
        snprintf(d->node, sizeof(d->node), "%.64s", cfg->node_name);
    } else if (gethostname(d->node, sizeof(d->node)) != 0) {
        snprintf(d->node, sizeof(d->node), "localhost");
    }
    d->node[sizeof(d->node) - 1] = '\0';
    d->gen = 1;
    pd_registry_init(&d->reg, (size_t)cfg->max_clients);
    pd_windows_init(&d->win);
    if ((rv = prepare_dirs(d, err, errlen)) != 0) {
        goto fail_early;
    }
    if (pd_loop_init(&d->loop) != 0) {
        snprintf(err, errlen, "cannot initialise the event loop");
        rv = PROFD_EINTERNAL;
        goto fail_early;
    }
    uv_idle_init(&d->loop.uv, &d->broadcast);
    d->broadcast.data = d;
    uv_timer_init(&d->loop.uv, &d->tick);
    d->tick.data = d;
    uv_async_init(&d->loop.uv, &d->stop_async, on_stop_async);
    d->stop_async.data = d;
    uv_timer_init(&d->loop.uv, &d->state_timer);
    d->state_timer.data = d;
    d->state_timer_ready = true;
    if ((rv = pd_worker_init(d, err, errlen)) != 0) {
        goto fail;
    }
    if ((rv = pd_control_init(d, err, errlen)) != 0) {
        goto fail;
    }
    /* the loop does not run yet: no node registers before the state is back */
    if (cfg->coordinator &&
        ((rv = pd_coord_init(d, err, errlen)) != 0 || (rv = pd_state_load(d, err, errlen)) != 0)) {
        goto fail;
    }
    for (pd_window_t *w = d->win.head, *next; w; w = next) {
        next = w->next;
        pd_windows_maybe_finish(d, w); /* loaded windows with nothing left to wait for */
    }
    if (cfg->coordinator_url[0] && (rv = pd_link_init(d, err, errlen)) != 0) {
        goto fail;
    }
    load_profile_config(d);
    pd_windows_remove_spool(d, PD_TRASH); /* copies a stopped daemon had not removed yet */
    PD_LOG(&d->log, PD_LOG_INFO, "daemon",
           "profd %s on %s: workers %s, control %s%s%s, save_path %s, spool %s",
           PROFD_VERSION_STRING, d->node, cfg->worker_url, cfg->control_url,
           cfg->control_remote_url[0] ? " and " : "", cfg->control_remote_url, d->save_path,
           d->spool);
    return 0;

fail:
    begin_stop(d);
    pd_loop_fini(&d->loop);
    pd_coord_free(d);
fail_early:
    pd_windows_fini(&d->win);
    pd_registry_fini(&d->reg);
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
    pd_state_fini(d);
    pd_coord_free(d);
    pd_windows_fini(&d->win);
    pd_registry_fini(&d->reg);
    if (d->watchdog) {
        atomic_store(&((watchdog_t *)d->watchdog)->stopped, true);
        d->watchdog = NULL;
    }
    return rv;
}
