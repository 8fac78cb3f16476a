# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: megatron/core/optimizer/optimizer.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""MegatronOptimizer: wraps a torch optimizer; step() runs the torch
optimizer's step() once per iteration (Megatron's ChainedOptimizer, used with
several parameter groups / MoE, runs one inner torch step per chained
optimizer - not in the stand-in). Without torch, a counter."""


class _Scalar:
    def __init__(self, v):
        self.v = v

    def item(self):
        return self.v


class MegatronOptimizer:
    def __init__(self, optimizer, config=None):
        self.optimizer = optimizer
        self.config = config
        self.steps = 0
        self.param_groups = optimizer.param_groups if optimizer is not None else [{"lr": 0.01}]
        for g in self.param_groups:
            g.setdefault("is_decoupled_lr", False)

    def scale_loss(self, loss):
        return loss

    def get_loss_scale(self):
        try:
            import torch

            return torch.tensor(1.0)
        except ImportError:
            return _Scalar(1.0)

    def zero_grad(self, set_to_none=True):
        if self.optimizer is not None:
            self.optimizer.zero_grad(set_to_none=set_to_none)

    def step(self):
        """Returns (update_successful, grad_norm, num_zeros_in_grad)."""
        self.steps += 1
        if self.optimizer is not None:
            self.optimizer.step()
        return True, 0.0, None


def get_megatron_optimizer(config, model_chunks, **kwargs):
    params = []
    for m in model_chunks:
        if hasattr(m, "parameters"):
            params.extend(m.parameters())
    inner = None
    if params:
        import torch

        inner = torch.optim.SGD(params, lr=getattr(config, "lr", 0.01))
    return MegatronOptimizer(inner, config)
