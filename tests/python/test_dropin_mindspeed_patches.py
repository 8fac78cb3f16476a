# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""MindSpeed keeps its own patches with profd on.

MindSpeed's patch manager (Ascend/MindSpeed@028de58c mindspeed/patch_utils.py,
Patch.apply_patch) replaces `megatron.training.training.train_step` and
then, in every module of sys.modules, an attribute of that name only while
it is still the very object Megatron's module held: MindSpeed-LLM's loop
(Ascend/MindSpeed-LLM@c77308a1 mindspeed_llm/training/training.py) imported
`train_step` from megatron.training.training and gets the patch that way.
The features that patch it (MindSpeed-LLM's create_features_list order):
--npu-datadump (mindspeed/features_manager/functional/npu_datadump.py:
wrapper dump_start_wrapper), --schedules-method dualpipev
(mindspeed_llm/features_manager/pipeline_parallel/dualpipev_feature.py:
DualPipeV's train_step replaces it), --smart-swap
(mindspeed/features_manager/memory/smart_swap.py: wrapper train_step_wrapper)
and --layerwise-disaggregated-training
(mindspeed_llm/features_manager/layerwise_disaggregated_training/u_shaped_split_feature.py:
its own train_step). Wrappers stack on the replacement in registration
order, so with all three the loop calls
smart_swap(dump_start(dualpipev.train_step)).

Each case runs the stand-in's `import mindspeed_llm` (FeatureAdaptor.execute,
the real patch mechanism) with the features' flags, without profd and with
PROFD_AUTO=1 (every integration on, through profd-auto.pth), then trains
two iterations. Expected, from the code above: every patch the manager
recorded is installed in the patched module and in every module that held
the original; train_step is the chain written below (each function named by
its defining module and code qualname); each iteration runs the patched
step. And the same with profd as without it.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
import shutil

import profdtest

profdtest.require(torch=True)

STANDINS = os.path.join(profdtest.HERE, "standins")
NPU = os.path.join(STANDINS, "npu")

PROBE = r"""
import json, sys
import mindspeed_llm  # noqa: F401  (applies MindSpeed's patches)
from mindspeed.patch_utils import MindSpeedPatchesManager

def chain(f):
    out = []
    while f is not None:
        code = getattr(f, "__code__", None)
        out.append("%s:%s" % (f.__globals__.get("__name__"), code.co_qualname) if code else repr(f))
        f = getattr(f, "__wrapped__", None)
    return out

report = {}
for name, p in MindSpeedPatchesManager.patches_info.items():
    final = p.final_patch_func
    holders = sorted(k for k, m in list(sys.modules.items())
                     if p.orig_func_name and getattr(m, p.orig_func_name, None) is final)
    stale = sorted(k for k, m in list(sys.modules.items())
                   if p.orig_func_name and p.orig_func is not None and p.orig_func is not final
                   and getattr(m, p.orig_func_name, None) is p.orig_func)
    report[name] = {"installed": getattr(p.orig_module, p.orig_func_name) is final, "chain": chain(final),
                    "holders": holders, "stale": stale}
report["_loop"] = chain(sys.modules["mindspeed_llm.training.training"].train_step)
profd_mods = sys.modules.get("profd.integrations._common")
report["_owner"] = profd_mods.owner() if profd_mods else None
from mindspeed_llm.training.training import pretrain
from megatron.core.enums import ModelType
from megatron_pretrain_gpt import extra_args_provider, forward_step, model_provider, train_valid_test_datasets_provider
pretrain(train_valid_test_datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step,
         extra_args_provider=extra_args_provider)
print("REPORT " + json.dumps(report))
"""

TS = "megatron.training.training.train_step"
DUALPIPEV = "mindspeed.core.pipeline_parallel.dualpipev.dualpipev_chunks:train_step"
DUMP = "mindspeed.functional.npu_datadump.npu_datadump:dump_start_wrapper.<locals>.wrapper"
SWAP = "mindspeed.core.memory.smart_swap.swap_megatron_adaptor:train_step_wrapper.<locals>.wrapper"
USHAPED = "mindspeed_llm.core.layerwise_disaggregated_training.training:train_step"
PIN = "mindspeed_llm.tasks.megatron_adaptor_v2:megatron_train_step_v0_12"  # core_v0.12.1's train_step
LOOP_HOLDERS = ["megatron.training.training", "mindspeed_llm.training.training"]


class TestMindSpeedPatchesKept(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="mindspeed-patches-")
        cls.site = os.path.join(cls.root, "userbase")
        profdtest.user_site(cls.site)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def run_job(self, flags, profd_on):
        trace = os.path.join(self.root, "trace.jsonl")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFD_", "STANDIN_"))}
        env.update(PYTHONPATH=os.pathsep.join((STANDINS, NPU)), STANDIN_TRACE=trace, PYTHONDONTWRITEBYTECODE="1",
                   RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")
        if profd_on:
            env.update(PROFD_AUTO="1", PYTHONUSERBASE=self.site, PROFD_RUN_DIR=os.path.join(self.root, "norun"))
        p = subprocess.run([sys.executable, "-c", PROBE, "--train-iters", "2"] + flags, cwd=self.root, env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        report = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("REPORT ")][0][7:])
        with open(trace) as f:
            events = [json.loads(line)["ev"] for line in f if line.strip()]
        os.unlink(trace)
        return report, events

    def check(self, flags, want_chain, want_per_iteration):
        alone, alone_events = self.run_job(flags, False)
        with_profd, profd_events = self.run_job(flags, True)
        self.assertIsNone(alone.pop("_owner"))
        self.assertEqual(with_profd.pop("_owner"), "mindspeed")  # profd's integration did install
        for run, report in (("without profd", alone), ("with profd", with_profd)):
            self.assertEqual(report.pop("_loop"), want_chain, run)  # what MindSpeed-LLM's train() calls
            if TS in report:
                self.assertEqual(report[TS]["chain"], want_chain, run)
                self.assertEqual(sorted(set(LOOP_HOLDERS) & set(report[TS]["holders"])), LOOP_HOLDERS, run)
            for name, r in report.items():
                self.assertTrue(r["installed"], (run, name))
                self.assertEqual(r["stale"], [], (run, name))
        self.assertEqual(with_profd, alone)
        steps = [e for e in alone_events if e in want_per_iteration or e == "train_step"]
        self.assertEqual(steps, (want_per_iteration + ["train_step"]) * 2)
        # the same work in the same order; with profd train() also drives profd's profiler object
        self.assertEqual([e for e in profd_events if not e.startswith("prof.")], alone_events)
        self.assertEqual([e for e in profd_events if e.startswith("prof.")], ["prof.start", "prof.step", "prof.step",
                                                                              "prof.stop"])

    def test_no_feature(self):
        self.check([], [PIN], [])

    def test_dualpipev_npu_datadump_smart_swap(self):
        self.check(["--schedules-method", "dualpipev", "--npu-datadump", "--smart-swap"],
                   [SWAP, DUMP, DUALPIPEV],
                   ["smart_swap.train_step", "MSTT_DEBUGGER.start", "dualpipev.train_step"])

    def test_npu_datadump_alone(self):
        self.check(["--npu-datadump"], [DUMP, PIN], ["MSTT_DEBUGGER.start"])

    def test_layerwise_disaggregated_training(self):
        self.check(["--layerwise-disaggregated-training"], [USHAPED], ["u_shaped.train_step"])


if __name__ == "__main__":
    profdtest.main()
