# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48: mindspeed/core/memory/smart_swap/swap_megatron_adaptor.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""train_step_wrapper: smart swap's policy runs around each train_step
(the stand-in records the call)."""

from functools import wraps

import standin_trace


def train_step_wrapper(train_step):
    @wraps(train_step)
    def wrapper(*args, **kwargs):
        standin_trace.record("mindspeed", "smart_swap.train_step")
        return train_step(*args, **kwargs)

    return wrapper
