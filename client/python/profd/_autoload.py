# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Imported by the `profd-auto.pth` file at interpreter start when one of
PROFD_AUTO, PROFD_VERL, PROFD_MINDSPEED, PROFD_MEGATRON is set (and only
then: without them the .pth line only reads the environment). Installs the
integrations' post-import hooks; imports no framework and not torch."""

from .integrations import _common as C


def _install():
    auto = C.flag("PROFD_AUTO")
    if auto and not C.off("PROFD_TORCH"):
        from .integrations import pytorch

        pytorch.install()
    for name in ("verl", "mindspeed", "megatron"):
        var = "PROFD_" + name.upper()
        if (auto or C.flag(var)) and not C.off(var):
            __import__("profd.integrations." + name)


try:
    _install()
except Exception as e:  # a .pth file must never break the interpreter
    C.say_once("autoload", "profd: drop-in hooks off: %s: %s", type(e).__name__, e)
