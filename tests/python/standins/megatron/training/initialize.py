# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: megatron/training/initialize.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""initialize_megatron: parse arguments, then torch.distributed (gloo on CPU)
when torch is importable and WORLD_SIZE > 1 (torchrun's variables)."""

import os

from megatron.training.arguments import parse_args, validate_args
from megatron.training.global_vars import set_args


def _initialize_distributed():
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return
    try:
        import torch
    except ImportError:
        return
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(backend="gloo", rank=int(os.environ["RANK"]),
                                             world_size=int(os.environ["WORLD_SIZE"]))


def initialize_megatron(extra_args_provider=None, args_defaults={}, ignore_unknown_args=False,
                        allow_no_cuda=False, skip_mpu_initialization=False, get_embedding_ranks=None,
                        get_position_embedding_ranks=None, parsed_args=None, store=None):
    args = parsed_args if parsed_args is not None else parse_args(extra_args_provider, ignore_unknown_args)
    _initialize_distributed()
    args = validate_args(args, args_defaults)
    set_args(args)
    return None
