# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""profd.Client: a training worker's handle on profd.

Never raises into the training loop because of profd: without libprofd or a
daemon every call is a cheap no-op, invalid arguments are logged once, and a
failing profiler fails its capture (status "failed" with the reason in the
manifest), not the step.
"""

import atexit
import collections
import ctypes
import logging
import os
import re
import weakref

from . import _native as N
from .backends import (
    EXEC_DISABLED,
    Backend,
    BackendError,
    CudaBackend,
    NpuBackend,
    ObjectBackend,
    Refuse,
    TorchBackend,
    TorchMemoryBackend,
)
from .capture import Capture
from .settings import SettingsError

log = logging.getLogger("profd")

Stats = collections.namedtuple(
    "Stats", "connected client_id plan_gen windows captures events_sent events_dropped reconnects"
)
_NO_STATS = Stats(False, 0, 0, 0, 0, 0, 0, 0)

BUILTIN_BACKENDS = ("torch", "npu", "torch_memory", "cuda")
_PHASE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_warned_missing = False

# A KeyboardInterrupt that arrived while a backend ran inside a libprofd
# call: it cannot cross the C frames, so the capture fails and the interrupt
# is raised again when the call returns to Python (_reraise).
_interrupted = False


def _reraise():
    global _interrupted
    _interrupted = False
    raise KeyboardInterrupt


def _noop(*args):
    return None


def _address(fn):
    return ctypes.cast(fn, ctypes.c_void_p).value


def _zero(*args):
    return 0


# ---- scopes: reused objects, no allocation per step ----


def _step_mark(client, h, fn, n):
    """Step n's begin or end (fn of handle h); a step that is no integer is
    the client's to judge (_bad_step)."""
    try:
        fn(h, n)
    except Exception:
        client._bad_step(fn, n)
    if _interrupted:
        _reraise()


class _StepScope:
    __slots__ = ("_begin", "_end", "_h", "_client", "step")

    def __init__(self, client, begin, end, h):
        self._client = client
        self._begin = begin
        self._end = end
        self._h = h
        self.step = 0

    def __enter__(self):
        _step_mark(self._client, self._h, self._begin, self.step)
        return self

    def __exit__(self, exc_type, exc, tb):
        _step_mark(self._client, self._h, self._end, self.step)
        return False

    def _disable(self):
        self._begin = self._end = _noop
        self._h = None


class _PhaseScope:
    __slots__ = ("_begin", "_end", "_h", "_name")

    def __init__(self, begin, end, h, name):
        self._begin = begin
        self._end = end
        self._h = h
        self._name = name

    def __enter__(self):
        self._begin(self._h, self._name)
        if _interrupted:
            _reraise()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._end(self._h, None)
        if _interrupted:
            _reraise()
        return False

    def _disable(self):
        self._begin = self._end = _noop
        self._h = None


class _RolePhaseScope(_PhaseScope):
    """A phase of one of the process's roles (profd_phase_begin_role)."""

    __slots__ = ("_role",)

    def __init__(self, begin, end, h, name, role):
        _PhaseScope.__init__(self, begin, end, h, name)
        self._role = role

    def __enter__(self):
        self._begin(self._h, self._role, self._name)
        if _interrupted:
            _reraise()
        return self


SECTIONS = ("data", "forward", "backward", "optimizer", "comm")
_SECTION_INDEX = {n: i for i, n in enumerate(SECTIONS)}


class _SectionScope:
    """A section of the current step (profd_section_begin/end)."""

    __slots__ = ("_c", "_i")

    def __init__(self, client, i):
        self._c, self._i = client, i

    def __enter__(self):
        h = self._c._h  # None once the client is closed
        if h is not None:
            self._c._lib.section_begin(h, self._i)
        return self

    def __exit__(self, exc_type, exc, tb):
        h = self._c._h
        if h is not None:
            self._c._lib.section_end(h, self._i)
        return False


class _NullScope:
    __slots__ = ("step",)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return False


_NULL = _NullScope()


# ---- Python backends as libprofd backend tables ----


def _write_reason(buf, size, text):
    if not buf or size < 1:
        return
    data = text.encode("utf-8", "replace")[: size - 1]
    data = data.decode("utf-8", "ignore").encode("utf-8") + b"\0"
    ctypes.memmove(buf, data, len(data))


class _CallState:
    """What a backend callback had reached when it raised."""

    __slots__ = ("cap", "key")

    def __init__(self):
        self.cap = None
        self.key = None


class _Table:
    """One profd_backend_t whose callbacks run a Python backend. Keeps the
    Capture of each capture between its start and stop, keyed by folder."""

    def __init__(self, name, backend):
        self.backend = backend
        self.caps = {}
        self.delegated = {}
        self._fns = tuple(N.BACKEND_FN(self._guarded(what, fn))
                          for what, fn in (("start", self._start), ("stop", self._stop),
                                           ("step", self._substep)))
        self.struct = N.Backend(
            name.encode(),
            N.PROFD_BACKEND_NATIVE_SCHEDULE if backend.native else 0,
            *self._fns,
        )

    def _guarded(self, what, fn):
        """fn as a backend callback: whatever it raises fails the capture
        (_fail) with the capture and folder fn had reached (its `st`)."""

        def call(cptr, user, reason, size):
            st = _CallState()
            try:
                return fn(st, cptr, reason, size)
            except BaseException as e:
                return self._fail(what, st.cap, st.key, e, reason, size)

        return call

    def _fail(self, what, cap, key, e, reason, size):
        global _interrupted
        self.caps.pop(key, None)
        if cap is not None:
            try:
                self.backend.abort(cap)
            except BaseException:
                pass
        name = self.backend.name
        if isinstance(e, BackendError):
            text = str(e)
        elif isinstance(e, SettingsError):
            text = "%s: %s" % (name, e)
        else:
            text = "%s: %s raised %s: %s" % (name, what, type(e).__name__, e)
        _write_reason(reason, size, text)
        where = "?"
        if cap is not None:
            where = "%s %s%s rank %d" % (cap.window, cap.role, "." + cap.phase if cap.phase else "", cap.rank)
        log.warning("capture failed (%s): %s", where, text)
        if isinstance(e, KeyboardInterrupt):
            _interrupted = True  # the user's interrupt, not ours: raised again after the call
        return N.PROFD_EBACKEND

    def _start(self, st, cptr, reason, size):
        c = cptr.contents
        st.key = c.dir
        st.cap = cap = Capture.from_c(c)
        table = self.backend.delegate(cap)
        if table is not None:
            rv = table.contents.start(cptr, None, reason, size)
            if rv == 0:
                self.delegated[st.key] = table
            return rv
        self.caps[st.key] = cap
        self.backend.start(cap)
        return 0

    def _substep(self, st, cptr, reason, size):
        c = cptr.contents
        st.key = c.dir
        st.cap = self.caps[st.key]
        st.cap.update_from_c(c)
        self.backend.step(st.cap)
        return 0

    def _stop(self, st, cptr, reason, size):
        c = cptr.contents
        st.key = c.dir
        table = self.delegated.pop(st.key, None)
        if table is not None:
            return table.contents.stop(cptr, None, reason, size)
        st.cap = self.caps.pop(st.key)
        st.cap.update_from_c(c)
        self.backend.stop(st.cap)
        return 0


# ---- the client ----

_clients = weakref.WeakSet()


def _env_flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _opt_int(v, what):
    if v is None:
        return N.PROFD_FROM_ENV
    if isinstance(v, bool):
        raise ValueError("%s must be an integer, found %r" % (what, v))
    return int(v)


def _opt_str(v, what):
    if v is None:
        return None
    if not isinstance(v, str):
        raise ValueError("%s must be a string, found %r" % (what, v))
    return v.encode()


class Client:
    """A training worker's connection to the node's profd daemon.

        c = profd.Client(role="rollout", backend="torch")
        for step in range(1, n + 1):
            with c.step(step):
                with c.phase("generate"):
                    for token in ...:
                        ...
                        c.substep()
        c.close()

    role, rank, job, url, replica_rank, local_rank, world_size and host
    default to the environment: PROFD_ROLE (else "worker"), RANK, PROFD_JOB
    (else "default"), PROFD_URL (else the socket in PROFD_RUN_DIR if absolute,
    else in /run/profd or /tmp/profd-UID, looked for again at each reconnect),
    PROFD_REPLICA_RANK (else none), LOCAL_RANK,
    WORLD_SIZE, PROFD_HOST (else the host name).

    backend picks the profiler for captures whose tool has no built-in one:
    "torch" (default), "npu", "torch_memory" or "cuda". Windows whose tool is
    one of those (or "nsys", which means "cuda") use that built-in; "sim" and
    "exec" use libprofd's C backends (exec only with allow_exec=True or
    PROFD_ALLOW_EXEC=1: it runs the window's shell commands in this process).
    Any object with start(capture)/stop(capture) (and optionally
    step(capture)) may be given instead: it then handles every tool except
    sim and exec.

    One process may host several roles (verl's hybrid engine: actor, rollout
    and ref): name them with roles= (a list of names, or {name: rank} where
    a role numbers its ranks on its own, e.g. {"critic": 0}), or add_role(),
    or just name the role of each phase: phase("generate", role="rollout")
    declares "rollout" at the process's rank when it is new. role= is the
    primary role (phase() without a role). PROFD_ROLES="actor,rollout:0"
    adds roles from the environment.

    Calls must come from one thread, the training thread (libprofd's rule).
    """

    def __init__(
        self,
        role=None,
        rank=None,
        job=None,
        url=None,
        replica_rank=None,
        backend="torch",
        *,
        local_rank=None,
        world_size=None,
        host=None,
        allow_exec=None,
        roles=None,
    ):
        self._lib = None
        self._h = None
        self._tables = []
        self._phases = {}
        self._role_phases = {}
        self._declared = set()
        self._bad = set()
        self._step_scope = _NULL
        self._begin = self._end = self._sub = _noop
        self._active = _zero
        lib = N.load()
        if lib is None:
            global _warned_missing
            if not _warned_missing:
                _warned_missing = True
                log.warning("disabled: %s", N.load_error())
            return
        try:
            self._open(lib, role, rank, job, url, replica_rank, local_rank, world_size, host)
        except (ValueError, TypeError, OverflowError) as e:
            log.warning("disabled: %s", e)
            return
        if allow_exec is None:
            allow_exec = _env_flag("PROFD_ALLOW_EXEC")
        self._register(backend, allow_exec)
        self._step_scope = _StepScope(self, lib.step_begin, lib.step_end, self._h)
        fast = N.speedups_module()
        if fast is not None:
            self._speed_up(fast, lib)
        self._begin, self._end, self._sub = lib.step_begin, lib.step_end, lib.substep
        self._active = lib.windows_active
        _clients.add(self)
        try:
            items = roles.items() if isinstance(roles, dict) else [(r, None) for r in (roles or ())]
        except AttributeError:
            items = []
        for name, rank in items:
            self.add_role(name, rank)

    def _speed_up(self, fast, lib):
        """The same step calls from C (profd._speedups): the scope's own
        step(n), step_begin(n) and step_end(n), as instance attributes (a
        subclass's own methods stay). Odd step values and calls after close
        go through the ctypes scope, as before."""
        s = fast.StepScope(self._step_scope, _address(lib.step_begin), _address(lib.step_end), self._h.value, globals())
        self._step_scope = s
        cls = type(self)
        for name, fn in (("step", s.set), ("step_begin", s.begin), ("step_end", s.end)):
            if getattr(cls, name) is getattr(Client, name):
                setattr(self, name, fn)

    def _open(self, lib, role, rank, job, url, replica_rank, local_rank, world_size, host):
        o = N.Options()
        lib.options_init(ctypes.byref(o))
        o.url = _opt_str(url, "url")
        o.job = _opt_str(job, "job")
        o.role = _opt_str(role, "role")
        o.host = _opt_str(host, "host")
        o.rank = _opt_int(rank, "rank")
        o.local_rank = _opt_int(local_rank, "local_rank")
        o.world_size = _opt_int(world_size, "world_size")
        o.replica_rank = _opt_int(replica_rank, "replica_rank")
        self._log_cb = N.LOG_FN(self._on_log)
        o.log = self._log_cb
        o.log_level = self._c_log_level()
        h = ctypes.c_void_p()
        rv = lib.open(ctypes.byref(h), ctypes.byref(o))
        if rv != 0:
            raise ValueError(
                "profd_open: %s (role, job: identifiers [A-Za-z0-9_-]; rank >= 0; "
                "RANK/LOCAL_RANK/WORLD_SIZE/PROFD_REPLICA_RANK integers)" % lib.error_text(rv)
            )
        self._lib = lib
        self._h = h

    @staticmethod
    def _c_log_level():
        level = log.getEffectiveLevel()
        if level <= logging.DEBUG:
            return N.LOG_DEBUG
        if level <= logging.INFO:
            return N.LOG_INFO
        if level <= logging.WARNING:
            return N.LOG_WARN
        return N.LOG_ERROR

    @staticmethod
    def _on_log(arg, level, msg):
        try:
            py = {N.LOG_ERROR: logging.ERROR, N.LOG_WARN: logging.WARNING, N.LOG_INFO: logging.INFO}
            text = msg.decode("utf-8", "replace")
            if text.startswith("profd: "):
                text = text[len("profd: ") :]
            log.log(py.get(level, logging.DEBUG), "%s", text)
        except BaseException:
            pass

    def _register(self, backend, allow_exec):
        lib = self._lib
        if isinstance(backend, Backend):
            default, named = backend, {}
        elif backend is None or isinstance(backend, str):
            cuda = CudaBackend(lib.backend_cuda())
            named = {
                "torch": TorchBackend(),
                "npu": NpuBackend(),
                "torch_memory": TorchMemoryBackend(),
                "cuda": cuda,
                "nsys": cuda,
            }
            default = named.get(backend)
            if default is None:
                reason = "no profiler backend for tool '%%s' in this process (Client backend=%r)" % (backend,)
                if backend is not None:
                    log.warning(
                        "unknown backend %r (built-in: %s); windows for other tools will fail",
                        backend,
                        ", ".join(BUILTIN_BACKENDS),
                    )
                default = _UnknownTool(reason)
        else:
            try:
                default, named = ObjectBackend(backend), {}
            except TypeError as e:
                log.warning("%s; captures will fail", e)
                default, named = Refuse("backend", "backend: %s" % e), {}
        tables = [("*", default)] + list(named.items())
        if not allow_exec:
            tables.append(("exec", Refuse("exec", EXEC_DISABLED)))
        for name, b in tables:
            t = _Table(name, b)
            self._set_backend(name, ctypes.pointer(t.struct))
            self._tables.append(t)
        if allow_exec:
            self._set_backend("exec", lib.backend_exec())
        self._set_backend("sim", lib.backend_sim())

    def _wrap_backends(self, wrap):
        """Every backend of this client becomes wrap(backend) (an
        integration that adds to what a capture holds)."""
        for t in self._tables:
            t.backend = wrap(t.backend)

    def _set_backend(self, name, table):
        rv = self._lib.set_backend(self._h, table, None)
        if rv != 0:
            log.warning("cannot register backend %s: %s", name, self._lib.error_text(rv))

    # ---- the training thread's calls ----

    def step(self, n):
        """Context manager around step n (steps count from 1 and increase)."""
        s = self._step_scope
        s.step = n
        return s

    def step_begin(self, n):
        _step_mark(self, self._h, self._begin, n)

    def step_end(self, n):
        _step_mark(self, self._h, self._end, n)

    def phase(self, name, role=None):
        """Context manager around a phase of the current step ("generate",
        "compute_log_prob", "update_actor", ...) of `role` (None: the
        primary role; a new role is declared at the process's rank). Phases
        do not nest."""
        try:
            if role is None:
                s = self._phases.get(name)
            else:  # no tuple key: nothing allocated per call
                by_name = self._role_phases.get(role)
                s = by_name.get(name) if by_name is not None else None
        except TypeError:  # unhashable: not a name
            s = None
        if s is None:
            s = self._new_phase(name, role)
        return s

    def phase_begin(self, name, role=None):
        self.phase(name, role).__enter__()

    # ---- sections: where a step's time goes (profd_section_* in client.h) ----

    def section(self, name):
        """Context manager: the time inside is `name`'s ("data", "forward",
        "backward", "optimizer", "comm"), exclusive of sections nested in
        it. An unknown name is ignored (logged once)."""
        i = _SECTION_INDEX.get(name) if isinstance(name, str) else None
        if i is None or self._h is None:
            if i is None:
                self._warn_once(("section", repr(name)), "ignoring section %r: one of %s", name, ", ".join(SECTIONS))
            return _NULL
        return _SectionScope(self, i)

    def section_add(self, name, us):
        """Add `us` microseconds measured by the caller to section `name` of
        the current step. False (logged once) when not taken."""
        i = _SECTION_INDEX.get(name) if isinstance(name, str) else None
        h = self._h
        if i is None or h is None:
            if i is None:
                self._warn_once(("section", repr(name)), "ignoring section %r: one of %s", name, ", ".join(SECTIONS))
            return False
        try:
            return self._lib.section_add(h, i, int(us)) == 0
        except (TypeError, ValueError, OverflowError):
            return False

    def add_role(self, role, rank=None):
        """Declare another role this process hosts, with its rank in that
        role's own numbering (None: the process's rank, or the rank it was
        declared with). Call it before or between steps; the client
        registers again in the background. False (logged once) when the
        role cannot be added."""
        if self._h is None:
            return False
        if not isinstance(role, str) or not _PHASE_RE.match(role):
            self._warn_once(("role", repr(role)), "ignoring role %r: names are 1-64 of [A-Za-z0-9_-]", role)
            return False
        try:
            rv = self._lib.add_role(self._h, role.encode(), _opt_int(rank, "rank"))
        except (ValueError, TypeError, OverflowError) as e:
            self._warn_once(("role", role), "ignoring role %r: %s", role, e)
            return False
        if rv != 0:
            self._warn_once(
                ("role", role),
                "cannot add role %r (rank %r): %s (16 roles at most, each with one rank)",
                role,
                rank,
                self._lib.error_text(rv),
            )
            return False
        self._declared.add(role)
        return True

    @property
    def busy(self):
        """True while a profd window covers the current step in this
        process: a framework's own profiler should stay off then (two
        profilers on one thread fail)."""
        h = self._h
        return h is not None and self._active(h) > 0

    def phase_end(self, name=None):
        if self._h is not None:
            self._lib.phase_end(self._h, None)
            if _interrupted:
                _reraise()

    def substep(self):
        """One sub-step of the current phase is done (a decode step, a
        micro-batch): drives the window's sub-step schedule."""
        self._sub(self._h)
        if _interrupted:
            _reraise()

    def _new_phase(self, name, role=None):
        if self._h is None:
            return _NULL
        if not isinstance(name, str) or not _PHASE_RE.match(name):
            self._warn_once(("phase", repr(name)), "ignoring phase %r: names are 1-64 of [A-Za-z0-9_-]", name)
            return _NULL
        if role is None:
            s = _PhaseScope(self._lib.phase_begin, self._lib.phase_end, self._h, name.encode())
            self._phases[name] = s
            return s
        if role not in self._declared and not self.add_role(role):
            return _NULL
        s = _RolePhaseScope(self._lib.phase_begin_role, self._lib.phase_end, self._h, name.encode(), role.encode())
        self._role_phases.setdefault(role, {})[name] = s
        return s

    def _bad_step(self, fn, n):
        try:
            v = int(n)
        except Exception:
            v = None
        if v is not None and v == n and fn is not _noop:
            try:
                fn(self._h, v)
                return
            except Exception:
                pass
        self._warn_once(("step", type(n).__name__), "ignoring step %r: steps are integers", n)

    def _warn_once(self, key, fmt, *args):
        if key not in self._bad:
            self._bad.add(key)
            log.warning(fmt, *args)

    # ---- the rest ----

    @property
    def enabled(self):
        """True when libprofd is loaded and the client is open."""
        return self._h is not None

    def stats(self):
        """Counters of the client library (Stats); all zero when disabled."""
        if self._h is None:
            return _NO_STATS
        s = N.Stats()
        if self._lib.stats(self._h, ctypes.byref(s)) != 0:
            return _NO_STATS
        return Stats(
            bool(s.connected),
            s.client_id,
            s.plan_gen,
            s.windows,
            s.captures,
            s.events_sent,
            s.events_dropped,
            s.reconnects,
        )

    def close(self):
        """End running captures (reported truncated), deliver what is pending
        within a short bounded time and disconnect. Idempotent."""
        h = self._h
        if h is None:
            return
        self._disable()
        self._lib.close(h)
        self._tables = []
        if _interrupted:
            _reraise()

    def _disable(self):
        self._h = None
        self._begin = self._end = self._sub = _noop
        self._active = _zero
        if self._step_scope is not _NULL:
            self._step_scope._disable()
        for s in self._phases.values():
            s._disable()
        for by_name in self._role_phases.values():
            for s in by_name.values():
                s._disable()
        _clients.discard(self)

    def _forget(self):
        """In a forked child: the C client's thread did not survive the fork;
        drop the handle without closing it."""
        if self._h is not None:
            self._disable()
            self._tables = []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class _UnknownTool(Backend):
    name = "*"

    def __init__(self, reason):
        self.reason = reason

    def start(self, cap):
        raise BackendError(self.reason % cap.tool)

    def stop(self, cap):
        pass


@atexit.register
def _close_all():
    for c in list(_clients):
        try:
            c.close()
        except Exception:
            pass


def _after_fork_in_child():
    for c in list(_clients):
        c._forget()


os.register_at_fork(after_in_child=_after_fork_in_child)
