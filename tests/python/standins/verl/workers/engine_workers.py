# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/workers/engine_workers.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""The training workers.

TrainingWorker: one model engine (the critic's own worker group, and the
actor and ref engines inside the hybrid worker). train_mini_batch splits its
data into update mini-batches, calls train_batch (annotated
role="train_batch") on each and then self.profiler.step(), once per
mini-batch. infer_batch is not annotated (so the critic's value computation
carries no verl profiler annotation at this commit).

ActorRolloutRefWorker: verl's hybrid engine worker; with role
"actor_rollout_ref" one process hosts the actor engine, the ref engine and
the rollout adapter (weights to the inference server, sleep/wake). Its
profiler config comes from actor.profiler (else rollout.profiler, else
ref.profiler); its annotated stages are compute_ref_log_prob
(role="ref_compute_log_prob"), compute_log_prob
(role="actor_compute_log_prob") and update_actor (role="actor_update",
scheduled=True). Generation itself runs in the rollout server processes
(verl/workers/rollout/vllm_rollout/vllm_async_server.py).

Bodies: a "model" is a counter, or with `standin.torch` a small torch Linear
whose forward/backward/optimizer step run on CPU. Each method entry is
recorded with standin_trace (role, rank, method, samples)."""

import contextlib
import logging
import os
import sys

import standin_trace

from verl.single_controller.base import Worker
from verl.single_controller.base.decorator import Dispatch, make_nd_compute_dataproto_dispatch_fn, register
from verl.protocol import DataProto
from verl.utils.config import omega_conf_to_dataclass
from verl.utils.profiler import DistProfiler, DistProfilerExtension, ProfilerConfig
from verl.utils.profiler.config import TorchProfilerToolConfig
from verl.workers.config import TrainingWorkerConfig
from verl.workers.rollout.base import get_rollout_class

logger = logging.getLogger(__file__)


def _record_function(name):
    if "torch" in sys.modules:
        return sys.modules["torch"].profiler.record_function(name)
    return contextlib.nullcontext()


class _Engine:
    """Stands in for the FSDP/Megatron engine: forward, backward, optimizer step."""

    def __init__(self, use_torch, forward_only=False):
        self.model = None
        self.optimizer = None
        self.steps = 0
        if use_torch:
            import torch

            torch.manual_seed(0)
            self.model = torch.nn.Linear(16, 16)
            if not forward_only:
                self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)

    def infer_batch(self, n):
        if self.model is None:
            return [0.0] * n
        import torch

        with torch.no_grad():
            out = self.model(torch.ones(max(n, 1), 16))
        return out.sum(dim=1).tolist()[:n]

    def train_batch(self, n):
        self.steps += 1
        if self.model is None:
            return {"loss": 0.0}
        import torch

        loss = self.model(torch.ones(max(n, 1), 16)).pow(2).mean()
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return {"loss": float(loss)}


def _profiler_tool_config(profiler_config):
    if profiler_config is None:
        return None
    tc = profiler_config.tool_config
    if isinstance(tc, dict):
        tc = tc.get(profiler_config.tool)
    if isinstance(tc, dict) and profiler_config.tool == "torch":
        return omega_conf_to_dataclass(tc, TorchProfilerToolConfig)
    return tc


class TrainingWorker(Worker, DistProfilerExtension):
    def __init__(self, config: TrainingWorkerConfig):
        Worker.__init__(self)
        self.config = config
        self.model_config = config.model_config
        self.engine_config = config.engine_config or {}
        self.profiler_config = config.profiler_config
        self.profiler_tool_config = _profiler_tool_config(self.profiler_config)
        DistProfilerExtension.__init__(
            self,
            DistProfiler(rank=self.rank, config=self.profiler_config, tool_config=self.profiler_tool_config,
                         save_file_prefix=getattr(self.config, "model_type", None)),
        )
        use_torch = bool((self.config.extra_context or {}).get("standin_torch"))
        self.engine = _Engine(use_torch, forward_only=bool(self.engine_config.get("forward_only", False)))
        self._register_dispatch_collect_info(mesh_name="train", dp_rank=self.rank, is_collect=True)
        self.loss_fn = None

    def _trace(self, method, data=None, **fields):
        standin_trace.record("verl.worker", method, model_type=self.config.model_type,
                             engine=(self.config.extra_context or {}).get("standin_role"), rank=self.rank,
                             world_size=self.world_size, wg=os.environ.get("WG_PREFIX"),
                             n=len(data) if data is not None else None, **fields)

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def to(self, device, model=True, optimizer=True, grad=True):
        """Manual control of load/offload"""

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def set_loss_fn(self, loss_fn):
        self.loss_fn = loss_fn

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def reset(self):
        self.engine.steps = 0

    @register(dispatch_mode=make_nd_compute_dataproto_dispatch_fn(mesh_name="train"), blocking=False)
    def train_mini_batch(self, data: DataProto) -> DataProto:
        self._trace("train_mini_batch", data)
        mini_batch_size = int(data.meta_info.get("mini_batch_size") or max(len(data), 1))
        epochs = int(data.meta_info.get("epochs", 1))
        per_gpu = max(1, mini_batch_size // max(1, self.world_size))
        n_mb = max(1, len(data) // per_gpu)
        outputs = []
        for _ in range(epochs):
            for batch_idx, mb in enumerate(data.chunk(n_mb)):
                mb.meta_info["update_lr_scheduler"] = batch_idx == n_mb - 1
                with _record_function(f"mini_batch{batch_idx}"):
                    outputs.append(self.train_batch(mb))
                self.profiler.step()
        return DataProto(meta_info={"metrics": {"loss": [o.meta_info["metrics"]["loss"] for o in outputs]}})

    @register(dispatch_mode=make_nd_compute_dataproto_dispatch_fn(mesh_name="train"), blocking=False)
    @DistProfiler.annotate(color="red", role="train_batch")
    def train_batch(self, data: DataProto) -> DataProto:
        self._trace("train_batch", data)
        return DataProto(meta_info={"metrics": self.engine.train_batch(len(data))})

    @register(dispatch_mode=make_nd_compute_dataproto_dispatch_fn(mesh_name="train"), blocking=False)
    def infer_batch(self, data: DataProto) -> DataProto:
        self._trace("infer_batch", data)
        key = "values" if self.config.model_type == "value_model" else "log_probs"
        return DataProto({key: self.engine.infer_batch(len(data))})

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def save_checkpoint(self, local_path, hdfs_path=None, global_step=0, max_ckpt_to_keep=None):
        return None

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def load_checkpoint(self, local_path, hdfs_path=None, del_local_after_load=False):
        return None


class ActorRolloutRefWorker(Worker, DistProfilerExtension):
    actor_worker_cls = TrainingWorker
    ref_worker_cls = TrainingWorker

    def __init__(self, config, role: str, distillation_config=None, **kwargs):
        Worker.__init__(self)
        self.config = config
        self.distillation_config = distillation_config
        self.role = role
        self.actor = None
        self.ref = None
        self.rollout = None
        assert self.role in ["actor", "rollout", "ref", "actor_rollout", "actor_rollout_ref"]
        self._is_actor = self.role in ["actor", "actor_rollout", "actor_rollout_ref"]
        self._is_rollout = self.role in ["rollout", "actor_rollout", "actor_rollout_ref"]
        self._is_ref = self.role in ["ref", "actor_rollout_ref"]
        if self._is_actor:
            omega_profiler_config = config.actor.get("profiler", {})
        elif self._is_rollout:
            omega_profiler_config = config.rollout.get("profiler", {})
        else:
            omega_profiler_config = config.ref.get("profiler", {})
        profiler_config = omega_conf_to_dataclass(omega_profiler_config, dataclass_type=ProfilerConfig)
        if omega_profiler_config.get("tool", None) in ["npu", "nsys", "torch", "torch_memory", "precision_debugger"]:
            tool_config = _profiler_tool_config(profiler_config)
        else:
            tool_config = None
        self._omega_profiler_config = omega_profiler_config
        DistProfilerExtension.__init__(
            self,
            DistProfiler(rank=self.rank, config=profiler_config, tool_config=tool_config, save_file_prefix=self.role),
        )

    def _trace(self, method, data=None, **fields):
        standin_trace.record("verl.worker", method, model_type=self.role, rank=self.rank, world_size=self.world_size,
                             wg=os.environ.get("WG_PREFIX"), n=len(data) if data is not None else None, **fields)

    def _training_config(self, section, model_type, forward_only):
        profiler = self.config[section].get("profiler", {})
        return TrainingWorkerConfig(
            model_type=model_type,
            model_config=self.config.model,
            engine_config={"forward_only": forward_only},
            profiler_config=omega_conf_to_dataclass(profiler, dataclass_type=ProfilerConfig) if profiler else None,
            extra_context={"standin_torch": bool(self.config.model.get("standin_torch", False)), "standin_role": section},
        )

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def set_loss_fn(self, loss_fn):
        self.actor.set_loss_fn(loss_fn=loss_fn)

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def to(self, device, model=True, optimizer=True, grad=True):
        self.actor.to(device=device, model=model, optimizer=optimizer, grad=grad)

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def init_model(self):
        self._trace("init_model")
        # 1. build reference model
        if "ref" in self.role:
            self.ref = self.ref_worker_cls(config=self._training_config("ref", "language_model", True))
            self.ref.reset()
            self.set_dispatch_collect(mesh_name="ref", **self.ref.get_dispatch_collect())
        # 2. build actor model
        if "actor" in self.role:
            self.actor = self.actor_worker_cls(config=self._training_config("actor", "language_model", False))
            self.actor.reset()
            self.set_dispatch_collect(mesh_name="actor", **self.actor.get_dispatch_collect())
        # 3. build rollout engine (the adapter to the inference server)
        if "rollout" in self.role:
            rollout_cls = get_rollout_class(self.config.rollout.name, self.config.rollout.mode)
            self.rollout = rollout_cls(config=self.config.rollout, model_config=self.config.model, device_mesh=None)

    @register(dispatch_mode=make_nd_compute_dataproto_dispatch_fn(mesh_name="ref"))
    @DistProfiler.annotate(color="olive", role="ref_compute_log_prob")
    def compute_ref_log_prob(self, data: DataProto) -> DataProto:
        self._trace("compute_ref_log_prob", data)
        return self.ref.infer_batch(data=data)

    @register(dispatch_mode=make_nd_compute_dataproto_dispatch_fn(mesh_name="actor"))
    @DistProfiler.annotate(color="blue", role="actor_compute_log_prob")
    def compute_log_prob(self, data: DataProto) -> DataProto:
        self._trace("compute_log_prob", data)
        return self.actor.infer_batch(data)

    @register(dispatch_mode=make_nd_compute_dataproto_dispatch_fn(mesh_name="actor"))
    @DistProfiler.annotate(color="red", role="actor_update", scheduled=True)
    def update_actor(self, data: DataProto) -> DataProto:
        self._trace("update_actor", data)
        return self.actor.train_mini_batch(data=data)

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def load_checkpoint(self, local_path, hdfs_path=None, del_local_after_load=False):
        return None

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def save_checkpoint(self, local_path, hdfs_path=None, global_step=0, max_ckpt_to_keep=None):
        return None

    @register(dispatch_mode=Dispatch.ONE_TO_ALL, blocking=False)
    async def update_weights(self, global_steps: int = None, mode: str = "auto"):
        """Naive (colocated) weight sync: resume the rollout's weights, push the
        actor's weights to it, resume its kv cache."""
        self._trace("update_weights", global_steps=global_steps)
        await self.rollout.resume(tags=["weights"])
        await self.rollout.update_weights([], peft_config=None, base_sync_done=True, global_steps=global_steps)
        await self.rollout.resume(tags=["kv_cache"])
