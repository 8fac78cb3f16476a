# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The verl integration on a verl-shaped job: the verl stand-in
(tests/python/standins/verl, written from verl-project/verl@1dda039b)
run as `python3 -m verl.trainer.main_ppo ...`: the launcher, the TaskRunner
process that runs the trainer (the driver), two hybrid worker processes
(actor, rollout and ref in one process: one worker group, RANK 0 and 1), a
critic worker group of its own (RANK 0 and 1 again, another WG_PREFIX)
and two rollout-server processes (vLLMHttpServer, replica 0 and 1), each
starting its vLLM engine's worker process (the vLLM stand-in,
tests/python/standins/vllm, written from vllm-project/vllm@35d5cda1:
distributed_executor_backend "mp", the model runs in the worker). No
line of the job names profd; the integration comes in through
VERL_USE_EXTERNAL_MODULES (verl/__init__.py imports it in every process),
or through the profd-auto.pth file with PROFD_VERL=1.

Two windows, opened before the job starts:
  discrete, step 2: roles actor and rollout, phases actor_update (verl's
    @DistProfiler.annotate(role="actor_update") on update_actor) and
    generate (a rollout server's step; the server's capture holds its
    engine's worker traces under engine/, written by the engine's own
    profiler, which profd drives as verl does);
  end to end, step 3: every process (the engines' workers too).
Expectations come from verl's code as the stand-in records it
(STANDIN_TRACE): which process is which, its RANK / replica rank, the
global_steps of each step; and the stand-in's record_function markers
(TrainingWorker.train_mini_batch: mini_batch<i> per update mini-batch).
"""

import collections
import gzip
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
PYBUILD = os.path.join(profdtest.BUILD, "python")
JOB = "verl"
ARGS = ["trainer.total_training_steps=3", "critic.enable=true", "critic.standin_pool=[2]",
        "actor_rollout_ref.model.standin_torch=true"]


def run_verl(d, args, env_extra, pythonpath):
    tmp = tempfile.mkdtemp(prefix="verl-job-", dir=d.root)
    trace = os.path.join(tmp, "trace.jsonl")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROFD_", "STANDIN_", "VERL_")) and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(PYTHONPATH=os.pathsep.join(pythonpath), STANDIN_TRACE=trace, PROFD_RUN_DIR=d.run_dir,
               PROFD_JOB=JOB, PYTHONDONTWRITEBYTECODE="1")
    env.update(env_extra)
    p = subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo"] + args, cwd=tmp, env=env,
                       capture_output=True, text=True, timeout=240)
    if p.returncode != 0:
        raise AssertionError("verl exited %d\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
    with open(trace) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return records, p, tmp


def processes(records):
    """pid -> (kind, rank, replica_rank, wg) from the stand-in's own records."""
    out = {}
    for r in records:
        pid = r["pid"]
        if r["src"] == "verl.server":
            out[pid] = ("server", r["replica_rank"], r["replica_rank"], None)
        elif r["src"] == "verl.worker" and r["ev"] in ("init_model", "infer_batch") and pid not in out:
            kind = "critic" if r.get("engine") == "critic" else "hybrid"
            out[pid] = (kind, r["rank"], None, r["wg"])
    return out


def load_events(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return profdtest.trace_events(json.load(f))


def engine_workers(records):
    """replica rank -> {engine worker rank: pid}, from the stand-ins' records
    (the server's launch_server names its engine's instance id, each vLLM
    worker process its instance id and rank)."""
    replica_of = {r["instance_id"]: r["replica_rank"] for r in records
                  if r["src"] == "verl.server" and r["ev"] == "launch_server"}
    out = {}
    for r in records:
        if r["src"] == "vllm.worker" and r["ev"] == "init":
            out.setdefault(replica_of[r["instance_id"]], {})[r["rank"]] = r["pid"]
    return out


def check_engine_files(test, wdir, cap, workers):
    """The capture of replica R's server holds, for every worker r of its
    engine, engine/vllm-replica<R>-rank<r>.<ms>.pt.trace.json.gz (that worker
    process's trace: its pid, its decode steps) and the worker's table
    engine/vllm-replica<R>-rank<r>.profiler_out.txt."""
    replica = cap["replica_rank"]
    eng = sorted(f["path"] for f in cap["files"] if f["path"].startswith("engine/"))
    traces = [p for p in eng if p.endswith(".pt.trace.json.gz")]
    want_tables = ["engine/vllm-replica%d-rank%d.profiler_out.txt" % (replica, r) for r in sorted(workers)]
    test.assertEqual(sorted(set(eng) - set(traces)), want_tables)
    test.assertEqual(len(traces), len(workers))
    for rank in sorted(workers):
        (path,) = [p for p in traces if p.startswith("engine/vllm-replica%d-rank%d." % (replica, rank))]
        events = load_events(os.path.join(wdir, cap["dir"], path))
        test.assertIn("vllm_execute_model_rank%d" % rank, {e.get("name") for e in events})
        test.assertIn("aten::matmul", {e.get("name") for e in events})


EXTERNAL = {"VERL_USE_EXTERNAL_MODULES": "profd.integrations.verl"}


class OneWindow:
    """A run of verl under one window, opened before the job starts: a
    subclass names the window (WINDOW: profctl start's arguments after
    --job), verl's arguments after ARGS (VERL_ARGS) and its environment
    (VERL_ENV). self.wid, self.rc (profctl wait's status), self.records,
    self.proc, self.tmp as run_verl returns them."""

    VERL_ARGS = ()
    VERL_ENV = EXTERNAL

    @classmethod
    def setUpClass(cls):
        d = cls.d = profdtest.Daemon()
        cls.wid = d.start_window("--job", JOB, *cls.WINDOW)
        cls.records, cls.proc, cls.tmp = run_verl(d, ARGS + list(cls.VERL_ARGS), cls.VERL_ENV,
                                                  [PYBUILD, STANDINS])
        cls.rc = d.wait(cls.wid)

    @classmethod
    def tearDownClass(cls):
        cls.d.close()

    def captures(self):
        return self.d.manifest(JOB, self.wid)["captures"]


class VerlDropIn:
    """The checks, for a run set up by a subclass (setUpClass)."""

    @classmethod
    def start(cls, env_extra, pythonpath, args=()):
        d = cls.d = profdtest.Daemon()
        cls.w_discrete = d.start_window("--job", JOB, "--steps", "2", "--roles", "actor,rollout", "--phases",
                                        "actor_update,generate", "--discrete", "--tool", "torch")
        cls.w_e2e = d.start_window("--job", JOB, "--steps", "3", "--e2e", "--tool", "torch")
        cls.records, cls.proc, cls.tmp = run_verl(d, ARGS + list(args), env_extra, pythonpath)
        cls.rc_discrete = d.wait(cls.w_discrete)
        cls.rc_e2e = d.wait(cls.w_e2e)
        cls.procs = processes(cls.records)
        cls.engines = engine_workers(cls.records)

    @classmethod
    def tearDownClass(cls):
        cls.d.close()

    def test_the_job_is_verls(self):
        """2 hybrid processes, 2 critic processes in another worker group,
        2 servers; the trainer ran steps 1-3."""
        self.assertEqual(self.proc.stdout, "")
        kinds = collections.Counter(v[0] for v in self.procs.values())
        self.assertEqual(kinds, {"hybrid": 2, "critic": 2, "server": 2})
        # one engine worker per replica (tensor*data*pipeline parallel = 1)
        self.assertEqual({r: sorted(w) for r, w in self.engines.items()}, {0: [0], 1: [0]})
        # the engines' profilers ran on steps 2 and 3 only: started, stopped, twice
        prof = [(r["instance_id"], r["is_start"]) for r in self.records
                if r["src"] == "vllm.worker" and r["ev"] == "profile"]
        self.assertEqual(sorted(collections.Counter(prof).values()), [2, 2, 2, 2])
        self.assertEqual(len({v[3] for v in self.procs.values() if v[0] != "server"}), 2)
        steps = [r["global_steps"] for r in self.records if r["src"] == "verl.trainer"]
        self.assertEqual(steps, [1, 2, 3])

    def test_discrete_update_actor_and_generation(self):
        self.assertEqual(self.rc_discrete, 0, self.d.log()[-4000:])
        m = self.d.manifest(JOB, self.w_discrete)
        want = set()
        for pid, (kind, rank, replica, _) in self.procs.items():
            if kind == "hybrid":
                want.add((pid, "actor", "actor_update", rank, None))
            elif kind == "server":
                want.add((pid, "rollout", "generate", rank, replica))
        got = {(c["pid"], c["role"], c["phase"], c["rank"], c["replica_rank"]) for c in m["captures"]}
        self.assertEqual(got, want)
        wdir = self.d.window_dir(JOB, self.w_discrete)
        for c in m["captures"]:
            self.assertEqual((c["status"], c["first_step"], c["last_step"]), ("complete", 2, 2))
            host = c["host"]
            if c["phase"] == "actor_update":
                self.assertEqual(c["dir"], "actor.actor_update/rank%d-%s" % (c["rank"], host))
            else:
                self.assertEqual(c["dir"], "rollout.generate/rank%d-replica%d-%s" % (c["rank"], c["replica_rank"],
                                                                                     host))
            events = load_events(os.path.join(wdir, c["dir"], profdtest.trace_file(c)))
            names = {e.get("name") for e in events}
            if c["phase"] == "actor_update":
                # the update's two mini-batches (ppo_mini_batch_size 2 of 4 samples), nothing else
                self.assertEqual(sorted(n for n in names if n and n.startswith("mini_batch")),
                                 ["mini_batch0", "mini_batch1"])
                self.assertIn("Optimizer.step#SGD.step", names)
            else:
                # the model runs in the engine's worker processes, not in the server
                self.assertNotIn("aten::matmul", names)
                check_engine_files(self, wdir, c, self.engines[c["replica_rank"]])

    def test_end_to_end_every_process_unique_files(self):
        self.assertEqual(self.rc_e2e, 0, self.d.log()[-4000:])
        m = self.d.manifest(JOB, self.w_e2e)
        caps = m["captures"]
        self.assertEqual(sorted(c["pid"] for c in caps), sorted(self.procs))
        dirs = [c["dir"] for c in caps]
        self.assertEqual(len(set(dirs)), len(dirs))
        files = [c["dir"] + "/" + f["path"] for c in caps for f in c["files"]]
        self.assertEqual(len(set(files)), len(files))
        # one trace per process, and per server its engine worker's trace and table
        self.assertEqual(len(files), 6 + 2 * 2)
        wdir = self.d.window_dir(JOB, self.w_e2e)
        for c in caps:
            if c["replica_rank"] is not None:
                check_engine_files(self, wdir, c, self.engines[c["replica_rank"]])
        plain = {}
        for c in caps:
            kind, rank, replica, _ = self.procs[c["pid"]]
            self.assertEqual((c["role"], c["status"], c["first_step"], c["last_step"]), ("e2e", "complete", 3, 3))
            self.assertEqual((c["rank"], c["replica_rank"]), (rank, replica))
            self.assertEqual(c["roles"], {"hybrid": ["actor", "rollout", "ref"], "critic": ["critic"],
                                          "server": ["rollout"]}[kind])
            base = "e2e/rank%d%s-%s" % (rank, "" if replica is None else "-replica%d" % replica, c["host"])
            self.assertIn(c["dir"], (base, base + "-pid%d" % c["pid"]))
            plain.setdefault(base, []).append(c["dir"] == base)
        # hybrid rank r and critic rank r share a rank and host: one of each
        # pair keeps the plain name, the other carries its pid
        self.assertEqual(sorted((b, sorted(v)) for b, v in plain.items() if len(v) > 1),
                         [("e2e/rank0-%s" % caps[0]["host"], [False, True]),
                          ("e2e/rank1-%s" % caps[0]["host"], [False, True])])


class TestVerlV1(VerlDropIn, unittest.TestCase):
    """The V1 trainer (verl's default), loaded by VERL_USE_EXTERNAL_MODULES."""

    @classmethod
    def setUpClass(cls):
        cls.start(EXTERNAL, [PYBUILD, STANDINS])


class TestVerlLegacyThroughPth(VerlDropIn, unittest.TestCase):
    """The legacy RayPPOTrainer loop, profd reaching the job through the
    profd-auto.pth file in a site folder (PROFD_VERL=1, any verl version)."""

    @classmethod
    def setUpClass(cls):
        root = cls.site_root = tempfile.mkdtemp(prefix="profd-verl-site-")
        profdtest.user_site(root)
        cls.start({"PROFD_VERL": "1", "PYTHONUSERBASE": root}, [STANDINS], ["trainer.use_v1=false"])

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.site_root, ignore_errors=True)


class TestVerlToolProfd(OneWindow, unittest.TestCase):
    """No variable at all: verl >= 0.9 loads the "verl.plugins" entry point
    profd's package metadata declares (the build's python/ folder holds it,
    as an install does), and `global_profiler.tool=profd` in verl's own
    configuration switches the integration on (verl accepts the name and
    keeps its own profilers off)."""

    WINDOW = ("--steps", "2", "--e2e", "--tool", "torch")
    VERL_ARGS = ["global_profiler.tool=profd"]
    VERL_ENV = {}

    def test_every_process_captured(self):
        self.assertEqual(self.rc, 0, self.d.log()[-3000:])
        caps = self.captures()
        self.assertEqual(sorted(c["pid"] for c in caps), sorted(processes(self.records)))
        self.assertEqual({(c["status"], c["first_step"], c["last_step"]) for c in caps}, {("complete", 2, 2)})


class TestVerlEngineTensorParallel(OneWindow, unittest.TestCase):
    """One replica over both hybrid workers
    (actor_rollout_ref.rollout.tensor_model_parallel_size=2): one server,
    its engine two worker processes (vLLM ranks 0 and 1). The generate
    capture of step 2 holds both workers' traces."""

    WINDOW = ("--steps", "2", "--roles", "rollout", "--phases", "generate", "--discrete", "--tool", "torch")
    VERL_ARGS = ["actor_rollout_ref.rollout.tensor_model_parallel_size=2"]

    def test_every_engine_worker(self):
        self.assertEqual(self.rc, 3)  # the hybrid processes' rollout role has no generate phase
        engines = engine_workers(self.records)
        self.assertEqual({r: sorted(w) for r, w in engines.items()}, {0: [0, 1]})
        caps = self.captures()
        self.assertEqual(sorted((c["phase"] or "", c["rank"], c["replica_rank"] or 0, c["status"]) for c in caps),
                         [("", 0, 0, "missed"), ("", 1, 0, "missed"), ("generate", 0, 0, "complete")])
        (cap,) = [c for c in caps if c["phase"] == "generate"]
        check_engine_files(self, self.d.window_dir(JOB, self.wid), cap, engines[0])


class TestVerlSGLang(OneWindow, unittest.TestCase):
    """actor_rollout_ref.rollout.name=sglang, tensor_model_parallel_size=2:
    one SGLangHttpServer, its engine two scheduler processes (the SGLang
    stand-in, from sgl-project/sglang@034c23fa scheduler_profiler_mixin.py:
    each writes <profile_id>-TP-<tp_rank>.trace.json.gz into the output_dir
    of the start_profile call). profd passes a folder of its own as
    output_dir and files both traces into the generate capture as
    engine/sglang-replica0-rank<r>.trace.json.gz."""

    WINDOW = ("--steps", "2", "--roles", "rollout", "--phases", "generate", "--discrete", "--tool", "torch")
    VERL_ARGS = ["actor_rollout_ref.rollout.name=sglang", "actor_rollout_ref.rollout.tensor_model_parallel_size=2"]

    def test_every_scheduler(self):
        self.assertEqual(self.rc, 3)  # the hybrid processes' rollout role has no generate phase
        sched = sorted(r["tp_rank"] for r in self.records if r["src"] == "sglang.scheduler" and r["ev"] == "init")
        self.assertEqual(sched, [0, 1])
        prof = sorted((r["tp_rank"], r["ev"]) for r in self.records
                      if r["src"] == "sglang.scheduler" and r["ev"] != "init")
        self.assertEqual(prof, [(0, "start_profile"), (0, "stop_profile"), (1, "start_profile"), (1, "stop_profile")])
        caps = self.captures()
        (cap,) = [c for c in caps if c["phase"] == "generate"]
        self.assertEqual((cap["replica_rank"], cap["status"]), (0, "complete"))
        eng = sorted(f["path"] for f in cap["files"] if f["path"].startswith("engine/"))
        self.assertEqual(eng, ["engine/sglang-replica0-rank0.trace.json.gz", "engine/sglang-replica0-rank1.trace.json.gz"])
        wdir = self.d.window_dir(JOB, self.wid)
        for rank in (0, 1):
            events = load_events(os.path.join(wdir, cap["dir"], eng[rank]))
            names = {e.get("name") for e in events}
            self.assertIn("sglang_forward_tp%d" % rank, names)
            self.assertIn("aten::matmul", names)


class TestVerlEngineNotProfiled(OneWindow, unittest.TestCase):
    """An engine that cannot be profiled: VLLM_TORCH_CUDA_PROFILE=0 in the
    job's environment turns vLLM's worker profiler off whatever the
    profiler folder (vLLM's ProfilerConfig._validate_profiler_config reads
    it first; the stand-in follows it), so the engine's start_profile fails
    in every worker ("Profiling is not enabled.", gpu_worker.py profile()).
    The window's rollout captures say so: failed, with the engine's reason;
    the actor's capture is complete."""

    WINDOW = ("--steps", "2", "--roles", "actor,rollout", "--phases", "actor_update,generate",
              "--discrete", "--tool", "torch")
    VERL_ENV = dict(EXTERNAL, VLLM_TORCH_CUDA_PROFILE="0")

    def test_rollout_captures_failed_with_the_engines_reason(self):
        self.assertEqual(self.rc, 3)  # done, not every capture complete
        caps = self.captures()
        got = sorted((c["role"], c["replica_rank"], c["status"], c["reason"]) for c in caps)
        reason = ("rollout engine not captured: vllm start_profile: RuntimeError: Worker failed with error "
                  "'Profiling is not enabled.', please check the stack trace above for the root cause")
        self.assertEqual(got, [("actor", None, "complete", None), ("actor", None, "complete", None),
                               ("rollout", 0, "failed", reason), ("rollout", 1, "failed", reason)])
        for c in caps:
            self.assertEqual([f for f in c["files"] if f["path"].startswith("engine/")], [])


class TestVerlOwnProfiler(OneWindow, unittest.TestCase):
    """verl's own torch profiler (global_profiler.tool=torch, steps 2 and 3,
    the actor's section on every rank: one process-global torch.profiler per
    hybrid process, started by DistProfiler.start) and a profd end-to-end
    window on step 3: two torch.profilers on one thread fail ("Profiler is
    already enabled on this thread"); profd's capture takes the place of
    verl's for step 3, verl's own trace of step 2 is as before."""

    WINDOW = ("--steps", "3", "--e2e", "--tool", "torch", "--roles", "actor")
    VERL_ARGS = ["global_profiler.tool=torch", "global_profiler.steps=[2,3]",
                 "actor_rollout_ref.actor.profiler.enable=true",
                 "actor_rollout_ref.actor.profiler.all_ranks=true"]

    def test_profd_complete_and_verl_traces_only_step_2(self):
        self.assertEqual(self.rc, 0, self.d.log()[-3000:])
        caps = self.captures()
        self.assertEqual(sorted((c["rank"], c["status"]) for c in caps), [(0, "complete"), (1, "complete")])
        verl_dir = os.path.join(self.tmp, "outputs", "profile")
        names = sorted(os.listdir(verl_dir))
        # verl's build_trace_basename: <prefix>_<role>_step<N>_rank<R>_pid<P>_<time>.json
        self.assertEqual(sorted(n.split("_")[:5] for n in names),
                         [["actor", "rollout", "ref", "train", "step2"]] * 2)
        self.assertIn("stays off on the steps a profd window covers", self.proc.stderr)


if __name__ == "__main__":
    profdtest.main()
