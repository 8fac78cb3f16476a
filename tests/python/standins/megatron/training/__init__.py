# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: megatron/training/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.

from .global_vars import get_args, get_timers, set_args
from .utils import print_rank_0, print_rank_last

__all__ = ["get_args", "get_timers", "print_rank_0", "print_rank_last", "set_args"]
