// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Starting and stopping windows (see start.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "gather.h"
#include "retention.h"
#include "start.h"

/* The tree root of a request: its save_path (relative to the daemon's
 * folder), else the daemon's. Windows go below it with room to spare. */
static int save_root(const pd_node_t *n, const pp_window_spec_t *spec, char *buf, size_t len)
{
    const char *sp = spec->save_path && spec->save_path[0] ? spec->save_path : NULL;
    int k;
    if (sp == NULL) {
        k = snprintf(buf, len, "%s", n->save_path);
    } else if (sp[0] == '/') {
        k = snprintf(buf, len, "%s", sp);
    } else {
        /* a request's relative save_path (verl's default outputs/profile)
         * lives below the daemon's: the daemon's folder is not the job's */
        while (sp[0] == '.' && sp[1] == '/') {
            sp += 2;
        }
        if (strcmp(sp, "..") == 0 || strncmp(sp, "../", 3) == 0 || strstr(sp, "/../") ||
            (strlen(sp) >= 3 && strcmp(sp + strlen(sp) - 3, "/..") == 0)) {
            return PROFD_EPATH;
        }
        k = snprintf(buf, len, "%s/%s", n->save_path, sp);
    }
    return (k < 0 || (size_t)k + 2 * PP_MAX_NAME + 256 >= len) ? PROFD_EINVAL : 0;
}

int pd_start_windows(pd_node_t *n, const pp_window_spec_t *spec, int64_t **ids, size_t *nids,
                     char *err, size_t errlen)
{
    pd_plan_params_t params;
    pd_plan_out_t out;
    char root[PD_PATH_MAX];
    pd_node_plan_params(n, &params);
    int rv = pd_windows_plan(n->win, n->reg, spec, &params, &out, err, errlen);
    if (rv != 0) {
        return rv;
    }
    if ((rv = save_root(n, spec, root, sizeof(root))) != 0) {
        snprintf(err, errlen,
                 rv == PROFD_EPATH ? "a relative save_path must stay below the daemon's save_path "
                                     "(no '..')"
                                   : "save_path is too long");
        pd_plan_out_free(&out);
        return PROFD_EINVAL;
    }
    /* the root of a request's own save_path is made now: the tree below it
     * is then only ever reached from it, never through a symlink */
    if (pd_mkdirs(root, 0755) != 0) {
        snprintf(err, errlen, "cannot create save_path %.200s: %s", root, strerror(errno));
        pd_plan_out_free(&out);
        return PROFD_EIO;
    }
    if ((rv = pd_retention_floor(n, root, err, errlen)) != 0) { /* the free-disk floor */
        pd_plan_out_free(&out);
        return rv;
    }
    if (pd_windows_add(n->win, n->reg, spec, &out, root, pd_now_ms(), ids, nids) != 0) {
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    return 0;
}

int pd_start_stop(pd_node_t *n, int64_t id, char *err, size_t errlen)
{
    pd_plan_params_t params;
    pd_node_plan_params(n, &params);
    return pd_windows_stop(n->win, n->reg, id, &params, pd_now_ms(), err, errlen);
}
