// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Limits of the daemon core, the daemon running in a thread of this process
 * (daemon_fixture) and driven over nng like any peer: the window byte
 * budget shared by concurrent captures, the free-disk floor (as root: on a
 * tmpfs), the per-connection rate limits, and the start-up refusals.
 * (Hostile capture reports: test_security_captures.c.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "security_common.h"

#include "pd_skip.h" /* after cmocka.h */

static char tmp[256];

/* ---- files ---- */

static void sized_file(const char *path, off_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, size), 0);
    close(fd);
}

/* ---- the byte budget ---- */

static void report_sized(fx_daemon_t *r, nng_socket w, int64_t client, int64_t window,
                         const char *wname, const char *const *phases, const off_t *sizes, size_t n)
{
    char body[4096], p[1024];
    pp_msg_t rep;
    size_t k = (size_t)snprintf(body, sizeof(body),
                                "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":%lld,"
                                "\"captures\":[",
                                (long long)client, (long long)window);
    for (size_t i = 0; i < n; i++) {
        fx_path_of(p, sizeof(p), "%s/.spool/sec/%s/actor.%s/rank0-h1", r->cfg.save_path, wname,
                   phases[i]);
        fx_mkdirs(p);
        fx_path_of(p, sizeof(p), "%s/.spool/sec/%s/actor.%s/rank0-h1/trace.bin", r->cfg.save_path,
                   wname, phases[i]);
        sized_file(p, sizes[i]);
        k += (size_t)snprintf(body + k, sizeof(body) - k,
                              "%s{\"role\":\"actor\",\"phase\":\"%s\",\"status\":\"complete\","
                              "\"dir\":\"sec/%s/actor.%s/rank0-h1\"}",
                              i ? "," : "", phases[i], wname, phases[i]);
    }
    snprintf(body + k, sizeof(body) - k, "]}");
    assert_int_equal(fx_ask(w, body, &rep), 0);
    pp_msg_free(&rep);
}

static void test_security_budget(void **state)
{
    fx_daemon_t *r = sec_daemon(tmp, "budget");
    char reason[256], p[1024];
    r->cfg.window_byte_budget = 1024 * 1024;
    fx_daemon_start(r);
    nng_socket w = fx_dial(r->cfg.worker_url);
    int64_t client = sec_hello(w, 0, "h1");

    /* a huge (sparse) file and an empty one */
    sec_start_window(r, 1, "w1-step1");
    const char *ph1[] = {"huge", "small"};
    const off_t sz1[] = {10LL << 30, 0};
    report_sized(r, w, client, 1, "w1-step1", ph1, sz1, 2);
    sec_wait_done(r, 1, reason, sizeof(reason));
    pp_manifest_t man;
    sec_read_manifest(r, "w1-step1", &man);
    const pp_capture_t *c = sec_capture_of(&man, "huge");
    assert_string_equal(pp_status_name(c->status), "truncated");
    assert_string_equal(c->reason, "capture of 10737418240 bytes exceeds the window's remaining "
                                   "budget of 1048576 bytes (limits.window_byte_budget)");
    assert_string_equal(pp_status_name(sec_capture_of(&man, "small")->status), "complete");
    pp_record_free(&pp_desc_manifest, &man);
    fx_path_of(p, sizeof(p), "%s/.spool/sec/w1-step1/actor.huge/rank0-h1", r->cfg.save_path);
    assert_false(fx_exists(p)); /* over a limit: removed from the spool */

    /* two captures gathered at once share the budget: one of them fits */
    sec_start_window(r, 2, "w2-step2");
    const char *ph2[] = {"a", "b"};
    const off_t sz2[] = {600 * 1024, 600 * 1024};
    report_sized(r, w, client, 2, "w2-step2", ph2, sz2, 2);
    sec_wait_done(r, 2, reason, sizeof(reason));
    sec_read_manifest(r, "w2-step2", &man);
    int complete = 0, truncated = 0;
    for (size_t i = 0; i < man.captures_n; i++) {
        c = &man.captures[i];
        if (strcmp(pp_status_name(c->status), "complete") == 0) {
            complete++;
            assert_int_equal(c->files[0].bytes, 600 * 1024);
        } else {
            truncated++;
            assert_string_equal(pp_status_name(c->status), "truncated");
            assert_string_equal(c->reason, "capture of 614400 bytes exceeds the window's "
                                           "remaining budget of 434176 bytes "
                                           "(limits.window_byte_budget)");
        }
    }
    assert_int_equal(complete, 1);
    assert_int_equal(truncated, 1);
    pp_record_free(&pp_desc_manifest, &man);
    nng_close(w);
    fx_daemon_free(r);
}

/* ---- the free-disk floor ---- */

/* A floor larger than any disk: a window is refused at its start, with the
 * reason (the floor checked while gathering: the tmpfs test below). */
static void test_security_disk_floor(void **state)
{
    fx_daemon_t *r = sec_daemon(tmp, "floor");
    pp_msg_t rep;
    char want[1100];
    (void)state;
    r->cfg.min_free_bytes = 1LL << 50;
    fx_daemon_start(r);
    nng_socket w = fx_dial(r->cfg.worker_url);
    sec_hello(w, 0, "h1");
    assert_int_equal(fx_ask_once(r->cfg.control_url,
                                 "{\"v\":1,\"type\":\"start\",\"steps\":[1],\"tool\":\"sim\"}",
                                 &rep),
                     PROFD_ELIMIT);
    snprintf(want, sizeof(want), "save_path %s has ", r->cfg.save_path);
    assert_ptr_equal(strstr(rep.u.error.message, want), rep.u.error.message);
    assert_non_null(
        strstr(rep.u.error.message, " free, below limits.min_free_bytes (1.0PiB): no new window"));
    pp_msg_free(&rep);
    nng_close(w);
    fx_daemon_free(r);
}

/* With root: save_path on a small tmpfs. A rename into the same file system
 * takes no space and passes while the free space is above the floor; a copy
 * from another file system needs its size. */
static void test_security_disk_floor_tmpfs(void **state)
{
    char small[512], reason[256];
    fx_path_of(small, sizeof(small), "%s/small", tmp);
    fx_mkdirs(small);
    if (mount("tmpfs", small, "tmpfs", 0, "size=4m") != 0) {
        pd_skip("cannot mount a tmpfs (%s): needs root", strerror(errno));
    }
    fx_daemon_t *r = sec_daemon(tmp, "floor2");
    fx_path_of(r->cfg.save_path, sizeof(r->cfg.save_path), "%s/out", small);
    /* the spool on another file system: gathering copies */
    fx_path_of(r->cfg.spool_dir, sizeof(r->cfg.spool_dir), "%s/floor2/spool", tmp);
    r->cfg.min_free_bytes = 1024 * 1024;
    fx_daemon_start(r);
    nng_socket w = fx_dial(r->cfg.worker_url);
    int64_t client = sec_hello(w, 0, "h1");
    sec_start_window(r, 1, "w1-step1");

    char p[1024];
    const char *ph[] = {"fits", "toobig"};
    const off_t sz[] = {1024 * 1024, 3584 * 1024};
    char body[1024];
    size_t k = (size_t)snprintf(body, sizeof(body),
                                "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":1,"
                                "\"captures\":[",
                                (long long)client);
    for (size_t i = 0; i < 2; i++) {
        fx_path_of(p, sizeof(p), "%s/sec/w1-step1/actor.%s/rank0-h1", r->cfg.spool_dir, ph[i]);
        fx_mkdirs(p);
        fx_path_of(p, sizeof(p), "%s/sec/w1-step1/actor.%s/rank0-h1/trace.bin", r->cfg.spool_dir,
                   ph[i]);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        char *buf = calloc(1, (size_t)sz[i]);
        assert_int_equal(write(fd, buf, (size_t)sz[i]), sz[i]);
        free(buf);
        close(fd);
        k += (size_t)snprintf(body + k, sizeof(body) - k,
                              "%s{\"role\":\"actor\",\"phase\":\"%s\",\"status\":\"complete\","
                              "\"dir\":\"sec/w1-step1/actor.%s/rank0-h1\"}",
                              i ? "," : "", ph[i], ph[i]);
    }
    snprintf(body + k, sizeof(body) - k, "]}");
    pp_msg_t rep;
    assert_int_equal(fx_ask(w, body, &rep), 0);
    pp_msg_free(&rep);
    sec_wait_done(r, 1, reason, sizeof(reason));
    pp_manifest_t man;
    sec_read_manifest(r, "w1-step1", &man);
    /* 4 MiB: 1 MiB copied leaves 3 MiB; 3.5 MiB would leave less than the
     * 1 MiB floor whichever goes first */
    assert_string_equal(pp_status_name(sec_capture_of(&man, "fits")->status), "complete");
    const pp_capture_t *c = sec_capture_of(&man, "toobig");
    assert_string_equal(pp_status_name(c->status), "truncated");
    assert_non_null(strstr(c->reason, "bytes free on the save_path file system; the capture of "
                                      "3670016 bytes would leave less than "
                                      "limits.min_free_bytes (1048576)"));
    pp_record_free(&pp_desc_manifest, &man);
    /* copied across file systems: the spool copy is gone, and after the
     * manifest so is the .trash it waited in */
    fx_path_of(p, sizeof(p), "%s/sec/w1-step1/actor.fits/rank0-h1", r->cfg.spool_dir);
    assert_false(fx_exists(p));
    fx_path_of(p, sizeof(p), "%s/.trash", r->cfg.spool_dir);
    for (int i = 0; i < 500 && fx_exists(p); i++) {
        usleep(10 * 1000);
    }
    assert_false(fx_exists(p));
    fx_path_of(p, sizeof(p), "%s/sec/w1-step1/actor.fits/rank0-h1/trace.bin", r->cfg.save_path);
    assert_true(fx_exists(p));
    nng_close(w);
    fx_daemon_free(r);
    assert_int_equal(umount2(small, MNT_DETACH), 0);
}

/* ---- rate limits ---- */

/* Asks `q` on s: answered (*ok counts it) or refused by the rate limit with
 * `limit_message` (*limited counts it). */
static void ask_rated(nng_socket s, const char *q, const char *limit_message, int *ok, int *limited)
{
    pp_msg_t rep;
    int rv = fx_ask(s, q, &rep);
    if (rv == 0) {
        (*ok)++;
    } else {
        assert_int_equal(rv, PROFD_ELIMIT);
        assert_string_equal(rep.u.error.message, limit_message);
        (*limited)++;
    }
    pp_msg_free(&rep);
}

static void test_security_rate_limits(void **state)
{
    fx_daemon_t *r = sec_daemon(tmp, "rate");
    pp_msg_t rep;
    r->cfg.control_rate = 5;
    r->cfg.worker_rate = 20;
    fx_daemon_start(r);

    /* control: 5 at once, then refused; another connection has its own */
    nng_socket s = fx_dial(r->cfg.control_url);
    int64_t t0 = fx_now_ms();
    int ok = 0, limited = 0;
    for (int i = 0; i < 8; i++) {
        ask_rated(s, "{\"v\":1,\"type\":\"status\"}", "rate limit: 5 requests/s", &ok, &limited);
    }
    int64_t spent = fx_now_ms() - t0;
    /* refilled at 5/s while asking */
    assert_true(ok >= 5 && ok <= 5 + (int)(spent * 5 / 1000) + 1);
    assert_true(limited >= 1);
    assert_int_equal(fx_ask_once(r->cfg.control_url, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    pp_msg_free(&rep);
    fx_sleep_ms(400); /* two tokens back */
    assert_int_equal(fx_ask(s, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    pp_msg_free(&rep);
    nng_close(s);

    /* workers: the same, at their own rate; the daemon keeps serving */
    nng_socket w = fx_dial(r->cfg.worker_url);
    int64_t client = sec_hello(w, 0, "h1");
    char q[160];
    t0 = fx_now_ms();
    ok = 0;
    limited = 0;
    for (int i = 0; i < 40; i++) {
        snprintf(q, sizeof(q), "{\"v\":1,\"type\":\"events\",\"client\":%lld,\"ev\":[1,%d,%d]}",
                 (long long)client, i + 1, i * 1000);
        ask_rated(w, q, "rate limit: 20 requests/s", &ok, &limited);
    }
    spent = fx_now_ms() - t0;
    assert_true(ok >= 19 && ok <= 19 + (int)(spent * 20 / 1000) + 1); /* hello took one */
    assert_int_equal(ok + limited, 40);
    nng_close(w);
    assert_int_equal(fx_ask_once(r->cfg.control_url, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    assert_int_equal(rep.u.status_reply.ranks_n, 1);
    pp_msg_free(&rep);
    fx_daemon_free(r);
}

/* ---- start-up refusals ---- */

static void test_security_startup(void **state)
{
    fx_daemon_t *r = sec_daemon(tmp, "startup");
    char err[512];

    /* plain tcp:// control, from a flag */
    snprintf(r->cfg.control_url, sizeof(r->cfg.control_url), "tcp://127.0.0.1:0");
    pd_config_finish(&r->cfg);
    assert_int_equal(pd_daemon_init(&r->d, &r->cfg, err, sizeof(err)), PROFD_ECONFIG);
    assert_string_equal(err, "control endpoint tcp://127.0.0.1:0: " PD_CONFIG_TCP_CONTROL);

    /* an unknown socket group */
    r->cfg.control_url[0] = '\0';
    snprintf(r->cfg.socket_group, sizeof(r->cfg.socket_group), "no-such-group-here");
    pd_config_finish(&r->cfg);
    assert_int_equal(pd_daemon_init(&r->d, &r->cfg, err, sizeof(err)), PROFD_ECONFIG);
    assert_string_equal(err, "security.socket_group: no group named 'no-such-group-here'");

    /* a remote control endpoint without TLS files */
    r->cfg.socket_group[0] = '\0';
    snprintf(r->cfg.control_remote_url, sizeof(r->cfg.control_remote_url), "tls+tcp://localhost:0");
    assert_int_equal(pd_daemon_init(&r->d, &r->cfg, err, sizeof(err)), PROFD_EINVAL);
    assert_string_equal(err, "tls+tcp://localhost:0 needs tls.ca_file, tls.cert_file and "
                             "tls.key_file: TLS: a CA file is needed to verify the peer's "
                             "certificate");
    free(r);
}

static int setup(void **state)
{
    fx_tmp_make(tmp, sizeof(tmp), "profd-sectest");
    return 0;
}

static int teardown(void **state)
{
    char small[512];
    snprintf(small, sizeof(small), "%s/small", tmp);
    umount2(small, MNT_DETACH); /* a failed tmpfs test */
    return fx_tmp_remove(tmp);
}

int main(void)
{
    return PD_RUN_EACH(setup, teardown, test_security_budget, test_security_disk_floor,
                       test_security_disk_floor_tmpfs, test_security_rate_limits,
                       test_security_startup);
}
