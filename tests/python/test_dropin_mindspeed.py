# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The MindSpeed-LLM integration on a MindSpeed-shaped loop: the stand-in
of Ascend/MindSpeed-LLM@c77308a1 (mindspeed_llm/training/training.py's
train(): is_profile_enabled(), get_profiler(), prof.start() / step() /
stop(), on Megatron core_v0.12.1) run as `python3 -m
mindspeed_llm_pretrain_gpt`, as two ranks with torchrun's variables.

For each (profile_step_start, profile_step_end[, resumed iteration]):
  1. MindSpeed-LLM itself: --profile --profile-ranks -1 --profile-step-start S
     --profile-step-end E, no profd. The iterations it records are read from
     the torch_npu stand-in's schedule actions (RECORD, RECORD_AND_SAVE) as
     train() drives them.
  2. profd: the same job with no --profile and PROFD_MINDSPEED=1 (reaching
     the job through profd-auto.pth in a site folder), a profd window
     `--steps S:E` opened before it starts. Every rank's capture must be
     complete, first_step .. last_step equal to the iterations of (1), and
     its trace must hold exactly that many optimizer steps (the stand-in's
     MegatronOptimizer steps one torch SGD per iteration).
And once with both: MindSpeed's own window on some iterations, profd's on
others; MindSpeed's profiler sees the same schedule as without profd.
"""

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import profdtest

profdtest.require(torch=True, daemon=True)

STANDINS = os.path.join(profdtest.HERE, "standins")
NPU = os.path.join(STANDINS, "npu")
JOB = "mindspeed"
ITERS = "6"


def run(args, ranks=1, env_extra=None, pythonpath=(STANDINS, NPU)):
    """Run the launcher as `ranks` processes; the stand-in trace records."""
    tmp = tempfile.mkdtemp(prefix="mindspeed-job-")
    trace = os.path.join(tmp, "trace.jsonl")
    port = profdtest.free_port()
    procs = []
    for rank in range(ranks):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFD_", "STANDIN_"))}
        env.update(PYTHONPATH=os.pathsep.join(pythonpath), STANDIN_TRACE=trace, PYTHONDONTWRITEBYTECODE="1",
                   RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(ranks), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port))
        env.update(env_extra or {})
        procs.append(subprocess.Popen([sys.executable, "-m", "mindspeed_llm_pretrain_gpt", "--train-iters", ITERS]
                                      + list(args), cwd=tmp, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    for p in procs:
        out, err = p.communicate(timeout=120)
        if p.returncode != 0:
            raise AssertionError("mindspeed_llm_pretrain_gpt exited %d\n%s\n%s" % (p.returncode, out, err))
    with open(trace) as f:
        records = [json.loads(line) for line in f if line.strip()]
    shutil.rmtree(tmp, ignore_errors=True)
    return records


def recorded(records, rank=0):
    """The logged iterations MindSpeed-LLM's own profiler records on `rank`."""
    return [r["iteration"] for r in records if r["src"] == "mindspeed" and r["ev"] == "train_step"
            and r["rank"] == rank and r["npu_action"] in ("RECORD", "RECORD_AND_SAVE")]


def actions(records, rank=0):
    return [(r["iteration"], r["npu_action"]) for r in records
            if r["src"] == "mindspeed" and r["ev"] == "train_step" and r["rank"] == rank]


class TestMindSpeedWindows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = profdtest.Daemon()
        cls.site = os.path.join(cls.d.root, "userbase")
        profdtest.user_site(cls.site)

    @classmethod
    def tearDownClass(cls):
        cls.d.close()

    def profd_env(self):
        return {"PROFD_MINDSPEED": "1", "PROFD_JOB": JOB, "PROFD_RUN_DIR": self.d.run_dir,
                "PYTHONUSERBASE": self.site, "STANDIN_STEP_SLEEP_S": "0.15"}

    def check(self, start, end, load=0):
        extra = ["--standin-load-iteration", str(load)] if load else []
        own = run(["--profile", "--profile-ranks", "-1", "--profile-step-start", str(start), "--profile-step-end",
                   str(end)] + extra)
        want = recorded(own)
        self.assertTrue(want)
        wid = self.d.start_window("--job", JOB, "--steps", "%d:%d" % (start, end), "--tool", "torch")
        records = run(extra, ranks=2, env_extra=self.profd_env())
        self.assertEqual(self.d.wait(wid), 0, self.d.log()[-3000:])
        m = self.d.manifest(JOB, wid)
        self.assertEqual(sorted(c["rank"] for c in m["captures"]), [0, 1])
        wdir = self.d.window_dir(JOB, wid)
        for c in m["captures"]:
            self.assertEqual(c["status"], "complete")
            self.assertEqual(list(range(c["first_step"], c["last_step"] + 1)), want)
            with open(os.path.join(wdir, c["dir"], profdtest.trace_file(c))) as f:
                names = collections.Counter(e.get("name") for e in profdtest.trace_events(json.load(f)))
            self.assertEqual(names["Optimizer.step#SGD.step"], len(want))
        # without --profile MindSpeed's own profiler records nothing
        self.assertEqual(recorded(records, 0) + recorded(records, 1), [])
        return want

    def test_window_3_5(self):
        self.assertEqual(self.check(3, 5), [3, 4])

    def test_window_from_the_first_iteration(self):
        self.assertEqual(self.check(1, 3), [1, 2])

    def test_window_after_resume(self):
        """Resumed at iteration 3: MindSpeed logs 4, 5, 6; [5, 7) is 5, 6."""
        self.assertEqual(self.check(5, 7, load=3), [5, 6])

    def test_mindspeed_own_window_kept(self):
        """MindSpeed's --profile window (4, 5) and a profd window (2, 3) in one run."""
        args = ["--profile", "--profile-ranks", "-1", "--profile-step-start", "4", "--profile-step-end", "6"]
        alone = run(args)
        wid = self.d.start_window("--job", JOB, "--steps", "2:4", "--tool", "torch")
        both = run(args, ranks=1, env_extra=self.profd_env())
        self.assertEqual(self.d.wait(wid), 0)
        self.assertEqual(actions(both), actions(alone))
        self.assertEqual(recorded(both), [4, 5])
        c = self.d.manifest(JOB, wid)["captures"][0]
        self.assertEqual((c["status"], c["first_step"], c["last_step"]), ("complete", 2, 3))


class TestMegatronSteps(unittest.TestCase):
    """Megatron-LM (stand-in of NVIDIA/Megatron-LM@d98e8a6: train() sets
    args.curr_iteration and calls train_step once per pass) with
    PROFD_MEGATRON=1: steps are the iterations Megatron logs. Its own
    --use-pytorch-profiler records logged S .. E-1 for --profile-step-start S
    --profile-step-end E on a fresh run (the stand-in's torch schedule
    actions); a profd window S:E records the same iterations."""

    def test_window_matches_megatron_torch_profiler(self):
        d = profdtest.Daemon()
        try:
            site = os.path.join(d.root, "userbase")
            profdtest.user_site(site)
            tmp = tempfile.mkdtemp(prefix="megatron-job-")
            trace = os.path.join(tmp, "trace.jsonl")
            env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFD_", "STANDIN_"))}
            env.update(PYTHONPATH=STANDINS, STANDIN_TRACE=trace, PYTHONDONTWRITEBYTECODE="1")
            own = subprocess.run([sys.executable, "-m", "megatron_pretrain_gpt", "--train-iters", ITERS, "--profile",
                                  "--profile-step-start", "2", "--profile-step-end", "4", "--use-pytorch-profiler",
                                  "--tensorboard-dir", "tb/x"], cwd=tmp, env=env, capture_output=True, text=True)
            self.assertEqual(own.returncode, 0, own.stderr)
            with open(trace) as f:
                want = [r["iteration"] for r in map(json.loads, f) if r["ev"] == "train_step"
                        and r["torch_action"] in ("RECORD", "RECORD_AND_SAVE")]
            self.assertEqual(want, [2, 3])
            wid = d.start_window("--job", JOB, "--steps", "2:4", "--tool", "torch")
            env.update(PROFD_MEGATRON="1", PROFD_JOB=JOB, PROFD_RUN_DIR=d.run_dir, PYTHONUSERBASE=site,
                       STANDIN_STEP_SLEEP_S="0.15")
            job = subprocess.run([sys.executable, "-m", "megatron_pretrain_gpt", "--train-iters", ITERS], cwd=tmp,
                                 env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(job.returncode, 0, job.stderr)
            self.assertEqual(d.wait(wid), 0, d.log()[-3000:])
            c = d.manifest(JOB, wid)["captures"][0]
            self.assertEqual((c["status"], list(range(c["first_step"], c["last_step"] + 1))), ("complete", want))
            with open(os.path.join(d.window_dir(JOB, wid), c["dir"], profdtest.trace_file(c))) as f:
                names = collections.Counter(e.get("name") for e in profdtest.trace_events(json.load(f)))
            self.assertEqual(names["Optimizer.step#SGD.step"], 2)
            shutil.rmtree(tmp, ignore_errors=True)
        finally:
            if d.stop() == 0:
                d.cleanup()


if __name__ == "__main__":
    profdtest.main()
