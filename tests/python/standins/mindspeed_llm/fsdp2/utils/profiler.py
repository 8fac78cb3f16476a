# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/fsdp2/utils/profiler.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""The FSDP2 backend's profiler (YAML `training.profile_*`): a
torch_npu.profiler.profile with schedule(wait=0, warmup=0 if start == 0 else 1,
active=end-start (1000000 when end == -1), repeat=1, skip_first=max(0, start-1)),
started before the loop and stepped right after each optimizer step. With
step() after update k (k = global_step before that update, from 0), update k
runs under step_num k: captured are the updates with k in [start, end), i.e.
global_step (after the update, as logged) start+1 .. end. The step count
restarts at 0 on resume (the code says "no resume, iteration = 0"), so after
resuming at global step g the captured updates are g+start .. g+end-1."""

from dataclasses import dataclass
from pathlib import Path
from typing import List

try:
    import torch_npu.profiler as npu_profiler
except ImportError:
    pass


@dataclass
class ProfilerConfig:
    enabled: bool = False
    profile_step_start: int = 0
    profile_step_end: int = -1
    profile_ranks: List[int] = None
    profile_level: str = "level0"
    profile_export_type: str = "text"
    profile_data_simplification: bool = False
    profile_with_cpu: bool = False
    profile_with_stack: bool = False
    profile_with_memory: bool = False
    profile_record_shapes: bool = False
    profile_save_path: str = "./profile"
    current_rank: int = 0

    def __post_init__(self):
        if self.profile_ranks is None:
            self.profile_ranks = [-1]

    def is_profiling_rank(self) -> bool:
        if not self.enabled:
            return False
        if -1 in self.profile_ranks:
            return True
        return self.current_rank in self.profile_ranks


class ProfilerManager:
    def __init__(self, config: ProfilerConfig):
        self.config = config
        self.profiler = None
        self._started = False
        if not config.is_profiling_rank():
            return
        Path(config.profile_save_path).mkdir(parents=True, exist_ok=True)
        level_map = {"level_none": npu_profiler.ProfilerLevel.Level_none, "level0": npu_profiler.ProfilerLevel.Level0,
                     "level1": npu_profiler.ProfilerLevel.Level1, "level2": npu_profiler.ProfilerLevel.Level2}
        if config.profile_level not in level_map:
            raise ValueError(f"Invalid profile_level: {config.profile_level}")
        export_map = {"text": npu_profiler.ExportType.Text, "db": npu_profiler.ExportType.Db}
        if config.profile_export_type not in export_map:
            raise ValueError(f"Invalid profile_export_type: {config.profile_export_type}")
        if config.profile_step_end == -1:
            active = 1000000
        else:
            active = config.profile_step_end - config.profile_step_start
            if active <= 0:
                raise ValueError("profile_step_end must be > profile_step_start")
        skip_first = max(0, config.profile_step_start - 1)
        warmup = 0 if config.profile_step_start == 0 else 1
        activities = [npu_profiler.ProfilerActivity.NPU]
        if config.profile_with_cpu:
            activities.append(npu_profiler.ProfilerActivity.CPU)
        experimental_config = npu_profiler._ExperimentalConfig(
            aic_metrics=npu_profiler.AiCMetrics.PipeUtilization, profiler_level=level_map[config.profile_level],
            export_type=export_map[config.profile_export_type], data_simplification=config.profile_data_simplification)
        self.profiler = npu_profiler.profile(
            activities=activities,
            schedule=npu_profiler.schedule(wait=0, warmup=warmup, active=active, repeat=1, skip_first=skip_first),
            on_trace_ready=npu_profiler.tensorboard_trace_handler(config.profile_save_path),
            record_shapes=config.profile_record_shapes, profile_memory=config.profile_with_memory,
            with_stack=config.profile_with_stack, experimental_config=experimental_config)

    def start(self):
        if self.profiler is not None and not self._started:
            self.profiler.start()
            self._started = True

    def step(self):
        if self.profiler is not None:
            self.profiler.step()

    def stop(self):
        if self.profiler is not None:
            self.profiler.stop()
