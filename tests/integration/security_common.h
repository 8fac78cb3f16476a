// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * What the security tests of the daemon core share (test_security_captures,
 * test_security_limits): a daemon of their own below the test's temporary
 * folder, a worker registered by hand in job "sec", a window over one step
 * for the actors, and the manifest read back.
 */
#ifndef SECURITY_COMMON_H
#define SECURITY_COMMON_H

#include "daemon_fixture.h"

/* A daemon configured in <tmp>/<sub> (run/, out/), errors only logged,
 * clients kept 60 s, messages up to 1 MiB; not started (fx_daemon_free
 * stops and frees it). */
fx_daemon_t *sec_daemon(const char *tmp, const char *sub);

/* A worker of job "sec", role actor, registered by hand; its client id. */
int64_t sec_hello(nng_socket s, int64_t rank, const char *host);
/* A window over step `step` for the actors, named `name`; its id. */
int64_t sec_start_window(const fx_daemon_t *r, int64_t step, const char *name);
/* Until the window is done; its reason ("" none) in reason[len]. */
void sec_wait_done(const fx_daemon_t *r, int64_t id, char *reason, size_t len);
/* The manifest of window folder `window` of job "sec". */
void sec_read_manifest(const fx_daemon_t *r, const char *window, pp_manifest_t *man);
/* The capture of `phase` in `man` (fails the test if none). */
const pp_capture_t *sec_capture_of(const pp_manifest_t *man, const char *phase);

#endif
