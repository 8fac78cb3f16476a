// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
#include "security_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

fx_daemon_t *sec_daemon(const char *tmp, const char *sub)
{
    char dir[512];
    fx_path_of(dir, sizeof(dir), "%s/%s", tmp, sub);
    fx_daemon_t *r = fx_daemon_new(dir);
    r->cfg.client_timeout_ms = 60000;
    r->cfg.max_msg_bytes = 1 << 20;
    return r;
}

int64_t sec_hello(nng_socket s, int64_t rank, const char *host)
{
    char q[256];
    pp_msg_t rep;
    snprintf(q, sizeof(q),
             "{\"v\":1,\"type\":\"hello\",\"job\":\"sec\",\"role\":\"actor\",\"rank\":%lld,"
             "\"host\":\"%s\",\"pid\":%d}",
             (long long)rank, host, (int)getpid());
    assert_int_equal(fx_ask(s, q, &rep), 0);
    assert_int_equal(rep.type, PP_T_welcome);
    int64_t id = rep.u.welcome.client;
    pp_msg_free(&rep);
    return id;
}

int64_t sec_start_window(const fx_daemon_t *r, int64_t step, const char *name)
{
    char q[160];
    snprintf(q, sizeof(q), "{\"v\":1,\"type\":\"start\",\"steps\":[%lld],\"tool\":\"sim\"}",
             (long long)step);
    return fx_start_window(r->cfg.control_url, q, name, -1);
}

void sec_wait_done(const fx_daemon_t *r, int64_t id, char *reason, size_t len)
{
    fx_wait_state(r->cfg.control_url, id, "done", reason, len);
}

void sec_read_manifest(const fx_daemon_t *r, const char *window, pp_manifest_t *man)
{
    char path[1024], err[256];
    fx_path_of(path, sizeof(path), "%s/sec/%s/manifest.json", r->cfg.save_path, window);
    char *text = fx_slurp(path);
    if (text == NULL) {
        fail_msg("no manifest %s", path);
    }
    assert_int_equal(pp_record_decode(&pp_desc_manifest, text, strlen(text), man, err, sizeof(err)),
                     0);
    free(text);
}

const pp_capture_t *sec_capture_of(const pp_manifest_t *man, const char *phase)
{
    for (size_t i = 0; i < man->captures_n; i++) {
        if (man->captures[i].phase && strcmp(man->captures[i].phase, phase) == 0) {
            return &man->captures[i];
        }
    }
    fail_msg("no capture of phase %s in the manifest", phase);
    return NULL;
}
