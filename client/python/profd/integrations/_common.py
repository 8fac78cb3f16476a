# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""What the integrations of one process share: which of them drives the
steps (the owner), the process's one client, and logging once."""

import logging
import os
import threading

log = logging.getLogger("profd")

_lock = threading.Lock()
_owner = None
_client = None
_said = set()

# A framework integration takes the process from the optimizer-step
# integration (PROFD_AUTO), and MindSpeed-LLM from Megatron-LM, on which it
# runs; an integration of lower rank never takes it back.
_RANK = {"pytorch": 0, "megatron": 1, "mindspeed": 2, "verl": 3}


def flag(name):
    """An environment switch: set and not "0", "false", "no" or "off"."""
    v = os.environ.get(name, "").strip().lower()
    return v not in ("", "0", "false", "no", "off")


def off(name):
    """Explicitly switched off ("0", "false", "no", "off")."""
    return os.environ.get(name, "").strip().lower() in ("0", "false", "no", "off")


def claim(name):
    """The integration `name` drives the steps of this process from now on
    (unless one of higher rank already does). Returns whether it does."""
    global _owner
    with _lock:
        if _owner is None or _RANK[name] >= _RANK[_owner]:
            _owner = name
        return _owner == name


def owner():
    return _owner


def say_once(key, fmt, *args, level=logging.WARNING):
    if key in _said:
        return
    _said.add(key)
    log.log(level, fmt, *args)


def install(name, label, install_fn):
    """Run an integration's install(), where its module is imported: a
    failure turns the integration off with one line and never breaks the
    import that loaded it."""
    try:
        install_fn()
    except Exception as e:
        say_once(name + "-install", "profd: %s integration off: %s: %s", label, type(e).__name__, e)


def client(**kw):
    """The process's profd.Client, opened at the first call with kw
    (role, rank, replica_rank, ...; the rest from the environment); None when
    profd is off in this process (no libprofd: every call a no-op)."""
    global _client
    with _lock:
        if _client is None:
            import profd

            _client = profd.Client(**kw)
        return _client if _client.enabled else None


def current():
    """The process's client if one is open, else None."""
    c = _client
    return c if c is not None and c.enabled else None


def _after_fork():
    global _client
    _client = None  # the parent's: its thread did not survive the fork


os.register_at_fork(after_in_child=_after_fork)
