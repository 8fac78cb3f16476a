# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Python backends and the glue that runs them as libprofd backends, without
a daemon and without torch.

torch_memory runs against a stand-in torch (FakeTorchMemory below) shaped
like torch >= 2.1's torch.cuda.memory, whose _record_memory_history is a
wrapper (enabled, *args, **kwargs) that sends a bool to the legacy API and
shows the new API's parameters through __signature__.

torch_npu is not available here: the npu tests install a stand-in module
(FakeTorchNpu below) that records what the backend asks of it, so the
settings -> torch_npu.profiler mapping and the backend's life cycle are
checked exactly; the real torch_npu is exercised only on Ascend machines.
"""

import ctypes
import inspect
import json
import os
import pickle
import shutil
import sys
import tempfile
import types
import unittest
from unittest import mock

import profdtest
from profd import _native as N
from profd import backends as B
from profd.capture import Capture, Schedule
from profd.client import _Table, _write_reason


class _Enum:
    def __init__(self, kind, names):
        for n in names:
            setattr(self, n, "%s.%s" % (kind, n))


class FakeProfile:
    """torch_npu.profiler.profile stand-in: records its life and, like
    tensorboard_trace_handler, writes a result folder at stop."""

    instances = []

    def __init__(self, **kw):
        self.kw = kw
        self.calls = []
        FakeProfile.instances.append(self)

    def start(self):
        self.calls.append("start")

    def step(self):
        self.calls.append("step")

    def stop(self):
        self.calls.append("stop")
        out = os.path.join(self.kw["on_trace_ready"][1], "host_1_0_ascend_pt")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "trace_view.json"), "w") as f:
            f.write("[]")


def fake_torch_npu(with_analyse_flag=True):
    m = types.ModuleType("torch_npu")
    prof = types.ModuleType("torch_npu.profiler")
    prof.ProfilerActivity = _Enum("ProfilerActivity", ["CPU", "NPU"])
    prof.ProfilerLevel = _Enum("ProfilerLevel", ["Level_none", "Level0", "Level1", "Level2"])
    prof.ExportType = _Enum("ExportType", ["Text", "Db"])
    prof._ExperimentalConfig = lambda **kw: ("ExperimentalConfig", kw)
    prof.schedule = lambda **kw: ("schedule", kw)
    if with_analyse_flag:
        prof.tensorboard_trace_handler = lambda dir_name=None, worker_name=None, analyse_flag=True: (
            "handler",
            dir_name,
            analyse_flag,
        )
    else:
        prof.tensorboard_trace_handler = lambda dir_name=None, worker_name=None, use_gzip=False: (
            "handler",
            dir_name,
            None,
        )
    prof.profile = FakeProfile
    m.profiler = prof
    return m


def make_capture(d, **over):
    fields = dict(
        window_id=3,
        window="w3-step2",
        job="j",
        role="rollout",
        phase="generate",
        rank=2,
        replica_rank=0,
        first_step=2,
        last_step=2,
        step=2,
        substep=0,
        part=0,
        tool="npu",
        mode="discrete",
        settings_json="{}",
        dir=d,
        schedule=None,
    )
    fields.update(over)
    return Capture(**fields)


class TestNpuWithFakeModule(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="profd-npu-")
        FakeProfile.instances.clear()
        self.saved = sys.modules.get("torch_npu")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.saved is None:
            sys.modules.pop("torch_npu", None)
        else:
            sys.modules["torch_npu"] = self.saved

    def test_kwargs(self):
        npu = fake_torch_npu()
        args = {
            "activities": ["CPU", "NPU"],
            "record_shapes": True,
            "profile_memory": False,
            "with_stack": False,
            "with_modules": True,
            "experimental": {"profiler_level": "Level1", "export_type": ["Text", "Db"], "data_simplification": True},
            "analyse": False,
        }
        sched = {"skip_first": 0, "wait": 1, "warmup": 1, "active": 3, "repeat": 1}
        kw = B.npu_profile_kwargs(npu, args, "/out", sched)
        self.assertEqual(
            kw,
            {
                "activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
                "record_shapes": True,
                "profile_memory": False,
                "with_stack": False,
                "with_modules": True,
                "experimental_config": (
                    "ExperimentalConfig",
                    {
                        "profiler_level": "ProfilerLevel.Level1",
                        "export_type": ["ExportType.Text", "ExportType.Db"],
                        "data_simplification": True,
                    },
                ),
                "on_trace_ready": ("handler", "/out", False),
                "schedule": ("schedule", sched),
            },
        )

    def test_old_handler_without_analyse_flag(self):
        npu = fake_torch_npu(with_analyse_flag=False)
        args = B.S.npu_profile_args({})
        self.assertEqual(B.npu_profile_kwargs(npu, args, "/out", None)["on_trace_ready"], ("handler", "/out", None))
        args = B.S.npu_profile_args({"analysis": False})
        with self.assertRaises(B.BackendError) as e:
            B.npu_profile_kwargs(npu, args, "/out", None)
        self.assertEqual(str(e.exception), "npu: this torch_npu cannot turn analysis off (no analyse_flag)")

    def test_missing_enum_member(self):
        npu = fake_torch_npu()
        del npu.profiler.ProfilerLevel.Level_none
        with self.assertRaises(B.BackendError) as e:
            B.npu_profile_kwargs(npu, B.S.npu_profile_args({"level": "level_none"}), "/out", None)
        self.assertEqual(str(e.exception), "npu: this version has no ProfilerLevel.Level_none")

    def test_life_cycle_with_schedule_and_marker(self):
        sys.modules["torch_npu"] = fake_torch_npu()
        b = B.NpuBackend()
        self.assertTrue(b.native)
        cap = make_capture(
            self.dir,
            settings_json=json.dumps({"level": "level2", "analysis": False, "contents": ["npu", "cpu"]}),
            schedule=Schedule(0, 1, 1, 2, 1),
        )
        b.start(cap)
        (p,) = FakeProfile.instances
        sched = {"skip_first": 0, "wait": 1, "warmup": 1, "active": 2, "repeat": 1}
        self.assertEqual(p.kw["schedule"], ("schedule", sched))
        level = {"profiler_level": "ProfilerLevel.Level2"}
        self.assertEqual(p.kw["experimental_config"], ("ExperimentalConfig", level))
        b.step(cap)
        b.step(cap)
        b.stop(cap)
        self.assertEqual(p.calls, ["start", "step", "step", "stop"])
        self.assertEqual(
            profdtest.files_below(self.dir), ["analysis_pending.json", "host_1_0_ascend_pt/trace_view.json"]
        )
        with open(os.path.join(self.dir, "analysis_pending.json")) as f:
            marker = json.load(f)
        self.assertEqual(marker["tool"], "npu")
        self.assertEqual(marker["analysis"], "pending")
        self.assertEqual(marker["profiler_path"], ".")
        self.assertIn("torch_npu.profiler.profiler.analyse(profiler_path=", marker["command"])

    def test_end_to_end_ignores_schedule_and_analysis_on_writes_no_marker(self):
        sys.modules["torch_npu"] = fake_torch_npu()
        b = B.NpuBackend()
        cap = make_capture(self.dir, phase=None, role="e2e", mode="e2e", schedule=Schedule(0, 1, 1, 2, 1))
        b.start(cap)
        b.stop(cap)
        (p,) = FakeProfile.instances
        self.assertNotIn("schedule", p.kw)
        self.assertEqual(p.kw["on_trace_ready"], ("handler", self.dir, True))
        self.assertEqual(profdtest.files_below(self.dir), ["host_1_0_ascend_pt/trace_view.json"])

    def test_not_importable(self):
        sys.modules.pop("torch_npu", None)
        try:
            import torch_npu  # noqa: F401

            self.skipTest("torch_npu is installed here")
        except ImportError:
            pass
        with self.assertRaises(B.BackendError) as e:
            B.NpuBackend().start(make_capture(self.dir))
        self.assertEqual(
            str(e.exception), "npu: torch_npu is not importable: ModuleNotFoundError: No module named 'torch_npu'"
        )
        self.assertEqual(os.listdir(self.dir), [])


class Recorder(profdtest.RecorderBase):
    """A user backend that records its calls; raises where told to."""

    def __init__(self, native=False, fail=None):
        super().__init__(native)
        self.fail = fail or {}

    def entry(self, what, cap):
        return (what, cap.step, cap.substep, cap.part)

    def failed(self, what, cap):
        if what in self.fail:
            raise self.fail[what]


class TestTableGlue(unittest.TestCase):
    """_Table callbacks called through their C function pointers, as
    libprofd's engine calls them."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="profd-glue-")
        self.c = N.Capture()
        self.c.window_id = 4
        self.c.window = b"w4-step7"
        self.c.job = b"j"
        self.c.role = b"actor"
        self.c.phase = b"update_actor"
        self.c.rank = 5
        self.c.replica_rank = -1
        self.c.first_step = 7
        self.c.last_step = -1
        self.c.step = 7
        self.c.tool = b"mine"
        self.c.mode = b"discrete"
        self.c.settings_json = b'{"x": 1}'
        self.c.dir = self.dir.encode()
        self.reason = ctypes.create_string_buffer(64)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def call(self, t, what):
        fn = getattr(t.struct, what)
        return fn(ctypes.pointer(self.c), None, ctypes.addressof(self.reason), len(self.reason))

    def test_capture_from_c(self):
        cap = Capture.from_c(self.c)
        self.assertEqual((cap.window_id, cap.window, cap.role, cap.phase), (4, "w4-step7", "actor", "update_actor"))
        self.assertIsNone(cap.replica_rank)
        self.assertIsNone(cap.last_step)
        self.assertIsNone(cap.schedule)
        self.assertEqual(cap.settings, {"x": 1})
        self.c.schedule.wait, self.c.schedule.active, self.c.replica_rank = 1, 2, 0
        cap = Capture.from_c(self.c)
        self.assertEqual(cap.schedule, Schedule(0, 1, 0, 2, 0))
        self.assertEqual(cap.replica_rank, 0)
        self.c.settings_json = b"[1]"
        with self.assertRaises(B.S.SettingsError):
            Capture.from_c(self.c).settings

    def test_native_sequence_and_one_capture_object(self):
        r = Recorder(native=True)
        t = _Table("mine", B.ObjectBackend(r))
        self.assertEqual(t.struct.flags, N.PROFD_BACKEND_NATIVE_SCHEDULE)
        self.assertEqual(self.call(t, "start"), 0)
        first = t.caps[self.dir.encode()]
        self.c.substep = 0
        self.assertEqual(self.call(t, "substep"), 0)
        self.c.substep = 1
        self.assertEqual(self.call(t, "substep"), 0)
        self.assertIs(t.caps[self.dir.encode()], first)
        self.c.substep = 2
        self.assertEqual(self.call(t, "stop"), 0)
        self.assertEqual(r.calls, [("start", 7, 0, 0), ("step", 7, 0, 0), ("step", 7, 1, 0), ("stop", 7, 2, 0)])
        self.assertEqual(t.caps, {})

    def test_failure_writes_reason_and_never_raises(self):
        r = Recorder(fail={"start": RuntimeError("boom")})
        t = _Table("mine", B.ObjectBackend(r))
        self.assertEqual(t.struct.flags, 0)
        with self.assertLogs("profd", "WARNING") as logs:
            self.assertEqual(self.call(t, "start"), N.PROFD_EBACKEND)
        self.assertEqual(self.reason.value, b"Recorder: start raised RuntimeError: boom")
        self.assertEqual(
            logs.output,
            [
                "WARNING:profd:capture failed (w4-step7 actor.update_actor rank 5): "
                "Recorder: start raised RuntimeError: boom"
            ],
        )
        self.assertEqual(t.caps, {})

    def test_backend_error_reason_as_is_and_truncated(self):
        class Long:
            name = "long"

            def start(self, cap):
                raise B.BackendError("x" * 62 + "\u00e9tat")  # the cut falls inside a UTF-8 character

            def stop(self, cap):
                pass

        t = _Table("mine", B.ObjectBackend(Long()))
        with self.assertLogs("profd", "WARNING"):
            self.assertEqual(self.call(t, "start"), N.PROFD_EBACKEND)
        self.assertEqual(self.reason.value, b"x" * 62)

    def test_step_failure_aborts(self):
        aborted = []

        class Native(B.Backend):
            name = "native"
            native = True

            def start(self, cap):
                pass

            def step(self, cap):
                raise ValueError("bad substep %d" % cap.substep)

            def stop(self, cap):
                raise AssertionError("stop after a failed step")

            def abort(self, cap):
                aborted.append(cap.substep)

        t = _Table("mine", Native())
        self.assertEqual(self.call(t, "start"), 0)
        self.c.substep = 3
        with self.assertLogs("profd", "WARNING"):
            self.assertEqual(self.call(t, "substep"), N.PROFD_EBACKEND)
        self.assertEqual(self.reason.value, b"native: step raised ValueError: bad substep 3")
        self.assertEqual(aborted, [3])
        self.assertEqual(t.caps, {})

    def test_delegation_to_a_c_table(self):
        lib = N.load()

        class ToSim(B.Backend):
            name = "tosim"

            def delegate(self, cap):
                return lib.backend_sim()

        t = _Table("mine", ToSim())
        self.c.settings_json = b'{"bytes": 1000}'
        self.assertEqual(self.call(t, "start"), 0)
        self.assertEqual(os.listdir(self.dir), ["trace-p0.json.part"])
        self.assertEqual(self.call(t, "stop"), 0)
        (name,) = os.listdir(self.dir)
        self.assertRegex(name, r"^rank5-actor-update_actor\.\d+\.pt\.trace\.json$")
        self.assertEqual(t.delegated, {})
        # the C backend's own reason reaches the buffer
        self.reason = ctypes.create_string_buffer(256)
        self.c.dir = (self.dir + "/gone").encode()
        self.assertEqual(self.call(t, "start"), N.PROFD_EBACKEND)
        self.assertEqual(
            self.reason.value.decode(),
            "sim: cannot create %s/gone/trace-p0.json.part: No such file or directory" % self.dir,
        )
        self.assertEqual(t.delegated, {})

    def test_object_backend_needs_start_and_stop(self):
        with self.assertRaises(TypeError) as e:
            B.ObjectBackend(object())
        self.assertIn("needs start(capture) and stop(capture)", str(e.exception))

    def test_write_reason(self):
        buf = ctypes.create_string_buffer(8)
        _write_reason(ctypes.addressof(buf), len(buf), "abcdefghijk")
        self.assertEqual(buf.value, b"abcdefg")
        _write_reason(ctypes.addressof(buf), len(buf), "ab")
        self.assertEqual(buf.value, b"ab")


class FakeTorchMemory:
    """torch.cuda.memory of torch >= 2.1 as far as torch_memory uses it:
    _record_memory_history(enabled="all", *args, **kwargs) dispatches a bool
    `enabled` to _record_memory_history_legacy (trace_alloc_max_entries
    defaulting to 1) and anything else to _record_memory_history_impl, and
    carries the impl's signature in __signature__, as torch does."""

    SNAPSHOT = {
        "segments": [{"device": 0, "total_size": 2 << 20, "allocated_size": 4096, "blocks": []}],
        "device_traces": [[{"action": "alloc", "addr": 1, "size": 4096, "frames": []}]],
    }

    def __init__(self, cuda=True):
        self.calls = []
        torch = types.ModuleType("torch")
        memory = types.SimpleNamespace()

        def legacy(enabled, record_context=True, trace_alloc_max_entries=1, trace_alloc_record_context=False,
                   device=None, record_context_cpp=False, clear_history=False):
            self.calls.append(("legacy", enabled, trace_alloc_max_entries))

        def impl(enabled="all", context="all", stacks="all", max_entries=sys.maxsize, device=None,
                 clear_history=False, compile_context=False, global_record_annotations=False, skip_actions=None):
            self.calls.append(("impl", enabled, context, stacks, max_entries))

        def record(enabled="all", *args, **kwargs):
            if isinstance(enabled, bool):
                return legacy(enabled, *args, **kwargs)
            return impl(enabled, *args, **kwargs)

        record.__signature__ = inspect.signature(impl)
        memory._record_memory_history = record
        memory._snapshot = lambda device=None: self.SNAPSHOT
        torch.cuda = types.SimpleNamespace(is_available=lambda: cuda, memory=memory)
        self.module = torch


class TestTorchMemoryWithFakeTorch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="profd-mem-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def capture(self, settings=None):
        return make_capture(self.dir, tool="torch_memory", mode="e2e", role="e2e", phase=None,
                            settings_json=json.dumps(settings or {}))

    def test_new_api_through_the_wrapper(self):
        fake = FakeTorchMemory()
        b = B.TorchMemoryBackend()
        cap = self.capture({"trace_alloc_max_entries": 5000})
        with mock.patch.dict(sys.modules, {"torch": fake.module}):
            b.start(cap)
            # never the legacy path (a bool), which would keep 1 trace entry
            self.assertEqual(fake.calls, [("impl", "all", "all", "all", 5000)])
            b.stop(cap)
        self.assertEqual(fake.calls[1:], [("impl", None, "all", "all", sys.maxsize)])
        self.assertEqual(os.listdir(self.dir), ["memory_snapshot-p0.pickle"])
        with open(os.path.join(self.dir, "memory_snapshot-p0.pickle"), "rb") as f:
            self.assertEqual(pickle.load(f), FakeTorchMemory.SNAPSHOT)

    def test_abort_stops_the_history(self):
        fake = FakeTorchMemory()
        b = B.TorchMemoryBackend()
        cap = self.capture()
        with mock.patch.dict(sys.modules, {"torch": fake.module}):
            b.start(cap)
            b.abort(cap)
            b.abort(cap)  # once only
        self.assertEqual([c[1] for c in fake.calls], ["all", None])
        self.assertEqual(os.listdir(self.dir), [])

    def test_without_cuda(self):
        fake = FakeTorchMemory(cuda=False)
        with mock.patch.dict(sys.modules, {"torch": fake.module}):
            with self.assertRaises(B.BackendError) as e:
                B.TorchMemoryBackend().start(self.capture())
        self.assertTrue(str(e.exception).startswith("torch_memory: CUDA is not available"))
        self.assertEqual(fake.calls, [])


if __name__ == "__main__":
    profdtest.main()
