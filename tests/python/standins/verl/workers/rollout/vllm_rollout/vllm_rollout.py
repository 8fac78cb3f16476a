# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/workers/rollout/vllm_rollout/vllm_rollout.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""ServerAdapter: the rollout inside the hybrid worker process. It moves
weights to the replica's vLLM engine and wakes/sleeps it; it generates
nothing itself."""

import os

import standin_trace

from verl.workers.rollout.base import BaseRollout


class ServerAdapter(BaseRollout):
    def __init__(self, config, model_config, device_mesh):
        super().__init__(config, model_config, device_mesh)
        self.sleep_level = 2

    async def resume(self, tags: list):
        standin_trace.record("verl.worker", "rollout.resume", model_type="rollout", rank=int(os.environ["RANK"]),
                             wg=os.environ.get("WG_PREFIX"), tags=list(tags))

    async def release(self):
        standin_trace.record("verl.worker", "rollout.release", model_type="rollout", rank=int(os.environ["RANK"]),
                             wg=os.environ.get("WG_PREFIX"))

    async def update_weights(self, weights, peft_config=None, base_sync_done=True, global_steps=None, **kwargs):
        standin_trace.record("verl.worker", "rollout.update_weights", model_type="rollout",
                             rank=int(os.environ["RANK"]), wg=os.environ.get("WG_PREFIX"), global_steps=global_steps)
