# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/workers/rollout/replica.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""RolloutReplica: one inference engine instance spanning
tensor*data*pipeline parallel devices, numbered by replica_rank. In HYBRID
mode its devices are those of hybrid worker ranks
[world_size*replica_rank, world_size*(replica_rank+1)). verl's replica
methods are async (auto_await on the driver); here they are synchronous."""

from enum import Enum

from verl.single_controller.ray.base import ray


class RolloutMode(Enum):
    HYBRID = "hybrid"
    COLOCATED = "colocated"
    STANDALONE = "standalone"


class RolloutReplica:
    def __init__(self, replica_rank: int, config, model_config, gpus_per_node: int = 8, is_reward_model: bool = False,
                 is_teacher_model: bool = False, name_suffix: str = ""):
        self.replica_rank = replica_rank
        self.config = config
        self.model_config = model_config
        self.world_size = (config.tensor_model_parallel_size * config.data_parallel_size
                           * config.pipeline_model_parallel_size)
        self.gpus_per_node = min(gpus_per_node, self.world_size)
        self.gpus_per_replica_node = self.gpus_per_node
        self.nnodes = self.world_size // self.gpus_per_replica_node
        self.is_reward_model = is_reward_model
        self.is_teacher_model = is_teacher_model
        self.name_suffix = name_suffix
        self.rollout_mode = None
        self.workers = []
        self.servers = []
        self._server_handle = None

    def init_hybrid(self, worker_group):
        """Rollout server, engine and the training engine share the hybrid worker processes' devices."""
        self.rollout_mode = RolloutMode.HYBRID
        self.workers = worker_group.workers[self.world_size * self.replica_rank: self.world_size * (self.replica_rank + 1)]
        self.launch_servers()

    def launch_servers(self):
        raise NotImplementedError

    @property
    def server_handle(self):
        return self._server_handle

    def wake_up(self):
        ray.get([server.wake_up.remote() for server in self.servers])

    def sleep(self):
        ray.get([server.sleep.remote() for server in self.servers])

    def start_profile(self, **kwargs):
        ray.get([server.start_profile.remote(**kwargs) for server in self.servers])

    def stop_profile(self):
        ray.get([server.stop_profile.remote() for server in self.servers])


def get_rollout_replica_class(rollout: str, disaggregation_enabled: bool = False):
    assert rollout in ("vllm", "sglang"), "the stand-in has the vllm and sglang replicas only"
    if rollout == "sglang":
        from verl.workers.rollout.sglang_rollout.async_sglang_server import SGLangReplica

        return SGLangReplica
    from verl.workers.rollout.vllm_rollout.vllm_async_server import vLLMReplica

    return vLLMReplica
