# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Post-import hooks: run a function on a module right after it is first
imported, without importing it (and so without importing torch, verl or
Megatron in a process that never does).

    when_imported("torch", patch_torch)

If the module is already imported the function runs at once. Otherwise a
finder at the front of sys.meta_path wraps that module's loader so that
the function runs right after the module's own code, before the importer
gets it back. A hook that raises is logged once and forgotten: an import
never fails because of profd.
"""

import importlib.abc
import importlib.util
import logging
import sys
import threading

log = logging.getLogger("profd")

_lock = threading.RLock()
_pending = {}  # module name -> [functions]


def _run(name, module, fns):
    for fn in fns:
        try:
            fn(module)
        except Exception as e:  # never break the importer
            log.warning("integration hook for %s failed and is off: %s: %s", name, type(e).__name__, e)


class _Loader(importlib.abc.Loader):
    """Delegates to the module's own loader, then runs the hooks."""

    def __init__(self, loader, name):
        self._loader = loader
        self._name = name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        # the module's spec must name its real loader (pickling, reload, resources)
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self._loader
        try:
            module.__loader__ = self._loader
        except AttributeError:
            pass
        self._loader.exec_module(module)
        with _lock:
            fns = _pending.pop(self._name, [])
        _run(self._name, module, fns)

    def __getattr__(self, attr):
        return getattr(self._loader, attr)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self._busy = set()

    def find_spec(self, fullname, path=None, target=None):
        with _lock:
            if fullname not in _pending or fullname in self._busy:
                return None
            self._busy.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        except Exception:
            spec = None
        finally:
            with _lock:
                self._busy.discard(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _Loader(spec.loader, fullname)
        return spec


_finder = None


def when_imported(name, fn):
    """Run fn(module) once module `name` is imported (now, if it is)."""
    global _finder
    with _lock:
        module = sys.modules.get(name)
        if module is None:
            _pending.setdefault(name, []).append(fn)
            if _finder is None:
                _finder = _Finder()
                sys.meta_path.insert(0, _finder)
            return
    _run(name, module, [fn])
