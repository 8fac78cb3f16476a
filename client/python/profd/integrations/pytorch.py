# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""PROFD_AUTO=1: any PyTorch program, no code change. A training step ends
at each optimizer step.

Loaded by the `profd-auto.pth` file when PROFD_AUTO is set; it waits for
`import torch` and then:

- opens the process's client when the first torch.optim.Optimizer is
  constructed (torchrun's agent, DataLoader workers and other processes
  that import torch but never build an optimizer stay out), with the rank
  from torchrun's RANK / LOCAL_RANK / WORLD_SIZE and the rest from PROFD_*,
  and begins step 1 there;
- after every step of the counted optimizer, ends step n and begins n+1,
  outside torch's own "Optimizer.step#<class>.step" record_function range:
  torch wraps each optimizer class's `step` once, when its first object is
  built (torch/optim/optimizer.py, pytorch/pytorch@002d2f0b:
  _patch_step_function / profile_hook_step, whose range also holds the
  global step pre- and post-hooks, so a boundary taken in
  register_optimizer_step_post_hook would open and close the window inside
  that range); profd wraps that hooked `step` once more, after torch, and
  marks it `hooked` so torch never wraps it again. The window's profiler
  so starts and stops between two optimizer steps, never inside one (the
  same on torch 1.x, whose _hook_for_profile wraps `step` alike).

The counted optimizer (PROFD_AUTO_OPTIMIZER): `first` (default) the first
optimizer object that steps; a class name (`Adam`, `SGD`, a subclass) the
first optimizer of that class or a subclass; `any` every optimizer step of
every optimizer. Steps count optimizer updates: with gradient accumulation a
step is one update (its micro-batches inside it); an update skipped by a
GradScaler (inf/NaN) is no step; with several optimizers per iteration
(GANs, separate parameter groups) `first` counts the one that steps first.

Inside a framework with an integration of its own (verl, MindSpeed-LLM,
Megatron-LM) this one yields: the framework's numbering wins.
"""

import functools
import os
import weakref

from .. import _hooks
from . import _common as C
from . import sections

_state = {"step": 0, "counted": None, "patched": False}


def _choice():
    return os.environ.get("PROFD_AUTO_OPTIMIZER", "first").strip() or "first"


def _counts(opt):
    choice = _choice()
    if choice == "any":
        return True
    ref = _state["counted"]
    if ref is not None:
        return ref() is opt
    if choice != "first" and choice not in (k.__name__ for k in type(opt).__mro__):
        return False
    _state["counted"] = weakref.ref(opt)
    return True


def _on_new(opt):
    """An optimizer was built: the process's client opens, step 1 begins."""
    if C.owner() not in (None, "pytorch") or not C.claim("pytorch"):
        return
    if _state["step"] == 0:
        c = C.client()
        if c is None:
            return
        _state["step"] = 1
        c.step_begin(1)


def _on_step(opt, *args):
    try:
        sections.opt_end()
        if C.owner() != "pytorch" or _state["step"] == 0 or not _counts(opt):
            return
        c = C.current()
        if c is None:
            return
        n = _state["step"]
        c.step_end(n)
        _state["step"] = n + 1
        c.step_begin(n + 1)
    except Exception as e:  # never break the optimizer step
        C.say_once("torch-step", "PROFD_AUTO: off after an error: %s: %s", type(e).__name__, e)
        _state["step"] = 0


def _wrap_step(cls):
    """Wrap cls.step once, outside torch's profile hook (already applied by
    Optimizer.__init__, which ran before)."""
    inner = cls.step
    if getattr(inner, "_profd", False):
        return

    @functools.wraps(inner)
    def step(self, *args, **kwargs):
        sections.opt_begin()
        try:
            out = inner(self, *args, **kwargs)
        except BaseException:
            sections.opt_end()
            raise
        _on_step(self)
        return out

    step._profd = True
    step.hooked = True  # torch's _hook_for_profile: do not wrap again
    cls.step = step


def _patch(torch):
    optim = getattr(torch, "optim", None)
    opt_cls = getattr(optim, "Optimizer", None)
    if opt_cls is None or not callable(getattr(opt_cls, "__init__", None)):
        C.say_once("torch", "PROFD_AUTO: torch %s has no torch.optim.Optimizer: off", getattr(torch, "__version__", "?"))
        return
    if _state["patched"]:
        return
    _state["patched"] = True
    if not C.off("PROFD_SECTIONS"):
        try:
            sections.patch(torch)
        except Exception as e:  # the steps go on without their sections
            C.say_once("sections", "PROFD_AUTO: sections off: %s: %s", type(e).__name__, e)
    orig_init = opt_cls.__init__

    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        try:
            _wrap_step(type(self))
            _on_new(self)
        except Exception as e:  # never break the model's construction
            C.say_once("torch-init", "PROFD_AUTO: off after an error: %s: %s", type(e).__name__, e)

    opt_cls.__init__ = __init__


def install():
    """Wait for `import torch` (never imports it)."""
    _hooks.when_imported("torch", _patch)
