# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/pytorch (torch_npu) @ 458154485924a26cd43e17e10faa19c1e01abf4b: torch_npu/__init__.py
# Written for profd's tests from that code; only torch_npu.profiler, with minimal bodies.
"""torch_npu stand-in: just `torch_npu.profiler`, enough for MindSpeed-LLM's
get_profiler() and ProfilerManager to run on a machine without an NPU. It
lives in its own folder (tests/python/standins/npu) so that it is on the path
only where a test puts it there."""

from . import profiler

__all__ = ["profiler"]
