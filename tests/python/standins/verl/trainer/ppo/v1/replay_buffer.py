# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/trainer/ppo/v1/replay_buffer.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""ReplayBuffer.sample: the trajectories generated for this step. In verl the
agent loop writes them into TransferQueue and sample() polls it; here the
agent-loop manager (same process as the trainer) hands them over in
`_store`."""

_store = {}  # partition_id -> list of DataProto, filled by AgentLoopManagerTQ


class ReplayBuffer:
    def __init__(self, trainer_mode="sync", trainer_config=None, max_off_policy_threshold=None,
                 max_off_policy_strategy=None, sampler_kwargs=None, refill_fn=None, **kwargs):
        self.trainer_mode = trainer_mode
        self.refill_fn = refill_fn

    def sample(self, global_steps: int, partition_id: str, batch_size: int):
        from verl.protocol import DataProto

        ready = _store.pop(partition_id, [])
        return DataProto.concat(ready), {}
