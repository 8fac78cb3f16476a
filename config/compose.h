// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra composition (hydra-core 1.3, what verl and MindSpeed pin): the
 * primary config's `defaults:` list with config groups, `group@package`,
 * `# @package` headers, `_self_`, `optional`, `override`, nested defaults in
 * group files, interpolated choices (`${model_engine}_actor`), `???`
 * choices, `hydra.searchpath`; the command line's group choices
 * (`model_engine=megatron`, `group@pkg=x`), `+group=x`, `~group`, then the
 * value overrides (hydra.h) on the composed tree. A cycle in the defaults
 * (which Hydra itself follows until Python's recursion limit) is an error
 * naming the chain.
 *
 * Files are read through a loader: profctl's reads the file system
 * (hy_loader_fs), tests give tables. Nothing else touches the file system.
 */
#ifndef PD_COMPOSE_H
#define PD_COMPOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omegaconf.h"
#include "yamltree.h"

#define HY_MAX_FILES     256  /* configs loaded by one composition */
#define HY_MAX_DEPTH     32   /* nesting of defaults lists */
#define HY_MAX_DEFAULTS  256  /* items of one defaults list */
#define HY_MAX_OVERRIDES 4096 /* command-line overrides */
#define HY_MAX_SEARCH    16   /* search path entries */

/* An entry of a listed folder. */
typedef void (*hy_list_fn)(void *arg, const char *name, bool is_dir);

/*
 * Where configs come from. read: the whole file at `path` (*text
 * malloc'ed, the caller frees it); PROFD_ENOENT when there is no such file,
 * another error code when it cannot be read. list: every entry of folder
 * `path` through `add`; PROFD_ENOENT when `path` is not a folder.
 */
typedef struct hy_loader {
    void *ctx;
    int (*read)(void *ctx, const char *path, char **text, size_t *len);
    int (*list)(void *ctx, const char *path, hy_list_fn add, void *arg);
} hy_loader_t;

/* The file system (paths as given: relative ones from the working folder). */
extern const hy_loader_t hy_loader_fs;

/*
 * The folders of a Python interpreter's module search path (its sys.path,
 * as `python` would run the job): *dirs stays valid while the caller's
 * context lives. Asked for only when a module or `pkg://` entry is not
 * found on the caller's own path. Returns 0 or an error code.
 */
typedef int (*hy_syspath_fn)(void *ctx, const char *python, const char *const **dirs, size_t *n);

/* What Hydra knows of the job when it runs it: the `hydra` node the task
 * sees through ${hydra:...} and the time ${now:...} formats. */
typedef struct hy_runtime {
    const char *job_name; /* hydra.job.name: the script's or module's name; NULL: ??? */
    const char *cwd;      /* hydra.runtime.cwd (absolute) */
    int64_t now;          /* seconds since the epoch, as datetime.now() */
} hy_runtime_t;

typedef struct hy_hydra {
    yt_node_t *node; /* HydraConfig (resolved), NULL when no runtime was given */
    int64_t now;
} hy_hydra_t;

typedef struct hy_compose_args {
    const hy_loader_t *loader;
    const char *const *search; /* config folders in order: the primary's first */
    size_t n_search;
    const char *config_name; /* the primary, with or without .yaml */
    char *const *overrides;  /* command-line overrides, in order; must outlive the result */
    size_t n_overrides;
    oc_env_fn env; /* ${oc.env:...} while applying overrides; NULL: refused */
    void *env_ctx;
    /* Where `pkg://a.b` search path entries are looked for (as folder a/b):
     * pypath in order, then syspath(python)'s folders. Both may be empty:
     * such an entry is then not available (a warning, as Hydra's). */
    const char *const *pypath;
    size_t n_pypath;
    hy_syspath_fn syspath;
    void *syspath_ctx;
    const char *python;
    /* Hydra's resolvers `now` and `hydra` (hydra/core/utils.py:210-222);
     * NULL: refused as unsupported. */
    const hy_runtime_t *runtime;
} hy_compose_args_t;

/* A composed configuration. Its nodes point at sources the result owns. */
typedef struct hy_config {
    yt_node_t *root;  /* a mapping */
    char *primary;    /* the primary's file name as messages show it */
    size_t n_configs; /* files read: more than one when a defaults list composed it */
    char **warnings;  /* one line each */
    size_t n_warnings;
    void *sources;    /* private */
    hy_hydra_t hydra; /* for hy_hydra_resolvers */
} hy_config_t;

/*
 * Compose `a->config_name` and apply the overrides, as Hydra does before a
 * task function runs (the `hydra` node left out). On success *out owns the
 * tree (free with hy_config_free). On error `err` holds one line naming the
 * file, line and column, or the override, and for a file brought in by a
 * defaults list the chain of files; *out is untouched. Returns 0,
 * PROFD_ECONFIG, PROFD_EIO (a file that exists could not be read) or
 * PROFD_ENOMEM.
 */
int hy_compose(const hy_compose_args_t *a, hy_config_t *out, char *err, size_t errlen);
void hy_config_free(hy_config_t *c);

/*
 * Hydra's resolvers (an oc_resolver_fn; ctx: a hy_hydra_t): ${now:PATTERN}
 * (strftime of `now`, local time) and ${hydra:PATH} (OmegaConf.select on
 * HydraConfig: null when absent or ???). PROFD_ENOENT for other names.
 */
int hy_hydra_resolvers(void *ctx, const char *name, yt_node_t *const *args, size_t nargs,
                       yt_node_t **out, bool *owned, char *why, size_t whylen);

#endif
