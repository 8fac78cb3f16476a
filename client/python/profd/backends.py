# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Profiler backends run by the Python client.

A backend is called on the training thread when a capture starts, on every
sub-step while it records (native-schedule backends only) and when it stops:

  start(capture)  begin recording into capture.dir
  step(capture)   one sub-step completed (native backends: torch, npu)
  stop(capture)   finish; every file below capture.dir complete
  abort(capture)  after a failure: release what start() took (no more calls
                  follow for that capture)

Native backends walk the window's sub-step schedule themselves (the
profiler's own schedule), so start/stop bracket a whole phase occurrence;
the others get start/stop around every recorded span, computed by libprofd.

Anything a backend raises fails that capture only: the manifest shows
status "failed" with the reason, the "profd" logger says it once, and the
training loop never sees the exception. BackendError carries a reason meant
for the manifest as it is.
"""

import gzip
import importlib
import inspect
import json
import logging
import os
import pickle
import shutil
import sys

from . import markers as M
from . import settings as S

log = logging.getLogger("profd")


class BackendError(Exception):
    """A capture cannot be made; str(e) is the reason for the manifest."""


class Backend:
    name = "backend"
    native = False

    def start(self, capture):
        raise NotImplementedError

    def step(self, capture):
        pass

    def stop(self, capture):
        raise NotImplementedError

    def abort(self, capture):
        pass

    def delegate(self, capture):
        """A libprofd C backend table to hand this capture to, or None."""
        return None


def _import(module, tool):
    try:
        return importlib.import_module(module)
    except Exception as e:  # ImportError, or a broken install raising anything
        raise BackendError("%s: %s is not importable: %s: %s" % (tool, module, type(e).__name__, e)) from None


def _member(enum, name, tool, what):
    try:
        return getattr(enum, name)
    except AttributeError:
        raise BackendError("%s: this version has no %s.%s" % (tool, what, name)) from None


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_atomic(path, write):
    """write(tmp) fills `path`.part, which is renamed to `path` when complete;
    a failure leaves neither."""
    tmp = path + ".part"
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _gzip_file(src, dst):
    with open(src, "rb") as fi, gzip.open(dst, "wb", compresslevel=6) as fo:
        shutil.copyfileobj(fi, fo, 1 << 20)


def export_chrome_trace(prof, path, gz):
    """A profiler's Chrome trace into `path` (gzip-compressed when gz), as
    .part files renamed when complete."""
    if not gz:
        write_atomic(path, prof.export_chrome_trace)
        return
    raw = path[: -len(".gz")] + ".part"
    try:
        prof.export_chrome_trace(raw)
        write_atomic(path, lambda tmp: _gzip_file(raw, tmp))
    finally:
        _unlink(raw)


# ---- torch.profiler ----


class _LiveProfiler(Backend):
    """A native backend with one live profiler per capture folder:
    self._live[dir] = (profiler, what else the backend keeps)."""

    native = True

    def __init__(self):
        self._live = {}

    def abort(self, cap):
        live = self._live.pop(cap.dir, None)
        if live is not None:
            try:
                live[0].stop()
            except Exception:
                pass
            self._discard(live)

    def _discard(self, live):
        """After an abort's stop: drop what the capture wrote so far."""


class _TorchRun:
    """The output side of one torch.profiler run: one trace per recorded
    schedule cycle, or one at stop, each exported raw and finished at stop
    with the step and phase markers (markers.py) under TensorBoard's name."""

    def __init__(self, cap, gz, scheduled, torch):
        self.cap = cap
        self.gz = gz
        self.scheduled = scheduled
        self.torch = torch
        self.cycles = 0
        self.raws = []  # (raw path, monotonic us of its profd::sync)
        self.sync_mono = None  # of the cycle recording now

    def raw_path(self):
        name = ".profd-p%d-c%d.json.part" % (self.cap.part, self.cycles)
        self.cycles += 1
        return os.path.join(self.cap.dir, name)

    def on_trace_ready(self, prof):
        path = self.raw_path()
        prof.export_chrome_trace(path)
        self.raws.append((path, self.sync_mono))
        self.sync_mono = None

    def export_final(self, prof):
        path = self.raw_path()
        prof.export_chrome_trace(path)
        self.raws.append((path, self.sync_mono))

    def finish(self):
        """Every trace under its name, with the markers of the span."""
        doc = M.read_markers(self.cap)
        worker = M.worker_name(self.cap, doc)
        complete = doc is not None
        dist = M.dist_info(self.torch)
        while self.raws:
            raw, mono = self.raws.pop(0)
            final = M.trace_file(self.cap.dir, worker, self.gz)
            complete &= M.finish_trace(raw, final, self.gz, doc, mono, rename_steps=self.scheduled, dist=dist)
        if complete:
            _unlink(M.markers_path(self.cap))  # in every trace: no sidecar needed

    def discard(self):
        for raw, _ in self.raws:
            _unlink(raw)
        self.raws = []


class TorchBackend(_LiveProfiler):
    """torch.profiler.profile with the window's contents and schedule; Chrome
    traces <worker>.<ms>.pt.trace.json[.gz] in the capture folder (one per
    schedule cycle), with ProfilerStep#N (TrainingStep#N in a scheduled
    trace, where torch's own ProfilerStep#k count sub-steps) and role.phase
    ranges from libprofd's markers."""

    name = "torch"

    def start(self, cap):
        torch = _import("torch", self.name)
        P = torch.profiler
        args = S.torch_profile_args(cap.settings, torch.cuda.is_available())
        gz = S.flag(cap.settings, "gzip", False)
        kw = dict(args)
        kw["activities"] = [_member(P.ProfilerActivity, a, self.name, "ProfilerActivity") for a in args["activities"]]
        sched = S.schedule_args(cap.schedule) if cap.discrete else None
        run = _TorchRun(cap, gz, sched is not None, torch)
        if sched is not None:
            kw["schedule"] = P.schedule(**sched)
            kw["on_trace_ready"] = run.on_trace_ready
        prof = P.profile(**kw)
        prof.start()
        if sched is None:
            run.sync_mono = M.sync(torch)
        self._live[cap.dir] = (prof, run)

    def step(self, cap):
        prof, run = self._live[cap.dir]
        if run.sync_mono is None and _recording(prof):
            run.sync_mono = M.sync(run.torch)  # the cycle recording now
        prof.step()

    def stop(self, cap):
        prof, run = self._live.pop(cap.dir)
        try:
            prof.stop()  # a scheduled run saves a cycle it was recording
            if not run.scheduled:
                run.export_final(prof)
            run.finish()
        except BaseException:
            run.discard()
            raise

    def _discard(self, live):
        live[1].discard()


def _recording(prof):
    """Is a scheduled torch.profiler recording this step?"""
    action = getattr(prof, "current_action", None)
    name = getattr(action, "name", "")
    return name in ("RECORD", "RECORD_AND_SAVE")


# ---- torch_npu.profiler ----

ANALYSIS_MARKER = "analysis_pending.json"


def npu_profile_kwargs(torch_npu, args, out_dir, schedule, worker=None):
    """torch_npu.profiler.profile() keyword arguments from
    settings.npu_profile_args() output, resolved against the torch_npu module
    given (a real one, or a stand-in in tests)."""
    P = torch_npu.profiler
    exp = dict(args["experimental"])
    exp["profiler_level"] = _member(P.ProfilerLevel, exp["profiler_level"], "npu", "ProfilerLevel")
    if "export_type" in exp:
        et = exp["export_type"]
        if isinstance(et, list):
            exp["export_type"] = [_member(P.ExportType, n, "npu", "ExportType") for n in et]
        else:
            exp["export_type"] = _member(P.ExportType, et, "npu", "ExportType")
    handler_params = inspect.signature(P.tensorboard_trace_handler).parameters
    hkw = {}
    if worker is not None and "worker_name" in handler_params:
        hkw["worker_name"] = worker  # its *_ascend_pt folders name rank and role
    if "analyse_flag" in handler_params:
        handler = P.tensorboard_trace_handler(out_dir, analyse_flag=args["analyse"], **hkw)
    elif not args["analyse"]:
        raise BackendError("npu: this torch_npu cannot turn analysis off (no analyse_flag)")
    else:
        handler = P.tensorboard_trace_handler(out_dir, **hkw)
    kw = {
        "activities": [_member(P.ProfilerActivity, a, "npu", "ProfilerActivity") for a in args["activities"]],
        "record_shapes": args["record_shapes"],
        "profile_memory": args["profile_memory"],
        "with_stack": args["with_stack"],
        "with_modules": args["with_modules"],
        "experimental_config": P._ExperimentalConfig(**exp),
        "on_trace_ready": handler,
    }
    if schedule is not None:
        kw["schedule"] = P.schedule(**schedule)
    return kw


def write_analysis_marker(out_dir):
    """analysis_pending.json: the capture holds raw data to be parsed offline."""
    doc = {
        "tool": "npu",
        "analysis": "pending",
        "message": "collected with analysis off: run the offline analysis on this folder "
        "before opening it in MindStudio Insight",
        "profiler_path": ".",
        "command": "python3 -c \"import torch_npu; torch_npu.profiler.profiler.analyse("
        "profiler_path='<the folder of this file>')\"",
    }
    write_atomic(
        os.path.join(out_dir, ANALYSIS_MARKER),
        lambda tmp: _write_text(tmp, json.dumps(doc, indent=2) + "\n"),
    )


def _write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


class NpuBackend(_LiveProfiler):
    """torch_npu.profiler.profile: level, export type, contents, schedule;
    output through tensorboard_trace_handler into the capture folder."""

    name = "npu"

    def start(self, cap):
        torch_npu = _import("torch_npu", self.name)
        args = S.npu_profile_args(cap.settings)
        sched = S.schedule_args(cap.schedule) if cap.discrete else None
        worker = M.worker_name(cap)
        prof = torch_npu.profiler.profile(**npu_profile_kwargs(torch_npu, args, cap.dir, sched, worker))
        prof.start()
        self._live[cap.dir] = (prof, args["analyse"])

    def step(self, cap):
        self._live[cap.dir][0].step()

    def stop(self, cap):
        prof, analyse = self._live.pop(cap.dir)
        prof.stop()
        if not analyse:
            write_analysis_marker(cap.dir)


# ---- CUDA memory history ----


class TorchMemoryBackend(Backend):
    """torch.cuda.memory._record_memory_history over each recorded span, then
    _snapshot() pickled into memory_snapshot-p<part>.pickle (open it with
    https://pytorch.org/memory_viz)."""

    name = "torch_memory"

    def __init__(self):
        self._live = {}

    def start(self, cap):
        torch = _import("torch", self.name)
        if not torch.cuda.is_available():
            raise BackendError(
                "torch_memory: CUDA is not available (torch.cuda.is_available() is False); "
                "the memory history records the CUDA caching allocator"
            )
        fn = torch.cuda.memory._record_memory_history
        start_kw, stop_kw = S.memory_history_args(cap.settings, inspect.signature(fn).parameters)
        fn(**start_kw)
        self._live[cap.dir] = stop_kw

    def stop(self, cap):
        stop_kw = self._live.pop(cap.dir)
        torch = sys.modules["torch"]
        try:
            snapshot = torch.cuda.memory._snapshot()
            path = os.path.join(cap.dir, "memory_snapshot-p%d.pickle" % cap.part)
            write_atomic(path, lambda tmp: _pickle(tmp, snapshot))
        finally:
            torch.cuda.memory._record_memory_history(**stop_kw)

    def abort(self, cap):
        stop_kw = self._live.pop(cap.dir, None)
        if stop_kw is not None:
            try:
                sys.modules["torch"].cuda.memory._record_memory_history(**stop_kw)
            except Exception:
                pass


def _pickle(path, obj):
    with open(path, "wb") as f:
        pickle.dump(obj, f)


# ---- CUDA profiler range (nsys --capture-range=cudaProfilerApi) ----


class CudaBackend(Backend):
    """cudaProfilerStart/Stop around every recorded span, for
        nsys profile --capture-range=cudaProfilerApi --capture-range-end=repeat
    In a process that imported torch, through torch.cuda.profiler (the CUDA
    runtime torch itself uses, whatever its file name); otherwise through
    libprofd's C `cuda` backend, which finds the runtime with dlopen. Writes
    no file: nsys writes the report."""

    name = "cuda"

    def __init__(self, c_table):
        self._c_table = c_table

    def delegate(self, cap):
        return self._c_table if "torch" not in sys.modules else None

    def start(self, cap):
        torch = sys.modules["torch"]
        if not torch.cuda.is_available():
            raise BackendError("cuda: CUDA is not available in this process (torch.cuda.is_available() is False)")
        torch.cuda.profiler.start()

    def stop(self, cap):
        sys.modules["torch"].cuda.profiler.stop()


# ---- user objects and refusals ----


class ObjectBackend(Backend):
    """Any object with start(capture) and stop(capture); with a step(capture)
    method too it walks the schedule itself (native)."""

    def __init__(self, obj):
        for m in ("start", "stop"):
            if not callable(getattr(obj, m, None)):
                raise TypeError(
                    "a profd backend needs start(capture) and stop(capture) methods; %r has no %s()" % (obj, m)
                )
        self.obj = obj
        name = getattr(obj, "name", None)
        self.name = name if isinstance(name, str) and name else type(obj).__name__
        self.native = callable(getattr(obj, "step", None))

    def start(self, cap):
        self.obj.start(cap)

    def step(self, cap):
        self.obj.step(cap)

    def stop(self, cap):
        self.obj.stop(cap)


class Refuse(Backend):
    """Fails every capture with a fixed reason."""

    def __init__(self, name, reason):
        self.name = name
        self.reason = reason

    def start(self, cap):
        raise BackendError(self.reason)

    def stop(self, cap):
        pass


EXEC_DISABLED = (
    "exec: running commands is off in this worker; enable it with "
    "profd.Client(..., allow_exec=True) or PROFD_ALLOW_EXEC=1"
)
