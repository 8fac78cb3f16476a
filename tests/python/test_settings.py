# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Settings -> profiler arguments: the pure mappings, no profiler imported."""

import unittest

import profdtest
from profd import settings as S
from profd.capture import Schedule


class TestContents(unittest.TestCase):
    def test_default_when_nothing_said(self):
        self.assertEqual(S.contents({}, ("cpu", "npu")), frozenset({"cpu", "npu"}))
        self.assertEqual(S.contents({"contents": []}, ("cpu",)), frozenset({"cpu"}))
        self.assertEqual(S.contents({"contents": None}, ("cpu",)), frozenset({"cpu"}))

    def test_list_and_text(self):
        self.assertEqual(S.contents({"contents": ["npu", "memory"]}, ("cpu",)), frozenset({"npu", "memory"}))
        self.assertEqual(S.contents({"contents": "cpu, stack"}, ()), frozenset({"cpu", "stack"}))

    def test_legacy_flags(self):
        # verl's npu_profile.yaml: with_cpu, with_npu, record_shapes, ...
        got = S.contents({"with_cpu": True, "with_npu": False, "record_shapes": True, "with_stack": "true"}, ("npu",))
        self.assertEqual(got, frozenset({"cpu", "shapes", "stack"}))
        self.assertEqual(S.contents({"contents": ["npu"], "with_memory": True}, ()), frozenset({"npu", "memory"}))
        # every flag false: said, and nothing
        self.assertEqual(S.contents({"with_cpu": False}, ("cpu", "npu")), frozenset())

    def test_unknown_entries(self):
        with self.assertRaises(S.SettingsError) as e:
            S.contents({"contents": ["cpu", "gpu", "flops"]}, ())
        self.assertEqual(
            str(e.exception), "contents: unknown 'flops', 'gpu' (known: cpu, cuda, npu, memory, shapes, module, stack)"
        )
        with self.assertRaises(S.SettingsError) as e:
            S.contents({"contents": [1, 2]}, ())
        self.assertEqual(str(e.exception), "contents must be a list of names, found [1, 2]")


class TestFlags(unittest.TestCase):
    def test_spellings(self):
        for v, want in [(True, True), (False, False), (1, True), (0, False), ("True", True), ("no", False)]:
            self.assertIs(S.flag({"analysis": v}, "analysis", None), want)
        self.assertIs(S.flag({}, "analysis", True), True)
        self.assertIs(S.flag({"analysis": None}, "analysis", False), False)
        with self.assertRaises(S.SettingsError) as e:
            S.flag({"analysis": "maybe"}, "analysis", True)
        self.assertEqual(str(e.exception), "analysis must be true or false, found 'maybe'")
        with self.assertRaises(S.SettingsError):
            S.flag({"gzip": 2}, "gzip", False)


class TestTorch(unittest.TestCase):
    def test_defaults(self):
        self.assertEqual(
            S.torch_profile_args({}, cuda_available=True),
            {
                "activities": ["CPU", "CUDA"],
                "record_shapes": False,
                "profile_memory": False,
                "with_stack": False,
                "with_modules": False,
            },
        )
        self.assertEqual(S.torch_profile_args({}, cuda_available=False)["activities"], ["CPU"])

    def test_contents(self):
        got = S.torch_profile_args({"contents": ["cuda", "shapes", "memory", "stack", "module"]}, True)
        self.assertEqual(
            got,
            {
                "activities": ["CPU", "CUDA"],
                "record_shapes": True,
                "profile_memory": True,
                "with_stack": True,
                "with_modules": True,
            },
        )
        # CPU always; CUDA only when asked for and present
        self.assertEqual(S.torch_profile_args({"contents": ["cpu"]}, True)["activities"], ["CPU"])
        self.assertEqual(S.torch_profile_args({"contents": ["cuda"]}, False)["activities"], ["CPU"])
        # npu entries are accepted (verl shares contents between tools) and mean nothing here
        self.assertEqual(S.torch_profile_args({"contents": ["npu", "shapes"]}, True)["activities"], ["CPU"])

    def test_schedule(self):
        self.assertIsNone(S.schedule_args(None))
        self.assertIsNone(S.schedule_args(Schedule(0, 1, 1, 0, 1)))
        self.assertEqual(
            S.schedule_args(Schedule(skip_first=3, wait=1, warmup=1, active=2, repeat=4)),
            {"skip_first": 3, "wait": 1, "warmup": 1, "active": 2, "repeat": 4},
        )

    def test_trace_names(self):
        self.assertEqual(S.trace_name(0), "trace-p0.pt.trace.json")
        self.assertEqual(S.trace_name(2, 1), "trace-p2-c1.pt.trace.json")
        self.assertEqual(S.trace_name(0, 0, gzip=True), "trace-p0-c0.pt.trace.json.gz")


class TestNpu(unittest.TestCase):
    def test_defaults_follow_verl(self):
        self.assertEqual(
            S.npu_profile_args({}),
            {
                "activities": ["CPU", "NPU"],
                "record_shapes": False,
                "profile_memory": False,
                "with_stack": False,
                "with_modules": False,
                "experimental": {"profiler_level": "Level0"},
                "analyse": True,
            },
        )

    def test_everything_set(self):
        got = S.npu_profile_args(
            {
                "contents": ["npu", "memory", "shapes", "module", "stack"],
                "level": "level1",
                "analysis": False,
                "export_type": "db",
                "data_simplification": False,
                "discrete": True,
            }
        )
        self.assertEqual(
            got,
            {
                "activities": ["NPU"],
                "record_shapes": True,
                "profile_memory": True,
                "with_stack": True,
                "with_modules": True,
                "experimental": {"profiler_level": "Level1", "export_type": "Db", "data_simplification": False},
                "analyse": False,
            },
        )

    def test_levels_and_export_types(self):
        for level, member in [("level_none", "Level_none"), ("level0", "Level0"), ("LEVEL2", "Level2")]:
            self.assertEqual(S.npu_profile_args({"level": level})["experimental"]["profiler_level"], member)
        self.assertEqual(
            S.npu_profile_args({"export_type": ["text", "db"]})["experimental"]["export_type"], ["Text", "Db"]
        )
        self.assertEqual(S.npu_profile_args({"contents": ["cpu"]})["activities"], ["CPU"])
        self.assertEqual(S.npu_profile_args({"contents": ["memory"]})["activities"], ["CPU", "NPU"])

    def test_rejections(self):
        with self.assertRaises(S.SettingsError) as e:
            S.npu_profile_args({"level": "level3"})
        self.assertEqual(str(e.exception), "level must be one of level_none, level0, level1, level2; found 'level3'")
        with self.assertRaises(S.SettingsError) as e:
            S.npu_profile_args({"export_type": "json"})
        self.assertEqual(str(e.exception), "export_type must be text or db (or a list of them); found 'json'")


class TestMemoryHistory(unittest.TestCase):
    # parameter names of torch.cuda.memory._record_memory_history by version
    TORCH_2_1 = ("enabled", "context", "stacks", "max_entries", "device")
    TORCH_2_0 = ("enabled", "record_context", "trace_alloc_max_entries", "trace_alloc_record_context", "device")
    TORCH_1_13 = ("enabled", "device")

    def test_versions(self):
        self.assertEqual(
            S.memory_history_args({}, self.TORCH_2_1),
            ({"enabled": "all", "context": "all", "stacks": "all", "max_entries": 100000}, {"enabled": None}),
        )
        self.assertEqual(
            S.memory_history_args({"trace_alloc_max_entries": 5000}, self.TORCH_2_0),
            (
                {"enabled": True, "trace_alloc_max_entries": 5000, "trace_alloc_record_context": True},
                {"enabled": False},
            ),
        )
        self.assertEqual(
            S.memory_history_args({"trace_alloc_max_entries": 5000, "stack_depth": 8}, self.TORCH_1_13),
            ({"enabled": True}, {"enabled": False}),
        )

    def test_stack_depth_only_where_taken(self):
        start, _ = S.memory_history_args({"stack_depth": 8}, self.TORCH_2_1 + ("stack_depth",))
        self.assertEqual(start["stack_depth"], 8)
        start, _ = S.memory_history_args({}, ("enabled", "stack_depth"))
        self.assertEqual(start, {"enabled": True, "stack_depth": 32})

    def test_rejections(self):
        with self.assertRaises(S.SettingsError) as e:
            S.memory_history_args({"trace_alloc_max_entries": 0}, self.TORCH_2_1)
        self.assertEqual(str(e.exception), "trace_alloc_max_entries must be >= 1, found 0")
        with self.assertRaises(S.SettingsError) as e:
            S.memory_history_args({"stack_depth": "deep"}, self.TORCH_2_1)
        self.assertEqual(str(e.exception), "stack_depth must be an integer, found 'deep'")
        self.assertEqual(S.memory_history_args({"trace_alloc_max_entries": "42"}, self.TORCH_2_1)[0]["max_entries"], 42)


if __name__ == "__main__":
    profdtest.main()
