// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
#include "daemon_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <nng/protocol/reqrep0/req.h>

#include "pd_tmp.h"

#define FX_TIMEOUT_MS 10000

void fx_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

int64_t fx_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fx_path_of(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < len);
}

void fx_mkdirs(const char *path)
{
    char buf[1024];
    fx_path_of(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
        fail_msg("mkdir %s: %s", buf, strerror(errno));
    }
}

bool fx_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

char *fx_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return NULL;
    }
    char *buf = calloc(1, 1 << 20);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

void fx_tmp_make(char *dir, size_t len, const char *prefix)
{
    assert_non_null(pd_tmp_make(dir, len, prefix));
}

int fx_tmp_remove(const char *dir)
{
    return pd_tmp_remove(dir);
}

/* ---- the daemon ---- */

static void *run_daemon(void *arg)
{
    fx_daemon_t *d = arg;
    pd_daemon_run(&d->d);
    return NULL;
}

void fx_daemon_config(fx_daemon_t *d, const char *run_dir, const char *save_path)
{
    pd_config_defaults(&d->cfg);
    fx_path_of(d->cfg.run_dir, sizeof(d->cfg.run_dir), "%s", run_dir);
    fx_path_of(d->cfg.save_path, sizeof(d->cfg.save_path), "%s", save_path);
    d->cfg.log_level = PD_LOG_ERROR;
}

fx_daemon_t *fx_daemon_new(const char *dir)
{
    fx_daemon_t *d = calloc(1, sizeof(*d));
    char run[600], out[600];
    assert_non_null(d);
    fx_mkdirs(dir);
    fx_path_of(run, sizeof(run), "%s/run", dir);
    fx_path_of(out, sizeof(out), "%s/out", dir);
    fx_daemon_config(d, run, out);
    return d;
}

fx_daemon_t *fx_coordinator_start(const char *dir)
{
    fx_daemon_t *r = fx_daemon_new(dir);
    fx_path_of(r->cfg.coordinator_listen, sizeof(r->cfg.coordinator_listen), "ipc://%s/coord.sock",
               dir);
    snprintf(r->cfg.node_name, sizeof(r->cfg.node_name), "coordinator");
    fx_daemon_start(r);
    return r;
}

void fx_daemon_start(fx_daemon_t *d)
{
    char err[512];
    pd_config_finish(&d->cfg);
    if (pd_daemon_init(&d->d, &d->cfg, err, sizeof(err)) != 0) {
        fail_msg("daemon init: %s", err);
    }
    assert_int_equal(pthread_create(&d->thread, NULL, run_daemon, d), 0);
}

void fx_daemon_stop(fx_daemon_t *d)
{
    pd_daemon_request_stop(&d->d);
    pthread_join(d->thread, NULL);
    assert_int_equal(pd_daemon_fini(&d->d), 0); /* every handle closed */
}

void fx_daemon_free(fx_daemon_t *d)
{
    fx_daemon_stop(d);
    free(d);
}

/* ---- requests ---- */

nng_socket fx_dial(const char *url)
{
    nng_socket s;
    assert_int_equal(nng_req0_open(&s), 0);
    nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, FX_TIMEOUT_MS);
    nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, FX_TIMEOUT_MS);
    assert_int_equal(nng_dial(s, url, NULL, 0), 0);
    return s;
}

static nng_msg *exchange(nng_socket s, const void *buf, size_t len)
{
    nng_msg *m;
    assert_int_equal(nng_msg_alloc(&m, 0), 0);
    assert_int_equal(nng_msg_append(m, buf, len), 0);
    assert_int_equal(nng_sendmsg(s, m, 0), 0);
    assert_int_equal(nng_recvmsg(s, &m, 0), 0);
    return m;
}

int fx_ask_raw(nng_socket s, const void *buf, size_t len, pp_msg_t *rep)
{
    char err[256];
    nng_msg *m = exchange(s, buf, len);
    if (pp_msg_decode(nng_msg_body(m), nng_msg_len(m), 0, rep, err, sizeof(err)) != 0) {
        fail_msg("undecodable reply '%.*s': %s", (int)nng_msg_len(m), (char *)nng_msg_body(m), err);
    }
    nng_msg_free(m);
    return rep->type == PP_T_error ? (int)rep->u.error.code : 0;
}

int fx_ask(nng_socket s, const char *json, pp_msg_t *rep)
{
    return fx_ask_raw(s, json, strlen(json), rep);
}

int fx_ask_once(const char *url, const char *json, pp_msg_t *rep)
{
    nng_socket s = fx_dial(url);
    int rv = fx_ask(s, json, rep);
    nng_close(s);
    return rv;
}

char *fx_call_raw(const char *url, const void *buf, size_t len)
{
    nng_socket s = fx_dial(url);
    nng_msg *m = exchange(s, buf, len);
    char *out = calloc(1, nng_msg_len(m) + 1);
    assert_non_null(out);
    memcpy(out, nng_msg_body(m), nng_msg_len(m));
    nng_msg_free(m);
    nng_close(s);
    return out;
}

int64_t fx_start_window(const char *control_url, const char *json, const char *name,
                        int64_t selected)
{
    pp_msg_t rep;
    assert_int_equal(fx_ask_once(control_url, json, &rep), 0);
    assert_int_equal(rep.u.started.windows_n, 1);
    assert_string_equal(rep.u.started.windows[0].name, name);
    if (selected >= 0) {
        assert_int_equal(rep.u.started.windows[0].selected, selected);
    }
    int64_t id = rep.u.started.windows[0].id;
    pp_msg_free(&rep);
    return id;
}

void fx_wait_state(const char *control_url, int64_t id, const char *want, char *reason, size_t len)
{
    char q[128], state[32] = "";
    fx_path_of(q, sizeof(q), "{\"v\":1,\"type\":\"windows\",\"id\":%lld}", (long long)id);
    for (int t = 0; t < 1000; t++) {
        pp_msg_t rep;
        assert_int_equal(fx_ask_once(control_url, q, &rep), 0);
        assert_int_equal(rep.u.windows_reply.windows_n, 1);
        const pp_window_t *w = &rep.u.windows_reply.windows[0];
        snprintf(state, sizeof(state), "%s", pp_enum_name(&pp_enum_window_state, w->state));
        if (reason != NULL) {
            snprintf(reason, len, "%s", w->reason ? w->reason : "");
        }
        pp_msg_free(&rep);
        if (strcmp(state, want) == 0) {
            return;
        }
        fx_sleep_ms(10);
    }
    fail_msg("window %lld is %s, not %s", (long long)id, state, want);
}
