// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The window table's unit tests share this fixture: a table over a job of
 * five ranks (actor 0, actor 1, rollout 2 and 3 with replicas 0 and 1,
 * critic 0, on hosts h0..h4) at step 10, and hooks that record what the
 * table asks of the daemon. No loop, no sockets, no clock, no files.
 */
#ifndef WINDOWS_FIXTURE_H
#define WINDOWS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "windows.h"

#define MS  1000LL
#define NOW (1000000 * MS) /* us */

typedef struct gathered {
    int64_t window, client, owner;
    size_t cap;
} gathered_t;

typedef struct fixture {
    pd_log_t log;
    pd_registry_t reg;
    pd_windows_t ws;
    pd_rank_t *k[5]; /* actor 0, actor 1, rollout 2 (replica 0), rollout 3 (replica 1), critic 0 */
    int changed, dirty;
    gathered_t gathered[16];
    int ngathered;
    int64_t completed[8];
    int ncompleted;
} fixture_t;

/* The table's hooks count changes and dirty marks and record gathers and
 * completions into the fixture. */
pd_rank_t *add_rank(fixture_t *f, const char *job, const char *role, int64_t rank, int64_t replica,
                    const char *host, int64_t pid);
int setup(void **state); /* cmocka: a fixture_t in *state */
int teardown(void **state);
pd_plan_params_t params(void); /* now NOW, latency 2 ms, margin 100 ms, job "run" */
/* A window over `steps` [first, last] for the selectors; its id. */
int64_t create(fixture_t *f, int64_t first, int64_t last, pp_selector_t *sels, size_t n,
               pp_mode_t mode);
pp_selector_t role_sel(const char *role); /* every rank of `role` */

#endif
