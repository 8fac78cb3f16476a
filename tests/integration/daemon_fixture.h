// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The in-process daemon of the integration tests: the daemon core running
 * in a thread of the test, driven over nng like any peer. One fixture for
 * every integration test: a temporary folder per test, a daemon configured
 * below it, started, stopped (every handle closed) and started again; raw
 * requests on a socket or on a connection of their own; a window waited
 * for by state. Every helper fails the running cmocka test on an error.
 */
#ifndef DAEMON_FIXTURE_H
#define DAEMON_FIXTURE_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <nng/nng.h>

#include "daemon.h"

typedef struct fx_daemon {
    pd_daemon_t d;
    pthread_t thread;
    pd_config_t cfg;
} fx_daemon_t;

/* ---- time and files ---- */

void fx_sleep_ms(int ms);
int64_t fx_now_ms(void); /* monotonic */
/* snprintf into buf; fails the test if it does not fit */
void fx_path_of(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void fx_mkdirs(const char *path); /* mkdir -p */
bool fx_exists(const char *path); /* lstat: a dangling link exists */
char *fx_slurp(const char *path); /* up to 1 MiB, NUL-terminated; NULL if unreadable */
/* A fresh folder /tmp/<prefix>-XXXXXX in dir[len]; fx_tmp_remove: rm -rf. */
void fx_tmp_make(char *dir, size_t len, const char *prefix);
int fx_tmp_remove(const char *dir);
/* A test file's `static char tmp[256]` and the cmocka setup and teardown
 * that make it fresh (/tmp/<prefix>-XXXXXX) for each test and remove it. */
#define FX_TMP_FIXTURE(prefix)                                                                     \
    static char tmp[256];                                                                          \
    static int setup(void **state)                                                                 \
    {                                                                                              \
        (void)state;                                                                               \
        fx_tmp_make(tmp, sizeof(tmp), prefix);                                                     \
        return 0;                                                                                  \
    }                                                                                              \
    static int teardown(void **state)                                                              \
    {                                                                                              \
        (void)state;                                                                               \
        return fx_tmp_remove(tmp);                                                                 \
    }

/* ---- the daemon ---- */

/* Defaults, sockets in run_dir, output in save_path, errors only logged.
 * The test sets what else it needs in d->cfg before fx_daemon_start. */
void fx_daemon_config(fx_daemon_t *d, const char *run_dir, const char *save_path);
/* A daemon of its own, configured below dir (made if missing): sockets in
 * <dir>/run, output in <dir>/out; not started. fx_daemon_free stops it and
 * frees it. */
fx_daemon_t *fx_daemon_new(const char *dir);
/* pd_config_finish, pd_daemon_init and the daemon's thread. */
void fx_daemon_start(fx_daemon_t *d);
/* A coordinator of its own below dir (fx_daemon_new), nodes joining at
 * ipc://<dir>/coord.sock, started. */
fx_daemon_t *fx_coordinator_start(const char *dir);
/* Stops the thread; pd_daemon_fini must report every handle closed. The
 * daemon can be started again with the same configuration. */
void fx_daemon_stop(fx_daemon_t *d);
void fx_daemon_free(fx_daemon_t *d);

/* ---- requests ---- */

nng_socket fx_dial(const char *url); /* req0, 10 s to send and to receive */
/* Send `len` bytes on `s` and decode the reply; the error code (0 for a
 * reply that is not an error). */
int fx_ask_raw(nng_socket s, const void *buf, size_t len, pp_msg_t *rep);
int fx_ask(nng_socket s, const char *json, pp_msg_t *rep);
int fx_ask_once(const char *url, const char *json, pp_msg_t *rep); /* a connection of its own */
/* The reply's text as received (NUL-terminated, the caller frees it). */
char *fx_call_raw(const char *url, const void *buf, size_t len);

/* Starts `json` (a start request): one window named `name`, selecting
 * `selected` ranks (not checked when negative); its id. */
int64_t fx_start_window(const char *control_url, const char *json, const char *name,
                        int64_t selected);
/* Asks for window `id` until it is in state `want` (10 s at most, else the
 * test fails); its reason ("" for none) in reason[len] if reason is not NULL. */
void fx_wait_state(const char *control_url, int64_t id, const char *want, char *reason, size_t len);

#endif
