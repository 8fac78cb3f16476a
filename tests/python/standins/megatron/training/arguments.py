# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: megatron/training/arguments.py, megatron/training/config/common_config.py (ProfilingConfig)
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""The command line: the training arguments the stand-in loop reads and the
profiling group of Megatron-LM main:

  --profile                     (dest profile; "use nsys": cudaProfilerStart/Stop)
  --profile-step-start 10       --profile-step-end 12
  --use-pytorch-profiler        torch.profiler instead of the CUDA profiler API
  --pytorch-profiler-collect-shapes / -collect-callstack / -collect-chakra
  --profile-ranks [] (all ranks; core_v0.12.1: default [0], no "all" value)
  --record-shapes               emit_nvtx(record_shapes=True) with nsys
  --nvtx-ranges                 NVTX ranges on the profiled iterations
  --record-memory-history, --memory-snapshot-path
"""

import argparse


def _add_training_args(parser):
    g = parser.add_argument_group(title="training")
    g.add_argument("--train-iters", type=int, default=None)
    g.add_argument("--micro-batch-size", type=int, default=1)
    g.add_argument("--global-batch-size", type=int, default=None)
    g.add_argument("--log-interval", type=int, default=100)
    g.add_argument("--eval-interval", type=int, default=1000)
    g.add_argument("--eval-iters", type=int, default=0)
    g.add_argument("--save", type=str, default=None)
    g.add_argument("--save-interval", type=int, default=None)
    g.add_argument("--exit-interval", type=int, default=None)
    g.add_argument("--exit-duration-in-mins", type=int, default=None)
    g.add_argument("--exit-signal-handler", action="store_true")
    g.add_argument("--tensorboard-dir", type=str, default=None)
    g.add_argument("--iterations-to-skip", nargs="+", type=int, default=[])
    g.add_argument("--manual-gc", action="store_true")
    g.add_argument("--manual-gc-interval", type=int, default=0)
    g.add_argument("--seq-length", type=int, default=16)
    g.add_argument("--lr", type=float, default=0.01)
    return parser


def _add_profiling_args(parser):
    g = parser.add_argument_group(title="profiling")
    g.add_argument("--profile", action="store_true", dest="profile")
    g.add_argument("--profile-step-start", type=int, default=10)
    g.add_argument("--profile-step-end", type=int, default=12)
    g.add_argument("--use-pytorch-profiler", action="store_true", dest="use_pytorch_profiler")
    g.add_argument("--pytorch-profiler-collect-shapes", action="store_true")
    g.add_argument("--pytorch-profiler-collect-callstack", action="store_true")
    g.add_argument("--pytorch-profiler-collect-chakra", action="store_true")
    g.add_argument("--profile-ranks", nargs="*", type=int, default=[])
    g.add_argument("--record-memory-history", action="store_true")
    g.add_argument("--memory-snapshot-path", type=str, default="snapshot.pickle")
    g.add_argument("--record-shapes", action="store_true")
    g.add_argument("--nvtx-ranges", action="store_true")
    return parser


def parse_args(extra_args_provider=None, ignore_unknown_args=False):
    parser = argparse.ArgumentParser(description="Megatron-LM Arguments", allow_abbrev=False)
    _add_training_args(parser)
    _add_profiling_args(parser)
    if extra_args_provider is not None:
        parser = extra_args_provider(parser)
    if ignore_unknown_args:
        args, _ = parser.parse_known_args()
    else:
        args = parser.parse_args()
    return args


def validate_args(args, defaults={}):
    for k, v in defaults.items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
    from megatron.training.utils import get_rank_safe, get_world_size_safe

    args.rank = get_rank_safe()
    args.world_size = get_world_size_safe()
    if args.global_batch_size is None:
        args.global_batch_size = args.micro_batch_size * args.world_size
    args.iteration = 0
    args.consumed_train_samples = 0
    args.curr_iteration = 0
    args.do_train = bool(args.train_iters)
    args.do_valid = False
    return args
