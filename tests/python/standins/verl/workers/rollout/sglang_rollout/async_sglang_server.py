# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for volcengine/verl @ b178a3cd5: verl/workers/rollout/sglang_rollout/async_sglang_server.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""SGLangHttpServer: one actor per replica and node. launch_server starts
SGLang in the server process (_launch_subprocesses: the TokenizerManager
here, one scheduler process per tensor-parallel rank, which run the model
and their own profiler: the SGLang stand-in, tests/python/standins/sglang).
start_profile / stop_profile reach tokenizer_manager.start_profile(**args)
/ stop_profile() when the replica is selected and the tool config is
discrete (verl's SGLangProfilerArgsBuilder builds the args: output_dir from
the rollout profiler's save_path; here output_dir only)."""

import logging
import os

import standin_trace
from sglang.srt.managers.tokenizer_manager import TokenizerManager

from verl.single_controller.ray.base import ray
from verl.utils.config import omega_conf_to_dataclass
from verl.utils.profiler import build_rollout_dist_profiler
from verl.utils.profiler.config import ProfilerConfig, TorchProfilerToolConfig
from verl.workers.rollout.replica import RolloutReplica

logger = logging.getLogger(__file__)


class SGLangHttpServer:
    def __init__(self, config, model_config, rollout_mode, workers, replica_rank: int, node_rank: int, nnodes: int,
                 cuda_visible_devices: str, base_gpu_id: int):
        self.config = config
        self.model_config = model_config
        self.rollout_mode = rollout_mode
        self.workers = workers
        self.replica_rank = replica_rank
        self.node_rank = node_rank
        self.nnodes = nnodes
        profiler_config = omega_conf_to_dataclass(self.config.get("profiler"), ProfilerConfig)
        tool_config = None
        if profiler_config is not None:
            if profiler_config.tool in ["torch", "npu"]:
                tc = (profiler_config.tool_config or {}).get(profiler_config.tool)
                tool_config = omega_conf_to_dataclass(tc, TorchProfilerToolConfig) if tc else None
            else:
                if profiler_config.tool is not None:
                    logger.warning(f"agent loop only support torch and npu profiler, got {profiler_config.tool}")
                profiler_config = None
        world = config.tensor_model_parallel_size * config.data_parallel_size * config.pipeline_model_parallel_size
        self.profiler_controller = build_rollout_dist_profiler(self.replica_rank, world, config=profiler_config,
                                                               tool_config=tool_config)
        self.tokenizer_manager = None

    def _trace(self, ev, **fields):
        standin_trace.record("verl.server", ev, replica_rank=self.replica_rank, node_rank=self.node_rank, **fields)

    async def launch_server(self, master_address: str = None, master_port: int = None):
        self.tokenizer_manager = TokenizerManager(tp_size=int(self.config.tensor_model_parallel_size),
                                                  use_torch=bool(self.model_config.get("standin_torch", False)))
        self._trace("launch_server", engine="sglang", pids=[p.pid for p, _ in self.tokenizer_manager.schedulers])

    async def generate(self, prompt_ids, sampling_params, request_id, image_data=None, video_data=None,
                       audio_data=None, mm_processor_kwargs=None, priority=0, kv_transfer_params=None):
        max_tokens = int(sampling_params.get("max_tokens", self.config.response_length))
        self._trace("generate", request_id=request_id, tokens=max_tokens)
        token_ids = await self.tokenizer_manager.generate(prompt_ids, max_tokens)
        return {"token_ids": token_ids, "log_probs": [0.0] * len(token_ids)}

    async def wake_up(self, tags=None):
        self._trace("wake_up")

    async def sleep(self):
        self._trace("sleep")

    def _should_profile(self) -> bool:
        return (self.profiler_controller.check_enable() and self.profiler_controller.check_this_rank()
                and self.profiler_controller.is_discrete_mode())

    async def start_profile(self, **kwargs):
        self._trace("start_profile")
        if self._should_profile():
            save_path = getattr(self.profiler_controller, "save_path", None) or os.getcwd()
            await self.tokenizer_manager.start_profile(output_dir=save_path)

    async def stop_profile(self):
        self._trace("stop_profile")
        if self._should_profile():
            await self.tokenizer_manager.stop_profile()

    async def set_global_steps(self, global_steps: int):
        self.global_steps = global_steps


class SGLangReplica(RolloutReplica):
    def __init__(self, replica_rank: int, config, model_config, gpus_per_node: int = 8, is_reward_model: bool = False,
                 is_teacher_model: bool = False, name_suffix: str = ""):
        super().__init__(replica_rank, config, model_config, gpus_per_node, is_reward_model, is_teacher_model,
                         name_suffix)
        self.server_class = ray.remote(SGLangHttpServer)

    def launch_servers(self):
        for node_rank in range(self.nnodes):
            name = f"sglang_server_{self.replica_rank}_{node_rank}{self.name_suffix}"
            server = self.server_class.options(runtime_env={"env_vars": {}}, name=name).remote(
                config=self.config, model_config=self.model_config, rollout_mode=self.rollout_mode, workers=None,
                replica_rank=self.replica_rank, node_rank=node_rank, nnodes=self.nnodes, cuda_visible_devices="",
                base_gpu_id=0)
            self.servers.append(server)
        ray.get([server.launch_server.remote() for server in self.servers])
        self._server_handle = self.servers[0]
