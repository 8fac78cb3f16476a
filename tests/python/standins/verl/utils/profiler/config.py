# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/utils/profiler/config.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""Profiler configuration dataclasses (the fields the stand-in reads)."""

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class TorchProfilerToolConfig:
    name: str = "torch"
    contents: list = field(default_factory=list)
    discrete: bool = False
    schedule: Optional[Any] = None


@dataclass
class ProfilerConfig:
    tool: Optional[str] = None
    enable: bool = False
    all_ranks: bool = False
    ranks: list = field(default_factory=list)
    save_path: Optional[str] = None
    tool_config: Any = None
    global_tool_config: Optional[Any] = None
    relocate_results: bool = False
    finish_hook_cmd: Optional[str] = None
    finish_hook_all_ranks: bool = False
    finish_hook_ranks: list = field(default_factory=list)

    def __post_init__(self) -> None:
        assert isinstance(self.ranks, (set, list, tuple)), f"Profiler ranks must be of type list, got {type(self.ranks)}"
        assert isinstance(self.finish_hook_ranks, (set, list, tuple))
        assert self.finish_hook_cmd is None or isinstance(self.finish_hook_cmd, str)
