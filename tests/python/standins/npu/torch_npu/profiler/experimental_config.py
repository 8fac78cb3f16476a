# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/pytorch (torch_npu) @ 458154485924a26cd43e17e10faa19c1e01abf4b: torch_npu/profiler/experimental_config.py
# Written for profd's tests from that code; names follow it, bodies are minimal.

from enum import Enum


class ProfilerLevel(Enum):
    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class ExportType(Enum):
    Text = "text"
    Db = "db"


class AiCMetrics(Enum):
    AiCoreNone = "AiCoreNone"
    PipeUtilization = "PipeUtilization"


class _ExperimentalConfig:
    def __init__(self, profiler_level=ProfilerLevel.Level0, aic_metrics=AiCMetrics.AiCoreNone, l2_cache=False,
                 data_simplification=True, record_op_args=False, op_attr=False, gc_detect_threshold=None,
                 export_type=ExportType.Text, msprof_tx=False, **kwargs):
        self.profiler_level = profiler_level
        self.aic_metrics = aic_metrics
        self.data_simplification = data_simplification
        self.export_type = export_type
