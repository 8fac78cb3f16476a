# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/experimental/agent_loop/agent_loop.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""AgentLoopManager.generate_sequences: every prompt of the batch becomes
one generation request to the rollout servers (single-turn agent loop). In
verl the requests are sent by AgentLoopWorker actors (CPU processes, one per
rollout.agent.num_workers); the stand-in sends them from the manager's own
process, all at once, and waits for all of them."""

from verl.protocol import DataProto
from verl.single_controller.ray.base import ray


class AgentLoopManager:
    def __init__(self, config, llm_client=None, teacher_client=None, reward_loop_worker_handles=None):
        self.config = config
        self.rollout_config = config.actor_rollout_ref.rollout
        self.llm_client = llm_client
        self.reward_loop_worker_handles = reward_loop_worker_handles

    @classmethod
    def create(cls, *args, **kwargs):
        return cls(*args, **kwargs)

    def generate_sequences(self, prompts: DataProto) -> DataProto:
        sampling_params = {"max_tokens": int(self.rollout_config.response_length),
                           "temperature": self.rollout_config.temperature}
        refs = [
            self.llm_client.generate(request_id=f"{uid}", prompt_ids=list(p), sampling_params=sampling_params)
            for uid, p in zip(prompts.batch["uid"], prompts.batch["prompts"])
        ]
        outputs = ray.get(refs)
        out = DataProto(dict(prompts.batch), meta_info=dict(prompts.meta_info))
        out.batch["responses"] = [o["token_ids"] for o in outputs]
        out.meta_info["timing"] = {}
        return out
