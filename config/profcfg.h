// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Training configurations as users already write them (verl current and
 * legacy schemas, MindSpeed FSDP2 training.profile_*, Megatron-style
 * profile_step_start/end/ranks) turned into window requests.
 *
 * Pure: text in, records out; no file system, clock or sockets (the caller
 * reads the file). The planner (plan.h) then turns each request into windows.
 */
#ifndef PD_PROFCFG_H
#define PD_PROFCFG_H

#include <stddef.h>

#include "omegaconf.h"
#include "profd/proto.h"
#include "yamltree.h"

typedef struct pd_profcfg {
    pp_window_spec_t *specs; /* window requests, in the order they apply */
    size_t n_specs;
    char **warnings; /* "FILE:LINE:COL: key 'K': ..." lines */
    size_t n_warnings;
    char *schema;    /* "verl", "verl-legacy", "mindspeed", "megatron";
                        "none" for an empty document */
    char *no_window; /* no request: why the framework profiles nothing */
} pd_profcfg_t;

/* Whose numbering and defaults a Megatron-style or MindSpeed config
 * follows (docs/profiling-config.md, "Step numbering"). */
typedef enum pd_framework {
    PD_FW_AUTO = 0,    /* from the keys: MindSpeed's npu keys -> MINDSPEED_MCORE,
                          else MEGATRON_LM; training.profile_* -> MINDSPEED_FSDP2 */
    PD_FW_MEGATRON_LM, /* NVIDIA/Megatron-LM d98e8a64: --profile (nsys), --use-pytorch-profiler */
    PD_FW_MINDSPEED_MCORE, /* Ascend/MindSpeed-LLM c77308a1, pretrain_gpt.py on Megatron-core */
    PD_FW_MINDSPEED_FSDP2, /* Ascend/MindSpeed-LLM c77308a1, train_fsdp2.py YAML */
} pd_framework_t;

/* The environment of ${oc.env:...}: NULL when a variable is unset. */
typedef const char *(*pd_env_fn)(void *ctx, const char *name);

typedef struct pd_profcfg_opts {
    pd_framework_t framework;
    /* The tree is the whole config the job runs with (a Hydra primary and
     * its defaults): a role section that is absent is a role without a
     * profiler, as in verl (rollout.yaml follows the actor by oc.select, in
     * YAML), instead of one following the actor's as the documents'
     * snippets say. */
    bool composed;
    pd_env_fn env; /* NULL: oc.env is refused (the daemon) */
    void *env_ctx;
    oc_resolver_fn resolvers; /* Hydra's now / hydra (hy_hydra_resolvers); NULL: refused */
    void *resolvers_ctx;
} pd_profcfg_opts_t;

/* "Megatron-LM", "MindSpeed-LLM (Megatron-core)", ...; NULL for AUTO. */
const char *pd_framework_name(pd_framework_t fw);

/*
 * Read the profiling sections of a tree already built (a Hydra composition,
 * a launch line's flags): like pd_profcfg_load without the parsing and the
 * overrides. The tree is not consumed but the reader caches resolved values
 * in it. `file` names the tree in messages where its nodes carry no file.
 */
int pd_profcfg_read(const char *file, yt_node_t *root, const pd_profcfg_opts_t *opts,
                    pd_profcfg_t *out, char *err, size_t errlen);

/*
 * Parse `text` (YAML, `len` bytes; `file` names it in messages) with Hydra
 * style overrides ("a.b=[1,2]", "+a.b=x", "~a.b") applied first, resolve
 * OmegaConf interpolations, detect the schema and build the requests.
 * A config that profiles nothing (steps: null, profile: false) gives zero
 * requests and no error, and `no_window` says why. A config the framework
 * itself refuses (nsys with steps but no worker_nsight_options, a `???`
 * value in a key the reader needs, MindSpeed's start/end checks) is an
 * error with the framework's reason.
 * Returns 0, or PROFD_ECONFIG with `err` set to one line naming
 * file:line:column, the key, what was expected and what was found; *out is
 * untouched on error. Free with pd_profcfg_free().
 */
int pd_profcfg_load(const char *file, const char *text, size_t len, char *const *overrides,
                    size_t n_overrides, pd_profcfg_t *out, char *err, size_t errlen);

void pd_profcfg_free(pd_profcfg_t *cfg);

#endif
