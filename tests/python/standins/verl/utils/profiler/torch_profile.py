# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/utils/profiler/torch_profile.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""verl's own torch.profiler backend (global_profiler.tool: torch), kept so
that a test can run verl's profiler and profd's in one process: like verl,
continuous mode starts one process-global torch.profiler in start() (at most
one per process, _define_count) and stops it in stop(); discrete mode starts
and stops one around each annotated stage. Traces go to
<save_path>/<prefix>_<role>_step<N>_rank<R>_pid<P>_<time>.json. No
mini-batch schedule. Requires torch when enabled."""

import functools
import os
import time
from typing import Callable, Optional

from .config import ProfilerConfig
from .profile import DistProfiler


def build_trace_basename(rank, role=None, save_file_prefix=None, topology=None, profile_step=None):
    parts = []
    if save_file_prefix:
        parts.append(str(save_file_prefix))
    if role:
        parts.append(str(role))
    if profile_step is not None:
        parts.append(f"step{profile_step}")
    parts.append(f"rank{rank}")
    parts.append(f"pid{os.getpid()}")
    parts.append(time.strftime("%Y%m%d%H%M%S") + "%03d" % (int(time.time() * 1000) % 1000))
    return "_".join(parts)


def get_torch_profiler(contents, save_path, role=None, save_file_prefix=None, rank=0, profile_step=None,
                       schedule=None, name_mini_batch_window=False):
    import torch

    os.makedirs(save_path, exist_ok=True)
    base = build_trace_basename(rank=rank, role=role, save_file_prefix=save_file_prefix, profile_step=profile_step)
    state = {"count": 0}

    def _trace_handler(prof):
        idx = state["count"]
        state["count"] += 1
        suffix = f"_part{idx}" if idx else ""
        prof.export_chrome_trace(os.path.join(save_path, f"{base}{suffix}.json"))

    contents = set(contents or [])
    activities = [torch.profiler.ProfilerActivity.CPU]
    if (not contents or "cuda" in contents) and torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    return torch.profiler.profile(activities=activities, with_stack="stack" in contents,
                                  record_shapes="shapes" in contents, profile_memory="memory" in contents,
                                  on_trace_ready=_trace_handler)


class Profiler(DistProfiler):
    _define_count = 0
    _active_prof = None

    def __init__(self, rank, config: ProfilerConfig, tool_config=None, save_file_prefix=None):
        config = config or ProfilerConfig(ranks=[], enable=False)
        if not tool_config:
            assert not config.enable, "tool_config must be provided when profiler is enabled"
        self.save_file_prefix = save_file_prefix
        self.prof = None
        self.rank = rank
        self.config = config
        self.tool_config = tool_config
        self.contents = getattr(tool_config, "contents", []) if tool_config else []
        self.save_path = config.save_path
        self.discrete = getattr(tool_config, "discrete", False) if tool_config else False
        self._profile_step = None

    def check(self):
        return self.prof is not None

    def start(self, **kwargs):
        role = kwargs.get("role", None)
        self._profile_step = kwargs.get("profile_step", kwargs.get("global_step"))
        if not self.discrete and Profiler._define_count == 0:
            self.prof = get_torch_profiler(contents=self.contents, save_path=self.save_path, role=role,
                                           save_file_prefix=self.save_file_prefix, rank=self.rank,
                                           profile_step=self._profile_step)
            self.prof.start()
            Profiler._active_prof = self.prof
            Profiler._define_count += 1

    def step(self):
        if Profiler._active_prof is not None:
            Profiler._active_prof.step()

    def stop(self):
        if not self.discrete and Profiler._define_count == 1:
            self.prof.stop()
            Profiler._active_prof = None
            Profiler._define_count -= 1

    def annotate(self, message: Optional[str] = None, role: Optional[str] = None, **kwargs_outer) -> Callable:
        def decorator(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs_inner):
                import torch

                profile_name = message or role or func.__name__
                if not self.discrete:
                    with torch.profiler.record_function(profile_name):
                        return func(*args, **kwargs_inner)
                prof = get_torch_profiler(contents=self.contents, save_path=self.save_path, role=role or profile_name,
                                          save_file_prefix=self.save_file_prefix, rank=self.rank,
                                          profile_step=self._profile_step)
                prof.start()
                try:
                    with torch.profiler.record_function(profile_name):
                        return func(*args, **kwargs_inner)
                finally:
                    prof.stop()

            return wrapper

        return decorator
