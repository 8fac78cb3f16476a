# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48: mindspeed/functional/npu_datadump/npu_datadump.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""MSTT_DEBUGGER (msprobe's PrecisionDebugger in MindSpeed) and the wrapper
that starts it with the model before each train_step. The stand-in's
debugger records its calls."""

from functools import wraps

import standin_trace


class _Debugger:
    def start(self, model=None):
        standin_trace.record("mindspeed", "MSTT_DEBUGGER.start")

    def stop(self):
        standin_trace.record("mindspeed", "MSTT_DEBUGGER.stop")

    def step(self):
        standin_trace.record("mindspeed", "MSTT_DEBUGGER.step")


MSTT_DEBUGGER = _Debugger()


def dump_start_wrapper(fn):
    @wraps(fn)
    def wrapper(*args, **kwargs):
        MSTT_DEBUGGER.start(model=args[2])
        return fn(*args, **kwargs)

    return wrapper
