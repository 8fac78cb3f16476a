# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Imported by the `profd-auto.pth` file at interpreter start when one of
PROFD_AUTO, PROFD_VERL, PROFD_MINDSPEED, PROFD_MEGATRON is set (and only
then: without them the .pth line only reads the environment).

At start-up it only puts a small finder at the front of sys.meta_path (this
module imports nothing but sys and os, and `import profd` loads nothing
more): a process that never imports torch or a framework pays for that
alone. At the first import of torch, verl, mindspeed_llm or megatron (the
ones the switched-on integrations wait for) the finder takes itself out,
installs the integrations' post-import hooks (profd._hooks; the same
integrations as before) and hands that import to them, so the hooks run
right after the module's own code as when they were installed at start."""

import os
import sys


def _flag(name):
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def _off(name):
    return os.environ.get(name, "").strip().lower() in ("0", "false", "no", "off")


def _wanted():
    """{top-level module: switched on} for the integrations of this process."""
    auto = _flag("PROFD_AUTO")
    on = {}
    if auto and not _off("PROFD_TORCH"):
        on["torch"] = "pytorch"
    for top, name in (("verl", "verl"), ("mindspeed_llm", "mindspeed"), ("megatron", "megatron")):
        var = "PROFD_" + name.upper()
        if (auto or _flag(var)) and not _off(var):
            on[top] = name
    return on


def _install(names):
    """The integrations' hooks (imports profd's integrations; not torch)."""
    from .integrations import _common as C

    try:
        if "pytorch" in names:
            from .integrations import pytorch

            pytorch.install()
        for name in ("verl", "mindspeed", "megatron"):
            if name in names:
                __import__("profd.integrations." + name)
    except Exception as e:  # an import never fails because of profd
        C.say_once("autoload", "profd: drop-in hooks off: %s: %s", type(e).__name__, e)


class _Trigger:
    """Waits for the first import of a watched top-level module."""

    def __init__(self, wanted):
        self.wanted = wanted

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in self.wanted:
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:  # another thread got here first
            return None
        _install(set(self.wanted.values()))
        hooks = sys.modules.get("profd._hooks")
        finder = getattr(hooks, "_finder", None)
        return finder.find_spec(fullname, path, target) if finder is not None else None

    def invalidate_caches(self):
        pass


def _start():
    wanted = _wanted()
    if not wanted:
        return
    if any(top in sys.modules for top in wanted):  # already imported (another .pth): now
        _install(set(wanted.values()))
        return
    sys.meta_path.insert(0, _Trigger(wanted))


try:
    _start()
except Exception:  # a .pth file must never break the interpreter
    pass
