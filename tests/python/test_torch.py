# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The torch-based backends with the real torch (CPU): traces written where
the manifest says, gzip, schedules and cycles, repeated phases, settings
reaching torch.profiler, and the clear failures of torch_memory, cuda, nsys
and npu on a machine without CUDA and without torch_npu.
"""

import gzip
import json
import os
import re
import shutil
import tempfile
import time
import unittest

import profdtest

profdtest.require(torch=True, daemon=True)

import profd  # noqa: E402
import torch  # noqa: E402
from profd import backends as B  # noqa: E402
from profd.capture import Capture, Schedule  # noqa: E402
from torch.profiler import record_function  # noqa: E402

CONTENTS_KNOWN = "(known: cpu, cuda, npu, memory, shapes, module, stack)"


def load_trace(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return profdtest.trace_events(json.load(f))


def names(events, pattern):
    return sorted({e["name"] for e in events if re.match(pattern, e.get("name", ""))})


def traces(names_, worker, gz=False):
    """The files named <worker>.<ms>.pt.trace.json[.gz] (TensorBoard's
    naming), oldest first."""
    pat = re.compile(r"^%s\.(\d+)\.pt\.trace\.json%s$" % (re.escape(worker), r"\.gz" if gz else ""))
    return sorted((n for n in names_ if pat.match(n)), key=lambda n: int(pat.match(n).group(1)))


def marker(events, name):
    (e,) = [e for e in events if e.get("name") == name and e.get("cat") == "profd"]
    return e


def inside(outer, events, trace):
    """Every event lies within the range `outer`, up to the error of the
    markers' clock: half the trace's profd::sync range."""
    (sync,) = [e for e in trace if e.get("name") == "profd::sync"]
    tol = sync["dur"] / 2 + 1
    a, b = outer["ts"] - tol, outer["ts"] + outer["dur"] + tol
    return all(a <= e["ts"] and e["ts"] + e.get("dur", 0) <= b for e in events)


class TestTorchBackendDirect(unittest.TestCase):
    """TorchBackend on a Capture built here: what reaches torch.profiler."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="profd-torch-")
        self.seen = []
        real = torch.profiler.profile

        def spy(**kw):
            self.seen.append(kw)
            return real(**kw)

        self.real = real
        torch.profiler.profile = spy

    def tearDown(self):
        torch.profiler.profile = self.real
        shutil.rmtree(self.dir, ignore_errors=True)

    def capture(self, settings, phase=None, schedule=None):
        return Capture(
            window_id=1, window="w1-step1", job="j", role="actor" if phase else "e2e", phase=phase, rank=0,
            replica_rank=None, first_step=1, last_step=1, step=1, substep=0, part=0, tool="torch",
            mode="discrete" if phase else "e2e", settings_json=json.dumps(settings), dir=self.dir,
            schedule=schedule,
        )

    def test_contents_reach_the_profiler(self):
        b = B.TorchBackend()
        cap = self.capture({"contents": ["cpu", "cuda", "shapes", "memory", "stack", "module"]})
        b.start(cap)
        torch.mm(torch.ones(8, 8), torch.ones(8, 8))
        b.stop(cap)
        (kw,) = self.seen
        want_acts = [torch.profiler.ProfilerActivity.CPU]
        if torch.cuda.is_available():
            want_acts.append(torch.profiler.ProfilerActivity.CUDA)
        self.assertEqual(kw["activities"], want_acts)
        self.assertEqual(
            {k: kw[k] for k in ("record_shapes", "profile_memory", "with_stack", "with_modules")},
            {"record_shapes": True, "profile_memory": True, "with_stack": True, "with_modules": True},
        )
        self.assertNotIn("schedule", kw)
        # no markers file (no libprofd here): named after the capture
        (f,) = os.listdir(self.dir)
        self.assertEqual(traces([f], "rank0-e2e"), [f])
        self.assertIn("aten::mm", names(load_trace(os.path.join(self.dir, f)), "aten::"))

    def test_end_to_end_ignores_the_schedule(self):
        # end-to-end captures get no sub-step calls: a schedule would record nothing
        b = B.TorchBackend()
        cap = self.capture({}, schedule=Schedule(0, 1, 1, 2, 1))
        b.start(cap)
        b.stop(cap)
        self.assertNotIn("schedule", self.seen[0])
        self.assertEqual(len(traces(os.listdir(self.dir), "rank0-e2e")), 1)

    def test_failed_export_leaves_no_part_file(self):
        class Broken:
            def export_chrome_trace(self, path):
                with open(path, "w") as f:
                    f.write('[{"name": "half')
                raise OSError(28, "No space left on device")

        for gz in (False, True):
            path = os.path.join(self.dir, "trace-p0.pt.trace.json" + (".gz" if gz else ""))
            with self.assertRaises(OSError):
                B.export_chrome_trace(Broken(), path, gz)
            self.assertEqual(os.listdir(self.dir), [])


class TestTorchWithDaemon(unittest.TestCase):
    """One worker (this process), one window per case, one daemon."""

    JOB = "torchtest"

    @classmethod
    def setUpClass(cls):
        cls.d = profdtest.Daemon()
        w = {}
        win = lambda *a: cls.d.start_window("--job", cls.JOB, "--roles", "tester", *a)
        w["e2e"] = win("--steps", "3", "--e2e", "--tool", "torch")
        w["gzip"] = win("--steps", "4", "--phases", "compute", "--tool", "torch", "--settings",
                        '{"gzip":true,"contents":["cpu","shapes"]}')
        w["cycles"] = win("--steps", "5", "--phases", "compute", "--tool", "torch",
                          "--schedule", "wait=1,warmup=1,active=2,repeat=2")
        w["memory"] = win("--steps", "6", "--e2e", "--tool", "torch_memory")
        w["cuda"] = win("--steps", "7", "--e2e", "--tool", "cuda")
        w["nsys"] = win("--steps", "8", "--e2e", "--tool", "nsys")
        w["npu"] = win("--steps", "9", "--phases", "compute", "--tool", "npu", "--level", "level1")
        w["badcontents"] = win("--steps", "10", "--e2e", "--tool", "torch", "--contents", "cpu,gpu")
        w["twice"] = win("--steps", "11", "--phases", "compute", "--tool", "torch")
        cls.w = w
        c = profd.Client(role="tester", rank=0, job=cls.JOB, url="ipc://%s/worker.sock" % cls.d.run_dir)
        profdtest.wait_connected(c)
        time.sleep(0.2)
        cls.logs = []
        a = torch.randn(32, 32)
        for step in range(1, 13):
            with c.step(step):
                reps = 2 if step == 11 else 1  # step 11: the phase runs twice
                for _ in range(reps):
                    with c.phase("compute"):
                        for k in range(12):
                            with record_function("sub#%d" % k):
                                a = torch.tanh(torch.mm(a, a) / 32)
                            c.substep()
            if step == 2:
                cls.windows_adopted = c.stats().windows
        c.close()
        cls.manifests = {k: (cls.d.wait(v), cls.d.manifest(cls.JOB, v)) for k, v in w.items()}

    @classmethod
    def tearDownClass(cls):
        rc = cls.d.stop()
        cls.d.cleanup()
        if rc != 0:
            raise AssertionError("profd exited with %s" % rc)

    def capture(self, key, want_rc):
        rc, m = self.manifests[key]
        self.assertEqual(rc, want_rc, json.dumps(m, indent=1))
        (cap,) = m["captures"]
        return cap

    def files(self, key, cap):
        root = os.path.join(self.d.window_dir(self.JOB, self.w[key]), cap["dir"])
        self.assertEqual(profdtest.files_below(root), sorted(f["path"] for f in cap["files"]))
        return root

    def test_plan_arrived(self):
        self.assertEqual(self.windows_adopted, len(self.w))

    def test_end_to_end_trace(self):
        cap = self.capture("e2e", 0)
        self.assertEqual((cap["role"], cap["phase"], cap["status"]), ("e2e", None, "complete"))
        paths = [f["path"] for f in cap["files"]]
        # the worker names rank and role; the markers went into the trace
        self.assertEqual(traces(paths, "rank0-tester"), paths)
        ev = load_trace(os.path.join(self.files("e2e", cap), paths[0]))
        self.assertIn("aten::mm", names(ev, "aten::"))
        subs = [e for e in ev if re.match(r"sub#", e["name"])]
        self.assertEqual(names(ev, r"sub#"), sorted("sub#%d" % k for k in range(12)))
        # ProfilerStep#3 and tester.compute ranges around the step's work,
        # on the trace's own clock
        step, phase = marker(ev, "ProfilerStep#3"), marker(ev, "tester.compute")
        self.assertEqual((step["args"]["step"], phase["args"]["phase"]), (3, "compute"))
        self.assertTrue(inside(step, [phase], ev) and inside(phase, subs, ev), (step, phase))
        self.assertIn("profd_mono_us", step["args"])
        self.assertEqual(names(ev, r"ProfilerStep#"), ["ProfilerStep#3"])

    def test_gzip(self):
        cap = self.capture("gzip", 0)
        paths = [f["path"] for f in cap["files"]]
        self.assertEqual(traces(paths, "rank0-tester-compute", gz=True), paths)
        ev = load_trace(os.path.join(self.files("gzip", cap), paths[0]))
        self.assertIn("aten::tanh", names(ev, "aten::"))
        phase = marker(ev, "tester.compute")
        subs = [e for e in ev if e["name"].startswith("sub#")]
        self.assertTrue(inside(phase, subs, ev), phase)

    def test_schedule_cycles(self):
        cap = self.capture("cycles", 0)
        self.assertEqual(cap["substeps"], [{"first": 2, "last": 3}, {"first": 6, "last": 7}])
        paths = traces([f["path"] for f in cap["files"]], "rank0-tester-compute")
        self.assertEqual(len(paths), 2)
        root = self.files("cycles", cap)
        c0 = load_trace(os.path.join(root, paths[0]))
        c1 = load_trace(os.path.join(root, paths[1]))
        self.assertEqual(names(c0, r"sub#"), ["sub#2", "sub#3"])
        self.assertEqual(names(c1, r"sub#"), ["sub#6", "sub#7"])
        # torch's own ProfilerStep#k count sub-steps here: the training step is TrainingStep#5
        self.assertEqual(len([e for e in c0 if e["name"].startswith("ProfilerStep#")]), 2)
        for c in (c0, c1):
            self.assertEqual(marker(c, "TrainingStep#5")["args"]["step"], 5)
            self.assertTrue(inside(marker(c, "tester.compute"), [e for e in c if e["name"].startswith("sub#")], c))

    def test_phase_twice_in_a_step(self):
        cap = self.capture("twice", 0)
        paths = traces([f["path"] for f in cap["files"]], "rank0-tester-compute")
        self.assertEqual(len(paths), 2)
        root = self.files("twice", cap)
        for p in paths:
            self.assertEqual(len([e for e in load_trace(os.path.join(root, p)) if e["name"] == "sub#0"]), 1)

    def test_torch_memory_without_cuda(self):
        if torch.cuda.is_available():
            self.skipTest("CUDA is available here")
        cap = self.capture("memory", 3)
        self.assertEqual(cap["status"], "failed")
        self.assertEqual(
            cap["reason"],
            "torch_memory: CUDA is not available (torch.cuda.is_available() is False); "
            "the memory history records the CUDA caching allocator",
        )
        self.assertEqual(cap["files"], [])

    def test_cuda_and_nsys_without_cuda(self):
        if torch.cuda.is_available():
            self.skipTest("CUDA is available here")
        for key in ("cuda", "nsys"):
            cap = self.capture(key, 3)
            self.assertEqual(
                (cap["status"], cap["reason"]),
                ("failed", "cuda: CUDA is not available in this process (torch.cuda.is_available() is False)"),
            )

    def test_npu_without_torch_npu(self):
        try:
            import torch_npu  # noqa: F401

            self.skipTest("torch_npu is installed")
        except ImportError:
            pass
        cap = self.capture("npu", 3)
        self.assertEqual(
            (cap["status"], cap["reason"]),
            ("failed", "npu: torch_npu is not importable: ModuleNotFoundError: No module named 'torch_npu'"),
        )

    def test_bad_settings(self):
        cap = self.capture("badcontents", 3)
        self.assertEqual((cap["status"], cap["reason"]), ("failed", "torch: contents: unknown 'gpu' " + CONTENTS_KNOWN))


if __name__ == "__main__":
    profdtest.main()
