# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""A plain PyTorch data-parallel training script, with no profd in it:
torch.distributed over gloo (CPU), a small MLP under DistributedDataParallel,
SGD. Started by torchrun, or as torchrun would start it (RANK, LOCAL_RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT per process). profd's demo and tests
run it with PROFD_AUTO=1: profiled with no change to this file.

It trains until the file TRAIN_STOP_FILE exists on some rank (the ranks
agree through an all-reduce, so all stop after the same step) or
TRAIN_MAX_STEPS steps; each step also sleeps TRAIN_SLEEP_S seconds."""

import os
import time

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    stop_file = os.environ.get("TRAIN_STOP_FILE", "")
    max_steps = int(os.environ.get("TRAIN_MAX_STEPS", "100"))
    sleep_s = float(os.environ.get("TRAIN_SLEEP_S", "0.02"))
    for _ in range(max_steps):
        x = torch.randn(16, 32)
        y = torch.randn(16, 1)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        time.sleep(sleep_s)
        stop = torch.tensor([1.0 if stop_file and os.path.exists(stop_file) else 0.0])
        dist.all_reduce(stop)
        if stop.item() > 0:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
