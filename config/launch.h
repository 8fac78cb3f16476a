// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A launch line, as the user runs it, turned into the configuration the
 * job will run with:
 *
 *   [VAR=x ...] [uv run OPTS] [nsys profile OPTS] [torchrun OPTS |
 *   python -m torch.distributed.run OPTS | python[3] [-u ...]]
 *       -m MODULE | SCRIPT   ARGS...
 *
 * The launchers are skipped. Then:
 *  - a Hydra application (verl's `-m verl.trainer.main_ppo`, a script with
 *    `@hydra.main`): --config-path/-cp, --config-name/-cn, --config-dir/-cd
 *    and the overrides, composed by compose.h; the config folder is the
 *    decorator's config_path beside the module, found on the caller's
 *    Python path (the working folder, then $PYTHONPATH), then on the
 *    interpreter's own sys.path (syspath: site-packages);
 *  - MindSpeed-LLM's FSDP2 trainer (`train_fsdp2.py FILE.yaml --sec.key v`):
 *    the YAML with the command line's values on top, as
 *    mindspeed_llm/fsdp2/utils/arguments.py merges them;
 *  - any other script (pretrain_gpt.py...): Megatron-LM / MindSpeed-LLM
 *    flags (--profile, --profile-step-start N, --profile-ranks 0 1,
 *    --profile-level, --use-pytorch-profiler...) as top-level keys.
 * A first argument ending in .yaml is a config file of its own: its folder
 * is the search path (Hydra's --config-path FOLDER --config-name FILE).
 *
 * Files are read through the composer's loader (compose.h).
 */
#ifndef PD_LAUNCH_H
#define PD_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "compose.h"
#include "profcfg.h"

typedef enum pd_launch_kind {
    PD_LAUNCH_HYDRA, /* compose search/config_name/overrides */
    PD_LAUNCH_FLAGS, /* Megatron-style flags: `flags` is the config */
    PD_LAUNCH_FSDP2, /* `yaml` with `flags` on top */
} pd_launch_kind_t;

typedef struct pd_launch_args {
    const hy_loader_t *loader;
    const char *const *pypath; /* where `-m MODULE` is looked for, in order */
    size_t n_pypath;
    pd_framework_t framework; /* AUTO: told from the flags and the folders */
    bool file_form;           /* argv[0] is a config file, whatever its name */
    /* The launch line's interpreter's sys.path, for a module that is not on
     * pypath (installed in site-packages); NULL: pypath only. */
    hy_syspath_fn syspath;
    void *syspath_ctx;
} pd_launch_args_t;

typedef struct pd_launch {
    pd_launch_kind_t kind;
    pd_framework_t framework;
    const char *what; /* "verl.trainer.main_ppo", "pretrain_gpt.py"... for messages */
    const char *search[HY_MAX_SEARCH];
    size_t n_search;
    const char *config_name;
    /* The interpreter the line runs (`python3`, `/venv/bin/python`, or the
     * launcher whose `#!` names it: `torchrun`); NULL: no Python program. */
    const char *python;
    /* Hydra's runtime: job_name set here (hydra/_internal/utils.py:
     * detect_task_name), cwd and now by the caller; now 0: ${now:} and
     * ${hydra:} refused. */
    hy_runtime_t runtime;
    const char *const *pypath; /* the args' (not owned), for pkg:// entries */
    size_t n_pypath;
    hy_syspath_fn syspath;
    void *syspath_ctx;
    char *const *overrides; /* into the argv given (not owned) */
    size_t n_overrides;
    const char *yaml; /* FSDP2: the YAML file */
    yt_node_t *flags; /* FLAGS / FSDP2: the command line's settings (owned) */
    void *mem;        /* private */
} pd_launch_t;

/*
 * Read argv (the launch line after the shell: argv[0] is the launcher or
 * the first argument of a file form). On success *out is filled (free with
 * pd_launch_free; it points into argv, which must outlive it). On error
 * `err` holds one line: an unknown launcher option, a missing module, a
 * launch line that prints instead of training (--cfg, --help), an invalid
 * flag value as argparse words it. Returns 0, PROFD_EINVAL (the line) or
 * PROFD_ENOMEM.
 */
int pd_launch_parse(const pd_launch_args_t *a, int argc, char *const *argv, pd_launch_t *out,
                    char *err, size_t errlen);
void pd_launch_free(pd_launch_t *l);

/*
 * The configuration the launch line runs with: the Hydra composition, the
 * flags, or the FSDP2 YAML with the flags on top. Returns 0 (*out to free
 * with hy_config_free), PROFD_ECONFIG, PROFD_EIO or PROFD_ENOMEM with the
 * reason in err.
 */
int pd_launch_config(const pd_launch_t *l, const hy_loader_t *loader, oc_env_fn env, void *env_ctx,
                     hy_config_t *out, char *err, size_t errlen);

#endif
