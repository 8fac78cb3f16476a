# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/trainer/ppo/v1/trainer_base.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""PPOTrainer: the V1 trainer loop (the default: trainer.use_v1=True), run by
main_ppo's TaskRunnerV1 in its own actor process. Per step, in verl's order:

  on_step_begin()
  _start_profiling()       every step; when this step is profiled:
                           actor_rollout_wg.start_profile(role="train", profile_step=global_steps),
                           ref_policy_wg / critic_wg.start_profile(profile_step=...) if other groups,
                           then llm_server_manager.start_profile() (the rollout engines, whole step)
  step():
    prepare_step()         -> _add_batch_to_generate -> agent_loop_manager.generate_sequences (blocks)
    _step_once():          replay_buffer.sample (on_sample_end: sleep_replicas), balance,
                           _compute_old_log_prob  -> actor_rollout_wg.compute_log_prob
                           _compute_ref_log_prob  -> ref_policy_wg.compute_ref_log_prob
                           _compute_values        -> critic_wg.infer_batch
                           advantage (driver)
                           _update_critic         -> critic_wg.train_mini_batch
                           _update_actor          -> actor_rollout_wg.update_actor (critic_warmup <= global_steps)
  _stop_profiling()        every step; stop_profile(run_command=...) on the same groups,
                           llm_server_manager.stop_profile()
  save checkpoint (save_freq), on_step_end() (sync: checkpoint_manager.update_weights(global_steps)),
  validate (test_freq), global_steps += 1

The hybrid worker group hosts actor, rollout adapter and ref: ref_policy_wg
is actor_rollout_wg (the same object), so start/stop_profile reach each
process once. The critic shares the hybrid processes unless the stand-in's
critic.standin_pool puts it in a pool of its own (a worker group numbered
from rank 0)."""

from abc import ABC, abstractmethod

import standin_trace

from verl.checkpoint_engine import CheckpointEngineManager
from verl.protocol import DataProto
from verl.single_controller.ray import RayClassWithInitArgs, RayWorkerGroup, ResourcePoolManager, create_colocated_worker_cls
from verl.trainer.ppo.ray_trainer import critic_training_config, make_dataloader
from verl.trainer.ppo.utils import Role, need_critic, need_reference_policy
from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer
from verl.utils.config import select
from verl.utils.profiler import marked_timer
from verl.workers.rollout.llm_server import LLMServerManager


class PPOTrainer(ABC):
    def __init__(self, config):
        self.config = config
        self.use_critic = need_critic(self.config)
        self.use_reference_policy = need_reference_policy(self.config)
        self.trainer_mode = self.config.trainer.v1.trainer_mode
        self.parameter_sync_step = 1
        self.replay_buffer = ReplayBuffer(trainer_mode=self.trainer_mode, refill_fn=self._add_prompts_to_generate)
        self.local_trigger_step = 0
        self.global_steps = 0

    def init(self):
        self._setup()
        self.on_init_end()

    def _init_dataloader(self):
        self.train_dataloader = make_dataloader(self.config)
        self.train_dataloader_it = None
        self.steps_per_epoch = len(self.train_dataloader)
        total_training_steps = self.steps_per_epoch * int(self.config.trainer.total_epochs)
        if self.config.trainer.total_training_steps is not None:
            total_training_steps = int(self.config.trainer.total_training_steps)
        self.total_training_steps = total_training_steps

    def _init_resource_pool_mgr(self):
        from verl.single_controller.ray.base import ray
        from verl.workers.engine_workers import ActorRolloutRefWorker, TrainingWorker

        config = self.config
        self.role_worker_mapping = {}
        self.mapping = {}
        lora_rank = config.actor_rollout_ref.model.get("lora_rank", 0)
        ref_in_actor = lora_rank > 0
        role = Role.ActorRolloutRef if need_reference_policy(config) and not ref_in_actor else Role.ActorRollout
        self.role_worker_mapping[role] = ray.remote(ActorRolloutRefWorker)
        self.mapping[role] = "global_pool"
        resource_pool_spec = {"global_pool": [config.trainer.n_gpus_per_node] * config.trainer.nnodes}
        if need_critic(config):
            self.role_worker_mapping[Role.Critic] = ray.remote(TrainingWorker)
            self.mapping[Role.Critic] = "global_pool"
            # stand-in only: verl maps the critic to the global pool; a custom
            # mapping (which ResourcePoolManager accepts) gives it its own pool.
            if config.critic.get("standin_pool"):
                resource_pool_spec["critic_pool"] = list(config.critic.standin_pool)
                self.mapping[Role.Critic] = "critic_pool"
        self.resource_pool_manager = ResourcePoolManager(resource_pool_spec=resource_pool_spec, mapping=self.mapping)

    def _setup(self):
        self._init_dataloader()
        self._init_resource_pool_mgr()
        self.resource_pool_manager.create_resource_pool()
        self.resource_pool_to_cls = {pool: {} for pool in self.resource_pool_manager.resource_pool_dict.values()}
        # 1. define actor and rollout class
        actor_role = Role.ActorRolloutRef if Role.ActorRolloutRef in self.role_worker_mapping else Role.ActorRollout
        actor_rollout_resource_pool = self.resource_pool_manager.get_resource_pool(actor_role)
        actor_rollout_cls = RayClassWithInitArgs(cls=self.role_worker_mapping[actor_role],
                                                 config=self.config.actor_rollout_ref,
                                                 distillation_config=self.config.get("distillation"),
                                                 role=str(actor_role))
        self.resource_pool_to_cls[actor_rollout_resource_pool][str(actor_role)] = actor_rollout_cls
        # 2. define critic class
        if self.use_critic:
            resource_pool = self.resource_pool_manager.get_resource_pool(Role.Critic)
            critic_cls = RayClassWithInitArgs(cls=self.role_worker_mapping[Role.Critic],
                                              config=critic_training_config(self.config))
            self.resource_pool_to_cls[resource_pool][str(Role.Critic)] = critic_cls
        # 3. create worker group for actor rollout and critic
        all_wg = {}
        wg_kwargs = {}
        if select(self.config.global_profiler, "steps") is not None:
            wg_kwargs["profile_steps"] = select(self.config.global_profiler, "steps")
        wg_kwargs["device_name"] = self.config.trainer.device
        for resource_pool, class_dict in self.resource_pool_to_cls.items():
            if not class_dict:
                continue
            worker_dict_cls = create_colocated_worker_cls(class_dict=class_dict)
            wg_dict = RayWorkerGroup(resource_pool=resource_pool, ray_cls_with_init=worker_dict_cls, **wg_kwargs)
            all_wg.update(wg_dict.spawn(prefix_set=class_dict.keys()))
        # 5. initialize critic model engine
        if self.use_critic:
            self.critic_wg = all_wg[str(Role.Critic)]
            self.critic_wg.reset()
            self.critic_wg.set_loss_fn(None)
        # 6. initialize actor and ref model engine
        self.actor_rollout_wg = all_wg[str(actor_role)]
        self.actor_rollout_wg.init_model()
        lora_rank = self.config.actor_rollout_ref.model.get("lora_rank", 0)
        self.ref_in_actor = lora_rank > 0
        if self.use_reference_policy and not self.ref_in_actor:
            self.ref_policy_wg = all_wg[str(actor_role)]
        if self.ref_in_actor:
            self.ref_policy_wg = self.actor_rollout_wg
        # 7. reward loop manager: rule-based reward streams with the agent loop (not in the stand-in)
        self.reward_loop_worker_handles = []
        # 9. initialize the LLM servers (rollout replicas)
        self.llm_server_manager = LLMServerManager.create(config=self.config, worker_group=self.actor_rollout_wg,
                                                          rollout_resource_pool=actor_rollout_resource_pool)
        # 10. initialize checkpoint engine manager
        self.checkpoint_manager = CheckpointEngineManager(config={"backend": "naive"}, actor_wg=self.actor_rollout_wg,
                                                          replicas=self.llm_server_manager.get_replicas())
        self.checkpoint_manager.sleep_replicas()
        self._load_checkpoint()

    def get_llm_client(self):
        return self.llm_server_manager.get_client()

    def get_teacher_client(self):
        return None

    def get_reward_handles(self):
        return self.reward_loop_worker_handles

    def _load_checkpoint(self):
        self.global_steps = 0

    def _save_checkpoint(self):
        self.actor_rollout_wg.save_checkpoint(None, None, self.global_steps)
        if self.use_critic:
            self.critic_wg.save_checkpoint(None, None, self.global_steps)

    def _validate(self):
        batch = DataProto({"uid": ["val-0"], "prompts": [[0, 1, 2]]}, meta_info={"validate": True})
        self.agent_loop_manager.generate_sequences(batch)
        from verl.trainer.ppo.v1 import replay_buffer

        replay_buffer._store.pop("train", None)
        return {"val/score": 0.0}

    def fit(self, agent_loop_manager):
        self.agent_loop_manager = agent_loop_manager
        if self.config.trainer.get("val_before_train", True):
            self.on_validate_begin()
            self._validate()
            self.on_validate_end()
        current_epoch = self.global_steps // self.steps_per_epoch
        self.global_steps += 1
        steps = self.config.global_profiler.steps
        self.prev_step_profile = False
        self.curr_step_profile = self.global_steps in steps if steps is not None else False
        self.next_step_profile = False
        self.on_train_begin()
        while current_epoch < self.config.trainer.total_epochs and self.global_steps <= self.total_training_steps:
            is_last_step = self.global_steps >= self.total_training_steps
            metrics = {}
            self.timing_raw = {}
            standin_trace.record("verl.trainer", "step", global_steps=self.global_steps)
            with marked_timer("step", self.timing_raw):
                self.on_step_begin()
                self._start_profiling()
                self.step(metrics, self.timing_raw)
                self._stop_profiling()
                if self.config.trainer.save_freq > 0 and (is_last_step
                                                          or self.global_steps % self.config.trainer.save_freq == 0):
                    with marked_timer("save_checkpoint", self.timing_raw, color="green"):
                        self._save_checkpoint()
                self.on_step_end()
            if self.config.trainer.test_freq > 0 and (is_last_step
                                                      or self.global_steps % self.config.trainer.test_freq == 0):
                with marked_timer("testing", self.timing_raw, color="green"):
                    self.on_validate_begin()
                    self._validate()
                    self.on_validate_end()
            self.global_steps += 1
            current_epoch = (self.global_steps - 1) // self.steps_per_epoch
            if is_last_step:
                return
        self.on_train_end()

    def step(self, metrics: dict, timing_raw: dict):
        train_batch_size = int(self.config.data.train_batch_size)
        sample_batch_size = train_batch_size // self.parameter_sync_step
        self.prepare_step()
        batch = None
        for trigger_idx in range(self.parameter_sync_step):
            self.local_trigger_step = trigger_idx
            batch = self._step_once({}, timing_raw, sample_batch_size)
        return batch

    def _step_once(self, metrics: dict, timing_raw: dict, sample_batch_size: int):
        # 1. sample batch from replay buffer
        with marked_timer("gen", timing_raw, color="red"):
            self.on_sample_begin()
            batch, _ = self.replay_buffer.sample(global_steps=self.global_steps, partition_id="train",
                                                 batch_size=sample_batch_size)
            batch.meta_info["temperature"] = self.config.actor_rollout_ref.rollout.temperature
            self.on_sample_end()
        # 3. balance batch across data parallel groups (driver side)
        # 4. compute old_log_prob
        with marked_timer("old_log_prob", timing_raw, color="blue"):
            batch = self._compute_old_log_prob(batch, metrics=metrics)
        # 5. [OPTIONAL] compute ref_log_prob
        if self.use_reference_policy:
            with marked_timer("ref", timing_raw, color="olive"):
                batch = self._compute_ref_log_prob(batch, metrics=metrics)
        # 6. [OPTIONAL] compute critic values
        if self.use_critic:
            with marked_timer("values", timing_raw, color="cyan"):
                batch = self._compute_values(batch, metrics=metrics)
        # 7. compute advantage and return (driver side)
        with marked_timer("adv", timing_raw, color="brown"):
            batch.batch["advantages"] = [0.0] * len(batch)
        # 8. [OPTIONAL] update critic
        if self.use_critic:
            with marked_timer("update_critic", timing_raw, color="pink"):
                batch = self._update_critic(batch, metrics=metrics)
        # 9. update actor
        if self.config.trainer.critic_warmup <= self.global_steps:
            with marked_timer("update_actor", timing_raw, color="red"):
                batch = self._update_actor(batch, metrics=metrics)
        return batch

    def on_init_end(self):
        return

    def on_train_begin(self):
        return

    def on_train_end(self):
        return

    def on_validate_begin(self):
        return

    def on_validate_end(self):
        return

    def on_step_begin(self):
        return

    @abstractmethod
    def on_step_end(self):
        return

    def on_sample_begin(self):
        return

    @abstractmethod
    def on_sample_end(self):
        return

    def _rollout_server_managers(self) -> list:
        managers = [getattr(self, "llm_server_manager", None)]
        return [m for m in managers if m is not None]

    def _start_profiling(self) -> None:
        do_profile = (not self.prev_step_profile and self.curr_step_profile
                      if self.config.global_profiler.profile_continuous_steps else self.curr_step_profile)
        if do_profile:
            self.actor_rollout_wg.start_profile(role="train", profile_step=self.global_steps)
            seen = {id(self.actor_rollout_wg)}
            if self.use_reference_policy and id(self.ref_policy_wg) not in seen:
                seen.add(id(self.ref_policy_wg))
                self.ref_policy_wg.start_profile(profile_step=self.global_steps)
            if self.use_critic and id(self.critic_wg) not in seen:
                seen.add(id(self.critic_wg))
                self.critic_wg.start_profile(profile_step=self.global_steps)
            for manager in self._rollout_server_managers():
                manager.start_profile()

    def _stop_profiling(self) -> None:
        this_step_profile = self.curr_step_profile
        steps = self.config.global_profiler.steps
        self.next_step_profile = self.global_steps + 1 in steps if steps is not None else False
        do_profile = (self.curr_step_profile and not self.next_step_profile
                      if self.config.global_profiler.profile_continuous_steps else self.curr_step_profile)
        self.prev_step_profile = self.curr_step_profile
        self.curr_step_profile = self.next_step_profile
        if do_profile:
            is_last_step = self.global_steps >= self.total_training_steps
            run_command = bool(this_step_profile and steps and (self.global_steps == max(steps) or is_last_step))
            self.actor_rollout_wg.stop_profile(run_command=run_command)
            seen = {id(self.actor_rollout_wg)}
            if self.use_reference_policy and id(self.ref_policy_wg) not in seen:
                seen.add(id(self.ref_policy_wg))
                self.ref_policy_wg.stop_profile(run_command=run_command)
            if self.use_critic and id(self.critic_wg) not in seen:
                seen.add(id(self.critic_wg))
                self.critic_wg.stop_profile(run_command=run_command)
            for manager in self._rollout_server_managers():
                manager.stop_profile()

    def _fetch_one_gen_batch(self):
        if self.train_dataloader_it is None:
            self.train_dataloader_it = iter(self.train_dataloader)
        try:
            batch_dict = next(self.train_dataloader_it)
        except StopIteration:
            self.train_dataloader_it = iter(self.train_dataloader)
            batch_dict = next(self.train_dataloader_it)
        n = len(batch_dict["prompts"])
        return DataProto({"uid": [f"{self.global_steps}-{i}" for i in range(n)], "prompts": batch_dict["prompts"]})

    def _next_train_batch(self, num_prompts: int = None):
        batch = self._fetch_one_gen_batch()
        batch.meta_info["global_steps"] = self.global_steps
        return batch

    def _submit_batch_to_rollout(self, batch) -> int:
        batch = batch.repeat(repeat_times=int(self.config.actor_rollout_ref.rollout.n), interleave=True)
        self.agent_loop_manager.generate_sequences(batch)
        return len(batch)

    def _add_prompts_to_generate(self, num_prompts: int) -> int:
        return self._submit_batch_to_rollout(self._next_train_batch(num_prompts))

    def _add_batch_to_generate(self):
        self._submit_batch_to_rollout(self._next_train_batch())

    def prepare_step(self) -> dict:
        self._add_batch_to_generate()
        return {}

    def _compute_old_log_prob(self, batch, metrics: dict):
        batch.meta_info.update({"calculate_entropy": True, "compute_loss": False})
        output = self.actor_rollout_wg.compute_log_prob(batch)
        assert len(output) == len(batch)
        batch.batch["old_log_probs"] = output.batch["log_probs"]
        return batch

    def _compute_ref_log_prob(self, batch, metrics: dict):
        batch.meta_info.update({"calculate_entropy": False, "compute_loss": False})
        if self.ref_in_actor:
            output = self.actor_rollout_wg.compute_log_prob(batch)
        else:
            output = self.ref_policy_wg.compute_ref_log_prob(batch)
        assert len(output) == len(batch)
        batch.batch["ref_log_prob"] = output.batch["log_probs"]
        return batch

    def _compute_values(self, batch, metrics: dict):
        batch.meta_info.update({"compute_loss": False})
        output = self.critic_wg.infer_batch(batch)
        batch.batch["values"] = output.get().batch["values"]
        return batch

    def _update_critic(self, batch, metrics: dict):
        mbs = int(self.config.critic.ppo_mini_batch_size) * int(self.config.actor_rollout_ref.rollout.n)
        batch.meta_info.update({"global_batch_size": mbs, "mini_batch_size": mbs,
                                "epochs": int(self.config.critic.ppo_epochs)})
        self.critic_wg.train_mini_batch(batch).get()
        return batch

    def _update_actor(self, batch, metrics: dict):
        mbs = int(self.config.actor_rollout_ref.actor.ppo_mini_batch_size) * int(self.config.actor_rollout_ref.rollout.n)
        batch.meta_info.update({"global_batch_size": mbs, "mini_batch_size": mbs,
                                "epochs": int(self.config.actor_rollout_ref.actor.ppo_epochs)})
        self.actor_rollout_wg.update_actor(batch)
        return batch


TRAINER_REGISTRY: dict = {}


def register_trainer(name: str):
    def decorator(cls):
        if not (isinstance(cls, type) and issubclass(cls, PPOTrainer)):
            raise TypeError(f"register_trainer expected a PPOTrainer subclass, got {cls!r}")
        existing = TRAINER_REGISTRY.get(name)
        if existing is not None and existing is not cls:
            raise ValueError(f"Trainer name '{name}' is already registered to {existing.__name__}")
        TRAINER_REGISTRY[name] = cls
        return cls

    return decorator


def get_trainer_cls(name: str):
    try:
        return TRAINER_REGISTRY[name]
    except KeyError:
        raise ValueError(f"Unknown trainer '{name}'. Available trainers: {', '.join(sorted(TRAINER_REGISTRY))}.") from None
