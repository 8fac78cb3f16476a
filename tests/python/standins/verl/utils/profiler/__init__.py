# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/utils/profiler/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
# verl picks nvtx / mstx marker implementations when those are importable;
# the stand-in always uses the no-op markers of profile.py.

from .config import ProfilerConfig, TorchProfilerToolConfig
from .performance import log_gpu_memory_usage, marked_timer, simple_timer
from .profile import (
    DistProfiler,
    DistProfilerExtension,
    build_rollout_dist_profiler,
    mark_annotate,
    mark_end_range,
    mark_start_range,
)

__all__ = [
    "log_gpu_memory_usage",
    "mark_start_range",
    "mark_end_range",
    "mark_annotate",
    "DistProfiler",
    "DistProfilerExtension",
    "ProfilerConfig",
    "TorchProfilerToolConfig",
    "build_rollout_dist_profiler",
    "simple_timer",
    "marked_timer",
]
