// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Fuzz target: a launch line (one argument per line) read by launch.c over
 * a small fixed tree (a verl package with its config, a MindSpeed-LLM
 * checkout, an FSDP2 YAML), then the configuration it runs with and the
 * profiling readers. Besides the sanitizers: messages are one non-empty
 * line, a parsed line has a kind and, for Hydra, a config name and a
 * search folder.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "profcfg.h"
#include "fuzz_props.h"
#include "profd/errors.h"
#include "table_loader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64

static const tl_file_t tree[] = {
    {"verl/trainer/config/ppo_trainer.yaml",
     "defaults:\n  - model_engine: dp\n  - _self_\nglobal_profiler: {tool: npu, steps: [1]}\n"
     "actor_rollout_ref:\n  actor:\n    profiler: {enable: true, ranks: [0]}\n"},
    {"verl/trainer/config/model_engine/dp.yaml", "# @package _global_\nmodel_engine: dp\n"},
    {"verl/trainer/config/model_engine/megatron.yaml",
     "# @package _global_\nmodel_engine: megatron\n"},
    {"ms/mindspeed_llm/__init__.py", ""},
    {"train.yaml", "training:\n  profile: true\n  profile_step_start: 2\n"},
    {"app.py", "@hydra.main(config_path=\"verl/trainer/config\", config_name=\"ppo_trainer\")\n"},
    {NULL, NULL}};

static void run(int argc, char **argv)
{
    static const char *const pypath[] = {"."};
    hy_loader_t l = tl_loader(tree);
    pd_launch_args_t a = {.loader = &l, .pypath = pypath, .n_pypath = 1};
    pd_launch_t launch;
    hy_config_t c;
    char err[1024];
    int rc = pd_launch_parse(&a, argc, argv, &launch, err, sizeof(err));
    if (rc != 0) {
        check(rc == PROFD_EINVAL || rc == PROFD_ENOMEM, "unexpected launch error code");
        check_line(err);
        return;
    }
    if (launch.kind == PD_LAUNCH_HYDRA) {
        check(launch.config_name != NULL && launch.n_search > 0, "a Hydra line without config");
    }
    rc = pd_launch_config(&launch, &l, NULL, NULL, &c, err, sizeof(err));
    if (rc == 0) {
        pd_profcfg_t out;
        pd_profcfg_opts_t o = {.framework = launch.framework, .composed = true};
        if (pd_profcfg_read(c.primary, c.root, &o, &out, err, sizeof(err)) == 0) {
            pd_profcfg_free(&out);
        } else {
            check_line(err);
        }
        hy_config_free(&c);
    } else {
        check_line(err);
    }
    pd_launch_free(&launch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *args[MAX_ARGS];
    int argc = 0;
    const char *p = (const char *)data, *end = p + size;
    while (p < end && argc < MAX_ARGS) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        args[argc] = malloc(n + 1);
        memcpy(args[argc], p, n);
        args[argc][n] = '\0';
        args[argc][strlen(args[argc])] = '\0';
        argc++;
        p += n + 1;
    }
    if (argc > 0) {
        run(argc, args);
    }
    for (int i = 0; i < argc; i++) {
        free(args[i]);
    }
    return 0;
}
