# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: megatron/training/utils.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""print_rank_0 / print_rank_last, and the rank helpers: Megatron calls
torch.distributed.get_rank() (always initialized there); the stand-in's
helpers fall back to RANK / WORLD_SIZE when torch.distributed is absent or not
initialized (torch is optional for the stand-in)."""

import os
import sys


def _dist():
    torch = sys.modules.get("torch")
    if torch is not None and torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed
    return None


def get_rank_safe():
    d = _dist()
    return d.get_rank() if d else int(os.environ.get("RANK", "0"))


def get_world_size_safe():
    d = _dist()
    return d.get_world_size() if d else int(os.environ.get("WORLD_SIZE", "1"))


def is_last_rank():
    return get_rank_safe() == get_world_size_safe() - 1


def print_rank_0(message):
    if get_rank_safe() == 0:
        print(message, flush=True)


def print_rank_last(message):
    if is_last_rank():
        print(message, flush=True)
