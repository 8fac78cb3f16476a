/* Applying a profiling config (see apply.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "profcfg.h"
#include "start.h"

void pd_apply_result_free(pd_apply_result_t *r)
{
    for (size_t i = 0; i < r->nwarnings; i++) {
        free(r->warnings[i]);
    }
    free(r->warnings);
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

int pd_apply_text(pd_node_t *n, const char *file, const char *text, size_t len,
                  char *const *overrides, size_t n_overrides, const char *job, bool own,
                  pd_apply_result_t *out, char *err, size_t errlen)
{
    pd_profcfg_t cfg;
    pd_apply_result_t r = {0};
    file = file ? file : "<apply>";
    int rv = pd_profcfg_load(file, text, len, overrides, n_overrides, &cfg, err, errlen);
    if (rv != 0) {
        return rv;
    }
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
    for (size_t i = 0; own && i < cfg.n_specs; i++) {
        free(keys[i]);
    }
    free(keys);
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

/* The file's text, at most `max` bytes; NULL on error (errno kept). */
static char *read_text(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return NULL;
    }
    char *text = NULL;
    FILE *mem = open_memstream(&text, len);
    char buf[8192];
    size_t k;
    while (mem && (k = fread(buf, 1, sizeof(buf), f)) > 0 && *len < max) {
        fwrite(buf, 1, k, mem);
    }
    fclose(f);
    if (mem == NULL || fclose(mem) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

void pd_apply_own(pd_node_t *n)
{
    char err[512];
    size_t len = 0;
    pd_apply_result_t r;
    const char *file = n->cfg->profile_config;
    if (file[0] == '\0') {
        return;
    }
    if (n->cfg->coordinator_url[0]) {
        PD_LOG(n->log, PD_LOG_WARN, "config",
               "%s ignored: windows of a node daemon are planned by its coordinator", file);
        return;
    }
    char *text = read_text(file, (size_t)n->cfg->max_msg_bytes, &len);
    if (text == NULL) {
        PD_LOG(n->log, PD_LOG_ERROR, "config", "cannot read %s: %s", file, strerror(errno));
        return;
    }
    if (pd_apply_text(n, file, text, len, NULL, 0, NULL, true, &r, err, sizeof(err)) != 0) {
        PD_LOG(n->log, PD_LOG_ERROR, "config", "%s", err);
    } else {
        PD_LOG(n->log, PD_LOG_INFO, "config", "%s: %zu new window(s)", file, r.nids);
        for (size_t i = 0; i < r.nwarnings; i++) {
            PD_LOG(n->log, PD_LOG_WARN, "config", "%s", r.warnings[i]);
        }
        pd_apply_result_free(&r);
    }
    free(text);
}
