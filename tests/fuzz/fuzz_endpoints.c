// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Fuzz target for both sockets of a daemon: any bytes as one request to
 * the worker endpoint or the control endpoint of a daemon running in this
 * process (ipc:// in a private folder), through the dispatcher and every
 * handler. The first byte picks the socket ('c': control, anything else:
 * the worker socket); the rest is the request. Two clients are registered
 * at start (ids 4294967297 and 4294967298) and a window made for them
 * (id 1), so that events, watches, results and byes for known clients
 * reach their handlers. Every reply must decode, and the daemon must still
 * answer a status request afterwards. A watch may be parked (no reply
 * before the timeout): the socket is then opened again.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <pthread.h>

#include "daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct {
    bool ready;
    char dir[64];
    pd_config_t cfg;
    pd_daemon_t d;
    pthread_t thread;
    nng_socket worker, control;
} F;

static void *run(void *arg)
{
    pd_daemon_run(arg);
    return NULL;
}

static void remove_tree(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot remove %s\n", dir);
    }
}

static void stop(void)
{
    nng_close(F.worker);
    nng_close(F.control);
    pd_daemon_request_stop(&F.d);
    pthread_join(F.thread, NULL);
    if (pd_daemon_fini(&F.d) != 0) {
        abort(); /* a handle left open */
    }
    remove_tree(F.dir);
}

static void dial(nng_socket *s, const char *url)
{
    if (nng_req0_open(s) != 0 || nng_socket_set_ms(*s, NNG_OPT_RECVTIMEO, 3000) != 0 ||
        nng_socket_set_ms(*s, NNG_OPT_SENDTIMEO, 3000) != 0 || nng_dial(*s, url, NULL, 0) != 0) {
        abort();
    }
}

/* One request; 0 with the reply decoded, NNG_ETIMEDOUT when none came. */
static int call(nng_socket s, const void *buf, size_t len, pp_msg_t *rep)
{
    nng_msg *m;
    char err[256];
    if (nng_msg_alloc(&m, 0) != 0 || nng_msg_append(m, buf, len) != 0) {
        abort();
    }
    if (nng_sendmsg(s, m, 0) != 0) {
        abort();
    }
    int rv = nng_recvmsg(s, &m, 0);
    if (rv != 0) {
        return rv;
    }
    if (pp_msg_decode(nng_msg_body(m), nng_msg_len(m), 0, rep, err, sizeof(err)) != 0) {
        fprintf(stderr, "undecodable reply: %.*s\n", (int)nng_msg_len(m),
                (const char *)nng_msg_body(m));
        abort(); /* the daemon answers with messages of its own protocol */
    }
    nng_msg_free(m);
    if (pp_type_access(rep->type) != PP_ACC_REPLY) {
        abort(); /* a reply type */
    }
    return 0;
}

static void call_ok(nng_socket s, const char *json, pp_type_t want)
{
    pp_msg_t rep;
    if (call(s, json, strlen(json), &rep) != 0 || rep.type != want) {
        fprintf(stderr, "setup request failed: %s\n", json);
        abort();
    }
    pp_msg_free(&rep);
}

static void prepare(void)
{
    char err[512], url[128];
    snprintf(F.dir, sizeof(F.dir), "%s/profd-fuzz-ep-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (mkdtemp(F.dir) == NULL) {
        abort();
    }
    pd_config_defaults(&F.cfg);
    snprintf(F.cfg.run_dir, sizeof(F.cfg.run_dir), "%s/run", F.dir);
    snprintf(F.cfg.save_path, sizeof(F.cfg.save_path), "%s/out", F.dir);
    snprintf(F.cfg.node_name, sizeof(F.cfg.node_name), "fuzz");
    F.cfg.log_level = PD_LOG_ERROR;
    F.cfg.max_msg_bytes = 65536;
    F.cfg.watch_hold_ms = 100;
    F.cfg.worker_rate = 0;
    F.cfg.control_rate = 0;
    pd_config_finish(&F.cfg);
    if (pd_daemon_init(&F.d, &F.cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "daemon: %s\n", err);
        abort();
    }
    if (pthread_create(&F.thread, NULL, run, &F.d) != 0) {
        abort();
    }
    snprintf(url, sizeof(url), "ipc://%s/run/worker.sock", F.dir);
    dial(&F.worker, url);
    snprintf(url, sizeof(url), "ipc://%s/run/control.sock", F.dir);
    dial(&F.control, url);
    call_ok(F.worker,
            "{\"v\":1,\"type\":\"hello\",\"job\":\"j\",\"role\":\"actor\",\"rank\":0,"
            "\"host\":\"h\",\"pid\":1000}",
            PP_T_welcome);
    call_ok(F.worker,
            "{\"v\":1,\"type\":\"hello\",\"job\":\"j\",\"role\":\"actor\",\"rank\":1,"
            "\"host\":\"h\",\"pid\":1001,\"roles\":[{\"role\":\"ref\",\"rank\":1}]}",
            PP_T_welcome);
    call_ok(F.control, "{\"v\":1,\"type\":\"start\",\"steps\":[1000000],\"tool\":\"sim\"}",
            PP_T_started);
    F.ready = true;
    atexit(stop);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pp_msg_t rep;
    if (!F.ready) {
        prepare();
    }
    if (size == 0) {
        return 0;
    }
    bool control = data[0] == 'c';
    nng_socket *s = control ? &F.control : &F.worker;
    int rv = call(*s, data + 1, size - 1, &rep);
    if (rv == NNG_ETIMEDOUT && !control) {
        /* a parked watch: the daemon answers it later, to a socket that
         * no longer waits; a fresh one for the next input */
        char url[128];
        nng_close(*s);
        snprintf(url, sizeof(url), "ipc://%s/run/worker.sock", F.dir);
        dial(s, url);
    } else if (rv != 0) {
        fprintf(stderr, "no reply on the %s socket: %s\n", control ? "control" : "worker",
                nng_strerror(rv));
        abort();
    } else {
        pp_msg_free(&rep);
    }
    /* still serving */
    static const char status[] = "{\"v\":1,\"type\":\"status\"}";
    if (call(F.control, status, sizeof(status) - 1, &rep) != 0 || rep.type != PP_T_status_reply) {
        abort();
    }
    pp_msg_free(&rep);
    return 0;
}
