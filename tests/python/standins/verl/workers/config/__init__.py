# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/workers/config/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""TrainingWorkerConfig (verl/workers/config/...): what a TrainingWorker is built from."""

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class TrainingWorkerConfig:
    model_type: str = "language_model"
    model_config: Any = None
    engine_config: Any = None
    optimizer_config: Any = None
    checkpoint_config: Any = None
    profiler_config: Optional[Any] = None
    extra_context: dict = field(default_factory=dict)
    auto_select_engine_optim_fn: Any = None
