# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for sgl-project/sglang @ 034c23fa9b4b0d76f9120164223561668cbf2c08:
# python/sglang/srt/managers/scheduler_profiler_mixin.py (SchedulerProfilerMixin) and the scheduler process loop.
# Written for profd's tests from that file; names and behaviour follow it, bodies are minimal.
"""Scheduler: one tensor-parallel rank in its own process. A START_PROFILE
request sets the output folder (output_dir, else SGLANG_TORCH_PROFILER_DIR,
else /tmp), the activities (default ["CPU", "GPU"]) and the profile id,
then starts a torch profiler; STOP_PROFILE stops it and exports
<output_dir>/<profile_id>-TP-<tp_rank>.trace.json.gz. A stop without a
start answers success=False, "Profiling is not in progress. Call
/start_profile first." (CPU only here: "GPU" maps to CUDA only where CUDA
is available.)"""

import os

import standin_pool
import standin_trace


class ProfileReqOutput:
    def __init__(self, success, message):
        self.success = success
        self.message = message


class Scheduler:
    def __init__(self, tp_rank, use_torch):
        self.tp_rank = tp_rank
        self.use_torch = use_torch
        self.torch_profiler = None
        self.torch_profiler_output_dir = None
        self.profiler_activities = None
        self.profile_id = None
        self.profile_in_progress = False
        standin_trace.record("sglang.scheduler", "init", tp_rank=tp_rank)

    def forward(self, num_tokens):
        if self.use_torch:
            import torch

            with torch.profiler.record_function("sglang_forward_tp%d" % self.tp_rank):
                torch.ones(8, 8).matmul(torch.ones(8, 8))
        return num_tokens

    def init_profile(self, output_dir, activities, profile_id):
        if self.profile_in_progress:
            return ProfileReqOutput(False, "Profiling is already in progress. Call /stop_profile first.")
        if output_dir is None:
            output_dir = os.getenv("SGLANG_TORCH_PROFILER_DIR", "/tmp")
        if activities is None:
            activities = ["CPU", "GPU"]
        self.torch_profiler_output_dir = output_dir
        self.profiler_activities = activities
        self.profile_id = profile_id
        return ProfileReqOutput(True, "Succeeded")

    def start_profile(self):
        import torch

        activity_map = {"CPU": torch.profiler.ProfilerActivity.CPU}
        if torch.cuda.is_available():
            activity_map["GPU"] = torch.profiler.ProfilerActivity.CUDA
        acts = [activity_map[a] for a in self.profiler_activities if a in activity_map]
        self.torch_profiler = torch.profiler.profile(activities=acts, with_stack=True, record_shapes=False)
        self.torch_profiler.start()
        self.profile_in_progress = True
        standin_trace.record("sglang.scheduler", "start_profile", tp_rank=self.tp_rank,
                             output_dir=self.torch_profiler_output_dir)
        return ProfileReqOutput(True, "Succeeded")

    def stop_profile(self):
        if not self.profile_in_progress:
            return ProfileReqOutput(False, "Profiling is not in progress. Call /start_profile first.")
        os.makedirs(self.torch_profiler_output_dir, exist_ok=True)
        self.torch_profiler.stop()
        self.torch_profiler.export_chrome_trace(os.path.join(
            self.torch_profiler_output_dir, self.profile_id + "-TP-%d" % self.tp_rank + ".trace.json.gz"))
        self.torch_profiler = None
        self.profile_in_progress = False
        standin_trace.record("sglang.scheduler", "stop_profile", tp_rank=self.tp_rank)
        return ProfileReqOutput(True, "Succeeded.")

    def profile(self, req):
        kind, output_dir, activities, profile_id = req
        if kind == "START_PROFILE":
            r = self.init_profile(output_dir, activities, profile_id)
            return r if not r.success else self.start_profile()
        return self.stop_profile()


def _answer(conn, scheduler, method, args):
    conn.send(getattr(scheduler, method)(*args))


def run_scheduler_process(conn, tp_rank, use_torch):
    standin_pool.serve(conn, lambda: Scheduler(tp_rank, use_torch), _answer)
