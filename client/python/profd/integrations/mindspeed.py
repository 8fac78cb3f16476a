# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""MindSpeed-LLM (MCore backend): profile a MindSpeed-LLM job with no
change to its code, steps numbered as MindSpeed-LLM logs its iterations.

    PROFD_MINDSPEED=1 torchrun ... pretrain_gpt.py ...     (or PROFD_AUTO=1)

Follows Ascend/MindSpeed-LLM at c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91
(on Megatron-LM core_v0.12.1, a845aa7e12b3a117e24c2352b9e3e60bad2e3a17):
mindspeed_llm/training/training.py's train() builds its profiler with
get_profiler() when is_profile_enabled(), calls prof.start() before the
loop, prof.step() at the end of every pass (after train_step, the logged
`iteration += 1`, logging, evaluation and checkpointing) and prof.stop()
after it; every entry point (pretrain, posttrain, high availability) runs
this train(). `import mindspeed_llm` applies MindSpeed's patches
(mindspeed_llm/tasks/megatron_adaptor_v2.py, FeatureAdaptor.execute(): the
features register patches with MindSpeed's MindSpeedPatchesManager, whose
apply_patches() replaces an attribute in every module only while it is
still the original object): --schedules-method dualpipev, --npu-datadump,
--smart-swap and --layerwise-disaggregated-training all patch
megatron.training.training.train_step, which train() imported. So profd
touches no name a feature patches. Once the module is imported it replaces
two module globals only, through which train() drives its profiler:

- is_profile_enabled() is true on every rank, so train() drives a profiler
  object on every rank: get_profiler() returns profd's, which wraps
  MindSpeed's own torch_npu profiler when MindSpeed's --profile selects this
  rank (its --profile-step-start/-end window keeps working as before);
- profd's prof.start() begins step args.iteration + 1; prof.step() at the
  end of a pass ends step n = args.curr_iteration + 1 (the iteration
  MindSpeed logs for the pass) and begins n + 1 unless n was the last
  (args.train_iters); prof.stop() ends a pass that left the loop early.

So a profd window `--steps S:E` captures the logged iterations S .. E-1,
the ones MindSpeed-LLM records for --profile-step-start S
--profile-step-end E, each span from one prof.step() to the next, fresh or
resumed (MindSpeed reads -1 as one iteration; profd's `S:` is until the
job ends). A profd window overlapping MindSpeed's own --profile window
meets its torch_npu profiler on the same thread: profd's capture fails
with the profiler's reason; use one or the other.

The FSDP2 backend (train_fsdp2.py) steps one torch optimizer per update:
PROFD_AUTO's optimizer steps number its updates as its global_step.

A MindSpeed-LLM whose train() does not use these names gets one log line
and no patch.
"""

import functools
import inspect
import sys

from .. import _hooks
from . import _common as C

MINDSPEED_COMMIT = "c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91"
MODULE = "mindspeed_llm.training.training"


def enabled():
    if C.off("PROFD_MINDSPEED"):
        return False
    return C.flag("PROFD_MINDSPEED") or C.flag("PROFD_AUTO")


def rank_and_size():
    """torch.distributed's rank and world size when it is initialized, else
    torchrun's RANK / WORLD_SIZE."""
    dist = getattr(sys.modules.get("torch"), "distributed", None)
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except Exception:
        pass
    return None, None


class _Step:
    """The step in progress of a loop driven by train_step calls."""

    def __init__(self, owner):
        self.owner = owner
        self.n = None

    def begin(self, n):
        if C.owner() != self.owner:
            return
        c = C.current()
        if c is None:
            rank, size = rank_and_size()
            c = C.client(rank=rank, world_size=size)
            if c is None:
                return
        self.end()
        self.n = n
        c.step_begin(n)

    def end(self):
        c = C.current()
        if self.n is not None and c is not None:
            c.step_end(self.n)
        self.n = None


_step = _Step("mindspeed")


class _NoAction:
    name = None


def _guard(fn):
    """profd's step bookkeeping never breaks training."""

    def run(*args):
        try:
            fn(*args)
        except Exception as e:
            C.say_once("mindspeed-step", "profd: MindSpeed-LLM steps off: %s: %s", type(e).__name__, e)

    return run


@_guard
def _first():
    args = _args()
    if int(args.iteration) < int(args.train_iters):
        _step.begin(int(args.iteration) + 1)


@_guard
def _next():
    args = _args()
    done = int(args.curr_iteration) + 1  # the iteration this pass logged
    _step.end()
    if done < int(args.train_iters):
        _step.begin(done + 1)


class Profiler:
    """What train() drives: profd's steps, and MindSpeed's own torch_npu
    profiler (`own`) when --profile selects this rank. start() begins the
    first iteration (args.iteration + 1), step() at the end of a pass ends
    the iteration it logged (args.curr_iteration + 1) and begins the next
    unless it was the last (args.train_iters), stop() ends a pass that left
    the loop early."""

    def __init__(self, own):
        self.own = own
        self.step_num = 0

    @property
    def current_action(self):
        return self.own.current_action if self.own is not None else _NoAction

    def start(self):
        if self.own is not None:
            self.own.start()
        _first()

    def step(self):
        _next()
        self.step_num += 1
        if self.own is not None:
            self.own.step()

    def stop(self):
        _step.end()
        if self.own is not None:
            self.own.stop()

    def __getattr__(self, name):
        own = self.__dict__.get("own")
        if own is None:
            raise AttributeError(name)
        return getattr(own, name)


def _recognised(module):
    train = getattr(module, "train", None)
    code = getattr(train, "__code__", None)
    ok = code is not None and {"is_profile_enabled", "get_profiler"} <= set(code.co_names) \
        and "prof" in code.co_varnames
    for name in ("is_profile_enabled", "get_profiler"):
        fn = getattr(module, name, None)
        try:
            ok = ok and callable(fn) and not inspect.signature(fn).parameters
        except (TypeError, ValueError):
            ok = False
    return ok


def _args():
    return sys.modules["megatron.training"].get_args()


def _patch(module):
    if not enabled():
        return
    if not _recognised(module):
        C.say_once("mindspeed", "MindSpeed-LLM: %s.train does not drive is_profile_enabled / get_profiler "
                   "as at %s: profd leaves it alone", MODULE, MINDSPEED_COMMIT[:8])
        return
    C.claim("mindspeed")
    orig_enabled, orig_get = module.is_profile_enabled, module.get_profiler

    @functools.wraps(orig_enabled)
    def is_profile_enabled():
        return True if C.owner() == "mindspeed" else orig_enabled()

    @functools.wraps(orig_get)
    def get_profiler():
        if C.owner() != "mindspeed":
            return orig_get()
        return Profiler(orig_get() if orig_enabled() else None)

    # Only these two module globals, which no MindSpeed or MindSpeed-LLM
    # feature patches: train_step, train and every other name MindSpeed's
    # patch manager replaces stay as the framework installs them.
    module.is_profile_enabled = is_profile_enabled
    module.get_profiler = get_profiler
    open_early()


def open_early():
    """Open the client now (rank from torchrun's RANK): it registers while
    the job sets up, so a window may start at the first iteration."""
    rank, size = rank_and_size()
    C.client(rank=rank, world_size=size)


def install():
    if enabled():
        _hooks.when_imported(MODULE, _patch)


C.install("mindspeed", "MindSpeed-LLM", install)
