// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Integration: the daemon core running in a thread of this process, real
 * libprofd clients over a temporary ipc:// path, control requests as plain
 * JSON over nng. Checks a window end to end (manifest, files, checksums,
 * none with checksum: none), bad input on both endpoints, a daemon restart
 * under running clients, two daemons in one process, a client given no
 * URL that finds late daemons by the run directory rule, a reply held
 * until the journal holds what it acknowledges, and a done window's detail
 * read back from its manifest once compacted, and after a restart.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "daemon_fixture.h"
#include "internal.h" /* cl_open: a client with run directory candidates of ours */
#include "profd/client.h"
#include "pd_skip.h"
#include "wcaps.h" /* PD_WCAPS_KEEP_MS */

/* This file's daemons log warnings and take messages up to 64 KiB. */
static void daemon_tune(fx_daemon_t *r)
{
    r->cfg.log_level = PD_LOG_WARN;
    r->cfg.max_msg_bytes = 65536;
}

/* A daemon below dir (sockets in dir/run, output in dir/out). */
static fx_daemon_t *daemon_new(const char *dir)
{
    fx_daemon_t *r = fx_daemon_new(dir);
    daemon_tune(r);
    return r;
}

/* r configured again with its sockets in run_dir and its output below dir. */
static void daemon_config_in(fx_daemon_t *r, const char *dir, const char *run_dir)
{
    char out[300];
    fx_path_of(out, sizeof(out), "%s/out", dir);
    fx_daemon_config(r, run_dir, out);
    daemon_tune(r);
}

/* ---- control requests ---- */

static int64_t window_state(const fx_daemon_t *r, int64_t id, char *state, size_t len)
{
    char q[128];
    pp_msg_t rep;
    snprintf(q, sizeof(q), "{\"v\":1,\"type\":\"windows\",\"id\":%lld}", (long long)id);
    assert_int_equal(fx_ask_once(r->cfg.control_url, q, &rep), 0);
    assert_int_equal(rep.u.windows_reply.windows_n, 1);
    snprintf(state, len, "%s",
             pp_enum_name(&pp_enum_window_state, rep.u.windows_reply.windows[0].state));
    int64_t complete = rep.u.windows_reply.windows[0].complete;
    pp_msg_free(&rep);
    return complete;
}

/* ---- clients ---- */

#define NCLIENTS 6
static const char *roles[NCLIENTS] = {"actor", "actor", "rollout", "rollout", "ref", "ref"};

static void log_hook(void *arg, int level, const char *msg)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    fprintf(stderr, "%ld.%03ld %s\n", (long)ts.tv_sec % 1000, ts.tv_nsec / 1000000, msg);
}

/* A worker of job itest on host node1, `role` and `rank`, its daemon at
 * `url` (NULL: found by the run folder rule); logged to stderr with
 * ITEST_LOG set. */
static void itest_options(profd_options_t *o, const char *url, const char *role, int rank)
{
    profd_options_init(o);
    o->url = url;
    o->job = "itest";
    o->role = role;
    o->rank = rank;
    o->host = "node1";
    if (getenv("ITEST_LOG")) {
        o->log = log_hook;
        o->log_level = PROFD_LOG_DEBUG;
    }
}

static int open_clients(const fx_daemon_t *r, profd_client_t **c, int n)
{
    for (int i = 0; i < n; i++) {
        profd_options_t o;
        itest_options(&o, r->cfg.worker_url, roles[i], i);
        o.replica_rank = strcmp(roles[i], "rollout") == 0 ? i - 2 : PROFD_NO_REPLICA;
        o.flush_ms = 10;
        assert_int_equal(profd_open(&c[i], &o), 0);
        assert_int_equal(profd_set_backend(c[i], profd_backend_sim(), NULL), 0);
    }
    for (int t = 0; t < 500; t++) { /* wait until every client registered */
        int ok = 0;
        for (int i = 0; i < n; i++) {
            profd_stats_t st;
            profd_stats(c[i], &st);
            ok += st.connected;
        }
        if (ok == n) {
            return 0;
        }
        fx_sleep_ms(10);
    }
    fail_msg("clients did not register");
    return -1;
}

static void run_steps(profd_client_t **c, int n, int64_t from, int64_t to)
{
    for (int64_t s = from; s <= to; s++) {
        for (int i = 0; i < n; i++) {
            profd_step_begin(c[i], s);
            profd_phase_begin(c[i], strcmp(roles[i], "rollout") == 0 ? "generate" : "update_actor");
            profd_substep(c[i]);
            profd_phase_end(c[i], NULL);
            profd_step_end(c[i], s);
        }
        fx_sleep_ms(20);
    }
}

/* Window 1: steps 5..6 for the actors, the rollout replica 1 and nobody
 * else (3 members of the NCLIENTS). */
static void start_actors_and_replica_1(fx_daemon_t *r)
{
    fx_start_window(r->cfg.control_url,
                    "{\"v\":1,\"type\":\"start\",\"start\":5,\"end\":7,\"tool\":\"sim\","
                    "\"settings\":{\"bytes\":1000},\"selectors\":["
                    "{\"role\":\"actor\",\"all_ranks\":true},"
                    "{\"role\":\"rollout\",\"replica_ranks\":[1]}]}",
                    "w1-steps5-6", 3);
}

/* ---- tests ---- */

FX_TMP_FIXTURE("profd-itest")

static void test_daemon_window_end_to_end(void **state)
{
    fx_daemon_t *r = daemon_new(tmp);
    profd_client_t *c[NCLIENTS];
    pp_msg_t rep;
    char st[32], path[1024];

    fx_daemon_start(r);
    open_clients(r, c, NCLIENTS);
    run_steps(c, NCLIENTS, 1, 2);

    assert_int_equal(fx_ask_once(r->cfg.control_url, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    assert_int_equal(rep.u.status_reply.ranks_n, NCLIENTS);
    pp_msg_free(&rep);

    start_actors_and_replica_1(r);

    run_steps(c, NCLIENTS, 3, 8);
    for (int t = 0; t < 300 && (window_state(r, 1, st, sizeof(st)), strcmp(st, "done") != 0); t++) {
        fx_sleep_ms(10);
    }
    assert_string_equal(st, "done");
    assert_int_equal(window_state(r, 1, st, sizeof(st)), 3);

    /* the manifest */
    snprintf(path, sizeof(path), "%s/out/itest/w1-steps5-6/manifest.json", tmp);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    pp_manifest_t man;
    char err[256];
    assert_int_equal(pp_record_decode(&pp_desc_manifest, buf, n, &man, err, sizeof(err)), 0);
    /* written piece by piece as it was encoded: the bytes of its text
     * encoded whole */
    char *mwhole;
    size_t mwlen;
    assert_int_equal(pp_record_encode(&pp_desc_manifest, &man, true, &mwhole, &mwlen), 0);
    assert_int_equal(mwlen, n);
    assert_memory_equal(mwhole, buf, n);
    free(mwhole);
    assert_int_equal(man.version, 1);
    assert_string_equal(man.job, "itest");
    assert_int_equal(man.window.steps_n, 2);
    assert_int_equal(man.window.steps[0], 5);
    assert_int_equal(man.window.steps[1], 7);
    assert_int_equal(man.captures_n, 3);
    const int64_t want_rank[3] = {0, 1, 3};
    for (size_t i = 0; i < 3; i++) {
        pp_capture_t *cap = &man.captures[i];
        assert_string_equal(cap->role, "e2e");
        assert_int_equal(cap->rank, want_rank[i]);
        assert_string_equal(pp_status_name(cap->status), "complete");
        assert_int_equal(cap->first_step, 5);
        assert_int_equal(cap->last_step, 6);
        assert_int_equal(cap->files_n, 1);
        /* TensorBoard's name: rank<R>-<role>.<ms>.pt.trace.json */
        char prefix[32];
        const char *fp = cap->files[0].path;
        snprintf(prefix, sizeof(prefix), "rank%lld-", (long long)want_rank[i]);
        assert_int_equal(strncmp(fp, prefix, strlen(prefix)), 0);
        assert_true(strlen(fp) > 14 && strcmp(fp + strlen(fp) - 14, ".pt.trace.json") == 0);
        assert_true(cap->files[0].bytes >= 1000);
        /* moved by a rename, not read again */
        assert_true(cap->files[0].moved);
        assert_null(cap->files[0].checksum);
        snprintf(path, sizeof(path), "%s/out/itest/w1-steps5-6/%s/%s", tmp, cap->dir,
                 cap->files[0].path);
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_size, cap->files[0].bytes);
    }
    assert_string_equal(man.captures[2].dir, "e2e/rank3-replica1-node1");
    assert_int_equal(man.captures[2].replica_rank, 1);
    pp_record_free(&pp_desc_manifest, &man);
    /* steps.json, written piece by piece as it was encoded: the bytes of
     * its document encoded whole */
    snprintf(path, sizeof(path), "%s/out/itest/w1-steps5-6/steps.json", tmp);
    char *steps = fx_slurp(path), *whole;
    size_t wlen;
    pp_steps_doc_t doc;
    assert_non_null(steps);
    assert_int_equal(
        pp_record_decode(&pp_desc_steps_doc, steps, strlen(steps), &doc, err, sizeof(err)), 0);
    assert_int_equal(doc.ranks_n, NCLIENTS);
    assert_int_equal(pp_record_encode(&pp_desc_steps_doc, &doc, true, &whole, &wlen), 0);
    assert_int_equal(wlen, strlen(steps));
    assert_memory_equal(whole, steps, wlen);
    free(whole);
    free(steps);
    pp_record_free(&pp_desc_steps_doc, &doc);
    /* the report and TensorBoard's run folder came with the manifest */
    struct stat rs;
    const char *with[] = {"steps.json", "report.html", "tensorboard"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/out/itest/w1-steps5-6/%s", tmp, with[i]);
        assert_int_equal(stat(path, &rs), 0);
    }

    /* nothing left behind in the spool */
    snprintf(path, sizeof(path), "%s/out/.spool/itest/w1-steps5-6", tmp);
    struct stat sb;
    assert_int_not_equal(stat(path, &sb), 0);

    for (int i = 0; i < NCLIENTS; i++) {
        profd_close(c[i]);
    }
    fx_daemon_free(r);
}

/* A capture moved into the tree by a rename is not read again, whatever
 * the checksum setting: its entry says moved and carries no checksum (with
 * the default, xxh64, copies and streamed files have one: test_gather,
 * test_stream). */
static void test_daemon_checksum_none(void **state)
{
    for (int none = 0; none < 2; none++) {
        profd_client_t *c[1];
        pp_msg_t rep;
        char dir[300], st[32], path[1024], err[256], want[32];
        snprintf(dir, sizeof(dir), "%s/%s", tmp, none ? "none" : "xxh64");
        assert_int_equal(mkdir(dir, 0755), 0);
        fx_daemon_t *r = daemon_new(dir);
        assert_string_equal(r->cfg.checksum, "xxh64"); /* the default */
        if (none) {
            snprintf(r->cfg.checksum, sizeof(r->cfg.checksum), "none");
        }
        fx_daemon_start(r);
        open_clients(r, c, 1);
        run_steps(c, 1, 1, 2);
        assert_int_equal(
            fx_ask_once(r->cfg.control_url,
                        "{\"v\":1,\"type\":\"start\",\"start\":5,\"end\":6,\"tool\":\"sim\","
                        "\"settings\":{\"bytes\":1000}}",
                        &rep),
            0);
        assert_string_equal(rep.u.started.windows[0].name, "w1-step5");
        pp_msg_free(&rep);
        run_steps(c, 1, 3, 7);
        for (int t = 0; t < 300 && (window_state(r, 1, st, sizeof(st)), strcmp(st, "done") != 0);
             t++) {
            fx_sleep_ms(10);
        }
        assert_string_equal(st, "done");

        snprintf(path, sizeof(path), "%s/out/itest/w1-step5/manifest.json", dir);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        char buf[65536];
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        pp_manifest_t man;
        assert_int_equal(pp_record_decode(&pp_desc_manifest, buf, n, &man, err, sizeof(err)), 0);
        assert_int_equal(man.captures_n, 1);
        pp_capture_t *cap = &man.captures[0];
        assert_string_equal(pp_status_name(cap->status), "complete");
        assert_int_equal(cap->files_n, 1);
        assert_int_equal(strncmp(cap->files[0].path, "rank0-actor.", 12), 0);
        snprintf(path, sizeof(path), "%s/out/itest/w1-step5/%s/%s", dir, cap->dir,
                 cap->files[0].path);
        f = fopen(path, "rb");
        assert_non_null(f);
        char *data = malloc((size_t)cap->files[0].bytes + 1);
        assert_int_equal(fread(data, 1, (size_t)cap->files[0].bytes + 1, f), cap->files[0].bytes);
        fclose(f);
        assert_true(cap->files[0].moved);
        assert_null(cap->files[0].checksum);
        assert_null(strstr(buf, "xxh64:"));
        assert_non_null(strstr(buf, "\"moved\""));
        (void)want;
        free(data);
        pp_record_free(&pp_desc_manifest, &man);
        profd_close(c[0]);
        fx_daemon_free(r);
    }
}

static void test_daemon_bad_input_keeps_serving(void **state)
{
    fx_daemon_t *r = daemon_new(tmp);
    pp_msg_t rep;
    fx_daemon_start(r);

    const char *ctl = r->cfg.control_url;
    /* refused with the code and message (NULL: not compared) */
    static const struct {
        const char *json;
        int rc;
        const char *message;
    } refused[] = {
        {"{not json", PROFD_EPROTO, "not valid JSON"},
        {"{\"v\":9,\"type\":\"status\"}", PROFD_EVERSION, NULL},
        {"{\"v\":1,\"type\":\"launch\"}", PROFD_ETYPE, "unknown message type 'launch'"},
        {"{\"v\":1,\"type\":\"events\",\"client\":1}", PROFD_ETYPE,
         "'events' is not a control request"},
        {"{\"v\":1,\"type\":\"start\",\"steps\":\"five\"}", PROFD_EPROTO,
         "field 'steps': expected array, found string"},
        {"{\"v\":1,\"type\":\"start\",\"steps\":[0]}", PROFD_EINVAL, "steps must be >= 1, found 0"},
        {"{\"v\":1,\"type\":\"stop\",\"id\":42}", PROFD_ENOENT, NULL},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        assert_int_equal(fx_ask_once(ctl, refused[i].json, &rep), refused[i].rc);
        if (refused[i].message != NULL) {
            assert_string_equal(rep.u.error.message, refused[i].message);
        }
        pp_msg_free(&rep);
    }

    /* oversized: the limit is 64 KiB here */
    size_t big = 100000;
    char *huge = malloc(big);
    memset(huge, ' ', big);
    memcpy(huge, "{\"v\":1,\"type\":\"status\"}", 23);
    char *out = fx_call_raw(ctl, huge, big);
    pp_msg_t m;
    char err[256];
    assert_int_equal(pp_msg_decode(out, strlen(out), 0, &m, err, sizeof(err)), 0);
    assert_int_equal(m.type, PP_T_error);
    assert_int_equal(m.u.error.code, PROFD_ETOOBIG);
    pp_msg_free(&m);
    free(out);
    free(huge);

    /* the worker endpoint: control requests and unknown clients are refused */
    const char *wk = r->cfg.worker_url;
    assert_int_equal(fx_ask_once(wk, "{\"v\":1,\"type\":\"status\"}", &rep), PROFD_ETYPE);
    pp_msg_free(&rep);
    assert_int_equal(
        fx_ask_once(wk, "{\"v\":1,\"type\":\"events\",\"client\":77,\"ev\":[1,1,1]}", &rep),
        PROFD_ECLIENT);
    pp_msg_free(&rep);
    assert_int_equal(
        fx_ask_once(wk,
                    "{\"v\":1,\"type\":\"hello\",\"job\":\"j\",\"role\":\"a/b\",\"rank\":0,"
                    "\"host\":\"h\",\"pid\":1}",
                    &rep),
        PROFD_EINVAL);
    pp_msg_free(&rep);

    /* a window that selects nobody is accepted and says so */
    assert_int_equal(fx_ask_once(ctl, "{\"v\":1,\"type\":\"start\",\"steps\":[3]}", &rep), 0);
    assert_int_equal(rep.u.started.windows_n, 1);
    assert_int_equal(rep.u.started.windows[0].selected, 0);
    assert_string_equal(pp_enum_name(&pp_enum_window_state, rep.u.started.windows[0].state),
                        "pending");
    assert_int_equal(rep.u.started.windows[0].warnings_n, 1);
    pp_msg_free(&rep);

    /* still serving, and counting what it refused */
    assert_int_equal(fx_ask_once(ctl, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    assert_int_equal(rep.u.status_reply.bad_requests, 8);
    assert_int_equal(rep.u.status_reply.windows, 1);
    pp_msg_free(&rep);
    fx_daemon_free(r);
}

static void test_daemon_restart_under_clients(void **state)
{
    fx_daemon_t *r = daemon_new(tmp);
    profd_client_t *c[2];
    pp_msg_t rep;
    char st[32];
    fx_daemon_start(r);
    open_clients(r, c, 2);
    run_steps(c, 2, 1, 2);
    fx_daemon_stop(r);

    /* no daemon: every call is a no-op that succeeds */
    for (int64_t s = 3; s <= 5; s++) {
        for (int i = 0; i < 2; i++) {
            assert_int_equal(profd_step_begin(c[i], s), 0);
            assert_int_equal(profd_step_end(c[i], s), 0);
        }
    }
    fx_daemon_start(r);
    for (int t = 0; t < 500; t++) {
        profd_stats_t a, b;
        profd_stats(c[0], &a);
        profd_stats(c[1], &b);
        if (a.connected && b.connected && a.reconnects >= 1 && b.reconnects >= 1) {
            break;
        }
        run_steps(c, 2, 6, 6);
    }
    profd_stats_t a;
    profd_stats(c[0], &a);
    assert_true(a.connected);
    assert_int_equal(a.reconnects, 1);

    assert_int_equal(fx_ask_once(r->cfg.control_url,
                                 "{\"v\":1,\"type\":\"start\",\"next\":1,"
                                 "\"tool\":\"sim\"}",
                                 &rep),
                     0);
    int64_t first = rep.u.started.windows[0].first_step;
    assert_int_equal(rep.u.started.windows[0].selected, 2);
    pp_msg_free(&rep);
    run_steps(c, 2, 7, first + 3);
    for (int t = 0; t < 300 && (window_state(r, 1, st, sizeof(st)), strcmp(st, "done") != 0); t++) {
        fx_sleep_ms(10);
    }
    assert_string_equal(st, "done");
    assert_int_equal(window_state(r, 1, st, sizeof(st)), 2);
    for (int i = 0; i < 2; i++) {
        profd_close(c[i]);
    }
    fx_daemon_free(r);
}

static void test_daemon_two_in_one_process(void **state)
{
    char da[300], db[300];
    pp_msg_t rep;
    snprintf(da, sizeof(da), "%s/a", tmp);
    snprintf(db, sizeof(db), "%s/b", tmp);
    fx_daemon_t *a = daemon_new(da), *b = daemon_new(db);
    fx_daemon_start(a);
    fx_daemon_start(b);
    profd_client_t *ca, *cb;
    open_clients(a, &ca, 1);
    open_clients(b, &cb, 1);
    assert_int_equal(fx_ask_once(a->cfg.control_url, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    assert_int_equal(rep.u.status_reply.ranks_n, 1);
    assert_string_not_equal(rep.u.status_reply.instance, b->d.instance);
    pp_msg_free(&rep);
    assert_int_equal(fx_ask_once(b->cfg.control_url, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    assert_int_equal(rep.u.status_reply.ranks_n, 1);
    pp_msg_free(&rep);
    profd_close(ca);
    profd_close(cb);
    fx_daemon_free(a);
    fx_daemon_free(b);
}

/* Wait until the client has registered `reconnects` times after the first,
 * stepping as a worker would; then the daemon must list it and only it. */
static void expect_registered(const fx_daemon_t *r, profd_client_t *c, int64_t reconnects)
{
    profd_stats_t st;
    pp_msg_t rep;
    for (int t = 0; t < 750; t++) { /* 15 s: a 2 s hello timeout and backoffs */
        profd_stats(c, &st);
        if (st.connected && st.reconnects == reconnects) {
            break;
        }
        run_steps(&c, 1, 1, 1);
    }
    profd_stats(c, &st);
    assert_int_equal(st.connected, 1);
    assert_int_equal(st.reconnects, reconnects);
    assert_int_equal(fx_ask_once(r->cfg.control_url, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    assert_int_equal(rep.u.status_reply.ranks_n, 1);
    assert_int_equal(rep.u.status_reply.ranks[0].client, st.client_id);
    assert_string_equal(rep.u.status_reply.ranks[0].role, "actor");
    assert_int_equal(rep.u.status_reply.ranks[0].rank, 0);
    assert_int_equal(rep.u.status_reply.ranks[0].pid, (int64_t)getpid());
    pp_msg_free(&rep);
}

/* No URL and no PROFD_RUN_DIR: the worker starts first, with the system run
 * folder present (a systemd RuntimeDirectory, a hostPath) and no daemon
 * anywhere, and must find the daemon wherever the rule puts it: in the
 * system folder, then (an unprivileged daemon) in the per-user one, then
 * back. Fake folders stand in for /run/profd and /tmp/profd-<uid>. */
static void test_daemon_client_finds_late_daemon_by_rule(void **state)
{
    fx_daemon_t *r = calloc(1, sizeof(*r));
    cl_rundir_t rd;
    profd_options_t o;
    profd_client_t *c;
    profd_stats_t st;
    struct stat sb;
    char path[400];

    memset(&rd, 0, sizeof(rd));
    rd.n = 2;
    snprintf(rd.dirs[0], sizeof(rd.dirs[0]), "%.80s/sys", tmp);
    snprintf(rd.dirs[1], sizeof(rd.dirs[1]), "%.80s/user", tmp);
    assert_int_equal(mkdir(rd.dirs[0], 0755), 0); /* the per-user one does not exist yet */
    unsetenv("PROFD_URL");
    unsetenv("PROFD_RUN_DIR");
    itest_options(&o, NULL, "actor", 0);
    o.flush_ms = 10;
    assert_int_equal(cl_open(&c, &o, &rd), 0);
    assert_int_equal(profd_set_backend(c, profd_backend_sim(), NULL), 0);
    run_steps(&c, 1, 1, 10);
    profd_stats(c, &st);
    assert_int_equal(st.connected, 0);

    /* the daemon starts in the system folder after the worker */
    daemon_config_in(r, tmp, rd.dirs[0]);
    fx_daemon_start(r);
    expect_registered(r, c, 0);
    fx_daemon_stop(r);
    snprintf(path, sizeof(path), "%s/worker.sock", rd.dirs[0]);
    assert_int_not_equal(stat(path, &sb), 0); /* the socket went with it */

    /* it comes back in the per-user folder: the system one is still there */
    daemon_config_in(r, tmp, rd.dirs[1]);
    fx_daemon_start(r);
    expect_registered(r, c, 1);
    fx_daemon_stop(r);

    /* and in the system folder again */
    daemon_config_in(r, tmp, rd.dirs[0]);
    fx_daemon_start(r);
    expect_registered(r, c, 2);
    profd_close(c);
    fx_daemon_free(r);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* With no daemon, the background thread waits on a registration that no
 * one answers: profd_close() must not wait for that request to time out
 * (2 s); it is bounded to about 100 ms, whenever it comes. */
static void test_daemon_close_without_daemon_is_quick(void **state)
{
    static const int waits_ms[] = {0, 5, 60, 150, 400};
    char url[400];
    snprintf(url, sizeof(url), "ipc://%.80s/nobody.sock", tmp);
    for (size_t i = 0; i < sizeof(waits_ms) / sizeof(waits_ms[0]); i++) {
        profd_options_t o;
        profd_client_t *c;
        itest_options(&o, url, "actor", 0);
        assert_int_equal(profd_open(&c, &o), 0);
        profd_step_begin(c, 1);
        fx_sleep_ms(waits_ms[i]);
        double t0 = mono_s();
        profd_close(c);
        double took = mono_s() - t0;
        if (took > 0.5) {
            fail_msg("profd_close took %.3f s with no daemon (after %d ms)", took, waits_ms[i]);
        }
    }
}

/* ---- a reply held until the journal holds what it tells ---- */

typedef struct {
    const char *url;
    int rc;
    int64_t windows;
    double at; /* mono_s() when the reply came */
    int done;
} held_ask_t;

static void *held_ask(void *arg)
{
    held_ask_t *a = arg;
    pp_msg_t rep;
    a->rc = fx_ask_once(a->url, "{\"v\":1,\"type\":\"start\",\"steps\":[3]}", &rep);
    a->windows = a->rc == 0 ? (int64_t)rep.u.started.windows_n : -1;
    if (a->rc == 0) {
        pp_msg_free(&rep);
    }
    a->at = mono_s();
    __atomic_store_n(&a->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* The daemon's journal (<save_path>/.profd-<node>.journal) in path[len]. */
static void journal_path(const fx_daemon_t *r, char *path, size_t len)
{
    DIR *dir = opendir(r->cfg.save_path);
    assert_non_null(dir);
    struct dirent *e;
    path[0] = '\0';
    while ((e = readdir(dir)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, ".profd-", 7) == 0 && n > 8 &&
            strcmp(e->d_name + n - 8, ".journal") == 0) {
            fx_path_of(path, len, "%s/%s", r->cfg.save_path, e->d_name);
        }
    }
    closedir(dir);
    assert_true(path[0] != '\0');
}

/* A write the journal cannot make (a file-size limit: EFBIG, as a full
 * disk) holds the reply that acknowledges what it would have kept: a
 * window started is not told before it would survive a restart. Once the
 * limit lifts, the next try (every second) writes the record and the reply
 * goes; the window is in the journal, and still there after a restart. */
static void test_daemon_reply_waits_for_the_journal(void **state)
{
    fx_daemon_t *r = daemon_new(tmp);
    fx_daemon_start(r);
    pp_msg_t rep;
    assert_int_equal(fx_ask_once(r->cfg.control_url, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    pp_msg_free(&rep);
    char path[400];
    journal_path(r, path, sizeof(path));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);

    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN); /* as main.c: EFBIG, not a signal */
    lim.rlim_cur = (rlim_t)st.st_size;
    lim.rlim_max = old.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

    held_ask_t a = {.url = r->cfg.control_url, .rc = -1, .windows = -1, .at = 0, .done = 0};
    pthread_t t;
    double sent = mono_s();
    assert_int_equal(pthread_create(&t, NULL, held_ask, &a), 0);
    fx_sleep_ms(700);
    double lifted = mono_s();
    bool early = __atomic_load_n(&a.done, __ATOMIC_SEQ_CST) != 0;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, was);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (early) {
        fail_msg("the start was answered %.3f s after it was sent, with its window not written",
                 a.at - sent);
    }
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.windows, 1);
    assert_true(a.at >= lifted);

    char *j = fx_slurp(path);
    assert_non_null(j);
    assert_non_null(strstr(j, "\"kind\":\"window\""));
    free(j);
    fx_daemon_stop(r);
    fx_daemon_start(r);
    char ws[32];
    window_state(r, 1, ws, sizeof(ws));
    assert_string_equal(ws, "pending");
    fx_daemon_free(r);
}

/* Window id's detail as profctl windows ID shows it: its counts, its
 * warnings, then one line per rank (in the order of their ranks),
 * "<role> <rank> <state>" and its failures; or the error's code with its
 * message. */
static int window_detail(const fx_daemon_t *r, int64_t id, char *out, size_t len)
{
    char q[128];
    pp_msg_t rep;
    size_t at = 0;
    snprintf(q, sizeof(q), "{\"v\":1,\"type\":\"windows\",\"id\":%lld}", (long long)id);
    int rv = fx_ask_once(r->cfg.control_url, q, &rep);
    if (rv != 0) {
        snprintf(out, len, "%s", rep.u.error.message ? rep.u.error.message : "");
        pp_msg_free(&rep);
        return rv;
    }
    assert_int_equal(rep.u.windows_reply.windows_n, 1);
    const pp_window_t *w = &rep.u.windows_reply.windows[0];
    at += (size_t)snprintf(out + at, len - at, "%s: %lld complete, %lld failed, %lld missed\n",
                           pp_enum_name(&pp_enum_window_state, w->state), (long long)w->complete,
                           (long long)w->failed, (long long)w->missed);
    for (size_t i = 0; i < w->warnings_n && at < len; i++) {
        at += (size_t)snprintf(out + at, len - at, "warning: %s\n", w->warnings[i]);
    }
    size_t order[8];
    assert_true(w->ranks_n <= 8);
    for (size_t i = 0; i < w->ranks_n; i++) { /* by rank */
        size_t x = i;
        for (; x > 0 && w->ranks[order[x - 1]].rank > w->ranks[i].rank; x--) {
            order[x] = order[x - 1];
        }
        order[x] = i;
    }
    for (size_t i = 0; i < w->ranks_n && at < len; i++) {
        const pp_rank_state_t *k = &w->ranks[order[i]];
        at += (size_t)snprintf(out + at, len - at, "%s %lld %s", k->role, (long long)k->rank,
                               pp_enum_name(&pp_enum_member_state, k->state));
        for (size_t f = 0; f < k->failures_n && at < len; f++) {
            at += (size_t)snprintf(out + at, len - at, " | %s", k->failures[f]);
        }
        at += at < len ? (size_t)snprintf(out + at, len - at, "\n") : 0;
    }
    assert_true(at < len);
    pp_msg_free(&rep);
    return 0;
}

/* A done window is compacted once the journal holds it (its members and
 * their captures freed, its counts and its member count kept): its detail
 * reads them back from its manifest, the same before, after, and after a
 * restart; without its manifest the detail comes without them (no rank's
 * line), with a warning that says why; the list shows its counts and its
 * ranks, selected and reported, before and after a restart. */
static void test_daemon_done_window_read_back(void **state)
{
    fx_daemon_t *r = daemon_new(tmp);
    profd_client_t *c[NCLIENTS];
    char before[2048], after[2048] = "", man[400], away[420];
    /* actor 1 leaves before the window: missed when its client had the
     * plan, else lost */
    const char *missed = "done: 2 complete, 0 failed, 1 missed\n"
                         "actor 0 reported\n"
                         "actor 1 reported | missed: worker closed before step 5\n"
                         "rollout 3 reported\n";
    const char *lost = "done: 2 complete, 1 failed, 0 missed\n"
                       "actor 0 reported\n"
                       "actor 1 lost | failed: exited without reporting its captures (last step "
                       "begun: 2)\n"
                       "rollout 3 reported\n";

    fx_daemon_start(r);
    open_clients(r, c, NCLIENTS);
    run_steps(c, NCLIENTS, 1, 2);
    start_actors_and_replica_1(r);
    profd_close(c[1]);
    c[1] = c[NCLIENTS - 1];
    run_steps(c, NCLIENTS - 1, 3, 8);
    fx_wait_state(r->cfg.control_url, 1, "done", NULL, 0);
    /* its record of step times waits for the steps after it: not
     * compacted yet */
    assert_int_equal(window_detail(r, 1, before, sizeof(before)), 0);
    if (strcmp(before, missed) != 0 && strcmp(before, lost) != 0) {
        fail_msg("the window's detail: '%s'", before);
    }

    /* the steps after it: the record is complete, the window compacted,
     * its detail from the manifest (moved away, it cannot be) */
    run_steps(c, NCLIENTS - 1, 9, 16);
    fx_path_of(man, sizeof(man), "%s/out/itest/w1-steps5-6/manifest.json", tmp);
    fx_path_of(away, sizeof(away), "%s.away", man);
    char unread[2048];
    fx_path_of(unread, sizeof(unread),
               "%.36s\n"
               "warning: window 1: its captures cannot be read back: "
               "%s/out/itest/w1-steps5-6/manifest.json: cannot open "
               "'itest/w1-steps5-6/manifest.json': No such file or directory\n",
               before, tmp); /* its members are gone with its captures: no rank's line */
    for (int t = 0; t < 200 && strcmp(after, unread) != 0; t++) {
        fx_sleep_ms(50);
        assert_int_equal(rename(man, away), 0);
        assert_int_equal(window_detail(r, 1, after, sizeof(after)), 0);
        assert_int_equal(rename(away, man), 0);
    }
    assert_string_equal(after, unread);
    int64_t t0 = fx_now_ms();
    assert_int_equal(window_detail(r, 1, after, sizeof(after)), 0);
    assert_string_equal(after, before);
    /* read back, its captures stay PD_WCAPS_KEEP_MS (its manifest moved
     * away meanwhile: still answered), then it is compacted again */
    assert_int_equal(rename(man, away), 0);
    assert_int_equal(window_detail(r, 1, after, sizeof(after)), 0);
    if (fx_now_ms() - t0 < PD_WCAPS_KEEP_MS) {
        assert_string_equal(after, before);
    }
    for (int t = 0; t < 200 && strcmp(after, unread) != 0; t++) {
        fx_sleep_ms(50);
        assert_int_equal(window_detail(r, 1, after, sizeof(after)), 0);
    }
    assert_string_equal(after, unread);
    assert_int_equal(rename(away, man), 0);
    pp_msg_t lst; /* compacted: the list as it was, from what is kept */
    assert_int_equal(fx_ask_once(r->cfg.control_url, "{\"v\":1,\"type\":\"windows\"}", &lst), 0);
    assert_int_equal(lst.u.windows_reply.windows_n, 1);
    assert_int_equal(lst.u.windows_reply.windows[0].selected, 3);
    assert_int_equal(lst.u.windows_reply.windows[0].reported, 3);
    char listed_tool[64];
    snprintf(listed_tool, sizeof(listed_tool), "%s", lst.u.windows_reply.windows[0].tool);
    size_t listed_roles = lst.u.windows_reply.windows[0].roles_n;
    assert_true(listed_roles >= 1);
    pp_msg_free(&lst);

    for (int i = 0; i < NCLIENTS - 1; i++) {
        profd_close(c[i]);
    }
    fx_daemon_stop(r);
    fx_daemon_start(r); /* read back from the journal: compacted again */
    assert_int_equal(rename(man, away), 0);
    assert_int_equal(window_detail(r, 1, after, sizeof(after)), 0);
    assert_string_equal(after, unread);
    assert_int_equal(rename(away, man), 0);
    assert_int_equal(window_detail(r, 1, after, sizeof(after)), 0);
    assert_string_equal(after, before);
    pp_msg_t rep; /* the list answers from the counts kept */
    assert_int_equal(fx_ask_once(r->cfg.control_url, "{\"v\":1,\"type\":\"windows\"}", &rep), 0);
    assert_int_equal(rep.u.windows_reply.windows_n, 1);
    assert_int_equal(rep.u.windows_reply.windows[0].selected, 3);
    assert_int_equal(rep.u.windows_reply.windows[0].reported, 3);
    assert_string_equal(rep.u.windows_reply.windows[0].tool, listed_tool);
    assert_int_equal(rep.u.windows_reply.windows[0].roles_n, listed_roles);
    assert_int_equal(rep.u.windows_reply.windows[0].complete, 2);
    assert_int_equal(rep.u.windows_reply.windows[0].failed, before[18] == '0' ? 0 : 1);
    assert_int_equal(rep.u.windows_reply.windows[0].missed, before[18] == '0' ? 1 : 0);
    pp_msg_free(&rep);
    fx_daemon_free(r);
}

int main(void)
{
    return PD_RUN_EACH(setup, teardown, test_daemon_window_end_to_end, test_daemon_checksum_none,
                       test_daemon_bad_input_keeps_serving, test_daemon_restart_under_clients,
                       test_daemon_two_in_one_process, test_daemon_client_finds_late_daemon_by_rule,
                       test_daemon_close_without_daemon_is_quick,
                       test_daemon_reply_waits_for_the_journal, test_daemon_done_window_read_back);
}
