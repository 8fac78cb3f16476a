# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: megatron/training/global_vars.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.

import time

_GLOBAL_ARGS = None
_GLOBAL_TIMERS = None


def set_args(args):
    global _GLOBAL_ARGS
    _GLOBAL_ARGS = args


def get_args():
    return _GLOBAL_ARGS


class _Timer:
    def __init__(self):
        self._start = None
        self._elapsed = 0.0
        self._active = 0.0

    def start(self, barrier=False):
        self._start = time.perf_counter()

    def stop(self, barrier=False):
        if self._start is not None:
            d = time.perf_counter() - self._start
            self._elapsed += d
            self._active += d
            self._start = None

    def elapsed(self, reset=True, barrier=False):
        running = self._start is not None
        if running:
            self.stop()
        e = self._elapsed
        if reset:
            self._elapsed = 0.0
        if running:
            self.start()
        return e

    def active_time(self):
        return self._active


class Timers:
    def __init__(self):
        self._timers = {}

    def __call__(self, name, log_level=None):
        return self._timers.setdefault(name, _Timer())

    def log(self, names, normalizer=1.0, reset=True, barrier=False):
        pass


def get_timers():
    global _GLOBAL_TIMERS
    if _GLOBAL_TIMERS is None:
        _GLOBAL_TIMERS = Timers()
    return _GLOBAL_TIMERS
