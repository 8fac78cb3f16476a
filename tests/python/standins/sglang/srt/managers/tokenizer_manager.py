# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for sgl-project/sglang @ 40ef116f011cf1599811af1089ddf00971092bcf:
# python/sglang/srt/managers/tokenizer_communicator_mixin.py (start_profile / stop_profile / _execute_profile).
# Written for profd's tests from that file; names and behaviour follow it, bodies are minimal.
"""TokenizerManager: in the server process; its requests go to the scheduler
processes. start_profile(output_dir=None, ...) sends a START_PROFILE
ProfileReq (profile_id = str(time.time())) to the schedulers, stop_profile()
a STOP_PROFILE; _execute_profile takes the first result and raises
RuntimeError(result.message) when it failed."""

import multiprocessing
import time

import standin_pool
from sglang.srt.managers.scheduler import run_scheduler_process


class TokenizerManager:
    def __init__(self, tp_size=1, use_torch=False):
        self.schedulers = standin_pool.start(multiprocessing.get_context("fork"), tp_size, run_scheduler_process,
                                             lambda rank: (rank, use_torch),
                                             lambda rank: "sglang::scheduler_TP%d" % rank)

    def _all(self, method, *args):
        for _, conn in self.schedulers:
            conn.send((method, args))
        return [conn.recv() for _, conn in self.schedulers]

    async def generate(self, prompt_ids, max_tokens):
        tokens = []
        for i in range(max_tokens):
            self._all("forward", 1)
            tokens.append((sum(prompt_ids) + i) % 97)
        return tokens

    async def start_profile(self, output_dir=None, start_step=None, num_steps=None, activities=None,
                            with_stack=None, record_shapes=None, profile_by_stage=False):
        return await self._execute_profile(("START_PROFILE", output_dir, activities, str(time.time())))

    async def stop_profile(self):
        return await self._execute_profile(("STOP_PROFILE", None, None, None))

    async def _execute_profile(self, req):
        result = self._all("profile", req)[0]
        if not result.success:
            raise RuntimeError(result.message)
        return result

    def shutdown(self):
        standin_pool.stop(self.schedulers)
