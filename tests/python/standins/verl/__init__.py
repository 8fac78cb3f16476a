# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""verl stand-in: a driver, worker groups as processes, a hybrid
actor/rollout/ref worker, a critic group and rollout server replicas, with
verl's profiler hooks (see tests/python/standins/README.md).

Like verl, importing the package loads extensions in every process that
imports verl (the launcher, the TaskRunner, every worker and server):
- VERL_USE_EXTERNAL_MODULES=mod1,mod2: each module is imported
  (import_external_libs); an exception propagates, failing `import verl`;
- entry points of the group "verl.plugins" (VERL_USE_EXTERNAL_PLUGINS:
  "auto" = all, the default; "none"; or a comma list of names): each is
  loaded, an exception is logged at debug level and ignored.
Both run while verl/__init__.py is still executing: only verl.protocol and
verl.utils are imported by then."""

import logging
import os

from .protocol import DataProto
from .utils.import_utils import import_external_libs

__version__ = "0.10.0.dev-standin"

__all__ = ["DataProto", "__version__"]

modules = os.getenv("VERL_USE_EXTERNAL_MODULES", "")
if modules:
    modules = modules.split(",")
    import_external_libs(modules)

_plugins_policy = os.getenv("VERL_USE_EXTERNAL_PLUGINS", "auto").strip().lower()
if _plugins_policy != "none":
    from importlib.metadata import entry_points as _entry_points

    _discovered = _entry_points(group="verl.plugins")
    _allowed = None if _plugins_policy == "auto" else {n.strip() for n in _plugins_policy.split(",") if n.strip()}
    for _ep in _discovered:
        if _allowed is not None and _ep.name not in _allowed:
            continue
        try:
            _ep.load()
        except Exception as _e:
            logging.getLogger(__name__).debug("Failed to load plugin '%s': %s", _ep.name, _e)
