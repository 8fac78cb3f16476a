# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/utils/profiler/performance.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""Timers used by the trainer loop."""

import time
from contextlib import contextmanager


@contextmanager
def simple_timer(name, timing_raw):
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timing_raw[name] = timing_raw.get(name, 0.0) + time.perf_counter() - t0


@contextmanager
def marked_timer(name, timing_raw, color=None, domain=None, category=None):
    with simple_timer(name, timing_raw):
        yield


def log_gpu_memory_usage(head, logger=None, level=None, rank=0):
    return None
