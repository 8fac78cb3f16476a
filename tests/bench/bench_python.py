# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The Python hot path: ns per step through the profd package
(`with c.step(n): pass`, and c.step_begin(n); c.step_end(n)) with no capture
due and with a capture running, next to baselines measured in the same run:
an empty Python function pair and an empty ctypes call pair. The step calls
take the path the package takes in this process: profd._speedups (the C step
scope) where it is built, the ctypes path without it or with
PROFD_NO_SPEEDUPS=1 ("speedups" in the output says which; run.py runs both).

As in the C benchmark, pairs run in batches smaller than the event ring and
the ring is drained between batches, outside the timed region. The
figures measured together (the baselines and the two idle forms; then the
two forms with a capture running) take turns within each repetition, after
a second of settling once the client is connected.

usage: PYTHONPATH=<build>/python python3 bench_python.py --url WORKER_URL \
           --profctl PROFCTL --control CONTROL_URL [--reps N] [--job JOB]
Prints one JSON object.
"""

import argparse
import json
import re
import subprocess
import sys
import time

import profd
from profd import _native as N

BATCH = 2000  # pairs: 4000 events, within the ring (4096)
BATCHES = 16
SETTLE_S = 1.0


class Noop:
    """A backend that does nothing: the cost measured is profd's."""

    def start(self, cap):
        pass

    def stop(self, cap):
        pass


def drain(c, pushed, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = c.stats()
        if s.events_sent + s.events_dropped >= pushed:
            return
        time.sleep(0.001)
    raise SystemExit("bench_python: the ring did not drain within %.0f s" % timeout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--profctl", required=True)
    ap.add_argument("--control", required=True)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--job", default="bench")
    a = ap.parse_args()

    c = profd.Client(role="benchpy", rank=0, job=a.job, url=a.url, backend=Noop())
    if not c.enabled:
        raise SystemExit("bench_python: libprofd not loaded: %s" % profd.load_error())
    deadline = time.monotonic() + 10
    while not c.stats().connected:
        if time.monotonic() > deadline:
            raise SystemExit("bench_python: no daemon at %s" % a.url)
        time.sleep(0.01)
    lib = N.load()
    state = {"step": 1, "pushed": 0}

    def with_pair(n):
        s = state["step"]
        t0 = time.perf_counter_ns()
        for i in range(s, s + n):
            with c.step(i):
                pass
        t = time.perf_counter_ns() - t0
        state["step"] = s + n
        return t

    def method_pair(n):
        s = state["step"]
        b, e = c.step_begin, c.step_end
        t0 = time.perf_counter_ns()
        for i in range(s, s + n):
            b(i)
            e(i)
        t = time.perf_counter_ns() - t0
        state["step"] = s + n
        return t

    def empty_py(n):
        def f(i):
            pass

        t0 = time.perf_counter_ns()
        for i in range(n):
            f(i)
            f(i)
        return time.perf_counter_ns() - t0

    empty_c = lib.substep  # profd_substep(NULL): an argument check and a return

    def empty_ctypes(n):
        t0 = time.perf_counter_ns()
        for i in range(n):
            empty_c(None)
            empty_c(None)
        return time.perf_counter_ns() - t0

    def one(fn, steps):
        total = 0
        for _ in range(BATCHES):
            total += fn(BATCH)
            if steps:
                state["pushed"] += 2 * BATCH
                drain(c, state["pushed"])
        return total / (BATCHES * BATCH)

    def measure(fns):
        """Every function of fns ({name: (fn, steps)}) once per repetition,
        in turn: a moment the machine is slower (a neighbour, the client's
        own start) falls on all of them, not on whichever ran then."""
        out = {k: [] for k in fns}
        for rep in range(a.reps + 1):  # the first is a warm-up
            for k, (fn, steps) in fns.items():
                v = one(fn, steps)
                if rep:
                    out[k].append(v)
        return out

    res = {"python": sys.version.split()[0], "pairs_per_rep": BATCH * BATCHES,
           "speedups": profd.speedups(), "speedups_error": profd.speedups_error()}
    # the client's start (its hello, the daemon's latency probes) is over
    time.sleep(SETTLE_S)
    res.update(measure({"empty_py_pair_ns": (empty_py, False),
                        "empty_ctypes_pair_ns": (empty_ctypes, False),
                        "with_idle_ns": (with_pair, True),
                        "method_idle_ns": (method_pair, True)}))

    # a capture running: an open-ended window from a step ahead
    first = state["step"] + 10 ** 7
    out = subprocess.run(
        [a.profctl, "--url", a.control, "start", "--steps", "%d:" % first, "--roles", "benchpy",
         "--job", a.job, "--tool", "bench"],
        capture_output=True, text=True, timeout=30,
    )
    m = re.search(r"started window (\d+)", out.stdout)
    if out.returncode != 0 or not m:
        raise SystemExit("bench_python: profctl start: %s%s" % (out.stdout, out.stderr))
    wid = m.group(1)
    deadline = time.monotonic() + 10
    while c.stats().windows < 1:
        if time.monotonic() > deadline:
            raise SystemExit("bench_python: the plan did not arrive")
        s = state["step"]
        c.step_begin(s)
        c.step_end(s)
        state["step"] = s + 1
        state["pushed"] += 2
        time.sleep(0.001)
    state["step"] = first
    with_pair(1)
    state["pushed"] += 2
    if c.stats().captures < 1:
        raise SystemExit("bench_python: the capture did not start")
    drain(c, state["pushed"])
    res.update(measure({"with_capture_ns": (with_pair, True),
                        "method_capture_ns": (method_pair, True)}))
    subprocess.run([a.profctl, "--url", a.control, "stop", wid, "--job", a.job],
                   capture_output=True, timeout=30)
    for _ in range(50):
        with_pair(1)
        time.sleep(0.002)
    c.close()
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
