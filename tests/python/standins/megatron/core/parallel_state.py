# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: megatron/core/parallel_state.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""Data parallelism only: every rank is its own data-parallel rank."""

from megatron.training.utils import get_world_size_safe


def get_data_parallel_world_size(with_context_parallel=False, partial_data_parallel=False):
    return get_world_size_safe()


def get_tensor_model_parallel_rank():
    return 0


def get_pipeline_model_parallel_rank():
    return 0


def model_parallel_is_initialized():
    return False
