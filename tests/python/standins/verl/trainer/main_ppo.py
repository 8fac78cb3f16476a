# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/trainer/main_ppo.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""The launcher: `python3 -m verl.trainer.main_ppo key=value ...` (Hydra-style
overrides of the configuration below). run_ppo() calls ray.init() with verl's
runtime_env, starts the TaskRunner as an actor and waits for it; the trainer
(the "driver" of the worker groups) runs inside that TaskRunner process.

The defaults stand in for the keys of verl/trainer/config/ppo_trainer.yaml
the stand-in reads (verl's own defaults where they exist, smaller sizes).
Role profiler sections take `tool` and `save_path` from global_profiler, and
the rollout's enable/all_ranks/ranks from the actor's, as verl's
interpolations do. critic.enable defaults to False here (verl: null, which
warns and disables the critic for GRPO). Keys under `standin` / named `standin_*` are the
stand-in's own:
  actor_rollout_ref.model.standin_torch  workers and engines run small torch ops (CPU)
  critic.standin_pool                    e.g. [2]: the critic in a pool of its own (2 processes)
  data.standin_num_batches               batches per epoch"""

import ast
import copy
import re
import sys

from verl.single_controller.ray.base import ray
from verl.trainer.constants_ppo import get_ppo_ray_runtime_env
from verl.utils.config import Config


def _profiler_section(**kw):
    d = {"_target_": "verl.utils.profiler.ProfilerConfig", "tool": None, "enable": False, "all_ranks": False,
         "ranks": [], "save_path": None, "tool_config": {"torch": {"contents": [], "discrete": False}}}
    d.update(kw)
    return d


DEFAULT_CONFIG = {
    "data": {"train_batch_size": 4, "gen_batch_size": None, "standin_num_batches": 64},
    "actor_rollout_ref": {
        "hybrid_engine": True,
        "model": {"path": "standin", "lora_rank": 0, "standin_torch": False},
        "actor": {"strategy": "fsdp", "ppo_mini_batch_size": 2, "ppo_epochs": 1, "use_kl_loss": True,
                  "profiler": _profiler_section()},
        "ref": {"profiler": _profiler_section()},
        "rollout": {"name": "vllm", "mode": "async", "n": 1, "temperature": 1.0, "response_length": 4,
                    "tensor_model_parallel_size": 1, "data_parallel_size": 1, "pipeline_model_parallel_size": 1,
                    "free_cache_engine": True, "agent": {"num_workers": 1},
                    "profiler": _profiler_section(enable=None, all_ranks=None, ranks=None)},
    },
    "critic": {"enable": False, "ppo_mini_batch_size": 2, "ppo_epochs": 1, "profiler": _profiler_section(),
               "standin_pool": None},
    "algorithm": {"adv_estimator": "grpo", "use_kl_in_reward": False},
    "trainer": {"project_name": "verl_examples", "experiment_name": "standin", "device": "cpu", "nnodes": 1,
                "n_gpus_per_node": 2, "total_epochs": 1, "total_training_steps": 3, "critic_warmup": 0,
                "save_freq": -1, "test_freq": -1, "val_before_train": False, "use_v1": True,
                "v1": {"trainer_mode": "sync"}},
    "global_profiler": {"_target_": "verl.utils.profiler.ProfilerConfig", "tool": None, "steps": None,
                        "profile_continuous_steps": False, "save_path": "outputs/profile"},
    "ray_kwargs": {"ray_init": {"runtime_env": {}}},
}


def _parse_value(text):
    t = re.sub(r"\b(null|None)\b", "None", text)
    t = re.sub(r"\b(true)\b", "True", t)
    t = re.sub(r"\b(false)\b", "False", t)
    try:
        return ast.literal_eval(t)
    except (ValueError, SyntaxError):
        return text


def apply_overrides(cfg: dict, overrides):
    """key.sub=value, +key=value, ++key=value (Hydra's forms; values as YAML scalars and lists)."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"override without '=': {item}")
        key = key.lstrip("+")
        parts = key.split(".")
        cur = cfg
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = _parse_value(value)
    return cfg


def resolve(cfg: dict) -> dict:
    """What verl's ${oc.select:...} interpolations do for the profiler sections."""
    gp = cfg["global_profiler"]
    arr = cfg["actor_rollout_ref"]
    for sec in (arr["actor"]["profiler"], arr["ref"]["profiler"], arr["rollout"]["profiler"], cfg["critic"]["profiler"]):
        if sec.get("tool") is None:
            sec["tool"] = gp.get("tool")
        if sec.get("save_path") is None:
            sec["save_path"] = gp.get("save_path")
    for k in ("enable", "all_ranks", "ranks"):
        if arr["rollout"]["profiler"].get(k) is None:
            arr["rollout"]["profiler"][k] = copy.deepcopy(arr["actor"]["profiler"][k])
    return cfg


def build_config(argv):
    return Config(resolve(apply_overrides(copy.deepcopy(DEFAULT_CONFIG), argv)))


def run_ppo(config, task_runner_class) -> None:
    if not ray.is_initialized():
        runtime_env = get_ppo_ray_runtime_env(config)
        user_env = (config.ray_kwargs.ray_init.get("runtime_env") or {}).get("env_vars") or {}
        runtime_env["env_vars"].update(user_env)
        ray.init(runtime_env=runtime_env)
    runner = task_runner_class.remote()
    ray.get(runner.run.remote(config))


@ray.remote
class TaskRunnerV1:
    """V1 TaskRunner for PPO training (an actor process of its own)."""

    def __init__(self):
        self.config = None
        self.trainer = None
        self.agent_loop_manager = None

    def init_agent_loop_manager(self):
        from verl.trainer.ppo.v1 import AgentLoopManagerTQ

        self.agent_loop_manager = AgentLoopManagerTQ.create(config=self.config, llm_client=self.trainer.get_llm_client(),
                                                            teacher_client=self.trainer.get_teacher_client(),
                                                            reward_loop_worker_handles=self.trainer.get_reward_handles())

    def run(self, config):
        from verl.trainer.ppo.v1 import get_trainer_cls

        trainer_cls = get_trainer_cls(config.trainer.v1.trainer_mode)
        self.config = config
        self.trainer = trainer_cls(config=config)
        self.trainer.init()
        self.init_agent_loop_manager()
        self.trainer.fit(self.agent_loop_manager)


def main(config):
    if config.trainer.use_v1:
        run_ppo(config, task_runner_class=TaskRunnerV1)
    else:
        from verl.trainer.main_ppo_v0 import TaskRunner

        run_ppo(config, task_runner_class=TaskRunner)


if __name__ == "__main__":
    main(build_config(sys.argv[1:]))
    ray.shutdown()
