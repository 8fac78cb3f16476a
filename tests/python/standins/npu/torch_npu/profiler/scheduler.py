# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/pytorch (torch_npu) @ 458154485924a26cd43e17e10faa19c1e01abf4b: torch_npu/profiler/scheduler.py
# Written for profd's tests from that file; semantics follow it.
"""Schedule: skip `skip_first` steps, then cycles of `wait` (NONE), `warmup`
(WARMUP) and `active` (RECORD, the last one RECORD_AND_SAVE), `repeat`
cycles (0 = forever). Invalid values are reset with a warning as torch_npu
does: wait/warmup/repeat/skip_first < 0 -> 0, active <= 0 -> 1 (so a
negative skip_first, which MindSpeed-LLM computes when profile_step_start is
the first iteration, counts as 0)."""

import warnings
from enum import Enum


class ProfilerAction(Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class Schedule:
    def __init__(self, wait: int, active: int, warmup: int = 0, repeat: int = 0, skip_first: int = 0) -> None:
        self.wait = wait
        self.active = active
        self.warmup = warmup
        self.repeat = repeat
        self.skip_first = skip_first
        self._check_params()

    def __call__(self, step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError("Invalid parameter step, which must be not less than 0.")
        if step < self.skip_first:
            return ProfilerAction.NONE
        step -= self.skip_first
        num_steps = self.wait + self.warmup + self.active
        if self.repeat > 0 and step / num_steps >= self.repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < self.wait:
            return ProfilerAction.NONE
        if mod_step < self.wait + self.warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    def _check_params(self):
        for name in ("wait", "warmup", "repeat", "skip_first"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 0:
                warnings.warn(f"Invalid parameter {name}, reset it to 0.", stacklevel=3)
                setattr(self, name, 0)
        if not isinstance(self.active, int) or self.active <= 0:
            warnings.warn("Invalid parameter active, reset it to 1.", stacklevel=3)
            self.active = 1


def _default_schedule_fn(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD
