# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/trainer/ppo/ray_trainer.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""RayPPOTrainer: the legacy (V0) trainer loop, run by main_ppo_v0's TaskRunner
when trainer.use_v1=False. Per step, in verl's order:

  _start_profiling(do_profile)        every step; start_profile on the steps in global_profiler.steps
  llm_server_manager.start_profile()  when this step is profiled
  async_rollout_manager.generate_sequences(...)   (generation in the rollout servers)
  checkpoint_manager.sleep_replicas()
  llm_server_manager.stop_profile()   when this step is profiled
  _compute_old_log_prob  -> actor_rollout_wg.compute_log_prob
  _compute_ref_log_prob  -> ref_policy_wg.compute_ref_log_prob   (if a reference policy)
  _compute_values        -> critic_wg.infer_batch                (if a critic)
  (advantage on the driver)
  _update_critic         -> critic_wg.train_mini_batch           (if a critic)
  _update_actor          -> actor_rollout_wg.update_actor        (once critic_warmup <= global_steps)
  checkpoint_manager.update_weights(global_steps)
  _stop_profiling(do_profile, run_command)   every step
  global_steps += 1

Steps count from 1. start_profile(role="train", profile_step=global_steps) on
actor_rollout_wg, start_profile(profile_step=...) on ref_policy_wg and
critic_wg when they are other worker groups; stop_profile(run_command=...)
likewise, run_command True only on the last profiled step. With
profile_continuous_steps, consecutive profiled steps share one start/stop."""

import standin_trace

from verl.checkpoint_engine import CheckpointEngineManager
from verl.protocol import DataProto
from verl.single_controller.ray import RayClassWithInitArgs, RayWorkerGroup, create_colocated_worker_cls
from verl.trainer.ppo.utils import Role, need_critic, need_reference_policy
from verl.utils.config import omega_conf_to_dataclass, select
from verl.utils.profiler import marked_timer
from verl.workers.config import TrainingWorkerConfig
from verl.workers.rollout.llm_server import LLMServerManager


def make_dataloader(config):
    """Stands in for the RL dataset: prompts of three token ids each."""
    bs = int(config.data.train_batch_size)
    n_batches = int(config.data.get("standin_num_batches", 64))
    return [{"prompts": [[b * bs + i, 1, 2] for i in range(bs)]} for b in range(n_batches)]


def critic_training_config(config):
    profiler = config.critic.get("profiler", {})
    return TrainingWorkerConfig(
        model_type="value_model",
        model_config=config.critic.get("model", {}),
        engine_config={"forward_only": False},
        profiler_config=omega_conf_to_dataclass(profiler) if profiler else None,
        extra_context={"standin_torch": bool(config.actor_rollout_ref.model.get("standin_torch", False)),
                       "standin_role": "critic"},
    )


class RayPPOTrainer:
    def __init__(self, config, tokenizer, role_worker_mapping: dict, resource_pool_manager,
                 ray_worker_group_cls=RayWorkerGroup, processor=None, train_dataset=None, val_dataset=None,
                 collate_fn=None, train_sampler=None, device_name=None):
        self.tokenizer = tokenizer
        self.config = config
        self.hybrid_engine = config.actor_rollout_ref.hybrid_engine
        assert self.hybrid_engine, "Currently, only support hybrid engine"
        self.role_worker_mapping = role_worker_mapping
        self.resource_pool_manager = resource_pool_manager
        self.use_reference_policy = need_reference_policy(self.config)
        self.use_critic = need_critic(self.config)
        self.ray_worker_group_cls = ray_worker_group_cls
        self.device_name = device_name or self.config.trainer.device
        lora_rank = config.actor_rollout_ref.model.get("lora_rank", 0)
        self.ref_in_actor = lora_rank > 0
        self.train_dataloader = make_dataloader(config)
        total = len(self.train_dataloader) * int(self.config.trainer.total_epochs)
        if self.config.trainer.total_training_steps is not None:
            total = int(self.config.trainer.total_training_steps)
        self.total_training_steps = total
        self.checkpoint_manager = None
        self.global_steps = 0

    def init_workers(self):
        self.resource_pool_manager.create_resource_pool()
        self.resource_pool_to_cls = {pool: {} for pool in self.resource_pool_manager.resource_pool_dict.values()}
        actor_role = Role.ActorRolloutRef if Role.ActorRolloutRef in self.role_worker_mapping else Role.ActorRollout
        actor_rollout_resource_pool = self.resource_pool_manager.get_resource_pool(actor_role)
        actor_rollout_cls = RayClassWithInitArgs(cls=self.role_worker_mapping[actor_role],
                                                 config=self.config.actor_rollout_ref,
                                                 distillation_config=self.config.get("distillation"),
                                                 role=str(actor_role))
        self.resource_pool_to_cls[actor_rollout_resource_pool][str(actor_role)] = actor_rollout_cls
        if self.use_critic:
            resource_pool = self.resource_pool_manager.get_resource_pool(Role.Critic)
            critic_cls = RayClassWithInitArgs(cls=self.role_worker_mapping[Role.Critic],
                                              config=critic_training_config(self.config))
            self.resource_pool_to_cls[resource_pool][str(Role.Critic)] = critic_cls
        all_wg = {}
        wg_kwargs = {}
        if select(self.config.global_profiler, "steps") is not None:
            wg_kwargs["profile_steps"] = select(self.config.global_profiler, "steps")
        wg_kwargs["device_name"] = self.device_name
        for resource_pool, class_dict in self.resource_pool_to_cls.items():
            if not class_dict:
                continue
            worker_dict_cls = create_colocated_worker_cls(class_dict=class_dict)
            wg_dict = self.ray_worker_group_cls(resource_pool=resource_pool, ray_cls_with_init=worker_dict_cls,
                                                **wg_kwargs)
            all_wg.update(wg_dict.spawn(prefix_set=class_dict.keys()))
        if self.use_critic:
            self.critic_wg = all_wg[str(Role.Critic)]
            self.critic_wg.reset()
            self.critic_wg.set_loss_fn(None)
        if self.use_reference_policy and not self.ref_in_actor:
            self.ref_policy_wg = all_wg[str(Role.ActorRolloutRef)]
        self.actor_rollout_wg = all_wg[str(actor_role)]
        self.actor_rollout_wg.init_model()
        if self.ref_in_actor:
            self.ref_policy_wg = self.actor_rollout_wg
        from verl.experimental.agent_loop import AgentLoopManager

        self.llm_server_manager = LLMServerManager.create(config=self.config, worker_group=self.actor_rollout_wg,
                                                          rollout_resource_pool=actor_rollout_resource_pool)
        self.async_rollout_manager = AgentLoopManager.create(config=self.config,
                                                             llm_client=self.llm_server_manager.get_client())
        self.checkpoint_manager = CheckpointEngineManager(config={"backend": "naive"}, actor_wg=self.actor_rollout_wg,
                                                          replicas=self.llm_server_manager.get_replicas())
        self.checkpoint_manager.sleep_replicas()

    def _load_checkpoint(self):
        self.global_steps = 0

    def _validate(self):
        batch = DataProto({"uid": ["val-0"], "prompts": [[0, 1, 2]]}, meta_info={"validate": True})
        self.async_rollout_manager.generate_sequences(batch)
        self.checkpoint_manager.sleep_replicas()
        return {"val/score": 0.0}

    def _start_profiling(self, do_profile: bool) -> None:
        if not do_profile:
            return
        self.actor_rollout_wg.start_profile(role="train", profile_step=self.global_steps)
        seen = {id(self.actor_rollout_wg)}
        if self.use_reference_policy and id(self.ref_policy_wg) not in seen:
            seen.add(id(self.ref_policy_wg))
            self.ref_policy_wg.start_profile(profile_step=self.global_steps)
        if self.use_critic and id(self.critic_wg) not in seen:
            seen.add(id(self.critic_wg))
            self.critic_wg.start_profile(profile_step=self.global_steps)

    def _stop_profiling(self, do_profile: bool, run_command: bool = False) -> None:
        if not do_profile:
            return
        self.actor_rollout_wg.stop_profile(run_command=run_command)
        seen = {id(self.actor_rollout_wg)}
        if self.use_reference_policy and id(self.ref_policy_wg) not in seen:
            seen.add(id(self.ref_policy_wg))
            self.ref_policy_wg.stop_profile(run_command=run_command)
        if self.use_critic and id(self.critic_wg) not in seen:
            seen.add(id(self.critic_wg))
            self.critic_wg.stop_profile(run_command=run_command)

    def _compute_values(self, batch: DataProto) -> DataProto:
        batch.meta_info["compute_loss"] = False
        return self.critic_wg.infer_batch(batch).get()

    def _compute_ref_log_prob(self, batch: DataProto) -> DataProto:
        if self.ref_in_actor:
            output = self.actor_rollout_wg.compute_log_prob(batch)
        else:
            output = self.ref_policy_wg.compute_ref_log_prob(batch)
        return DataProto({"ref_log_prob": output.batch["log_probs"]})

    def _compute_old_log_prob(self, batch: DataProto):
        output = self.actor_rollout_wg.compute_log_prob(batch)
        return DataProto({"old_log_probs": output.batch["log_probs"]}), 0.0

    def _update_actor(self, batch: DataProto) -> DataProto:
        batch.meta_info.update(mini_batch_size=int(self.config.actor_rollout_ref.actor.ppo_mini_batch_size)
                               * int(self.config.actor_rollout_ref.rollout.n),
                               epochs=int(self.config.actor_rollout_ref.actor.ppo_epochs))
        return self.actor_rollout_wg.update_actor(batch)

    def _update_critic(self, batch: DataProto) -> DataProto:
        batch.meta_info.update(mini_batch_size=int(self.config.critic.ppo_mini_batch_size)
                               * int(self.config.actor_rollout_ref.rollout.n),
                               epochs=int(self.config.critic.ppo_epochs))
        return self.critic_wg.train_mini_batch(batch).get()

    def fit(self):
        self.global_steps = 0
        self._load_checkpoint()
        self.checkpoint_manager.update_weights(self.global_steps)
        current_epoch = self.global_steps // len(self.train_dataloader)
        if self.config.trainer.get("val_before_train", True):
            self._validate()
        self.global_steps += 1
        profiler_steps = self.config.global_profiler.steps
        continuous = self.config.global_profiler.profile_continuous_steps
        prev_step_profile = False
        curr_step_profile = self.global_steps in profiler_steps if profiler_steps is not None else False
        next_step_profile = False
        for epoch in range(current_epoch, int(self.config.trainer.total_epochs)):
            for batch_dict in self.train_dataloader:
                standin_trace.record("verl.trainer", "step", global_steps=self.global_steps)
                timing_raw = {}
                with marked_timer("start_profile", timing_raw):
                    self._start_profiling(not prev_step_profile and curr_step_profile if continuous
                                          else curr_step_profile)
                n = len(batch_dict["prompts"])
                batch = DataProto({"uid": [f"{self.global_steps}-{i}" for i in range(n)],
                                   "prompts": batch_dict["prompts"]},
                                  meta_info={"temperature": self.config.actor_rollout_ref.rollout.temperature})
                gen_batch = DataProto(dict(batch.batch), meta_info={"global_steps": self.global_steps})
                gen_batch_output = gen_batch.repeat(repeat_times=int(self.config.actor_rollout_ref.rollout.n),
                                                    interleave=True)
                is_last_step = self.global_steps >= self.total_training_steps
                with marked_timer("step", timing_raw):
                    with marked_timer("gen", timing_raw, color="red"):
                        if curr_step_profile:
                            self.llm_server_manager.start_profile()
                        gen_batch_output = self.async_rollout_manager.generate_sequences(gen_batch_output)
                        self.checkpoint_manager.sleep_replicas()
                        if curr_step_profile:
                            self.llm_server_manager.stop_profile()
                    batch = gen_batch_output
                    with marked_timer("old_log_prob", timing_raw, color="blue"):
                        old_log_prob, _ = self._compute_old_log_prob(batch)
                        batch = batch.union(old_log_prob)
                    if self.use_reference_policy:
                        with marked_timer(str(Role.RefPolicy), timing_raw, color="olive"):
                            batch = batch.union(self._compute_ref_log_prob(batch))
                    if self.use_critic:
                        with marked_timer("values", timing_raw, color="cyan"):
                            batch = batch.union(self._compute_values(batch))
                    with marked_timer("adv", timing_raw, color="brown"):
                        batch.batch["advantages"] = [0.0] * len(batch)
                    if self.use_critic:
                        with marked_timer("update_critic", timing_raw, color="pink"):
                            self._update_critic(batch)
                    if self.config.trainer.critic_warmup > self.global_steps:
                        self.checkpoint_manager.update_weights(self.global_steps)
                    else:
                        with marked_timer("update_actor", timing_raw, color="red"):
                            self._update_actor(batch)
                        with marked_timer("update_weights", timing_raw, color="red"):
                            self.checkpoint_manager.update_weights(self.global_steps)
                if self.config.trainer.test_freq > 0 and (is_last_step
                                                          or self.global_steps % self.config.trainer.test_freq == 0):
                    self._validate()
                with marked_timer("stop_profile", timing_raw):
                    next_step_profile = (self.global_steps + 1 in profiler_steps
                                         if profiler_steps is not None else False)
                    run_finish_command = bool(curr_step_profile and profiler_steps
                                              and (self.global_steps == max(profiler_steps) or is_last_step))
                    self._stop_profiling(curr_step_profile and not next_step_profile if continuous
                                         else curr_step_profile, run_command=run_finish_command)
                    prev_step_profile = curr_step_profile
                    curr_step_profile = next_step_profile
                self.global_steps += 1
                if is_last_step:
                    return
