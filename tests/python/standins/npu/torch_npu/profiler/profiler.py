# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/pytorch (torch_npu) @ 458154485924a26cd43e17e10faa19c1e01abf4b: torch_npu/profiler/profiler.py
# and torch_npu/profiler/_profiler_action_controller.py @ 255f30140f6273a9c4f81b67689274f6e2a22f6d
# Written for profd's tests from those files; names and the action transitions follow them, bodies are minimal.
"""profile: start() enters schedule(0); step() counts step_num up and moves
to schedule(step_num); stop() leaves the current action. The transitions do
what torch_npu's ProfActionController does: NONE->WARMUP initialises,
->RECORD starts the trace, RECORD_AND_SAVE->anything stops it and calls
on_trace_ready; stop() in RECORD or RECORD_AND_SAVE also saves (with a
warning), in WARMUP drops the data. There is no device trace: the stand-in
keeps the step numbers recorded, and tensorboard_trace_handler writes them to
<dir>/<worker>_<pid>_<n>_ascend_pt/standin_steps.json. Every transition is
recorded with standin_trace ("torch_npu", ...)."""

import json
import os
import socket
import warnings

import standin_trace

from .scheduler import ProfilerAction, _default_schedule_fn


class ProfilerActivity:
    CPU = "CPU"
    NPU = "NPU"


def supported_activities():
    return {ProfilerActivity.CPU, ProfilerActivity.NPU}


class _KinetoProfile:
    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None):
        self.metadata = {}
        self.activities = set(activities) if activities else supported_activities()
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.experimental_config = experimental_config

    def add_metadata_json(self, key: str, value: str):
        self.metadata[key] = json.loads(value)

    def add_metadata(self, key: str, value: str):
        self.metadata[key] = value


def tensorboard_trace_handler(dir_name: str = None, worker_name: str = None, analyse_flag: bool = True):
    state = {"n": 0}

    def handler_fn(prof_inst) -> None:
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        out = os.path.join(dir_name or ".", f"{name}_{state['n']}_ascend_pt")
        state["n"] += 1
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "standin_steps.json"), "w") as f:
            json.dump({"steps": prof_inst._recorded, "metadata": prof_inst.metadata, "analyse": analyse_flag}, f)
        standin_trace.record("torch_npu", "trace_ready", dir=out, steps=list(prof_inst._recorded))

    return handler_fn


class profile(_KinetoProfile):  # noqa: N801
    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, use_cuda=None):
        super().__init__(activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config)
        self.schedule = schedule if schedule else _default_schedule_fn
        self.record_steps = bool(schedule)
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.stopped = False
        self._tracing = False
        self._recorded = []

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    def _start_trace(self):
        self._tracing = True
        self._recorded = []
        standin_trace.record("torch_npu", "start_trace", step_num=self.step_num)

    def _stop_trace(self, save):
        if self._tracing:
            standin_trace.record("torch_npu", "stop_trace", step_num=self.step_num, save=save)
        self._tracing = False
        if save and self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit(self, prev, cur):
        A = ProfilerAction
        if cur is not None and cur in (A.RECORD, A.RECORD_AND_SAVE) and prev not in (A.RECORD, A.RECORD_AND_SAVE):
            self._start_trace()
        elif prev == A.RECORD_AND_SAVE:
            self._stop_trace(save=True)
            if cur in (A.RECORD, A.RECORD_AND_SAVE):
                self._start_trace()
        elif prev == A.RECORD and cur in (A.NONE, A.WARMUP):
            warnings.warn(f"Incorrect schedule: RECORD followed by {cur.name}", stacklevel=3)
            self._stop_trace(save=False)
        elif prev == A.RECORD and cur is None:
            warnings.warn("Incorrect schedule: Stop profiler while current state is RECORD", stacklevel=3)
            self._stop_trace(save=True)
        elif prev == A.WARMUP and cur is None:
            warnings.warn("Incorrect schedule: Stop profiler while current state is WARMUP", stacklevel=3)
        if cur in (A.RECORD, A.RECORD_AND_SAVE):
            self._recorded.append(self.step_num)

    def start(self):
        self.stopped = False
        standin_trace.record("torch_npu", "profile.start", action=self.current_action.name)
        self._transit(ProfilerAction.NONE, self.current_action)

    def stop(self):
        standin_trace.record("torch_npu", "profile.stop", action=self.current_action.name)
        self._transit(self.current_action, None)
        self.stopped = True

    def step(self):
        if self.stopped:
            warnings.warn("Profiler is stopped, step takes no effect!", stacklevel=2)
            return
        prev_action = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev_action, self.current_action)


def analyse(profiler_path: str, max_process_number: int = 1):
    standin_trace.record("torch_npu", "analyse", path=profiler_path)
