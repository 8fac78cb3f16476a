# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/workers/rollout/llm_server.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""LLMServerManager launches the rollout replicas (hybrid: one per
`tensor*data*pipeline` hybrid workers, replica_rank from start_rank) and
fans start_profile / stop_profile out to all of them. LLMServerClient sends
generation requests (verl balances them with a load-balancer actor; here
round robin). verl's async methods are synchronous here; the client's
generate() returns a pending result (ray.get it)."""

import itertools

from verl.workers.rollout.replica import get_rollout_replica_class


class LLMServerClient:
    def __init__(self, config, servers):
        self.config = config
        self._servers = servers
        self._rr = itertools.cycle(range(len(servers))) if servers else None

    def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        server = self._servers[next(self._rr)]
        return server.generate.remote(prompt_ids=prompt_ids, sampling_params=sampling_params, request_id=request_id)


class LLMServerManager:
    def __init__(self, config, worker_group=None, rollout_resource_pool=None, start_rank: int = 0,
                 load_balancer_cls=None):
        self.config = config
        self.rollout_config = config.actor_rollout_ref.rollout
        self.model_config = config.actor_rollout_ref.model
        self.worker_group = worker_group
        self.rollout_resource_pool = rollout_resource_pool
        self.start_rank = start_rank
        self.rollout_replica_class = get_rollout_replica_class(self.rollout_config.name)
        self.rollout_replicas = []

    @classmethod
    def create(cls, *args, **kwargs):
        instance = cls(*args, **kwargs)
        instance._initialize_llm_servers()
        return instance

    def _initialize_llm_servers(self, start_rank: int = None):
        if start_rank is None:
            start_rank = self.start_rank
        rollout_world_size = (self.rollout_config.tensor_model_parallel_size * self.rollout_config.data_parallel_size
                              * self.rollout_config.pipeline_model_parallel_size)
        world_size = self.worker_group.world_size
        num_replicas = world_size // rollout_world_size
        self.rollout_replicas = [
            self.rollout_replica_class(replica_rank=start_rank + replica_rank, config=self.rollout_config,
                                       model_config=self.model_config,
                                       gpus_per_node=self.config.trainer.n_gpus_per_node)
            for replica_rank in range(num_replicas)
        ]
        for server in self.rollout_replicas:
            server.init_hybrid(self.worker_group)

    def get_client(self, client_cls=None, **kwargs):
        return (client_cls or LLMServerClient)(self.config, [r.server_handle for r in self.rollout_replicas], **kwargs)

    def get_replicas(self):
        return self.rollout_replicas

    def start_profile(self, **kwargs):
        for replica in self.rollout_replicas:
            replica.start_profile(**kwargs)

    def stop_profile(self):
        for replica in self.rollout_replicas:
            replica.stop_profile()
