# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""profd._speedups, the step scope in C: in use where the build made it,
the ctypes path where it is missing, of another version or switched off
(PROFD_NO_SPEEDUPS=1), and the same behaviour either way: one scenario of
odd step values, exceptions in the with-block, nested steps, calls after
close, run against a real profd once per path, with the exact steps libprofd
saw (the capture's calls and step markers) compared.

PROFD_SPEEDUPS_BUILT (1 or 0, from CMake) says whether this build made the
extension.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import profdtest

profdtest.require(daemon=True)

import profd  # noqa: E402
from profd import _native as N  # noqa: E402

PKG = os.path.dirname(os.path.abspath(profd.__file__))
BUILT = os.environ.get("PROFD_SPEEDUPS_BUILT") == "1"
SWITCHED_OFF = N._no_speedups()

# A worker: every kind of step call, then what it saw (printed as JSON).
# The window (steps 3:, tool "mine") is open before it starts.
WORKER = r"""
import io, json, logging, os, sys, time
stream = io.StringIO()
logging.basicConfig(stream=stream, level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")
import profd
from profd import markers

calls = []

class Rec:
    def start(self, cap):
        calls.append(["start", cap.step])

    def stop(self, cap):
        names = [e.get("name", "") for e in markers.read_markers(cap)["traceEvents"]]
        calls.append(["stop", cap.step, [n for n in names if n.startswith("ProfilerStep")]])

class I(int):
    pass

out = {"speedups": profd.speedups()}
c = profd.Client(role="tester", rank=0, job=sys.argv[2], url=sys.argv[1], backend=Rec())
out["scope"] = type(c.step(1)).__module__
deadline = time.monotonic() + 10
while not c.stats().connected and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.2)
for s in (1, 2):
    with c.step(s):
        pass
ev = []
with c.step(3) as s:  # the scope itself, the same object each step
    ev.append(s is c.step(3))
try:
    with c.step(4):
        raise ValueError("in the block")
except ValueError as e:
    ev.append("raised " + str(e))
c.step_begin(5)
c.step_end(5)
with c.step(6.0):  # an integral float: the integer
    pass
with c.step(I(7)):  # an int subclass
    pass
with c.step("eight"):  # not a step: said once
    pass
c.step_begin(2 ** 64 + 9)  # as ctypes: the low 64 bits
c.step_end(2 ** 64 + 9)
with c.step(10):  # nested: one scope, so the outer exit ends step 11
    with c.step(11):
        pass
with c.step(True):  # a bool: 1, as ctypes converts it
    pass
with c.step(12) as s:
    ev.append(s.step)
r = c.step(13).__exit__(None, None, None)
ev.append(r)
c.step_begin(14)
c.close()
after = c.step(15)
with after:  # after close: no-ops, also through objects taken before
    pass
c.step_begin(16)
c.step_end(16)
ev.append(after.step)
out.update({"calls": calls, "events": ev, "log": stream.getvalue().splitlines(), "enabled": c.enabled})
print(json.dumps(out))
"""


def run(args, env_extra=None, pythonpath=None, code=WORKER):
    env = dict(os.environ)
    env.pop("PROFD_NO_SPEEDUPS", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, "-c", code] + list(args), env=env, capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        raise AssertionError("worker failed (%d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
    return json.loads(p.stdout)


PROBE = r"""
import json, profd
c = profd.Client(role="tester", url="ipc:///nonexistent-profd/worker.sock")
with c.step(1):
    pass
c.close()
print(json.dumps({"speedups": profd.speedups(), "error": profd.speedups_error(),
                  "scope": type(c.step(2)).__module__ + "." + type(c.step(2)).__name__}))
"""


class TestSpeedupsInUse(unittest.TestCase):
    def test_this_process(self):
        c = profd.Client(role="tester", url="ipc:///nonexistent-profd/worker.sock")
        try:
            scope = c.step(1)
            if BUILT and not SWITCHED_OFF:
                self.assertTrue(profd.speedups(), profd.speedups_error())
                self.assertIsNone(profd.speedups_error())
                self.assertEqual(type(scope).__module__ + "." + type(scope).__name__, "profd._speedups.StepScope")
                # the calls of the training loop are the C scope's
                self.assertIs(c.step.__self__, scope)
                self.assertIs(c.step_begin.__self__, scope)
                self.assertIs(c.step_end.__self__, scope)
            else:
                self.assertFalse(profd.speedups())
                why = "PROFD_NO_SPEEDUPS" if SWITCHED_OFF else "not built for this Python"
                self.assertIn(why, profd.speedups_error())
                self.assertEqual(type(scope).__name__, "_StepScope")
        finally:
            c.close()

    def test_switched_off(self):
        for value in ("1", "yes"):
            got = run([], {"PROFD_NO_SPEEDUPS": value}, code=PROBE)
            self.assertEqual(got, {"speedups": False, "error": "PROFD_NO_SPEEDUPS=%s: the ctypes path" % value,
                                   "scope": "profd.client._StepScope"})
        got = run([], {"PROFD_NO_SPEEDUPS": "0"}, code=PROBE)
        self.assertEqual(got["speedups"], BUILT)

    def test_missing_or_other_version(self):
        tmp = tempfile.mkdtemp(prefix="profd-speedups-")
        try:
            dst = os.path.join(tmp, "profd")
            shutil.copytree(PKG, dst, ignore=shutil.ignore_patterns("__pycache__", "_speedups*"))
            got = run([], pythonpath=tmp, code=PROBE)
            self.assertFalse(got["speedups"])
            self.assertRegex(got["error"], r"^profd._speedups not built for this Python \(.+\): the ctypes path$")
            self.assertEqual(got["scope"], "profd.client._StepScope")
            with open(os.path.join(dst, "_speedups.py"), "w") as f:
                f.write("ABI = 0\n")
            got = run([], pythonpath=tmp, code=PROBE)
            self.assertFalse(got["speedups"])
            self.assertEqual(
                got["error"],
                "profd._speedups %s is of another package version (ABI 0, not 1): the ctypes path"
                % os.path.join(dst, "_speedups.py"),
            )
            self.assertEqual(got["scope"], "profd.client._StepScope")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class TestSameBehaviour(profdtest.DaemonCase):
    daemon_args = ("--custom-tools", "mine")  # the tool of the tests' own backend
    def scenario(self, job, no_speedups):
        wid = self.d.start_window("--job", job, "--roles", "tester", "--steps", "3:", "--e2e", "--tool", "mine")
        got = run([self.url, job], {"PROFD_NO_SPEEDUPS": "1" if no_speedups else "0"})
        self.assertEqual(self.d.wait(wid), 3)
        (cap,) = self.d.manifest(job, wid)["captures"]
        got["capture"] = [cap["status"], cap["reason"], cap["first_step"], cap["last_step"]]
        return got

    def test_both_paths_alike(self):
        fast = self.scenario("fast", False)
        slow = self.scenario("slow", True)
        self.assertEqual((fast.pop("speedups"), slow.pop("speedups")), (BUILT, False))
        self.assertEqual((fast.pop("scope"), slow.pop("scope")), ("profd._speedups" if BUILT else "profd.client",
                                                                  "profd.client"))
        self.maxDiff = None
        self.assertEqual(fast, slow)
        # 2**64 + 9 is 9; 10 begins, 11 begins and ends twice; True is 1; 13
        # only ends (no range); close() ends 14
        steps = ["ProfilerStep#%d" % n for n in (3, 4, 5, 6, 7, 9, 10, 11, 1, 12, 14)]
        want = {
            "calls": [["start", 3], ["stop", 14, steps]],
            "events": [True, "raised in the block", 12, False, 15],
            "log": ["WARNING profd ignoring step 'eight': steps are integers"],
            "enabled": False,
            "capture": ["truncated", "worker closed during step 14", 3, 14],
        }
        self.assertEqual(slow, want)


if __name__ == "__main__":
    profdtest.main()
