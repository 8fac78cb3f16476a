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

from ._native import load_error
from ._version import __version__
from .backends import Backend, BackendError
from .capture import Capture, Schedule
from .client import Client, Stats
from .settings import SettingsError

__all__ = [
    "Backend",
    "BackendError",
    "Capture",
    "Client",
    "Schedule",
    "SettingsError",
    "Stats",
    "load_error",
]
