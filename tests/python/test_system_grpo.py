# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""System test: the real profd, the GRPO example (4 torch.distributed ranks
on CPU: actor, ref, two rollout replicas) and two windows opened with
profctl before the job starts:

  w1  discrete, step 3: actor rank 0 `update_actor` and rollout replica 0
      `generate`, sub-step schedule wait=1,warmup=1,active=2,repeat=1 over
      8 decode steps / 6 micro-batches: sub-steps 2 and 3 recorded
  w2  end-to-end, step 5: the ref rank, gzip-compressed trace

Checks the manifests, the files where they say, the trace contents (PyTorch
operators; exactly the scheduled sub-steps, by the example's
record_function markers), and that unselected ranks left nothing.
"""

import gzip
import json
import os
import re
import subprocess
import sys
import unittest

import profdtest

profdtest.require(torch=True, daemon=True)

EXAMPLE = os.path.join(profdtest.SOURCE, "client", "python", "examples", "grpo_sim.py")
JOB = "grpo"
OPS = {"aten::mm", "aten::addmm", "aten::linear", "aten::matmul"}


def load_trace(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return profdtest.trace_events(json.load(f))


def marker_names(events, prefix):
    found = {e["name"] for e in events if e.get("name", "").startswith(prefix)}
    return sorted(found, key=lambda n: int(n.split("#")[1]))


class TestGrpoSystem(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        d = cls.d = profdtest.Daemon()
        cls.w1 = d.start_window(
            "--job", JOB, "--steps", "3", "--roles", "actor,rollout", "--ranks", "0", "--replica-ranks", "0",
            "--phases", "update_actor,generate", "--schedule", "wait=1,warmup=1,active=2,repeat=1", "--tool", "torch",
        )
        cls.w2 = d.start_window("--job", JOB, "--steps", "5", "--roles", "ref", "--e2e", "--tool", "torch",
                                "--settings", '{"gzip":true}')
        env = d.env(PYTHONPATH=os.environ.get("PYTHONPATH", ""))
        cls.job = subprocess.run(
            [sys.executable, EXAMPLE, "--steps", "8", "--job", JOB, "--wait-daemon", "10", "--tokens", "8",
             "--micro-batches", "6"],
            env=env, capture_output=True, text=True, timeout=150,
        )
        cls.rc1 = d.wait(cls.w1)
        cls.rc2 = d.wait(cls.w2)
        cls.m1 = d.manifest(JOB, cls.w1)
        cls.m2 = d.manifest(JOB, cls.w2)
        cls.dir1 = d.window_dir(JOB, cls.w1)
        cls.dir2 = d.window_dir(JOB, cls.w2)

    @classmethod
    def tearDownClass(cls):
        rc = cls.d.stop()
        log = cls.d.log()
        cls.d.cleanup()
        if rc != 0:
            raise AssertionError("profd exited with %s:\n%s" % (rc, log))

    def test_job_ran(self):
        self.assertEqual(self.job.returncode, 0, self.job.stdout + self.job.stderr)
        self.assertRegex(self.job.stdout, r"grpo_sim: 8 steps on 4 ranks in [0-9.]+ s; mean reward ")

    def by_role(self, manifest):
        return {c["role"]: c for c in manifest["captures"]}

    def test_discrete_window_manifest(self):
        self.assertEqual(self.rc1, 0, json.dumps(self.m1, indent=1))
        w = self.m1["window"]
        self.assertEqual(
            (w["id"], w["name"], w["steps"], w["mode"], w["tool"]),
            (self.w1, "w%d-step3" % self.w1, [3, 4], "discrete", "torch"),
        )
        caps = self.by_role(self.m1)
        self.assertEqual(len(self.m1["captures"]), 2)
        self.assertEqual(sorted(caps), ["actor", "rollout"])
        a, r = caps["actor"], caps["rollout"]
        self.assertEqual((a["phase"], a["rank"], a["replica_rank"]), ("update_actor", 0, None))
        self.assertEqual((r["phase"], r["rank"], r["replica_rank"]), ("generate", 2, 0))
        for c in (a, r):
            self.assertEqual((c["status"], c["reason"], c["tool"]), ("complete", None, "torch"))
            self.assertEqual((c["first_step"], c["last_step"]), (3, 3))
            # the schedule's active span, in sub-steps
            self.assertEqual(c["substeps"], [{"first": 2, "last": 3}])
            # TensorBoard's naming: the worker is rank, role and phase
            (f,) = c["files"]
            self.assertRegex(f["path"], r"^rank%d-%s-%s\.\d+\.pt\.trace\.json$" % (c["rank"], c["role"], c["phase"]))
        self.assertEqual(a["dir"], "actor.update_actor/rank0-%s" % a["host"])
        self.assertEqual(r["dir"], "rollout.generate/rank2-replica0-%s" % r["host"])

    def test_files_are_where_the_manifest_says(self):
        for m, root in ((self.m1, self.dir1), (self.m2, self.dir2)):
            for c in m["captures"]:
                folder = os.path.join(root, c["dir"])
                self.assertEqual(profdtest.files_below(folder), sorted(f["path"] for f in c["files"]))
                for f in c["files"]:
                    path = os.path.join(folder, f["path"])
                    self.assertEqual(os.path.getsize(path), f["bytes"])
                    if f.get("moved"):  # gathered by a rename, not read again
                        self.assertIsNone(f["checksum"])
                    else:
                        self.assertTrue(f["checksum"].startswith("xxh64:"))
                    events = load_trace(path)  # parses
                    self.assertTrue(OPS & {e.get("name") for e in events}, "no PyTorch operators in " + path)

    def test_exactly_the_scheduled_substeps(self):
        caps = self.by_role(self.m1)
        roll = load_trace(os.path.join(self.dir1, caps["rollout"]["dir"], caps["rollout"]["files"][0]["path"]))
        act = load_trace(os.path.join(self.dir1, caps["actor"]["dir"], caps["actor"]["files"][0]["path"]))
        self.assertEqual(marker_names(roll, "decode#"), ["decode#2", "decode#3"])
        self.assertEqual(marker_names(act, "micro_batch#"), ["micro_batch#2", "micro_batch#3"])
        for events, role in ((roll, "rollout.generate"), (act, "actor.update_actor")):
            # torch.profiler wraps each recorded sub-step in a ProfilerStep#N range;
            # profd's markers name the training step TrainingStep#3 and the phase
            self.assertEqual(len([e for e in events if e["name"].startswith("ProfilerStep#")]), 2)
            self.assertEqual([e["args"]["step"] for e in events if e["name"] == "TrainingStep#3"], [3])
            self.assertEqual([e["cat"] for e in events if e["name"] == role], ["profd"])

    def test_unselected_ranks_produced_nothing(self):
        caps = self.by_role(self.m1)
        files = ["%s/%s" % (c["dir"], f["path"]) for c in caps.values() for f in c["files"]]
        # and what profd adds: the report, TensorBoard's run folder (a link per trace)
        tb = ["tensorboard/" + os.path.basename(f) for f in files]
        want = sorted(["manifest.json", "steps.json", "report.html"] + files + tb)
        self.assertEqual(profdtest.files_below(self.dir1), want)
        self.assertEqual(
            sorted(os.listdir(self.dir1)),
            ["actor.update_actor", "manifest.json", "report.html", "rollout.generate", "steps.json", "tensorboard"],
        )
        self.assertEqual(
            os.listdir(os.path.join(self.dir1, "rollout.generate")), ["rank2-replica0-%s" % caps["rollout"]["host"]]
        )
        # nothing left behind in the spool either
        spool = os.path.join(self.d.save_path, ".spool")
        self.assertEqual(profdtest.files_below(spool) if os.path.isdir(spool) else [], [])
        # and no other window folder appeared
        windows = sorted(os.listdir(os.path.join(self.d.save_path, JOB)))
        self.assertEqual(windows, sorted([os.path.basename(self.dir1), os.path.basename(self.dir2)]))

    def test_end_to_end_window_on_ref(self):
        self.assertEqual(self.rc2, 0, json.dumps(self.m2, indent=1))
        (c,) = self.m2["captures"]
        self.assertEqual((c["role"], c["phase"], c["rank"], c["status"]), ("e2e", None, 1, "complete"))
        self.assertEqual((c["first_step"], c["last_step"]), (5, 5))
        (f,) = c["files"]
        self.assertRegex(f["path"], r"^rank1-ref\.\d+\.pt\.trace\.json\.gz$")
        events = load_trace(os.path.join(self.dir2, c["dir"], f["path"]))
        # the ref's whole step: its two log-prob micro-batches, no schedule
        self.assertEqual(marker_names(events, "micro_batch#"), ["micro_batch#0", "micro_batch#1"])
        # no profiler step of torch's own: profd's ProfilerStep#5 marks the training step
        steps = [e for e in events if re.match(r"ProfilerStep#", e["name"])]
        self.assertEqual([(e["name"], e["cat"]) for e in steps], [("ProfilerStep#5", "profd")])


if __name__ == "__main__":
    profdtest.main()
