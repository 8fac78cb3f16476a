# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for vllm-project/vllm @ 35d5cda123ec28581759b6d34cde8052314fb1e6: vllm/v1/engine/async_llm.py
# (and vllm/v1/engine/core.py EngineCore.profile, folded in). Written for profd's tests from those files.
"""AsyncLLM: the engine client verl's server holds. start_profile() /
stop_profile() go to the engine core's profile(is_start), which calls
the executor's profile: collective_rpc("profile") on every worker (vLLM:
AsyncLLM.start_profile -> engine_core.profile_async(True) ->
EngineCore.profile -> model_executor.profile). The workers start with the
engine (the constructor), so the profiler folder is the one in the
environment at that moment."""

import uuid

import standin_trace
from vllm.v1.executor.multiproc_executor import MultiprocExecutor


class AsyncLLM:
    def __init__(self, tensor_parallel_size=1, use_torch=False):
        self.instance_id = uuid.uuid4().hex[:8]
        self.model_executor = MultiprocExecutor(self.instance_id, tensor_parallel_size, use_torch)
        self.sleeping = False
        standin_trace.record("vllm.engine", "start", instance_id=self.instance_id,
                             world_size=tensor_parallel_size)

    async def generate(self, prompt_ids, max_tokens, request_id):
        tokens = []
        for i in range(max_tokens):
            self.model_executor.collective_rpc("execute_model", args=(1,))
            tokens.append((sum(prompt_ids) + i) % 97)
        return tokens

    async def start_profile(self, profile_prefix=None):
        self.model_executor.profile(True)

    async def stop_profile(self):
        self.model_executor.profile(False)

    async def wake_up(self, tags=None):
        self.sleeping = False

    async def sleep(self, level=1):
        self.sleeping = True

    async def reset_prefix_cache(self, reset_connector=False):
        pass

    def shutdown(self):
        self.model_executor.shutdown()
