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

from ._native import load_error, speedups_error
from ._version import __version__
from .backends import Backend, BackendError
from .capture import Capture, Schedule
from .client import Client, Stats
from .settings import SettingsError


def speedups():
    """True when the clients make their step calls from C (profd._speedups),
    False when they take the ctypes path: speedups_error() then says why
    (not built for this Python, PROFD_NO_SPEEDUPS=1). Either path behaves
    the same; the C one costs less per step."""
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
