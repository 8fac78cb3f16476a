// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The default run directory of libprofd and profctl (see rundir.h).
 */
#include "rundir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cl_rundir_init(cl_rundir_t *r)
{
    const char *env = getenv("PROFD_RUN_DIR");

    memset(r, 0, sizeof(*r));
    if (env != NULL && env[0] == '/' && strlen(env) <= PP_RUN_DIR_MAX) {
        snprintf(r->dirs[0], sizeof(r->dirs[0]), "%s", env);
        r->n = 1;
        return;
    }
    r->ignored = env != NULL && env[0] != '\0';
    snprintf(r->dirs[0], sizeof(r->dirs[0]), "/run/profd");
    snprintf(r->dirs[1], sizeof(r->dirs[1]), "/tmp/profd-%u", (unsigned)getuid());
    r->n = 2;
}

static bool has_socket(const char *dir, const char *sock)
{
    char path[PP_RUN_DIR_MAX + 64];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, sock);
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static bool searchable_dir(const char *dir)
{
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, X_OK) == 0;
}

void cl_rundir_url(const cl_rundir_t *r, const char *sock, char *buf, size_t len)
{
    int pick = r->n - 1; /* $PROFD_RUN_DIR (step 1) */

    if (r->n > 1) {
        for (pick = 0; pick < r->n && !has_socket(r->dirs[pick], sock); pick++) {
        }
        if (pick == r->n) { /* no socket yet: step 3, else step 4 */
            pick = searchable_dir(r->dirs[0]) ? 0 : r->n - 1;
        }
    }
    snprintf(buf, len, "ipc://%s/%s", r->dirs[pick], sock);
}
