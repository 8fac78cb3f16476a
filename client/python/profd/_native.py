# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""libprofd through ctypes: finding the library and its C declarations.

Private to the package. The layouts below mirror client/include/profd/client.h
and must change with it.

The library is looked for, in order:
  1. $PROFD_LIB, a path to libprofd.so (only there when set);
  2. libprofd.so next to this file (the build tree: <build>/python/profd/);
  3. libprofd.so.0 of the install that installed this package (_install.py,
     written by `cmake --install`: the library folder relative to this one);
  4. libprofd.so.0 through the dynamic linker (LD_LIBRARY_PATH, ld.so.cache);
  5. ctypes.util.find_library("profd").
When none loads, the package works as a no-op and load_error() says why. A
library built with AddressSanitizer is skipped (with its reason) unless the
ASan runtime is already in the process: loading it would abort the process.

Two handles on the same library: calls that may block (open, close) go through
CDLL, which releases the GIL; the training-thread calls, which never block,
go through PyDLL, which keeps it and costs less.

profd._speedups (_speedups.c, optional) makes the step calls of `with
c.step(n)`, c.step_begin and c.step_end from C, through the addresses of the
functions loaded here; speedups_module() imports it, unless
PROFD_NO_SPEEDUPS=1, and speedups_error() says why it is not in use.
"""

import ctypes
import ctypes.util
import os
import subprocess
import threading

PROFD_FROM_ENV = -2
PROFD_NO_REPLICA = -1
PROFD_BACKEND_NATIVE_SCHEDULE = 1

# errors.h (the ones the package returns or tests for)
PROFD_EINVAL = -1
PROFD_ELIMIT = -13
PROFD_EBACKEND = -14
PROFD_ENOTSUP = -18

# profd_log_level_t
LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG = 0, 1, 2, 3

_c_int64 = ctypes.c_int64
_c_char_p = ctypes.c_char_p

LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)


class Options(ctypes.Structure):
    _fields_ = [
        ("url", _c_char_p),
        ("job", _c_char_p),
        ("role", _c_char_p),
        ("rank", _c_int64),
        ("local_rank", _c_int64),
        ("world_size", _c_int64),
        ("replica_rank", _c_int64),
        ("host", _c_char_p),
        ("flush_ms", ctypes.c_int),
        ("log", LOG_FN),
        ("log_arg", ctypes.c_void_p),
        ("log_level", ctypes.c_int),
    ]


class Schedule(ctypes.Structure):
    _fields_ = [(n, _c_int64) for n in ("skip_first", "wait", "warmup", "active", "repeat")]


class Capture(ctypes.Structure):
    _fields_ = [
        ("window_id", _c_int64),
        ("window", _c_char_p),
        ("job", _c_char_p),
        ("role", _c_char_p),
        ("phase", _c_char_p),
        ("rank", _c_int64),
        ("replica_rank", _c_int64),
        ("first_step", _c_int64),
        ("last_step", _c_int64),
        ("step", _c_int64),
        ("substep", _c_int64),
        ("part", _c_int64),
        ("tool", _c_char_p),
        ("mode", _c_char_p),
        ("settings_json", _c_char_p),
        ("dir", _c_char_p),
        ("schedule", Schedule),
    ]


# int (*)(const profd_capture_t *, void *user, char *reason, size_t reason_len)
BACKEND_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(Capture), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t
)


class Backend(ctypes.Structure):
    _fields_ = [
        ("name", _c_char_p),
        ("flags", ctypes.c_uint),
        ("start", BACKEND_FN),
        ("stop", BACKEND_FN),
        ("substep", BACKEND_FN),
    ]


class Stats(ctypes.Structure):
    _fields_ = [
        ("connected", ctypes.c_bool),
        ("client_id", _c_int64),
        ("plan_gen", _c_int64),
        ("windows", _c_int64),
        ("captures", _c_int64),
        ("events_sent", _c_int64),
        ("events_dropped", _c_int64),
        ("reconnects", _c_int64),
    ]


class Library:
    """One loaded libprofd with its prototypes declared."""

    def __init__(self, path):
        self.path = path
        c = ctypes.CDLL(path)
        py = ctypes.PyDLL(path)
        vp = ctypes.c_void_p
        backend_p = ctypes.POINTER(Backend)

        def proto(dll, name, restype, *argtypes):
            fn = getattr(dll, name)
            fn.restype = restype
            fn.argtypes = argtypes
            return fn

        self.options_init = proto(c, "profd_options_init", None, ctypes.POINTER(Options))
        self.open = proto(c, "profd_open", ctypes.c_int, ctypes.POINTER(vp), ctypes.POINTER(Options))
        self.close = proto(c, "profd_close", None, vp)
        self.set_backend = proto(c, "profd_set_backend", ctypes.c_int, vp, backend_p, vp)
        self.stats = proto(c, "profd_stats", ctypes.c_int, vp, ctypes.POINTER(Stats))
        self.strerror = proto(c, "profd_strerror", _c_char_p, ctypes.c_int)
        self.backend_sim = proto(c, "profd_backend_sim", backend_p)
        self.backend_exec = proto(c, "profd_backend_exec", backend_p)
        self.backend_cuda = proto(c, "profd_backend_cuda", backend_p)
        # The training thread's calls: no GIL release. The step calls can only
        # fail for a NULL client, so their result is not even converted.
        self.step_begin = proto(py, "profd_step_begin", None, vp, _c_int64)
        self.step_end = proto(py, "profd_step_end", None, vp, _c_int64)
        self.substep = proto(py, "profd_substep", None, vp)
        self.phase_begin = proto(py, "profd_phase_begin", ctypes.c_int, vp, _c_char_p)
        self.phase_end = proto(py, "profd_phase_end", ctypes.c_int, vp, _c_char_p)
        self.phase_begin_role = proto(py, "profd_phase_begin_role", ctypes.c_int, vp, _c_char_p, _c_char_p)
        self.windows_active = proto(py, "profd_windows_active", ctypes.c_int, vp)
        self.section_begin = proto(py, "profd_section_begin", ctypes.c_int, vp, ctypes.c_int)
        self.section_end = proto(py, "profd_section_end", ctypes.c_int, vp, ctypes.c_int)
        self.section_add = proto(py, "profd_section_add", ctypes.c_int, vp, ctypes.c_int, _c_int64)
        # takes a lock shared with the background thread: through CDLL
        self.add_role = proto(c, "profd_add_role", ctypes.c_int, vp, _c_char_p, _c_int64)

    def error_text(self, rv):
        return self.strerror(rv).decode("utf-8", "replace")


_lock = threading.Lock()
_loaded = False
_library = None
_error = None


def _candidates():
    env = os.environ.get("PROFD_LIB")
    if env:
        yield "PROFD_LIB=" + env, env
        return
    folder = os.path.dirname(os.path.abspath(__file__))
    here = os.path.join(folder, "libprofd.so")
    if os.path.exists(here):
        yield here, here
    try:
        from . import _install
    except ImportError:
        _install = None
    if _install is not None:
        installed = os.path.normpath(os.path.join(folder, _install.LIBDIR, "libprofd.so.0"))
        if os.path.exists(installed):
            yield installed, installed
        else:
            yield "installed " + installed, installed
    yield "libprofd.so.0", "libprofd.so.0"
    found = ctypes.util.find_library("profd")
    if found and found != "libprofd.so.0":
        yield "find_library: " + found, found


def _resolve(name):
    """The file the dynamic linker would load for a bare soname, or None."""
    if "/" in name:
        return name
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        if d and os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        left, _, path = line.partition(" => ")
        if left.strip().split(" ")[0] == name and path:
            return path.strip()
    return None


def _asan_refusal(name):
    """A library built with AddressSanitizer aborts a process that has no ASan
    runtime as it loads: refuse it instead, with the way out."""
    path = _resolve(name)
    if path is None:
        return None
    try:
        with open("/proc/self/maps") as f:
            if "libasan" in f.read():
                return None
        with open(path, "rb") as f:
            if b"libasan.so" not in f.read():
                return None
    except OSError:
        return None
    return (
        "%s is built with AddressSanitizer: preload libasan (LD_PRELOAD=$(gcc -print-file-name=libasan.so)) "
        "or use a build without PROFD_SANITIZE" % path
    )


def load():
    """Load libprofd once; returns the Library, or None (see load_error())."""
    global _loaded, _library, _error
    with _lock:
        if _loaded:
            return _library
        tried = []
        for label, path in _candidates():
            refusal = _asan_refusal(path)
            if refusal is not None:
                tried.append("%s: %s" % (label, refusal))
                continue
            try:
                _library = Library(path)
                _error = None
                break
            except (OSError, AttributeError) as e:
                tried.append("%s: %s" % (label, e))
        else:
            _error = "libprofd not found (" + "; ".join(tried) + ")"
        _loaded = True
        return _library


def load_error():
    """Why no library loads (loading it first if that was not tried yet);
    None when one did."""
    load()
    return _error


# ---- profd._speedups: the step scope in C (optional) ----

SPEEDUPS_ABI = 1  # _speedups.c's SPEEDUPS_ABI
_fast_loaded = False
_fast = None
_fast_error = None


def _no_speedups():
    v = os.environ.get("PROFD_NO_SPEEDUPS", "").strip().lower()
    return v not in ("", "0", "false", "no", "off")


def speedups_module():
    """profd._speedups once imported and wanted (not PROFD_NO_SPEEDUPS), or
    None: the clients then take the ctypes path and speedups_error() says
    why. Decided once per process."""
    global _fast_loaded, _fast, _fast_error
    with _lock:
        if _fast_loaded:
            return _fast
        _fast_loaded = True
        if _no_speedups():
            _fast_error = "PROFD_NO_SPEEDUPS=%s: the ctypes path" % os.environ["PROFD_NO_SPEEDUPS"]
            return None
    try:
        from . import _speedups as m
    except ImportError as e:
        err = "profd._speedups not built for this Python (%s): the ctypes path" % e
        m = None
    else:
        err = None
        if getattr(m, "ABI", None) != SPEEDUPS_ABI:
            err = "profd._speedups %s is of another package version (ABI %r, not %d): the ctypes path" % (
                m.__file__,
                getattr(m, "ABI", None),
                SPEEDUPS_ABI,
            )
            m = None
    with _lock:
        _fast, _fast_error = m, err
    return m


def speedups_error():
    """Why the step calls take the ctypes path (deciding it first if not yet
    done); None when profd._speedups is in use."""
    speedups_module()
    return _fast_error


def _reset_for_tests():
    global _loaded, _library, _error, _fast_loaded, _fast, _fast_error
    with _lock:
        _loaded, _library, _error = False, None, None
        _fast_loaded, _fast, _fast_error = False, None, None
