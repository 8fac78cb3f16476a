# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""A plain PyTorch DDP training script with nothing of profd in it, for the
drop-in check (tests/gpu/dropin.sh): torchrun starts it, PROFD_AUTO=1 and
profd-auto.pth in a site folder do the rest. One torch.optim.SGD step per
iteration; NCCL when every rank has a GPU of its own, else gloo (ranks may
share one GPU). Usage: torchrun --nproc_per_node N ddp_plain.py STEPS"""

import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    cuda = torch.cuda.is_available()
    own_gpu = cuda and torch.cuda.device_count() >= world
    dist.init_process_group("nccl" if own_gpu else "gloo")
    dev = torch.device("cuda", rank % torch.cuda.device_count()) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(dev)
    torch.manual_seed(rank)
    width = 1024 if cuda else 128
    model = torch.nn.Sequential(torch.nn.Linear(width, 2 * width), torch.nn.ReLU(),
                                torch.nn.Linear(2 * width, width)).to(dev)
    ddp = DDP(model, device_ids=[dev.index] if cuda else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    for it in range(1, steps + 1):
        x = torch.randn(32, width, device=dev)
        loss = ddp(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        if rank == 0:
            print("ddp_plain: iteration %d loss %.4f" % (it, float(loss)), flush=True)
        time.sleep(0.3)  # the window's plan reaches the ranks between two steps
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
