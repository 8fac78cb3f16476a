# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""PROFD_AUTO=1: a plain PyTorch training script
(client/python/examples/plain_ddp_train.py, no profd in it) as 4
data-parallel ranks over gloo, started with torchrun's environment (RANK,
LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set per process as torchrun
would: Debian's torchrun of torch 1.13 fails under Python 3.11 in its own
`Std` enum), profiled by `profctl start --next 2`.

profd reaches the script only through the `profd-auto.pth` file in a site
folder: the workers run `python3 plain_ddp_train.py` with PYTHONUSERBASE
naming a user site that holds the build's package and .pth (site.py reads
.pth files in site folders only; PYTHONPATH is cleared), so the test
proves the .pth path, not a direct import.

Expectations from torch's code (torch 1.13, torch/optim/optimizer.py,
Optimizer._hook_for_profile): every optimizer step runs inside a
record_function range "Optimizer.step#<class>.step"; a capture of two
profd steps therefore holds exactly two "Optimizer.step#SGD.step" ranges.
"""

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import profdtest

profdtest.require(torch=True, daemon=True)

SCRIPT = os.path.join(profdtest.SOURCE, "client", "python", "examples", "plain_ddp_train.py")
JOB = "auto"


def clean_env(base, **extra):
    env = {k: v for k, v in base.items()
           if not k.startswith("PROFD_") and k not in ("PYTHONPATH", "RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


class TestPthHook(unittest.TestCase):
    """The .pth line costs nothing when no variable is set."""

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="profd-pth-")
        profdtest.user_site(cls.root)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def modules(self, **extra):
        env = clean_env(os.environ, PYTHONUSERBASE=self.root, **extra)
        out = subprocess.run([sys.executable, "-c", "import sys; print(sorted(m for m in ('profd', 'torch', "
                              "'profd.integrations.pytorch') if m in sys.modules))"], env=env,
                             capture_output=True, text=True, check=True)
        self.assertEqual(out.stderr, "")
        return out.stdout.strip()

    def test_unset_imports_nothing(self):
        self.assertEqual(self.modules(), "[]")
        self.assertEqual(self.modules(PROFD_AUTO="0"), "[]")

    def test_set_imports_profd_but_not_torch(self):
        self.assertEqual(self.modules(PROFD_AUTO="1"), "['profd']")

    def loaded(self, code, **extra):
        env = clean_env(os.environ, PYTHONUSERBASE=self.root, **extra)
        out = subprocess.run([sys.executable, "-c", "import sys\n" + code + "\nprint(' '.join(sorted(sys.modules)))"],
                             env=env, capture_output=True, text=True, check=True)
        self.assertEqual(out.stderr, "")
        return set(out.stdout.split())

    def test_start_up_loads_only_the_light_hook(self):
        """At start-up PROFD_AUTO=1 adds three small modules, nothing of the
        standard library (no logging, ctypes, threading, importlib.util):
        the integrations load at `import torch`."""
        self.assertEqual(self.loaded("pass", PROFD_AUTO="1") - self.loaded("pass"),
                         {"profd", "profd._autoload", "profd._version"})
        for var in ("PROFD_VERL", "PROFD_MINDSPEED", "PROFD_MEGATRON"):
            self.assertEqual(self.loaded("pass", **{var: "1"}) - self.loaded("pass"),
                             {"profd", "profd._autoload", "profd._version"}, var)

    def test_the_integrations_load_at_import_torch(self):
        got = self.loaded("import torch\nassert hasattr(torch.optim.Optimizer.__init__, '__wrapped__')",
                          PROFD_AUTO="1", PROFD_URL="ipc:///nonexistent/profd-test.sock")
        self.assertLessEqual({"profd.integrations.pytorch", "profd._hooks", "profd.integrations.mindspeed",
                              "profd.integrations.verl", "profd.integrations.megatron"}, got)
        self.assertNotIn("profd.client", got)  # the client opens at the first optimizer


class TestAutoTorchrun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        d = cls.d = profdtest.Daemon()
        cls.site_root = os.path.join(d.root, "userbase")
        profdtest.user_site(cls.site_root)
        stop = os.path.join(d.root, "stop")
        port = profdtest.free_port()
        cls.procs = []
        for rank in range(4):
            env = clean_env(os.environ, PYTHONUSERBASE=cls.site_root, PROFD_AUTO=1, PROFD_JOB=JOB,
                            PROFD_RUN_DIR=d.run_dir, RANK=rank, LOCAL_RANK=rank, WORLD_SIZE=4,
                            MASTER_ADDR="127.0.0.1", MASTER_PORT=port, TRAIN_STOP_FILE=stop,
                            TRAIN_MAX_STEPS=3000, TRAIN_SLEEP_S=0.02)
            log = open(os.path.join(d.root, "rank%d.log" % rank), "wb")
            cls.procs.append((subprocess.Popen([sys.executable, SCRIPT], env=env, stdout=log,
                                               stderr=subprocess.STDOUT), log))
        try:
            cls.ranks = cls.wait_ranks(4, min_step=3)
            cls.wid = d.start_window("--next", "2", "--job", JOB, "--tool", "torch")
            cls.rc = d.wait(cls.wid, timeout=90)
        finally:
            open(stop, "w").close()
            cls.codes = profdtest.reap(cls.procs)

    @classmethod
    def wait_ranks(cls, n, min_step):
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            doc = json.loads(cls.d.ctl("--json", "status").stdout)
            ranks = [r for r in doc["ranks"] if r["job"] == JOB]
            # a few steps done and the step time measured: --next aims ahead of it
            if len(ranks) == n and all((r.get("step") or 0) >= min_step and r.get("step_ms", 0) > 0
                                       for r in ranks):
                return ranks
            if any(p.poll() is not None for p, _ in cls.procs):
                break
            time.sleep(0.1)
        raise AssertionError("the 4 ranks did not register and step: " + cls.d.ctl("status").stdout)

    @classmethod
    def tearDownClass(cls):
        rc = cls.d.stop()
        if rc == 0:
            cls.d.cleanup()

    def test_ranks_from_torchrun_env(self):
        self.assertEqual(self.codes, [0, 0, 0, 0])
        self.assertEqual(sorted((r["rank"], r["local_rank"], r["world_size"]) for r in self.ranks),
                         [(0, 0, 4), (1, 1, 4), (2, 2, 4), (3, 3, 4)])
        self.assertEqual({r["role"] for r in self.ranks}, {"worker"})

    def test_every_rank_captures_the_same_two_optimizer_steps(self):
        self.assertEqual(self.rc, 0, self.d.log()[-3000:])
        m = self.d.manifest(JOB, self.wid)
        first, end = m["window"]["steps"]
        self.assertEqual(end - first, 2)
        caps = m["captures"]
        self.assertEqual(sorted(c["rank"] for c in caps), [0, 1, 2, 3])
        for c in caps:
            self.assertEqual((c["role"], c["status"], c["first_step"], c["last_step"]),
                             ("e2e", "complete", first, first + 1))
            self.assertEqual(c["dir"], "e2e/rank%d-%s" % (c["rank"], c["host"]))

    def test_traces_hold_aten_events_and_two_optimizer_steps(self):
        m = self.d.manifest(JOB, self.wid)
        wdir = self.d.window_dir(JOB, self.wid)
        for c in m["captures"]:
            self.assertEqual([f["path"] for f in c["files"]], [profdtest.trace_file(c)])
            with open(os.path.join(wdir, c["dir"], profdtest.trace_file(c))) as f:
                events = profdtest.trace_events(json.load(f))
            names = collections.Counter(e.get("name") for e in events)
            self.assertEqual(names["Optimizer.step#SGD.step"], 2, c["dir"])
            self.assertIn("aten::addmm", names)
            self.assertIn("aten::mse_loss", names)


if __name__ == "__main__":
    profdtest.main()
