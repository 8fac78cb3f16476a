# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""verl's rollout engines (vLLM, SGLang) profiled by their own profilers
over a profd window, the traces gathered into the window.

verl runs the model of an agent-loop rollout in the engine's worker
processes (vLLM: distributed_executor_backend "mp", workers started by the
AsyncLLM the server builds in launch_server; SGLang: its scheduler
processes), which are no profd clients: a profiler in the server process
sees none of the generation. verl profiles them the way the engines offer
(vllm_async_server.py / async_sglang_server.py start_profile and
stop_profile): the engine's own start_profile / stop_profile, which reach
every worker; vLLM's workers write into the folder VLLM_TORCH_PROFILER_DIR
named when they started, SGLang's schedulers into the output_dir of the
call.

For every capture of a rollout server's process (tool torch or npu) this
does the same: the driver, right after the step's begin reached the
servers, calls the server's profd_engine("start") (an async method added
to the server class, run on the server's event loop like verl's own
start_profile), and profd_engine("stop") before the step's end. The
traces the engine wrote meanwhile are moved into the capture's folder,
engine/<engine>-replica<R>-rank<r>.<rest> (r: the engine worker's rank,
from the name the engine gave the file). When the engine cannot be
profiled or wrote nothing, the capture fails with the reason ("rollout
engine not captured: ..."): the window then says the generation's work is
not in it.

vLLM's folder is fixed at launch: profd sets VLLM_TORCH_PROFILER_DIR
around the server's launch_server (verl's own value when verl kept one,
else a folder of profd's); PROFD_VERL_ENGINE=0 leaves the engine alone.
"""

import atexit
import os
import re
import shutil
import tempfile

from . import _common as C
from ..backends import Backend, BackendError

VLLM_DIR = "VLLM_TORCH_PROFILER_DIR"
TOOLS = ("torch", "npu")

# vLLM 35d5cda: TensorBoard's handler with worker_name "<instance_id>-rank-<rank>"
_VLLM_TRACE = re.compile(r"^(?P<worker>.+?)\.(?P<ms>\d+)\.pt\.trace\.json(?P<gz>\.gz)?$")
_VLLM_RANK = re.compile(r"-rank-(\d+)$")
_VLLM_TABLE = re.compile(r"^profiler_out_(\d+)\.txt$")
# SGLang 034c23fa: <profile_id>-TP-<tp_rank>[-<stage>].trace.json.gz (and -memory pickles)
_SGLANG = re.compile(r"^.+?-TP-(?P<rank>\d+)(?P<rest>.*)$")


def engine_name(kind, replica, name):
    """The name a file the engine `kind` wrote as `name` gets in the
    capture's engine/ folder."""
    if kind == "vllm":
        m = _VLLM_TRACE.match(name)
        if m:
            r = _VLLM_RANK.search(m.group("worker"))
            who = "rank%s" % r.group(1) if r else m.group("worker")
            return "vllm-replica%d-%s.%s.pt.trace.json%s" % (replica, who, m.group("ms"), m.group("gz") or "")
        m = _VLLM_TABLE.match(name)
        if m:
            return "vllm-replica%d-rank%s.profiler_out.txt" % (replica, m.group(1))
    elif kind == "sglang":
        m = _SGLANG.match(name)
        if m:
            return "sglang-replica%d-rank%s%s" % (replica, m.group("rank"), m.group("rest"))
    return "%s-replica%d-%s" % (kind, replica, name)


def _files(d):
    out = set()
    for dirpath, _, names in os.walk(d):
        for n in names:
            out.add(os.path.relpath(os.path.join(dirpath, n), d))
    return out


class Engine:
    """One rollout server's engine as its process's captures drive it."""

    def __init__(self, kind, server, replica):
        self.kind = kind  # "vllm" or "sglang"
        self.server = server
        self.replica = replica
        self.dir = None  # vLLM: the profiler folder its workers got at launch
        self.cap = None  # the capture the engine records for
        self.running = False
        self.error = None  # why the capture holds no engine trace
        self.before = set()
        self.out = None  # SGLang: this capture's output_dir
        self.filed = False  # traces of the current capture moved into its folder

    # -- the capture (server process's training thread) --

    def capture_started(self, cap):
        if cap.tool not in TOOLS:
            return
        self.cap, self.error, self.filed = cap, None, False

    def capture_stopping(self, cap):
        """The reason the capture fails, or None."""
        if self.cap is not cap:
            return None
        self.cap = None
        if self.running:
            self.error = "the engine's profiler was still running when the capture stopped"
        elif self.error is None and not self.filed:
            self.error = "the engine's profiler was not run during the capture (no step relayed by verl's trainer)"
        return self.error

    def wants_start(self):
        return self.cap is not None and not self.running and self.error is None

    # -- the engine (server's event loop) --

    async def start(self):
        cap = self.cap
        if cap is None or self.running:
            return False
        try:
            if self.kind == "vllm":
                if not self.dir:
                    raise BackendError("vLLM's workers started without a profiler folder (%s was not set when "
                                       "launch_server started the engine)" % VLLM_DIR)
                engine = getattr(self.server, "engine", None)
                fn = getattr(engine, "start_profile", None)
                if fn is None:
                    raise BackendError("%s has no start_profile" % type(engine).__name__)
                self.before = _files(self.dir)
                await fn()
            else:
                tm = getattr(self.server, "tokenizer_manager", None)
                fn = getattr(tm, "start_profile", None)
                if fn is None:
                    raise BackendError("%s has no start_profile" % type(tm).__name__)
                self.out = tempfile.mkdtemp(prefix="profd-sglang-replica%d-" % self.replica)
                self.before = set()
                r = await fn(output_dir=self.out)  # SGLang's activities default: CPU and GPU
                if r is not None and getattr(r, "success", True) is False:
                    raise BackendError("start_profile: %s" % getattr(r, "message", "failed"))
        except Exception as e:
            self.error = "%s start_profile: %s" % (self.kind, e if isinstance(e, BackendError) else
                                                   "%s: %s" % (type(e).__name__, e))
            return False
        self.running = True
        return True

    async def stop(self):
        if not self.running:
            return None
        self.running = False
        cap = self.cap
        try:
            if self.kind == "vllm":
                await self.server.engine.stop_profile()
                src = self.dir
            else:
                r = await self.server.tokenizer_manager.stop_profile()
                if r is not None and getattr(r, "success", True) is False:
                    raise BackendError("stop_profile: %s" % getattr(r, "message", "failed"))
                src = self.out
        except Exception as e:
            self.error = "%s stop_profile: %s" % (self.kind, e if isinstance(e, BackendError) else
                                                  "%s: %s" % (type(e).__name__, e))
            return None
        new = sorted(_files(src) - self.before)
        if cap is None:  # the capture ended first: nothing to file the traces under
            return None
        if not new:
            self.error = "the engine wrote no trace into %s" % src
            return None
        dest = os.path.join(cap.dir, "engine")
        os.makedirs(dest, exist_ok=True)
        for rel in new:
            shutil.move(os.path.join(src, rel), os.path.join(dest, engine_name(self.kind, self.replica,
                                                                              rel.replace(os.sep, "-"))))
        if self.out:
            shutil.rmtree(self.out, ignore_errors=True)
            self.out = None
        self.filed = True
        return len(new)


class EngineBackend(Backend):
    """A server process's backend: its own (the server's CPU side) and the
    engine's state for the same capture."""

    def __init__(self, inner, engine):
        self.inner = inner
        self.engine = engine
        self.name = inner.name
        self.native = inner.native

    def delegate(self, cap):
        return self.inner.delegate(cap)

    def start(self, cap):
        self.inner.start(cap)
        self.engine.capture_started(cap)

    def step(self, cap):
        self.inner.step(cap)

    def stop(self, cap):
        reason = self.engine.capture_stopping(cap)
        self.inner.stop(cap)
        if reason:
            raise BackendError("rollout engine not captured: %s" % reason)

    def abort(self, cap):
        self.engine.capture_stopping(cap)
        self.inner.abort(cap)


def attach(client, kind, server, replica):
    """The engine of `server` (kind "vllm" / "sglang") follows the captures
    of this process's client. Returns the Engine."""
    eng = Engine(kind, server, replica)
    client._wrap_backends(lambda b: EngineBackend(b, eng))
    return eng


def wrap_launch(cls):
    """vLLMHttpServer.launch_server with VLLM_TORCH_PROFILER_DIR set while it
    starts the engine (its workers inherit it), restored after."""
    orig = cls.launch_server

    async def launch_server(self, *args, **kwargs):
        eng = getattr(self, "_profd_engine", None)
        if eng is None or C.off("PROFD_VERL_ENGINE"):
            return await orig(self, *args, **kwargs)
        kept = os.environ.get(VLLM_DIR)
        d = kept or getattr(self, "server_profiler_dir", None)
        if not d:  # profd's own: removed when the process exits
            d = tempfile.mkdtemp(prefix="profd-vllm-replica%d-" % eng.replica)
            atexit.register(shutil.rmtree, d, True)
        os.makedirs(d, exist_ok=True)
        eng.dir = d
        os.environ[VLLM_DIR] = d
        try:
            return await orig(self, *args, **kwargs)
        finally:
            if kept is None:
                os.environ.pop(VLLM_DIR, None)

    launch_server.__wrapped__ = orig
    launch_server.__name__ = orig.__name__
    cls.launch_server = launch_server
