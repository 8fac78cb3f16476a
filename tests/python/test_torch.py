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
        self.assertEqual(os.listdir(self.dir), ["trace-p0.pt.trace.json"])
        self.assertIn("aten::mm", names(load_trace(os.path.join(self.dir, "trace-p0.pt.trace.json")), "aten::"))

    def test_end_to_end_ignores_the_schedule(self):
        # end-to-end captures get no sub-step calls: a schedule would record nothing
        b = B.TorchBackend()
        cap = self.capture({}, schedule=Schedule(0, 1, 1, 2, 1))
        b.start(cap)
        b.stop(cap)
        self.assertNotIn("schedule", self.seen[0])
        self.assertEqual(os.listdir(self.dir), ["trace-p0.pt.trace.json"])

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
        self.assertEqual([f["path"] for f in cap["files"]], ["trace-p0.pt.trace.json"])
        ev = load_trace(os.path.join(self.files("e2e", cap), "trace-p0.pt.trace.json"))
        self.assertIn("aten::mm", names(ev, "aten::"))
        self.assertEqual(names(ev, r"sub#"), sorted("sub#%d" % k for k in range(12)))

    def test_gzip(self):
        cap = self.capture("gzip", 0)
        self.assertEqual([f["path"] for f in cap["files"]], ["trace-p0.pt.trace.json.gz"])
        ev = load_trace(os.path.join(self.files("gzip", cap), "trace-p0.pt.trace.json.gz"))
        self.assertIn("aten::tanh", names(ev, "aten::"))

    def test_schedule_cycles(self):
        cap = self.capture("cycles", 0)
        self.assertEqual(cap["substeps"], [{"first": 2, "last": 3}, {"first": 6, "last": 7}])
        self.assertEqual(
            sorted(f["path"] for f in cap["files"]), ["trace-p0-c0.pt.trace.json", "trace-p0-c1.pt.trace.json"]
        )
        root = self.files("cycles", cap)
        c0 = load_trace(os.path.join(root, "trace-p0-c0.pt.trace.json"))
        c1 = load_trace(os.path.join(root, "trace-p0-c1.pt.trace.json"))
        self.assertEqual(names(c0, r"sub#"), ["sub#2", "sub#3"])
        self.assertEqual(names(c1, r"sub#"), ["sub#6", "sub#7"])
        self.assertEqual(len([e for e in c0 if e["name"].startswith("ProfilerStep#")]), 2)

    def test_phase_twice_in_a_step(self):
        cap = self.capture("twice", 0)
        self.assertEqual(
            sorted(f["path"] for f in cap["files"]), ["trace-p0.pt.trace.json", "trace-p1.pt.trace.json"]
        )
        root = self.files("twice", cap)
        for f in cap["files"]:
            self.assertEqual(len([e for e in load_trace(os.path.join(root, f["path"])) if e["name"] == "sub#0"]), 1)

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
