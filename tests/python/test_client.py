# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The Python client against a real profd: user backends (native and not),
failures that never reach the training loop and land in the manifest, exec
refused and allowed, the C sim backend, unknown tools, close() during a
capture. No torch needed.

The test process is the worker: each test opens a Client with its own job,
opens windows for it with profctl, then steps.
"""

import ctypes
import json
import os
import sys
import time
import unittest

import profdtest

profdtest.require(daemon=True)

import profd  # noqa: E402


class Recorder(profdtest.RecorderBase):
    """A user backend that records its calls and raises where told to."""

    name = "rec"

    def __init__(self, native=False, fail=None):
        super().__init__(native)
        self.fail = fail or (lambda what, cap: None)

    def entry(self, what, cap):
        return (what, cap.window, cap.step, cap.substep, cap.part)

    def failed(self, what, cap):
        self.fail(what, cap)

    def stop(self, cap):
        super().stop(cap)
        with open(os.path.join(cap.dir, "rec-p%d.txt" % cap.part), "w") as f:
            f.write("%s %d\n" % (cap.window, cap.step))


class TestClientWithDaemon(profdtest.DaemonCase):
    daemon_args = ("--custom-tools", "mine")  # the tool of the tests' own backends
    def window(self, job, *args):
        return self.d.start_window("--job", job, "--roles", "tester", *args)

    def client(self, job, backend, windows, **kw):
        c = profd.Client(role="tester", rank=0, job=job, url=self.url, backend=backend, **kw)
        profdtest.wait_connected(c)
        # the plan follows the registration within a round trip: wait for it
        # (reading c.busy adopts a delivered plan on this thread, as a step
        # does), never sleep for it
        deadline = time.monotonic() + 30
        while True:
            c.busy  # adopts what the background thread received
            if c.stats().windows == windows:
                break
            if time.monotonic() > deadline:
                self.fail("no plan with %d window(s) within 30 s of the registration (have %d)"
                          % (windows, c.stats().windows))
            time.sleep(0.01)
        self.steps(c, 1, 2)
        self.assertEqual(c.stats().windows, windows, "the plan did not arrive before step 3")
        return c

    def steps(self, c, first, last, substeps=6):
        done = 0
        for s in range(first, last + 1):
            with c.step(s):
                with c.phase("generate"):
                    for _ in range(substeps):
                        c.substep()
                done += 1
        return done

    def captures(self, job, wid, want_rc):
        self.assertEqual(self.d.wait(wid), want_rc)
        return self.d.manifest(job, wid)["captures"]

    def test_failures_are_reported_not_raised(self):
        job = "failures"

        def fail(what, cap):
            if what == "start" and cap.step == 3:
                raise RuntimeError("start boom at step 3")
            if what == "step" and cap.step == 4 and cap.substep == 2:
                raise ValueError("bad sub-step %d" % cap.substep)
            if what == "stop" and cap.step == 5:
                raise OSError(28, "No space left on device")

        w = [self.window(job, "--steps", str(s), "--phases", "generate", "--tool", "mine",
                         "--schedule", "wait=0,warmup=0,active=6,repeat=1") for s in (3, 4, 5, 6)]
        rec = Recorder(native=True, fail=fail)
        c = self.client(job, rec, windows=4)
        with self.assertLogs("profd", "WARNING") as logs:
            done = self.steps(c, 3, 7)
        c.close()
        self.assertEqual(done, 5)  # the loop never saw an exception
        self.assertEqual(len(logs.output), 3)
        boom = "rec: start raised RuntimeError: start boom at step 3"
        self.assertEqual(
            logs.output[0], "WARNING:profd:capture failed (w%d-step3 tester.generate rank 0): %s" % (w[0], boom)
        )

        (c3,) = self.captures(job, w[0], 3)
        self.assertEqual((c3["status"], c3["reason"]), ("failed", boom))
        (c4,) = self.captures(job, w[1], 3)
        self.assertEqual((c4["status"], c4["reason"]), ("failed", "rec: step raised ValueError: bad sub-step 2"))
        (c5,) = self.captures(job, w[2], 3)
        self.assertEqual(
            (c5["status"], c5["reason"]), ("failed", "rec: stop raised OSError: [Errno 28] No space left on device")
        )
        (c6,) = self.captures(job, w[3], 0)
        self.assertEqual((c6["status"], c6["reason"]), ("complete", None))
        # a backend of its own: the step and phase markers stay beside its files
        self.assertEqual(sorted(f["path"] for f in c6["files"]), ["profd-markers-p0.json", "rec-p0.txt"])
        self.assertEqual(c6["substeps"], [{"first": 0, "last": 5}])
        # after the failed sub-step no call was made for that capture; the others ran through
        names = ["w%d-step%d" % (w[i], 3 + i) for i in range(4)]
        n4 = names[1]
        self.assertEqual(
            [x for x in rec.calls if x[1] == n4],
            [("start", n4, 4, 0, 0), ("step", n4, 4, 0, 0), ("step", n4, 4, 1, 0), ("step", n4, 4, 2, 0)],
        )
        self.assertEqual([x[0] for x in rec.calls if x[1] == names[2]], ["start"] + ["step"] * 6 + ["stop"])
        self.assertEqual([x[0] for x in rec.calls if x[1] == names[3]], ["start"] + ["step"] * 6 + ["stop"])

    def test_non_native_backend_gets_each_recorded_span(self):
        job = "spans"
        wid = self.window(job, "--steps", "3", "--phases", "generate", "--tool", "mine",
                          "--schedule", "wait=1,warmup=1,active=2,repeat=2")
        rec = Recorder(native=False)
        c = self.client(job, rec, windows=1)
        self.steps(c, 3, 4, substeps=10)
        c.close()
        n = "w%d-step3" % wid
        self.assertEqual(
            rec.calls, [("start", n, 3, 2, 0), ("stop", n, 3, 4, 0), ("start", n, 3, 6, 1), ("stop", n, 3, 8, 1)]
        )
        (cap,) = self.captures(job, wid, 0)
        self.assertEqual(cap["substeps"], [{"first": 2, "last": 3}, {"first": 6, "last": 7}])
        self.assertEqual(
            sorted(f["path"] for f in cap["files"]),
            ["profd-markers-p0.json", "profd-markers-p1.json", "rec-p0.txt", "rec-p1.txt"],
        )
        # the markers: a Chrome trace of the span, ProfilerStep#3 and tester.generate
        with open(os.path.join(self.d.window_dir(job, wid), cap["dir"], "profd-markers-p0.json")) as f:
            m = json.load(f)
        self.assertEqual(m["otherData"]["profd"]["worker"], "rank0-tester-generate")
        names = {e["name"]: e for e in m["traceEvents"] if e.get("ph") == "X"}
        self.assertEqual(sorted(names), ["ProfilerStep#3", "tester.generate"])
        step, phase = names["ProfilerStep#3"], names["tester.generate"]
        self.assertEqual((step["args"]["step"], phase["args"]["phase"]), (3, "generate"))
        self.assertEqual(step["args"]["profd_mono_us"], step["ts"])
        self.assertTrue(step["ts"] <= phase["ts"], (step, phase))
        self.assertTrue(step["args"].get("profd_open"))  # the span stopped inside the step

    def test_exec_is_refused_unless_allowed(self):
        job = "exec-off"
        cmd = '{"start_cmd":"echo {pid} {role} {step} > started.txt"}'
        wid = self.window(job, "--steps", "3", "--e2e", "--tool", "exec", "--settings", cmd)
        c = self.client(job, Recorder(), windows=1)
        with self.assertLogs("profd", "WARNING"):
            self.steps(c, 3, 3)
        c.close()
        (cap,) = self.captures(job, wid, 3)
        self.assertEqual(cap["status"], "failed")
        self.assertEqual(
            cap["reason"],
            "exec: running commands is off in this worker; enable it with "
            "profd.Client(..., allow_exec=True) or PROFD_ALLOW_EXEC=1",
        )

        job = "exec-on"
        wid = self.window(job, "--steps", "3", "--e2e", "--tool", "exec", "--settings", cmd)
        c = self.client(job, Recorder(), windows=1, allow_exec=True)
        self.steps(c, 3, 3)
        c.close()
        (cap,) = self.captures(job, wid, 0)
        self.assertEqual(cap["status"], "complete")
        self.assertEqual(sorted(f["path"] for f in cap["files"]), ["profd-markers-p0.json", "started.txt"])
        path = os.path.join(self.d.window_dir(job, wid), cap["dir"], "started.txt")
        with open(path) as f:
            self.assertEqual(f.read(), "%d e2e 3\n" % os.getpid())

    def test_exec_does_not_block_the_step(self):
        # the command runs 2 s: the step that starts it returns at once, the
        # capture is reported once it ended (its file is in the manifest)
        job = "exec-slow"
        cmd = '{"start_cmd":"sleep 2; echo done > slow.txt"}'
        wid = self.window(job, "--steps", "3", "--e2e", "--tool", "exec", "--settings", cmd)
        c = self.client(job, Recorder(), windows=1, allow_exec=True)
        t0 = time.monotonic()
        c.step_begin(3)
        took = time.monotonic() - t0
        c.step_end(3)
        # a relation, not a bound a loaded machine crosses: the step returns
        # before the command it started could have ended
        self.assertLess(took, 2.0, "the step starting a 2 s exec command took %.3f s" % took)
        self.steps(c, 4, 4)
        (cap,) = self.captures(job, wid, 0)
        self.assertEqual(cap["status"], "complete")
        self.assertIn("slow.txt", [f["path"] for f in cap["files"]])
        c.close()

    def test_sim_and_unknown_tools(self):
        job = "tools"
        w_sim = self.window(job, "--steps", "3", "--e2e", "--tool", "sim", "--settings", '{"bytes":4096}')
        # a tool the daemon knows (tools.custom) that this process has no backend for
        w_unknown = self.window(job, "--steps", "4", "--e2e", "--tool", "mine")
        # one nobody knows: refused by the daemon, naming the tools
        p = self.d.ctl("start", "--job", job, "--steps", "4", "--tool", "mystery", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(
            p.stderr,
            "profctl: unknown tool 'mystery': the tools are torch, npu, torch_memory, cuda, nsys, exec, "
            "precision_debugger, sim, mine (a client's own backend: add its tool to the daemon's "
            "tools.custom) (EINVAL)\n",
        )
        with self.assertLogs("profd", "WARNING") as logs:
            c = self.client(job, "nonexistent", windows=2)
        self.assertEqual(
            logs.output,
            ["WARNING:profd:unknown backend 'nonexistent' (built-in: torch, npu, torch_memory, cuda); "
             "windows for other tools will fail"],
        )
        with self.assertLogs("profd", "WARNING"):
            self.steps(c, 3, 5)
        c.close()
        (cap,) = self.captures(job, w_sim, 0)
        self.assertEqual(cap["status"], "complete")
        (f,) = cap["files"]
        self.assertRegex(f["path"], r"^rank0-tester\.\d+\.pt\.trace\.json$")  # the markers went in
        self.assertGreaterEqual(f["bytes"], 4096 - 40)
        (cap,) = self.captures(job, w_unknown, 3)
        self.assertEqual(cap["status"], "failed")
        self.assertEqual(
            cap["reason"], "no profiler backend for tool 'mine' in this process (Client backend='nonexistent')"
        )

    def test_cuda_without_torch_uses_the_c_backend(self):
        self.assertNotIn("torch", sys.modules)
        job = "cuda-c"
        wid = self.window(job, "--steps", "3", "--e2e", "--tool", "cuda")
        c = self.client(job, "torch", windows=1)
        self.steps(c, 3, 3)
        c.close()
        rc, m = self.d.wait(wid), self.d.manifest(job, wid)
        (cap,) = m["captures"]
        try:
            rt = ctypes.CDLL("libcudart.so")
        except OSError:
            rt = None
        devices = ctypes.c_int(0)
        if rt is None:
            self.assertEqual((rc, cap["status"]), (3, "failed"))
            self.assertRegex(cap["reason"], r"^cuda: CUDA runtime not found \(.+\)$")
        elif rt.cudaGetDeviceCount(ctypes.byref(devices)) != 0 or devices.value == 0:
            self.assertEqual((rc, cap["status"]), (3, "failed"))
            self.assertRegex(cap["reason"], r"^cuda: cudaProfilerStart returned error [1-9][0-9]*$")
        else:
            self.assertEqual((rc, cap["status"], cap["files"]), (0, "complete", []))

    def test_keyboard_interrupt_in_a_backend_reaches_the_loop(self):
        job = "interrupt"

        def fail(what, cap):
            if what == "start":
                raise KeyboardInterrupt()

        wid = self.window(job, "--steps", "3", "--e2e", "--tool", "mine")
        c = self.client(job, Recorder(fail=fail), windows=1)
        stopped_at = None
        with self.assertLogs("profd", "WARNING"):
            try:
                for s in range(3, 10):
                    with c.step(s):
                        pass
            except KeyboardInterrupt:
                stopped_at = s
        c.close()
        self.assertEqual(stopped_at, 3)
        (cap,) = self.captures(job, wid, 3)
        self.assertEqual((cap["status"], cap["reason"]), ("failed", "rec: start raised KeyboardInterrupt: "))

    def test_close_during_a_capture(self):
        job = "closing"
        wid = self.window(job, "--steps", "3:", "--e2e", "--tool", "mine")
        rec = Recorder()
        c = self.client(job, rec, windows=1)
        self.steps(c, 3, 4)
        c.step_begin(5)
        c.close()  # the backend's stop runs from close(), on this thread
        n = "w%d-from3" % wid
        # (end-to-end captures do not count sub-steps: only step and part matter)
        self.assertEqual([(x[0], x[1], x[2], x[4]) for x in rec.calls], [("start", n, 3, 0), ("stop", n, 5, 0)])
        (cap,) = self.captures(job, wid, 3)
        self.assertEqual((cap["status"], cap["reason"]), ("truncated", "worker closed during step 5"))
        self.assertEqual((cap["first_step"], cap["last_step"]), (3, 5))
        self.assertEqual(sorted(f["path"] for f in cap["files"]), ["profd-markers-p0.json", "rec-p0.txt"])


class TestClientWithoutDaemon(unittest.TestCase):
    def test_close_is_bounded(self):
        # no daemon listens: close() must not wait for the unanswered
        # registration to time out (2 s)
        url = "ipc:///nonexistent-profd-%d/worker.sock" % os.getpid()
        for wait in (0, 0.05, 0.3):
            c = profd.Client(role="tester", rank=0, job="nodaemon", url=url)
            with c.step(1):
                pass
            time.sleep(wait)
            t0 = time.monotonic()
            c.close()
            took = time.monotonic() - t0
            # less than the registration's own timeout (2 s) it must not wait for
            self.assertLess(took, 2.0, "close() took %.3f s with no daemon" % took)


if __name__ == "__main__":
    profdtest.main()
