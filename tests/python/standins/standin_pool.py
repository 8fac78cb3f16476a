# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Child processes that serve method calls over a pipe (not part of any
framework): how the vLLM and SGLang stand-ins run their engine's worker and
scheduler processes, in place of vLLM's shared-memory message queue and
SGLang's ZMQ sockets.

start() forks the children, each running target(conn, *args); a child's
serve() builds its object and answers (method, args) requests until it
reads (None, ...) or its pipe closes; stop() sends each child that end and
waits for it."""

import os
import traceback


def start(ctx, n, target, args_of, name_of):
    """n children of the multiprocessing context ctx: child i runs
    target(conn, *args_of(i)), named name_of(i). Returns (process, parent's
    end of its pipe) for each, in order."""
    children = []
    for i in range(n):
        parent, child = ctx.Pipe()
        p = ctx.Process(target=target, args=(child,) + tuple(args_of(i)), daemon=True, name=name_of(i))
        p.start()
        child.close()
        children.append((p, parent))
    return children


def serve(conn, make, answer):
    """In a child: obj = make(), then answer(conn, obj, method, args) for
    each request; exits the process (1 when make or answer raised)."""
    code = 0
    try:
        obj = make()
        while True:
            try:
                method, args = conn.recv()
            except EOFError:
                break
            if method is None:
                break
            answer(conn, obj, method, args)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def stop(children):
    """Ask each child to end and wait for it (10 s at most each)."""
    for p, conn in children:
        try:
            conn.send((None, ()))
        except OSError:
            pass
        p.join(10)
