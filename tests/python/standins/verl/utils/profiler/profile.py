# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/utils/profiler/profile.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""DistProfiler: the per-worker profiler dispatcher, and DistProfilerExtension,
which gives a worker the start_profile / stop_profile / step_profile methods
the trainer calls on every worker group (ONE_TO_ALL).

Semantics kept from verl:
- the tool comes from config.tool: "torch" -> torch_profile.Profiler; any
  other value (also a tool verl does not know, such as "profd") -> a no-op
  implementation, with no error;
- rank selection: all_ranks, else `ranks`, else rank 0 when enabled;
- start()/stop() act only when enabled and this rank is selected; start()
  sets `this_step`, stop() clears it;
- step() (one update mini-batch) reaches the implementation whenever enabled
  and selected;
- @DistProfiler.annotate(color=..., role=...) wraps a worker method: it runs
  the method directly when the worker has no `profiler`, or profiling is not
  enabled, not this step, or not this rank; otherwise through the
  implementation's annotate(message=, color=, domain=, category=, **kwargs)
  decorator (falling back to the plain method if setting that up raises).
The nsys, npu, torch_memory and precision_debugger backends are not in the
stand-in (they become the no-op implementation)."""

import functools
import logging
import os
import subprocess
from typing import Callable, Optional

import standin_trace

from .config import ProfilerConfig

logger = logging.getLogger(__name__)


def mark_start_range(message: Optional[str] = None, color: Optional[str] = None, domain: Optional[str] = None,
                     category: Optional[str] = None) -> None:
    pass


def mark_end_range(range_id: str) -> None:
    pass


def mark_annotate(message: Optional[str] = None, color: Optional[str] = None, domain: Optional[str] = None,
                  category: Optional[str] = None) -> Callable:
    def decorator(func):
        return func

    return decorator


class DistProfiler:
    def __init__(self, rank: int, config: Optional[ProfilerConfig] = None, tool_config: Optional[object] = None,
                 save_file_prefix: Optional[str] = None, **kwargs):
        if config is None:
            config = ProfilerConfig(ranks=[], enable=False, tool_config=None)
        if tool_config is None:
            tool_config = config.tool_config
        self.rank = rank
        self.config = config
        self.tool_config = tool_config
        self.save_file_prefix = save_file_prefix
        self._impl = None
        self._tool = getattr(config, "tool", None)
        self._enable = config.enable
        self._this_step = False
        self._this_rank = False
        if config.all_ranks:
            self._this_rank = True
        elif config.ranks:
            self._this_rank = rank in config.ranks
        else:
            self._this_rank = (rank == 0) if self._enable else False
        self._finish_hook_cmd = getattr(config, "finish_hook_cmd", None)
        if getattr(config, "finish_hook_all_ranks", False):
            self._finish_hook_this_rank = True
        elif getattr(config, "finish_hook_ranks", None):
            self._finish_hook_this_rank = rank in config.finish_hook_ranks
        else:
            self._finish_hook_this_rank = self._this_rank
        self._discrete = getattr(tool_config, "discrete", False) if tool_config else False
        if self._tool == "torch":
            from .torch_profile import Profiler as _Torch

            self._impl = _Torch(rank=rank, config=config, tool_config=tool_config, save_file_prefix=save_file_prefix)
        else:
            self._impl = _NoOpProfiler()

    def check_enable(self):
        return self._enable

    def check_this_rank(self):
        return self._this_rank

    def check_this_step(self):
        return self._this_step

    def is_discrete_mode(self):
        return self._discrete

    def start(self, **kwargs):
        if self.check_enable() and self.check_this_rank():
            self._this_step = True
            return getattr(self._impl, "start", lambda **_: None)(**kwargs)

    def stop(self, run_command: bool = True):
        result = None
        if self.check_enable() and self.check_this_rank():
            self._this_step = False
            result = getattr(self._impl, "stop", lambda: None)()
        if self.check_enable():
            self._run_finish_hook(run_command=run_command)
        return result

    def run_finish_hook(self, run_command: bool = True) -> None:
        if self.check_enable():
            self._run_finish_hook(run_command=run_command)

    def _run_finish_hook(self, run_command: bool = True) -> None:
        if not run_command or not self._finish_hook_cmd or not self._finish_hook_this_rank:
            return
        env = dict(os.environ, VERL_PROFILE_SAVE_PATH=str(getattr(self.config, "save_path", "") or ""),
                   VERL_PROFILE_TOOL=str(self._tool or ""), VERL_PROFILE_RANK=str(self.rank),
                   VERL_PROFILE_PID=str(os.getpid()))
        if self.save_file_prefix:
            env["VERL_PROFILE_ROLE"] = str(self.save_file_prefix)
        try:
            subprocess.run(["/bin/sh", "-c", self._finish_hook_cmd], env=env, check=False)
        except Exception as e:
            logger.warning("profiler finish hook: command failed to launch on rank %s: %s", self.rank, e)

    def step(self):
        if self.check_enable() and self.check_this_rank():
            return getattr(self._impl, "step", lambda: None)()

    @classmethod
    def annotate(cls, message: Optional[str] = None, color: Optional[str] = None, domain: Optional[str] = None,
                 category: Optional[str] = None, **kwargs_outer) -> Callable:
        def decorator(func):
            @functools.wraps(func)
            def wrapper(self_instance, *args, **kwargs_inner):
                profiler = getattr(self_instance, "profiler", None)
                if profiler is None:
                    return func(self_instance, *args, **kwargs_inner)
                if not profiler.check_enable() or not profiler.check_this_step() or not profiler.check_this_rank():
                    return func(self_instance, *args, **kwargs_inner)
                impl = profiler._impl
                if hasattr(impl, "annotate"):
                    try:
                        wrapped = impl.annotate(message=message, color=color, domain=domain, category=category,
                                                **kwargs_outer)(func)
                    except Exception:
                        wrapped = func
                    return wrapped(self_instance, *args, **kwargs_inner)
                return func(self_instance, *args, **kwargs_inner)

            return wrapper

        return decorator


def build_rollout_dist_profiler(replica_rank: int, replica_world_size: int, config: Optional[ProfilerConfig] = None,
                                tool_config: Optional[object] = None) -> "DistProfiler":
    """A rollout replica's DistProfiler: `ranks` are global GPU ranks, mapped to
    the replica owning them (rank // replica_world_size)."""
    if config is not None and not getattr(config, "all_ranks", False):
        ranks = list(getattr(config, "ranks", None) or [])
        if ranks and replica_world_size and replica_world_size > 0:
            import dataclasses

            config = dataclasses.replace(config, ranks=sorted({int(r) // replica_world_size for r in ranks}))
    return DistProfiler(rank=replica_rank, config=config, tool_config=tool_config)


class _NoOpProfiler:
    def start(self, **kwargs):
        return

    def stop(self):
        return

    def step(self):
        return


class DistProfilerExtension:
    def __init__(self, profiler: DistProfiler):
        self.profiler = profiler

    from verl.single_controller.base.decorator import Dispatch, register

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def start_profile(self, **kwargs) -> None:
        standin_trace.record("verl.worker", "start_profile", prefix=self.profiler.save_file_prefix,
                             rank=self.profiler.rank, wg=os.environ.get("WG_PREFIX"), kwargs=kwargs)
        self.profiler.start(**kwargs)

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def stop_profile(self, run_command: bool = True) -> None:
        standin_trace.record("verl.worker", "stop_profile", prefix=self.profiler.save_file_prefix,
                             rank=self.profiler.rank, wg=os.environ.get("WG_PREFIX"), run_command=run_command)
        self.profiler.stop(run_command=run_command)

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def step_profile(self) -> None:
        self.profiler.step()
