// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Applying a profiling config (see apply.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "compose.h"
#include "profcfg.h"
#include "pu_buf.h"
#include "start.h"

void pd_apply_result_free(pd_apply_result_t *r)
{
    pu_strv_free(r->warnings, r->nwarnings);
    free(r->ids);
    memset(r, 0, sizeof(*r));
}

/* own: withdraw the not-yet-started windows of requests the file no longer
 * makes; planned[i] says whether request i already has its windows. */
static void reconcile(pd_node_t *n, const char *file, char *const *keys, size_t nkeys,
                      bool *planned)
{
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        bool asked = false;
        for (size_t i = 0; w->origin && i < nkeys; i++) {
            if (keys[i] && strcmp(keys[i], w->origin) == 0) {
                asked = planned[i] = true;
            }
        }
        if (w->origin && !asked && w->state == PP_WS_PENDING) {
            char why[256];
            PD_LOG(n->log, PD_LOG_INFO, "config", "%s no longer asks for window %s: withdrawn",
                   file, w->name);
            pd_start_stop(n, w->id, why, sizeof(why));
        }
    }
}

/* Start the windows of every request not planned yet; collect their ids. */
static int start_all(pd_node_t *n, pd_profcfg_t *cfg, const char *job, char *const *keys,
                     const bool *planned, pd_apply_result_t *r, char *err, size_t errlen)
{
    int rv = 0;
    for (size_t i = 0; i < cfg->n_specs && rv == 0; i++) {
        int64_t *v;
        size_t k;
        pp_window_spec_t *spec = &cfg->specs[i];
        if (job && spec->job == NULL) {
            spec->job = strdup(job);
        }
        if (planned && planned[i]) {
            continue;
        }
        if ((rv = pd_start_windows(n, spec, &v, &k, err, errlen)) != 0) {
            break;
        }
        for (size_t x = 0; keys && keys[i] && x < k; x++) {
            pd_window_t *w = pd_windows_get(n->win, v[x]);
            if (w) {
                w->origin = strdup(keys[i]);
                pd_windows_touch(n->win, w, NULL);
            }
        }
        int64_t *all = realloc(r->ids, (r->nids + k) * sizeof(*all));
        if (all) {
            memcpy(all + r->nids, v, k * sizeof(*v));
            r->ids = all;
            r->nids += k;
        }
        free(v);
    }
    return rv;
}

/* The windows of a config read (cfg consumed). */
static int apply_cfg(pd_node_t *n, const char *file, pd_profcfg_t *src, const char *job, bool own,
                     pd_apply_result_t *out, char *err, size_t errlen)
{
    pd_profcfg_t cfg = *src;
    pd_apply_result_t r = {0};
    int rv;
    char **keys = own ? calloc(cfg.n_specs + 1, sizeof(*keys)) : NULL;
    bool *planned = own ? calloc(cfg.n_specs + 1, sizeof(*planned)) : NULL;
    if (own && (keys == NULL || planned == NULL)) {
        free(keys);
        free(planned);
        pd_profcfg_free(&cfg);
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    for (size_t i = 0; own && i < cfg.n_specs; i++) {
        size_t klen;
        if (pp_record_encode(&pp_desc_window_spec, &cfg.specs[i], false, &keys[i], &klen) != 0) {
            keys[i] = NULL; /* planned again: better twice than never */
        }
    }
    if (own) {
        reconcile(n, file, keys, cfg.n_specs, planned);
    }
    rv = start_all(n, &cfg, job, keys, planned, &r, err, errlen);
    pu_strv_free(keys, own ? cfg.n_specs : 0);
    free(planned);
    if (rv != 0) {
        pd_apply_result_free(&r);
        pd_profcfg_free(&cfg);
        return rv;
    }
    /* hand over the file-level warnings */
    r.warnings = cfg.warnings;
    r.nwarnings = cfg.n_warnings;
    cfg.warnings = NULL;
    cfg.n_warnings = 0;
    pd_profcfg_free(&cfg);
    *out = r;
    return 0;
}

int pd_apply_text(pd_node_t *n, const char *file, const char *text, size_t len,
                  char *const *overrides, size_t n_overrides, const char *job, bool own,
                  pd_apply_result_t *out, char *err, size_t errlen)
{
    pd_profcfg_t cfg;
    file = file ? file : "<apply>";
    int rv = pd_profcfg_load(file, text, len, overrides, n_overrides, &cfg, err, errlen);
    return rv != 0 ? rv : apply_cfg(n, file, &cfg, job, own, out, err, errlen);
}

int pd_apply_specs(pd_node_t *n, pp_window_spec_t *specs, size_t n_specs, char *const *warnings,
                   size_t n_warnings, const char *job, pd_apply_result_t *out, char *err,
                   size_t errlen)
{
    pd_profcfg_t cfg = {.specs = specs, .n_specs = n_specs};
    pd_apply_result_t r = {0};
    int rv = start_all(n, &cfg, job, NULL, NULL, &r, err, errlen);
    if (rv == 0 && n_warnings > 0 && (r.warnings = calloc(n_warnings, sizeof(char *))) == NULL) {
        rv = PROFD_ENOMEM;
        snprintf(err, errlen, "out of memory");
    }
    for (size_t i = 0; rv == 0 && i < n_warnings; i++) {
        if ((r.warnings[r.nwarnings] = strdup(warnings[i])) != NULL) {
            r.nwarnings++;
        }
    }
    if (rv != 0) {
        pd_apply_result_free(&r);
        return rv;
    }
    *out = r;
    return 0;
}

/* The operator's profiling config, composed from its own folder (its
 * defaults lists too) with the library profctl uses; no overrides, and no
 * oc.env: the daemon's environment is not the job's. */
static int read_own(const char *file, pd_profcfg_t *cfg, char *err, size_t errlen)
{
    char dir[PD_PATH_MAX];
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read %.400s: %s", file, strerror(errno));
        return PROFD_EIO;
    }
    fclose(f);
    const char *slash = strrchr(file, '/');
    size_t dlen = slash ? (size_t)(slash - file) : 1;
    if (dlen >= sizeof(dir)) {
        snprintf(err, errlen, "the folder of %.200s is too long", file);
        return PROFD_EINVAL;
    }
    memcpy(dir, slash ? file : ".", dlen);
    dir[dlen] = '\0';
    const char *search[] = {dir};
    hy_compose_args_t a = {.loader = &hy_loader_fs,
                           .search = search,
                           .n_search = 1,
                           .config_name = slash ? slash + 1 : file};
    hy_config_t c;
    int rv = hy_compose(&a, &c, err, errlen);
    if (rv == 0) {
        pd_profcfg_opts_t o = {.composed = c.n_configs > 1};
        rv = pd_profcfg_read(c.primary, c.root, &o, cfg, err, errlen);
        hy_config_free(&c);
    }
    return rv;
}

void pd_apply_own(pd_node_t *n)
{
    char err[512];
    pd_apply_result_t r;
    pd_profcfg_t cfg;
    const char *file = n->cfg->profile_config;
    if (file[0] == '\0') {
        return;
    }
    if (n->cfg->coordinator_url[0]) {
        PD_LOG(n->log, PD_LOG_WARN, "config",
               "%s ignored: windows of a node daemon are planned by its coordinator", file);
        return;
    }
    if (read_own(file, &cfg, err, sizeof(err)) != 0 ||
        apply_cfg(n, file, &cfg, NULL, true, &r, err, sizeof(err)) != 0) {
        PD_LOG(n->log, PD_LOG_ERROR, "config", "%s", err);
        return;
    }
    PD_LOG(n->log, PD_LOG_INFO, "config", "%s: %zu new window(s)", file, r.nids);
    for (size_t i = 0; i < r.nwarnings; i++) {
        PD_LOG(n->log, PD_LOG_WARN, "config", "%s", r.warnings[i]);
    }
    pd_apply_result_free(&r);
}
