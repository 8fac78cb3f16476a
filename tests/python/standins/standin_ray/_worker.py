# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""One stand-in Ray actor process: builds the actor, then runs the calls it
receives on the main thread, in order (see standin_ray/__init__.py)."""

import asyncio
import importlib
import inspect
import os
import pickle
import sys
import traceback
from multiprocessing.connection import Connection


def _load(module, qualname):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return getattr(obj, "__ray_actor_class__", obj)


def main(fd):
    conn = Connection(fd)
    loop = asyncio.new_event_loop()
    instance = None
    create_error = None
    while True:
        try:
            msg = pickle.loads(conn.recv_bytes())
        except EOFError:
            return 0
        if msg[0] == "exit":
            return 0
        try:
            if msg[0] == "create":
                _, module, qualname, args, kwargs = msg
                try:
                    instance = _load(module, qualname)(*args, **kwargs)
                except BaseException:
                    create_error = "creating the actor failed:\n" + traceback.format_exc()
                    raise
                result = None
            elif create_error is not None:
                raise RuntimeError(create_error)
            elif msg[0] == "call":
                _, name, args, kwargs = msg
                result = getattr(instance, name)(*args, **kwargs)
            else:  # ray_call
                _, fn, args, kwargs = msg
                result = fn(instance, *args, **kwargs)
            if inspect.isawaitable(result):
                result = loop.run_until_complete(result)
            reply = ("ok", result)
        except BaseException as e:  # reported to the caller, as Ray does
            reply = ("err", type(e).__name__, traceback.format_exc())
        try:
            data = pickle.dumps(reply)
        except Exception as e:
            data = pickle.dumps(("err", type(e).__name__, "reply not picklable: %s" % e))
        conn.send_bytes(data)


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
