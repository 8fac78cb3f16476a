# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Where a step's time goes, with no code change (PROFD_AUTO): the time the
training thread spends in the DataLoader's next batch, the forward pass,
the backward pass, the optimizer's step and waiting for collective
communication, added to the step's sections (profd_section_add) of the
process's client.

What is measured, exactly (perf_counter_ns, on the calling thread):

- data: `_BaseDataLoaderIter.__next__` (every DataLoader's next batch);
- forward: `DistributedDataParallel.forward` and
  `FullyShardedDataParallel.forward` (the wrapped model's whole forward);
- backward: `torch.autograd.backward` (what `loss.backward()` calls);
- optimizer: the optimizer's `step` (see pytorch.py);
- comm: the calls of torch.distributed's collectives (all_reduce,
  all_gather, broadcast, barrier, reduce_scatter, all_to_all, ...; with
  async_op=True the launch) and `Work.wait()`; inside a DDP backward, the
  time from the last parameter gradient computed (a tensor hook on each
  parameter, which returns None: the gradient is untouched) to the
  backward's return, where DDP's reducer waits for its bucket all-reduces
  (they run in C++, through no Python call).

Times are exclusive: comm inside a backward or a forward is taken out of
it, so the sections of a step add up to at most the step. Nothing here
changes what torch computes; a wrapper that fails is off for good, the call
it wraps goes on.
"""

import functools
import time

from . import _common as C

_now = time.perf_counter_ns

SECTIONS = ("data", "forward", "backward", "optimizer", "comm")
DATA, FORWARD, BACKWARD, OPTIMIZER, COMM = range(5)

# Time (ns) of the measured sections completed so far, nested ones
# included: a wrapper takes the part that grew while it ran out of its own.
_nested = [0]
# When a DDP parameter's gradient was last computed (ns), 0 none yet.
_last_grad = [0]
_state = {"patched": False, "opt_t0": 0, "opt_n0": 0, "depth": 0}

COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "_all_gather_base",
    "all_gather_object",
    "all_to_all",
    "all_to_all_single",
    "broadcast",
    "broadcast_object_list",
    "barrier",
    "monitored_barrier",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "_reduce_scatter_base",
    "gather",
    "scatter",
)


def _add(section, ns):
    c = C.current()
    if c is not None and ns > 0:
        c.section_add(SECTIONS[section], ns // 1000)


def _timed(section, fn):
    """fn, its time added to `section` (less the sections nested in it)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0 = _now()
        n0 = _nested[0]
        try:
            return fn(*args, **kwargs)
        finally:
            el = _now() - t0
            try:
                _add(section, el - (_nested[0] - n0))
            except Exception as e:  # never break the call
                C.say_once("sections", "PROFD_AUTO: sections off after an error: %s: %s", type(e).__name__, e)
            _nested[0] = n0 + el

    wrapper._profd = True
    return wrapper


def _backward(fn):
    """torch.autograd.backward: its time is backward, less the DDP reducer's
    wait at its end (comm) when DDP parameters got their gradients in it."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0 = _now()
        n0 = _nested[0]
        _last_grad[0] = 0
        try:
            return fn(*args, **kwargs)
        finally:
            t1 = _now()
            el = t1 - t0
            try:
                last = _last_grad[0]
                wait = t1 - last if t0 < last <= t1 else 0
                inner = _nested[0] - n0
                _add(COMM, wait)
                _add(BACKWARD, el - inner - wait)
            except Exception as e:
                C.say_once("sections", "PROFD_AUTO: sections off after an error: %s: %s", type(e).__name__, e)
            _nested[0] = n0 + el

    wrapper._profd = True
    return wrapper


def _grad_seen(grad):
    _last_grad[0] = _now()
    return None


def _ddp_init(init):
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        try:
            for p in self.module.parameters():
                if p.requires_grad:
                    p.register_hook(_grad_seen)
        except Exception as e:  # never break the model's construction
            C.say_once("sections-ddp", "PROFD_AUTO: DDP's comm wait not measured: %s: %s", type(e).__name__, e)

    __init__._profd = True
    return __init__


def opt_begin():
    """The optimizer's step begins (pytorch.py calls it)."""
    if not _state["patched"]:
        return  # sections off (PROFD_SECTIONS=0)
    if _state["depth"] == 0:
        _state["opt_t0"] = _now()
        _state["opt_n0"] = _nested[0]
    _state["depth"] += 1


def opt_end():
    """... and ends: its time into `optimizer`, before the step ends."""
    if _state["depth"] == 0:
        return
    _state["depth"] -= 1
    if _state["depth"] == 0:
        el = _now() - _state["opt_t0"]
        n0 = _state["opt_n0"]
        _add(OPTIMIZER, el - (_nested[0] - n0))
        _nested[0] = n0 + el


def _wrap(owner, name, make):
    fn = getattr(owner, name, None)
    if fn is None or getattr(fn, "_profd", False):
        return
    setattr(owner, name, make(fn))


def patch(torch):
    """Wrap torch's entry points once (torch is being imported)."""
    if _state["patched"]:
        return
    _state["patched"] = True
    import importlib

    def mod(name):
        try:
            return importlib.import_module(name)
        except Exception:
            return None

    dl = mod("torch.utils.data.dataloader")
    if dl is not None and hasattr(dl, "_BaseDataLoaderIter"):
        _wrap(dl._BaseDataLoaderIter, "__next__", lambda f: _timed(DATA, f))
    autograd = getattr(torch, "autograd", None)
    if autograd is not None:
        _wrap(autograd, "backward", _backward)
    ddp = mod("torch.nn.parallel.distributed")
    cls = getattr(ddp, "DistributedDataParallel", None)
    if cls is not None:
        _wrap(cls, "forward", lambda f: _timed(FORWARD, f))
        _wrap(cls, "__init__", _ddp_init)
    dist = mod("torch.distributed")
    if dist is not None and getattr(dist, "is_available", lambda: False)():
        for name in COLLECTIVES:
            _wrap(dist, name, lambda f: _timed(COMM, f))
        c10d = mod("torch._C._distributed_c10d")
        work = getattr(c10d, "Work", None)
        if work is not None:
            try:
                _wrap(work, "wait", lambda f: _timed(COMM, f))
            except (TypeError, AttributeError):
                pass

    def fsdp(m):
        _wrap(getattr(m, "FullyShardedDataParallel"), "forward", lambda f: _timed(FORWARD, f))

    from .. import _hooks

    _hooks.when_imported("torch.distributed.fsdp.fully_sharded_data_parallel", fsdp)
