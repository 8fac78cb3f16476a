# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Call-order log of the stand-in frameworks (not part of any framework).

The stand-ins under this folder call record() at the points the tests care
about (a worker method entered, a profiler started, an iteration run). When
STANDIN_TRACE names a file, each call appends one JSON line to it; otherwise
record() does nothing, so a stand-in run on its own prints and writes
nothing extra.

Every line is {"pid": ..., "src": ..., "ev": ..., <fields>}. The file is
opened with O_APPEND and each line written with one write(), so processes
may share one file.
"""

import json
import os

ENV = "STANDIN_TRACE"


def enabled():
    return bool(os.environ.get(ENV))


def record(src, ev, **fields):
    path = os.environ.get(ENV)
    if not path:
        return
    line = {"pid": os.getpid(), "src": src, "ev": ev}
    line.update(fields)
    data = (json.dumps(line, sort_keys=True, default=str) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read(path):
    """All records of a trace file, in the order they were written."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out
