# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/trainer/ppo/v1/agent_loop_tq.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""AgentLoopManagerTQ: the V1 agent loop; generate_sequences blocks until the
batch is generated and leaves the trajectories for the replay buffer."""

from verl.experimental.agent_loop import AgentLoopManager
from verl.trainer.ppo.v1 import replay_buffer


class AgentLoopManagerTQ(AgentLoopManager):
    def generate_sequences(self, prompts) -> None:
        out = super().generate_sequences(prompts)
        replay_buffer._store.setdefault("train", []).append(out)
