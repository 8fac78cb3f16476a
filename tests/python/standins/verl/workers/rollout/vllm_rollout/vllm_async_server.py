# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/workers/rollout/vllm_rollout/vllm_async_server.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""vLLMHttpServer: one actor per replica and node. It sets VERL_REPLICA_RANK
in its own environment, builds a rollout DistProfiler keyed on the replica
rank (build_rollout_dist_profiler; only tools "torch" and "npu", anything
else is turned off with a warning), and drives the engine's own profiler:
start_profile / stop_profile reach engine.start_profile() /
engine.stop_profile() only on node 0, and only when the replica is selected
and the tool config is discrete (_should_profile). The trainer calls them
through LLMServerManager.

In verl the engine is vLLM's AsyncLLM, started by launch_server with
distributed_executor_backend "mp": worker processes of its own do the
model's work and run the engine's profiler, which writes into the folder
fixed when they start. The stand-in does the same with the vLLM stand-in
(tests/python/standins/vllm): tensor_model_parallel_size worker processes,
children of the server process; a request decodes `response_length`
tokens one step at a time on every worker (a torch op per step with
`standin_torch`)."""

import logging
import os

import standin_trace
from vllm.v1.engine.async_llm import AsyncLLM

from verl.single_controller.ray.base import ray
from verl.utils.config import omega_conf_to_dataclass
from verl.utils.profiler import build_rollout_dist_profiler
from verl.utils.profiler.config import ProfilerConfig, TorchProfilerToolConfig
from verl.workers.rollout.replica import RolloutMode, RolloutReplica

logger = logging.getLogger(__file__)


class vLLMHttpServer:  # noqa: N801
    def __init__(self, config, model_config, rollout_mode: RolloutMode, workers, replica_rank: int, node_rank: int,
                 gpus_per_node: int, nnodes: int, cuda_visible_devices: str, disaggregation_role: str = "null",
                 disaggregation_kv_transfer_config=None):
        os.environ["VERL_REPLICA_RANK"] = str(replica_rank)
        self.config = config
        self.model_config = model_config
        self.rollout_mode = rollout_mode
        self.workers = workers
        self.replica_rank = replica_rank
        self.node_rank = node_rank
        self.gpus_per_node = gpus_per_node
        self.nnodes = nnodes
        self.global_steps = None
        profiler_config = omega_conf_to_dataclass(self.config.get("profiler"), ProfilerConfig)
        tool_config = None
        if profiler_config is not None:
            if profiler_config.tool in ["torch", "npu"]:
                tc = (profiler_config.tool_config or {}).get(profiler_config.tool)
                tool_config = omega_conf_to_dataclass(tc, TorchProfilerToolConfig) if tc else None
            else:
                if profiler_config.tool is not None:  # verl warns also when no tool is set
                    logger.warning(f"agent loop only support torch and npu profiler, got {profiler_config.tool}")
                profiler_config = None
        self.replica_world_size = (config.tensor_model_parallel_size * config.data_parallel_size
                                   * config.pipeline_model_parallel_size)
        self.profiler_controller = build_rollout_dist_profiler(self.replica_rank, self.replica_world_size,
                                                               config=profiler_config, tool_config=tool_config)
        self.engine = None

    def _trace(self, ev, **fields):
        standin_trace.record("verl.server", ev, replica_rank=self.replica_rank, node_rank=self.node_rank, **fields)

    async def launch_server(self, master_address: str = None, master_port: int = None, dp_rpc_port: int = None):
        self.engine = AsyncLLM(tensor_parallel_size=int(self.config.tensor_model_parallel_size),
                               use_torch=bool(self.model_config.get("standin_torch", False)))
        self._trace("launch_server", instance_id=self.engine.instance_id)

    async def generate(self, prompt_ids, sampling_params, request_id, image_data=None, video_data=None,
                       audio_data=None, mm_processor_kwargs=None, priority=0, kv_transfer_params=None):
        max_tokens = int(sampling_params.get("max_tokens", self.config.response_length))
        self._trace("generate", request_id=request_id, tokens=max_tokens)
        token_ids = await self.engine.generate(prompt_ids, max_tokens, request_id)
        return {"token_ids": token_ids, "log_probs": [0.0] * len(token_ids)}

    async def wake_up(self, tags=None):
        if self.node_rank != 0:
            return
        self._trace("wake_up")
        await self.engine.wake_up(tags=tags)
        await self.engine.reset_prefix_cache(reset_connector=True)

    async def sleep(self):
        if self.node_rank != 0 or not self.config.free_cache_engine:
            return
        self._trace("sleep")
        await self.engine.sleep(level=2)

    def _should_profile(self) -> bool:
        return (self.profiler_controller.check_enable() and self.profiler_controller.check_this_rank()
                and self.profiler_controller.is_discrete_mode())

    async def start_profile(self, **kwargs):
        self._trace("start_profile")
        if self.node_rank != 0:
            return
        if self._should_profile():
            await self.engine.start_profile(**kwargs)

    async def stop_profile(self):
        self._trace("stop_profile")
        if self.node_rank != 0:
            return
        if self._should_profile():
            await self.engine.stop_profile()

    async def set_global_steps(self, global_steps: int):
        self.global_steps = global_steps


class vLLMReplica(RolloutReplica):  # noqa: N801
    def __init__(self, replica_rank: int, config, model_config, gpus_per_node: int = 8, is_reward_model: bool = False,
                 is_teacher_model: bool = False, name_suffix: str = ""):
        super().__init__(replica_rank, config, model_config, gpus_per_node, is_reward_model, is_teacher_model,
                         name_suffix)
        self.server_class = ray.remote(vLLMHttpServer)

    def launch_servers(self):
        assert len(self.workers) == self.world_size, (
            f"worker number {len(self.workers)} not equal to world size {self.world_size}")
        for node_rank in range(self.nnodes):
            workers = self.workers[node_rank * self.gpus_per_replica_node: (node_rank + 1) * self.gpus_per_replica_node]
            name = f"vllm_server_{self.replica_rank}_{node_rank}{self.name_suffix}"
            server = self.server_class.options(runtime_env={"env_vars": {}}, name=name).remote(
                config=self.config, model_config=self.model_config, rollout_mode=self.rollout_mode, workers=None,
                replica_rank=self.replica_rank, node_rank=node_rank, gpus_per_node=self.gpus_per_replica_node,
                nnodes=self.nnodes, cuda_visible_devices="")
            self.servers.append(server)
        ray.get([server.launch_server.remote() for server in self.servers])
        self._server_handle = self.servers[0]
