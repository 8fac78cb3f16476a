// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Where libprofd and profctl look for the daemon's sockets when no URL is
 * given: the one rule both use (the daemon's side is pd_config_defaults).
 *
 *  1. $PROFD_RUN_DIR when it is absolute and at most PP_RUN_DIR_MAX bytes;
 *     otherwise it is ignored, as the daemon ignores it;
 *  2. else the first of /run/profd and /tmp/profd-<uid> that holds the
 *     socket;
 *  3. else /run/profd when it is a folder this process can search (the
 *     daemon may not have started yet);
 *  4. else /tmp/profd-<uid>.
 *
 * Steps 2-4 depend on the file system, so a client that was given no URL
 * asks again before each attempt to register.
 */
#ifndef PROFD_CLIENT_RUNDIR_H
#define PROFD_CLIENT_RUNDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "profd/proto.h"

typedef struct cl_rundir {
    /* candidate folders in order of preference: one ($PROFD_RUN_DIR) or
     * two (the system one, then the per-user one) */
    char dirs[2][PP_RUN_DIR_MAX + 1];
    int n;
    bool ignored; /* PROFD_RUN_DIR was set but not usable (step 1) */
} cl_rundir_t;

/* The candidates from the environment and the uid (step 1). Reads the
 * environment: call it on the thread that opens, never on a background one. */
void cl_rundir_init(cl_rundir_t *r);

/* Write "ipc://<folder>/<sock>" of the folder the rule picks now (steps 2-4:
 * stat() and access() only, no allocation) into buf (truncated to len). */
void cl_rundir_url(const cl_rundir_t *r, const char *sock, char *buf, size_t len);

#endif
