# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/pytorch (torch_npu) @ 0750621ba7feb5676b4d5d650189bb7a70511ca0: torch_npu/profiler/__init__.py
# Written for profd's tests from that file; names follow it (plus ExportType, which MindSpeed-LLM uses), bodies are minimal.

from .experimental_config import AiCMetrics, ExportType, ProfilerLevel, _ExperimentalConfig
from .profiler import ProfilerActivity, analyse, profile, supported_activities, tensorboard_trace_handler
from .scheduler import ProfilerAction
from .scheduler import Schedule as schedule

__all__ = ["AiCMetrics", "ExportType", "ProfilerAction", "ProfilerActivity", "ProfilerLevel", "_ExperimentalConfig",
           "analyse", "profile", "schedule", "supported_activities", "tensorboard_trace_handler"]
