# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Megatron-LM: profile a Megatron-LM job with no change to its code, steps
numbered as Megatron-LM logs its iterations.

    PROFD_MEGATRON=1 torchrun ... pretrain_gpt.py ...      (or PROFD_AUTO=1)

Follows NVIDIA/Megatron-LM at d98e8a64ddf34856e74b24714e3bedb2f5a39553
(core_v0.12.1, a845aa7e12b3a117e24c2352b9e3e60bad2e3a17, is the same here):
megatron/training/training.py's train() sets args.curr_iteration to the
iterations done so far and calls the module global train_step() once per
pass. The integration replaces that global and train(): step n begins at
each train_step call, n = args.curr_iteration + 1 (the iteration Megatron
logs for the pass), and ends at the next call (so the step covers the
logging, evaluation and checkpointing of its pass, like Megatron's own
torch-profiler span) or when train() returns.

Megatron's own --profile (torch.profiler with --use-pytorch-profiler, or
cudaProfilerStart/Stop for nsys) is left as it is: with the CUDA profiler
API it records logged iterations S+1 .. E for --profile-step-start S
--profile-step-end E, with the torch profiler S .. E-1 (on a fresh run);
a profd window `--steps S:E` records S .. E-1. Under nsys, profd's `nsys`
tool opens the capture range at profd's window instead
(`nsys profile --capture-range=cudaProfilerApi`; leave --profile off).

Under MindSpeed (MindSpeed-LLM, or Megatron with `import
mindspeed.megatron_adaptor`) this integration stays off: MindSpeed's patch
manager replaces megatron.training.training.train_step and train (and the
copies other modules imported) only where they are still Megatron's own
objects, so profd must not rebind them first. It is off when
mindspeed.patch_utils is already imported when megatron.training.training
is (MindSpeed's adaptors import it first); MindSpeed-LLM's steps then come
from the MindSpeed integration, Megatron + MindSpeed's from PROFD_AUTO's
optimizer steps.
"""

import functools
import logging
import sys

from .. import _hooks
from . import _common as C
from .mindspeed import _Step, open_early

MEGATRON_COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
MODULE = "megatron.training.training"

_step = _Step("megatron")


def enabled():
    if C.off("PROFD_MEGATRON"):
        return False
    return C.flag("PROFD_MEGATRON") or C.flag("PROFD_AUTO")


def _patch(module):
    if not enabled():
        return
    train, train_step = getattr(module, "train", None), getattr(module, "train_step", None)
    code = getattr(train, "__code__", None)
    if code is None or "train_step" not in code.co_names or not callable(train_step):
        C.say_once("megatron", "Megatron-LM: %s.train does not call train_step as at %s: profd leaves it alone",
                   MODULE, MEGATRON_COMMIT[:8])
        return
    if "mindspeed.patch_utils" in sys.modules:
        C.say_once("megatron-mindspeed", "Megatron-LM: MindSpeed patches this Megatron: profd's Megatron "
                   "integration stays off (MindSpeed's patches kept)", level=logging.INFO)
        return
    C.claim("megatron")
    get_args = getattr(sys.modules.get("megatron.training.global_vars"), "get_args", None)

    @functools.wraps(train_step)
    def train_step_(*args, **kwargs):
        if C.owner() == "megatron":
            try:
                it = kwargs.get("iteration")
                if it is None:
                    it = (get_args or sys.modules["megatron.training"].get_args)().curr_iteration
                _step.begin(int(it) + 1)
            except Exception as e:  # never break training
                C.say_once("megatron-step", "profd: Megatron-LM steps off: %s: %s", type(e).__name__, e)
        return train_step(*args, **kwargs)

    @functools.wraps(train)
    def train_(*args, **kwargs):
        try:
            return train(*args, **kwargs)
        finally:
            if C.owner() == "megatron":
                _step.end()

    module.train_step = train_step_
    module.train = train_
    open_early()


def install():
    if enabled():
        _hooks.when_imported(MODULE, _patch)


C.install("megatron", "Megatron-LM", install)
