# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/workers/rollout/base.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""BaseRollout and the rollout registry: the hybrid worker's rollout object
is an adapter to the inference server of its replica (ServerAdapter for
vllm/async), not the engine itself."""

import importlib
from abc import ABC


class BaseRollout(ABC):
    def __init__(self, config, model_config, device_mesh):
        self.config = config
        self.model_config = model_config
        self.device_mesh = device_mesh

    async def resume(self, tags: list):
        pass

    async def update_weights(self, weights, **kwargs):
        pass

    async def release(self):
        pass


_ROLLOUT_REGISTRY = {
    ("vllm", "async"): "verl.workers.rollout.vllm_rollout.ServerAdapter",
    ("sglang", "async"): "verl.workers.rollout.sglang_rollout.sglang_rollout.ServerAdapter",
}


def get_rollout_class(rollout_name: str, mode: str = "async"):
    assert (rollout_name, mode) in _ROLLOUT_REGISTRY, f"Rollout {rollout_name} with mode {mode} not found"
    module, _, name = _ROLLOUT_REGISTRY[(rollout_name, mode)].rpartition(".")
    return getattr(importlib.import_module(module), name)
