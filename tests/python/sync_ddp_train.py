# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""A synchronous data-parallel training script with no profd in it: gloo
(CPU), a small MLP under DistributedDataParallel fed by a DataLoader with a
DistributedSampler, SGD. Started as torchrun would start it (RANK,
LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT per process).

Rank TRAIN_SLOW_RANK (none by default) spends TRAIN_SLOW_MS (a float) more
in each forward pass of its model, inside a record_function range
"injected_slowdown" (so a trace shows where): the straggler of a
synchronous job, whose peers wait for it in DDP's gradient all-reduce.
TRAIN_SLOW_FROM: its first slow step (default 1). TRAIN_HIDDEN and
TRAIN_BATCH size the model's hidden layer and the batch (256, 64). TRAIN_SLEEP_S: a pause
after each step, outside every section. Trains until TRAIN_STOP_FILE exists
on some rank (the ranks agree through an all-reduce) or TRAIN_MAX_STEPS
steps."""

import os
import time

import torch
import torch.distributed as dist


HIDDEN = int(os.environ.get("TRAIN_HIDDEN", "256"))
BATCH = int(os.environ.get("TRAIN_BATCH", "64"))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(64, HIDDEN), torch.nn.Tanh(), torch.nn.Linear(HIDDEN, 1))
        self.slow_s = 0.0

    def forward(self, x):
        if self.slow_s > 0:
            with torch.autograd.profiler.record_function("injected_slowdown"):
                time.sleep(self.slow_s)
        return self.body(x)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    data = torch.utils.data.TensorDataset(torch.randn(64 * BATCH, 64), torch.randn(64 * BATCH, 1))
    sampler = torch.utils.data.distributed.DistributedSampler(data)
    loader = torch.utils.data.DataLoader(data, batch_size=BATCH, sampler=sampler)
    stop_file = os.environ.get("TRAIN_STOP_FILE", "")
    max_steps = int(os.environ.get("TRAIN_MAX_STEPS", "100"))
    slow = rank == int(os.environ.get("TRAIN_SLOW_RANK", "-1"))
    slow_s = float(os.environ.get("TRAIN_SLOW_MS", "0")) / 1000.0
    slow_from = int(os.environ.get("TRAIN_SLOW_FROM", "1"))
    sleep_s = float(os.environ.get("TRAIN_SLEEP_S", "0"))
    step = 0
    epoch = 0
    while step < max_steps:
        sampler.set_epoch(epoch)
        epoch += 1
        for x, y in loader:
            step += 1
            model.slow_s = slow_s if slow and step >= slow_from else 0.0
            out = ddp(x)
            loss = torch.nn.functional.mse_loss(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if sleep_s:
                time.sleep(sleep_s)
            stop = torch.tensor([1.0 if stop_file and os.path.exists(stop_file) else 0.0])
            dist.all_reduce(stop)
            if stop.item() > 0 or step >= max_steps:
                step = max_steps
                break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
