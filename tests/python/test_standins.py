# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Smoke tests of the framework stand-ins in tests/python/standins (no profd
involved): each stand-in runs a few steps on its own, as a user would start
the framework, and the call order it records (standin_trace) must be
exactly the one the framework has at the commit the stand-in names.

Run: /usr/bin/python3 tests/python/test_standins.py [-v]
Tests that need torch are skipped when it does not import.
"""

import collections
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
STANDINS = os.path.join(HERE, "standins")
NPU = os.path.join(STANDINS, "npu")


def have_torch():
    try:
        import torch  # noqa: F401

        return True
    except Exception:
        return False


def run(module, args, npu=False, timeout=180, env_extra=None, path_extra=()):
    """Run `python3 -m module args` with the stand-ins on the path; return
    (records, completed process). Fails the calling test on a non-zero exit."""
    tmp = tempfile.mkdtemp(prefix="standin-test-")
    trace = os.path.join(tmp, "trace.jsonl")
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("PROFD_", "STANDIN_RAY_")) or k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                                                               "MASTER_PORT"):
            del env[k]
    env["PYTHONPATH"] = os.pathsep.join([STANDINS] + ([NPU] if npu else []) + list(path_extra))
    env["STANDIN_TRACE"] = trace
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, "-m", module] + list(args), cwd=tmp, env=env, capture_output=True,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError("%s exited %d\nstdout:\n%s\nstderr:\n%s" % (module, p.returncode, p.stdout, p.stderr))
    records = []
    if os.path.exists(trace):
        with open(trace) as f:
            records = [json.loads(line) for line in f if line.strip()]
    p.tmp = tmp
    return records, p


def by_pid(records):
    out = collections.OrderedDict()
    for r in records:
        out.setdefault(r["pid"], []).append(r)
    return out


def verl_event(e):
    ev = e["ev"]
    if e["src"] == "verl.server" and ev != "generate":
        return (ev,)
    if ev in ("infer_batch", "train_mini_batch", "train_batch"):
        return (ev, e["engine"])
    if ev in ("update_weights", "rollout.update_weights"):
        return (ev, e["global_steps"])
    if ev == "rollout.resume":
        return (ev, e["tags"][0])
    if ev == "start_profile":
        return (ev, e["kwargs"])
    if ev == "stop_profile":
        return (ev, e["run_command"])
    if ev == "generate":
        return (ev, e["request_id"])
    if ev == "step":
        return (ev, e["global_steps"])
    return (ev,)


WEIGHTS = lambda n: [("update_weights", n), ("rollout.resume", "weights"), ("rollout.update_weights", n),  # noqa: E731
                     ("rollout.resume", "kv_cache")]
HYBRID_COMPUTE = [("compute_log_prob",), ("infer_batch", "actor"), ("compute_ref_log_prob",), ("infer_batch", "ref"),
                  ("update_actor",), ("train_mini_batch", "actor"), ("train_batch", "actor"), ("train_batch", "actor")]
CRITIC_COMPUTE = [("infer_batch", "critic"), ("train_mini_batch", "critic"), ("train_batch", "critic"),
                  ("train_batch", "critic")]


class VerlStandin(unittest.TestCase):
    """2 hybrid actor/rollout/ref processes (ranks 0, 1), a critic worker group
    of its own (ranks 0, 1), 2 rollout replicas; 2 steps, step 2 profiled with
    a tool verl does not know (its profiler stays a no-op)."""

    ARGS = ["trainer.total_training_steps=2", "critic.enable=true", "critic.standin_pool=[2]",
            "global_profiler.steps=[2]", "global_profiler.tool=profd"]

    def processes(self, records):
        procs = {"trainer": [], "hybrid": {}, "critic": {}, "server": {}}
        # the vLLM engine's records (its worker processes, its start in the
        # server) are not verl's
        for pid, evs in by_pid([r for r in records if not r["src"].startswith("vllm.")]).items():
            first = evs[0]
            if first["src"] == "verl.trainer":
                procs["trainer"] = [verl_event(e) for e in evs]
            elif first["src"] == "verl.server":
                procs["server"][first["replica_rank"]] = [verl_event(e) for e in evs]
            elif first.get("engine") == "critic":
                procs["critic"][first["rank"]] = evs
            else:
                procs["hybrid"][first["rank"]] = evs
        return procs

    def check_groups(self, procs):
        self.assertEqual(sorted(procs["hybrid"]), [0, 1])
        self.assertEqual(sorted(procs["critic"]), [0, 1])
        self.assertEqual(sorted(procs["server"]), [0, 1])
        hybrid_wg = {e["wg"] for evs in procs["hybrid"].values() for e in evs if "wg" in e}
        critic_wg = {e["wg"] for evs in procs["critic"].values() for e in evs if "wg" in e}
        self.assertEqual(len(hybrid_wg), 1)
        self.assertEqual(len(critic_wg), 1)
        self.assertNotEqual(hybrid_wg, critic_wg)
        for evs in list(procs["hybrid"].values()) + list(procs["critic"].values()):
            self.assertEqual({e["world_size"] for e in evs if "world_size" in e}, {2})

    def check_profiled_run(self, records, p, hybrid):
        """A run of ARGS, step 2 profiled: the trainer's steps, each hybrid
        rank's events (hybrid: the trainer's own order), each critic rank's
        and each server's."""
        self.assertEqual(p.stdout, "")
        procs = self.processes(records)
        self.check_groups(procs)
        self.assertEqual(procs["trainer"], [("step", 1), ("step", 2)])
        for rank in (0, 1):
            self.assertEqual([verl_event(e) for e in procs["hybrid"][rank]], hybrid)
            self.assertEqual([verl_event(e) for e in procs["critic"][rank]],
                             CRITIC_COMPUTE + [("start_profile", {"profile_step": 2})] + CRITIC_COMPUTE
                             + [("stop_profile", True)])
        for replica in (0, 1):
            self.assertEqual(procs["server"][replica],
                             [("launch_server",), ("sleep",),
                              ("generate", "1-%d" % replica), ("generate", "1-%d" % (replica + 2)), ("sleep",),
                              ("start_profile",),
                              ("generate", "2-%d" % replica), ("generate", "2-%d" % (replica + 2)), ("sleep",),
                              ("stop_profile",)])

    def test_v1_trainer(self):
        records, p = run("verl.trainer.main_ppo", self.ARGS)
        start = [("start_profile", {"role": "train", "profile_step": 2})]
        self.check_profiled_run(records, p,
                                [("init_model",)] + WEIGHTS(0)
                                + HYBRID_COMPUTE + WEIGHTS(1)
                                + start + HYBRID_COMPUTE + [("stop_profile", True)] + WEIGHTS(2))

    def test_v0_trainer(self):
        records, p = run("verl.trainer.main_ppo", self.ARGS + ["trainer.use_v1=false"])
        self.check_profiled_run(records, p,
                                [("init_model",)] + WEIGHTS(0)
                                + HYBRID_COMPUTE + WEIGHTS(1)
                                + [("start_profile", {"role": "train", "profile_step": 2})] + HYBRID_COMPUTE
                                + WEIGHTS(2) + [("stop_profile", True)])

    def test_colocated_critic_and_no_profiling(self):
        """verl's default layout: the critic shares the hybrid processes."""
        records, _ = run("verl.trainer.main_ppo", ["trainer.total_training_steps=1", "critic.enable=true"])
        procs = by_pid(records)
        workers = [evs for evs in procs.values() if evs[0]["src"] == "verl.worker"]
        self.assertEqual(len(workers), 2)
        for evs in workers:
            self.assertEqual([verl_event(e) for e in evs],
                             [("init_model",)] + WEIGHTS(0) + HYBRID_COMPUTE[:4] + CRITIC_COMPUTE[:1]
                             + CRITIC_COMPUTE[1:] + HYBRID_COMPUTE[4:] + WEIGHTS(1))
            self.assertEqual(len({e["wg"] for e in evs if "wg" in e}), 1)


    def test_external_modules_load_in_every_process(self):
        """VERL_USE_EXTERNAL_MODULES (verl/__init__.py) is imported by every
        process that imports verl; the launcher's environment reaches all of
        them through ray.init(), as on a local Ray cluster."""
        ext = tempfile.mkdtemp(prefix="standin-ext-")
        with open(os.path.join(ext, "standin_ext_probe.py"), "w") as f:
            f.write("import os, standin_trace\n"
                    "standin_trace.record('ext', 'loaded', rank=os.environ.get('RANK'), "
                    "wg=os.environ.get('WG_PREFIX'), probe=os.environ.get('STANDIN_PROBE'))\n")
        records, _ = run("verl.trainer.main_ppo", ["trainer.total_training_steps=1"], path_extra=[ext],
                         env_extra={"VERL_USE_EXTERNAL_MODULES": "standin_ext_probe", "STANDIN_PROBE": "on"})
        loaded = [r for r in records if r["src"] == "ext"]
        pids = by_pid(records)
        kinds = sorted("worker" if r["rank"] is not None else
                       ("server" if pids[r["pid"]][-1]["src"] == "verl.server" else
                        "taskrunner" if any(e["src"] == "verl.trainer" for e in pids[r["pid"]]) else "launcher")
                       for r in loaded)
        self.assertEqual(kinds, ["launcher", "server", "server", "taskrunner", "worker", "worker"])
        self.assertEqual({r["probe"] for r in loaded}, {"on"})
        self.assertEqual(sorted(r["rank"] for r in loaded if r["rank"] is not None), ["0", "1"])


class MegatronStandin(unittest.TestCase):
    ARGS = ["--train-iters", "6", "--profile", "--profile-step-start", "2", "--profile-step-end", "4"]

    def test_cuda_profiler_api_path(self):
        """--profile alone (nsys): cudaProfilerStart at the top of the pass with
        iteration == start, stop after iteration == end: logged iterations 3, 4."""
        records, p = run("megatron_pretrain_gpt", self.ARGS)
        self.assertEqual(p.stdout, "")
        got = [(r["ev"], r["iteration"], r["cuda_range"]) if r["ev"] == "train_step" else (r["ev"], r["iteration"])
               for r in records]
        self.assertEqual(got, [("train_step", 1, False), ("train_step", 2, False), ("cudaProfilerStart", 2),
                               ("train_step", 3, True), ("train_step", 4, True), ("cudaProfilerStop", 4),
                               ("train_step", 5, False), ("train_step", 6, False)])

    @unittest.skipUnless(have_torch(), "torch does not import")
    def test_pytorch_profiler_path(self):
        """--use-pytorch-profiler: prof.step() at the top of each pass; the
        schedule records logged iterations 2, 3; prof.stop() at iteration 4."""
        records, p = run("megatron_pretrain_gpt", self.ARGS + ["--use-pytorch-profiler", "--tensorboard-dir", "tb/x"])
        got = []
        for r in records:
            if r["ev"] == "train_step":
                got.append((r["ev"], r["iteration"], r["torch_action"]))
            elif r["ev"] == "prof.step":
                got.append((r["ev"], r["iteration"], r["step_num"]))
            elif r["ev"] == "prof.stop":
                got.append((r["ev"], r["iteration"]))
            else:
                got.append((r["ev"],))
        self.assertEqual(got, [("prof.start",),
                               ("prof.step", 0, 1), ("train_step", 1, "WARMUP"),
                               ("prof.step", 1, 2), ("train_step", 2, "RECORD"),
                               ("prof.step", 2, 3), ("train_step", 3, "RECORD_AND_SAVE"),
                               ("prof.step", 3, 4), ("train_step", 4, "NONE"), ("prof.stop", 4),
                               ("prof.step", 4, 5), ("train_step", 5, "NONE"),
                               ("prof.step", 5, 6), ("train_step", 6, "NONE")])
        self.assertTrue(os.path.exists(os.path.join(p.tmp, "tb", "torch_profile", "rank-0.json.gz")))


def mindspeed_view(records):
    got = []
    for r in records:
        if r["ev"] == "train_step":
            got.append((r["iteration"], r["npu_action"]))
        elif r["ev"] == "trace_ready":
            got.append(("trace_ready", r["steps"]))
    return got


class MindSpeedStandin(unittest.TestCase):
    BASE = ["--train-iters", "6", "--profile", "--profile-ranks", "-1"]

    def test_mcore_window(self):
        """[start, end) = [3, 5): logged iterations 3 and 4 are recorded."""
        records, p = run("mindspeed_llm_pretrain_gpt", self.BASE + ["--profile-step-start", "3", "--profile-step-end",
                                                                   "5", "--profile-save-path", "prof"], npu=True)
        self.assertEqual(p.stderr, "")
        self.assertEqual([(r["src"], r["ev"]) for r in records][:3],
                         [("mindspeed", "prof.start"), ("torch_npu", "profile.start"), ("mindspeed", "train_step")])
        self.assertEqual([(r["src"], r["ev"]) for r in records][-2:],
                         [("mindspeed", "prof.stop"), ("torch_npu", "profile.stop")])
        self.assertEqual(mindspeed_view(records), [(1, "NONE"), (2, "WARMUP"), (3, "RECORD"), (4, "RECORD_AND_SAVE"),
                                                   ("trace_ready", [2, 3]), (5, "NONE"), (6, "NONE")])
        self.assertEqual(len(os.listdir(os.path.join(p.tmp, "prof"))), 1)

    def test_mcore_window_from_first_iteration(self):
        records, _ = run("mindspeed_llm_pretrain_gpt", self.BASE + ["--profile-step-start", "1", "--profile-step-end",
                                                                   "3"], npu=True)
        self.assertEqual(mindspeed_view(records), [(1, "RECORD"), (2, "RECORD_AND_SAVE"), ("trace_ready", [0, 1]),
                                                   (3, "NONE"), (4, "NONE"), (5, "NONE"), (6, "NONE")])

    def test_mcore_window_after_resume(self):
        records, _ = run("mindspeed_llm_pretrain_gpt", self.BASE + ["--profile-step-start", "5", "--profile-step-end",
                                                                   "7", "--standin-load-iteration", "3"], npu=True)
        self.assertEqual(mindspeed_view(records), [(4, "WARMUP"), (5, "RECORD"), (6, "RECORD_AND_SAVE"),
                                                   ("trace_ready", [1, 2])])

    def test_mcore_end_minus_one_records_one_iteration(self):
        records, _ = run("mindspeed_llm_pretrain_gpt", self.BASE + ["--profile-step-start", "3", "--profile-step-end",
                                                                   "-1"], npu=True)
        self.assertEqual(mindspeed_view(records), [(1, "NONE"), (2, "WARMUP"), (3, "RECORD_AND_SAVE"),
                                                   ("trace_ready", [2]), (4, "NONE"), (5, "NONE"), (6, "NONE")])

    def test_mcore_profile_ranks_default_is_rank_0(self):
        """--profile-ranks defaults to [0] (Megatron core_v0.12.1)."""
        args = ["--train-iters", "2", "--profile", "--profile-step-start", "1", "--profile-step-end", "2"]
        records, _ = run("mindspeed_llm_pretrain_gpt", args, npu=True)
        self.assertEqual(mindspeed_view(records), [(1, "RECORD_AND_SAVE"), ("trace_ready", [0]), (2, "NONE")])
        records, _ = run("mindspeed_llm_pretrain_gpt", args, npu=True, env_extra={"RANK": "1"})
        self.assertEqual(mindspeed_view(records), [(1, None), (2, None)])

    def test_fsdp2_window(self):
        """training.profile_step_start/end = 3/5: the updates that end at
        global step 4 and 5 are recorded (0-based update index 3, 4)."""
        records, p = run("mindspeed_llm_train_fsdp2",
                         ["--training.output_dir", "out", "--training.max_steps", "6", "--training.profile", "true",
                          "--training.profile_step_start", "3", "--training.profile_step_end", "5",
                          "--training.profile_save_path", "prof"], npu=True)
        self.assertEqual(p.stderr, "")
        got = [(r["global_step"], r["npu_action"]) if r["ev"] == "update" else (r["ev"], r["steps"])
               for r in records if r["ev"] in ("update", "trace_ready")]
        self.assertEqual(got, [(1, "NONE"), (2, "NONE"), (3, "WARMUP"), (4, "RECORD"), (5, "RECORD_AND_SAVE"),
                               ("trace_ready", [3, 4]), (6, "NONE")])


if __name__ == "__main__":
    unittest.main(verbosity=2)
