# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for vllm-project/vllm @ 35d5cda123ec28581759b6d34cde8052314fb1e6: vllm/v1/worker/gpu_worker.py
# (with vllm/config/profiler.py ProfilerConfig._validate_profiler_config and
# vllm/profiler/wrapper.py TorchProfilerWrapper as read at 02773ee0f7a043ca8560d1216a6673bd1aa9f082).
# Written for profd's tests from those files; names, signatures and behaviour follow them, bodies are minimal.
"""Worker: one engine rank in its own process. Its profiler is fixed when
it is built, from the environment the process inherited:
VLLM_TORCH_CUDA_PROFILE set -> "cuda" if "1" else none; else
VLLM_TORCH_PROFILER_DIR set -> a torch profiler writing into that folder
(TensorBoard's handler, worker_name f"{instance_id}-rank-{rank}", gzip on:
<instance_id>-rank-<rank>.<ms>.pt.trace.json.gz), plus the
self_cuda_time_total table in profiler_out_<local_rank>.txt at stop
(torch_profiler_dump_cuda_time_total, on by default). profile() without a
profiler raises RuntimeError("Profiling is not enabled.")."""

import os

import standin_trace


def _profiler_config():
    cuda = os.environ.get("VLLM_TORCH_CUDA_PROFILE")
    if cuda is not None:
        return ("cuda" if cuda == "1" else None), ""
    d = os.environ.get("VLLM_TORCH_PROFILER_DIR")
    if d is not None:
        return "torch", d
    return None, ""


class _TorchProfilerWrapper:
    def __init__(self, trace_dir, worker_name, local_rank):
        import torch

        self.torch = torch
        self.trace_dir = trace_dir
        self.local_rank = local_rank
        self.profiler = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU], with_stack=True,
            on_trace_ready=torch.profiler.tensorboard_trace_handler(trace_dir, worker_name=worker_name,
                                                                      use_gzip=True))
        self._active = False

    def start(self):
        if self._active:  # "start_profile received when profiler is already active"
            return
        self._active = True
        self.profiler.start()

    def stop(self):
        if not self._active:
            return
        self._active = False
        self.profiler.stop()
        table = self.profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
        with open(os.path.join(self.trace_dir, "profiler_out_%d.txt" % self.local_rank), "w") as f:
            print(table, file=f)


class Worker:
    def __init__(self, instance_id, local_rank, rank, use_torch):
        self.instance_id = instance_id
        self.local_rank = local_rank
        self.rank = rank
        self.use_torch = use_torch
        kind, trace_dir = _profiler_config()
        self.profiler = None
        if kind == "torch":
            self.profiler = _TorchProfilerWrapper(trace_dir, "%s-rank-%d" % (instance_id, rank), local_rank)
        standin_trace.record("vllm.worker", "init", instance_id=instance_id, rank=rank, profiler=kind,
                             trace_dir=trace_dir)

    def execute_model(self, num_tokens):
        """One decode step for num_tokens sequences (a matmul per step)."""
        if self.use_torch:
            import torch

            with torch.profiler.record_function("vllm_execute_model_rank%d" % self.rank):
                torch.ones(8, 8).matmul(torch.ones(8, 8))
        return num_tokens

    def profile(self, is_start=True):
        if self.profiler is None:
            raise RuntimeError("Profiling is not enabled.")
        standin_trace.record("vllm.worker", "profile", instance_id=self.instance_id, rank=self.rank,
                             is_start=is_start)
        if is_start:
            self.profiler.start()
        else:
            self.profiler.stop()
