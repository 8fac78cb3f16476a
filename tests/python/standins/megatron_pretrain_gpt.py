# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: pretrain_gpt.py (the launcher; module name megatron_pretrain_gpt here)
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""GPT pretraining launcher: `python3 -m megatron_pretrain_gpt --train-iters 6
--profile --profile-step-start 2 --profile-step-end 4 [--use-pytorch-profiler]`
(one process, or several with torchrun's RANK / WORLD_SIZE / MASTER_ADDR /
MASTER_PORT: torch.distributed over gloo). The model is a torch Linear on CPU
when torch imports, a counter otherwise. --standin-load-iteration N starts
as if a checkpoint at iteration N had been loaded. STANDIN_STEP_SLEEP_S
(stand-in only) makes every forward step sleep that long, so that a test
can open windows on steps a few iterations ahead."""

import os
import time
from functools import partial

from megatron.core.enums import ModelType
from megatron.training.training import pretrain


def _torch():
    try:
        import torch

        return torch
    except ImportError:
        return None


def model_provider(pre_process=True, post_process=True):
    torch = _torch()
    if torch is None:
        return None
    torch.manual_seed(0)
    return torch.nn.Linear(16, 16)


def train_valid_test_datasets_provider(train_val_test_num_samples):
    return [[i % 7] * 16 for i in range(8)], None, None


def loss_func(output_tensor):
    if hasattr(output_tensor, "pow"):
        loss = output_tensor.pow(2).mean()
        return loss, {"lm loss": loss.detach().item()}
    return output_tensor, {"lm loss": output_tensor}


def forward_step(data_iterator, model):
    sample = next(data_iterator)
    time.sleep(float(os.environ.get("STANDIN_STEP_SLEEP_S", "0") or 0))
    torch = _torch()
    if torch is None or model is None:
        return float(sum(sample)), partial(loss_func)
    return model(torch.tensor([sample], dtype=torch.float32)), partial(loss_func)


def extra_args_provider(parser):
    parser.add_argument("--standin-load-iteration", type=int, default=0)
    return parser


if __name__ == "__main__":
    pretrain(train_valid_test_datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step,
             extra_args_provider=extra_args_provider)
