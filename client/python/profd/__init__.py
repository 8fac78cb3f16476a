# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""profd: distributed profiling coordinator, Python client.

A thin ctypes layer over libprofd plus profiler backends for PyTorch
(torch.profiler), Ascend (torch_npu.profiler), the CUDA memory history and
the CUDA profiler API (nsys). Standard library only; torch and torch_npu are
imported when a capture needs them.

    import profd
    c = profd.Client(role="actor", backend="torch")   # rank etc. from env
    for step in range(1, n + 1):
        with c.step(step):
            with c.phase("update_actor"):
                for mb in micro_batches:
                    ...
                    c.substep()
    c.close()
"""

from ._version import __version__

# The rest loads at first use (PEP 562): `import profd` stays cheap, which
# the drop-in's .pth relies on (it imports profd._autoload at every
# interpreter start when PROFD_AUTO is set).
_LAZY = {
    "load_error": "._native",
    "speedups_error": "._native",
    "Backend": ".backends",
    "BackendError": ".backends",
    "Capture": ".capture",
    "Schedule": ".capture",
    "Client": ".client",
    "Stats": ".client",
    "SettingsError": ".settings",
}


def __getattr__(name):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError("module 'profd' has no attribute %r" % name)
    import importlib

    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def speedups():
    """True when the clients make their step calls from C (profd._speedups),
    False when they take the ctypes path: speedups_error() then says why
    (not built for this Python, PROFD_NO_SPEEDUPS=1). Either path behaves
    the same; the C one costs less per step."""
    from ._native import speedups_error

    return speedups_error() is None


__all__ = [
    "Backend",
    "BackendError",
    "Capture",
    "Client",
    "Schedule",
    "SettingsError",
    "Stats",
    "load_error",
    "speedups",
    "speedups_error",
]
