# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/trainer/constants_ppo.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""The job-level runtime_env verl passes to ray.init(): a few fixed
variables, minus those already set in the launching shell (a local Ray
cluster started by ray.init() inherits the launcher's environment anyway).
Nothing else of the launcher's environment is forwarded explicitly: on a
cluster started beforehand (`ray start`), a variable reaches the workers only
through ray_kwargs.ray_init.runtime_env.env_vars or the `ray start`
environment of each node."""

import os

PPO_RAY_RUNTIME_ENV = {
    "env_vars": {
        "TOKENIZERS_PARALLELISM": "true",
        "NCCL_DEBUG": "WARN",
        "VLLM_LOGGING_LEVEL": "WARN",
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true",
    },
}


def get_ppo_ray_runtime_env(config=None):
    runtime_env = {"env_vars": PPO_RAY_RUNTIME_ENV["env_vars"].copy()}
    for key in list(runtime_env["env_vars"].keys()):
        if os.environ.get(key) is not None:
            runtime_env["env_vars"].pop(key, None)
    for key in ("VERL_FULL_DETERMINISM", "VLLM_BATCH_INVARIANT", "VERL_RL_INSIGHT_ENABLE"):
        runtime_env["env_vars"][key] = os.environ.get(key, "0")
    return runtime_env
