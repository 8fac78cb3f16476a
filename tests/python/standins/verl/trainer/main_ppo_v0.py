# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/trainer/main_ppo_v0.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""The legacy TaskRunner (trainer.use_v1=False): builds the role -> worker
class and role -> resource pool mappings and runs RayPPOTrainer."""

from verl.single_controller.ray import RayWorkerGroup, ResourcePoolManager
from verl.single_controller.ray.base import ray
from verl.trainer.ppo.ray_trainer import RayPPOTrainer
from verl.trainer.ppo.utils import Role, need_critic, need_reference_policy


@ray.remote
class TaskRunner:
    def __init__(self):
        self.role_worker_mapping = {}
        self.mapping = {}

    def add_actor_rollout_worker(self, config):
        from verl.workers.engine_workers import ActorRolloutRefWorker

        lora_rank = config.actor_rollout_ref.model.get("lora_rank", 0)
        role = Role.ActorRolloutRef if need_reference_policy(config) and lora_rank <= 0 else Role.ActorRollout
        self.role_worker_mapping[role] = ray.remote(ActorRolloutRefWorker)
        self.mapping[role] = "global_pool"

    def add_critic_worker(self, config):
        from verl.workers.engine_workers import TrainingWorker

        self.role_worker_mapping[Role.Critic] = ray.remote(TrainingWorker)
        self.mapping[Role.Critic] = "global_pool"

    def init_resource_pool_mgr(self, config):
        resource_pool_spec = {"global_pool": [config.trainer.n_gpus_per_node] * config.trainer.nnodes}
        if Role.Critic in self.mapping and config.critic.get("standin_pool"):  # stand-in only, as in trainer_base
            resource_pool_spec["critic_pool"] = list(config.critic.standin_pool)
            self.mapping[Role.Critic] = "critic_pool"
        return ResourcePoolManager(resource_pool_spec=resource_pool_spec, mapping=self.mapping)

    def run(self, config):
        self.add_actor_rollout_worker(config)
        if need_critic(config):
            self.add_critic_worker(config)
        resource_pool_manager = self.init_resource_pool_mgr(config)
        trainer = RayPPOTrainer(config=config, tokenizer=None, role_worker_mapping=self.role_worker_mapping,
                                resource_pool_manager=resource_pool_manager, ray_worker_group_cls=RayWorkerGroup,
                                device_name=config.trainer.device)
        trainer.init_workers()
        trainer.fit()
