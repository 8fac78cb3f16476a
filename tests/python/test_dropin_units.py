# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The pieces of the drop-in integrations, each alone:

- a process with several roles against a real profd: roles at open, a
  role added after registering (the client registers again), phases named
  by role, selection by a role's own rank, `busy`;
- the post-import hooks (profd._hooks): run after the module's own code,
  before the importer gets it; at once for an imported module; a failing
  hook never breaks the import;
- PROFD_AUTO's counted optimizer (PROFD_AUTO_OPTIMIZER first / class / any)
  and its yielding to a framework integration, in fresh interpreters with
  torch (no daemon: a client without one counts steps all the same);
- fail open: a verl, MindSpeed-LLM or Megatron-LM whose classes and methods
  are not the ones the integration follows gets one log line and no patch.
"""

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import unittest

import profdtest

profdtest.require(daemon=True)

import profd  # noqa: E402
from profd import _hooks  # noqa: E402
from profd.integrations import _common, megatron, mindspeed, verl  # noqa: E402


class Recorder:
    name = "rec"

    def __init__(self):
        self.calls = []

    def start(self, cap):
        self.calls.append((cap.role, cap.phase, cap.rank, cap.dir))

    def stop(self, cap):
        with open(os.path.join(cap.dir, "rec.txt"), "w") as f:
            f.write("x")


class TestRolesWithDaemon(profdtest.DaemonCase):
    daemon_args = ("--custom-tools", "rec")  # the tool of the Recorder backend
    def wait_plan(self, c, windows):
        deadline = time.monotonic() + 10
        while c.busy or c.stats().windows != windows:  # busy: the training thread adopts the plan
            self.assertLess(time.monotonic(), deadline, "no plan with %d window(s)" % windows)
            time.sleep(0.01)

    def registered_roles(self, n):
        deadline = time.monotonic() + 10
        while True:
            ranks = json.loads(self.d.ctl("--json", "status", "--job", "roles").stdout)["ranks"]
            if ranks and len(ranks[0].get("roles", [])) == n:
                return ranks
            self.assertLess(time.monotonic(), deadline, "roles not registered: %r" % ranks)
            time.sleep(0.02)

    def test_roles_at_open_and_added_later(self):
        rec = Recorder()
        c = profd.Client(role="actor", rank=2, job="roles", url=self.url, backend=rec, roles=["rollout"],
                         host="h1")
        profdtest.wait_connected(c)
        # added after registering: the client registers again, as the same rank
        self.assertTrue(c.add_role("critic", 0))
        self.assertTrue(c.add_role("critic", 0))  # again: fine
        self.assertFalse(c.add_role("critic", 1))  # another rank: refused, logged
        self.assertFalse(c.add_role("e2e"))
        ranks = self.registered_roles(3)
        self.assertEqual(len(ranks), 1)
        self.assertEqual([(r["role"], r["rank"]) for r in ranks[0]["roles"]],
                         [("actor", 2), ("rollout", 2), ("critic", 0)])
        # the ranks are listed on request (status shows the roles' figures)
        self.assertIn("roles actor rollout critic:0", self.d.ctl("status", "--ranks", "--job", "roles").stdout)
        self.assertEqual(c.stats().reconnects, 0)
        # critic rank 0 is this process (its global rank is 2)
        w1 = self.d.start_window("--job", "roles", "--steps", "3", "--roles", "critic", "--ranks", "0",
                                 "--discrete", "--tool", "rec")
        w2 = self.d.start_window("--job", "roles", "--steps", "4", "--e2e", "--tool", "rec")
        self.wait_plan(c, 2)
        for n in range(1, 6):
            if n == 2:  # "ref", named first by a phase in step 1, reaches the daemon
                self.registered_roles(4)
            with c.step(n):
                self.assertEqual(c.busy, n in (3, 4))
                with c.phase("generate", role="rollout"):
                    pass
                with c.phase("update_critic", role="critic"):
                    pass
                with c.phase("ref_compute_log_prob", role="ref"):  # declared here, at rank 2
                    pass
        c.close()
        self.assertEqual(self.d.wait(w1), 0)
        self.assertEqual(self.d.wait(w2), 0)
        self.assertEqual([(r, p, k) for r, p, k, _ in rec.calls],
                         [("critic", "update_critic", 0), ("e2e", None, 2)])
        m1 = self.d.manifest("roles", w1)
        self.assertEqual([c["dir"] for c in m1["captures"]], ["critic.update_critic/rank0-h1"])
        m2 = self.d.manifest("roles", w2)
        self.assertEqual(m2["captures"][0]["roles"], ["actor", "rollout", "critic", "ref"])
        self.assertEqual(m2["captures"][0]["dir"], "e2e/rank2-h1")


class TestRolesAcrossNodes(unittest.TestCase):
    """A coordinator and a node daemon (tcp on localhost): a process hosting
    actor, rollout and ref at rank 0 and a critic-group process at rank 0 on
    the same host register with the node; the coordinator plans by role and
    role rank, tells the node which roles each process captures and which
    folders carry a pid, and gathers the captures into its tree."""

    def test_roles_and_pid_folders_through_a_coordinator(self):
        port = profdtest.free_port()
        coord = profdtest.Daemon(args=["--coordinator-listen", "tcp://127.0.0.1:%d" % port,
                                       "--insecure-tcp-links", "--node", "coordinator",
                                       "--custom-tools", "rec"])
        node = profdtest.Daemon(args=["--coordinator-url", "tcp://127.0.0.1:%d" % port, "--insecure-tcp-links",
                                      "--node", "node1"])
        url = "ipc://%s/worker.sock" % node.run_dir
        try:
            hyb = profd.Client(role="actor", rank=0, job="multi", url=url, backend=Recorder(),
                               roles=["rollout", "ref"], host="hv")
            profdtest.wait_connected(hyb)
            # the node's roster reaches the coordinator: hyb is the first member
            # (waited for, not slept for: the roster's order is the point)
            deadline = time.monotonic() + 30
            while len(json.loads(coord.ctl("--json", "status", "--job", "multi").stdout)["ranks"]) != 1:
                self.assertLess(time.monotonic(), deadline,
                                "hyb not at the coordinator within 30 s: " + coord.ctl("status").stdout)
                time.sleep(0.02)
            crit = profd.Client(role="critic", rank=0, job="multi", url=url, backend=Recorder(), host="hv")
            profdtest.wait_connected(crit)
            deadline = time.monotonic() + 10
            while len(json.loads(coord.ctl("--json", "status", "--job", "multi").stdout)["ranks"]) != 2:
                self.assertLess(time.monotonic(), deadline, coord.ctl("status").stdout)
                time.sleep(0.05)
            w1 = coord.start_window("--job", "multi", "--steps", "3", "--roles", "rollout", "--ranks", "0",
                                    "--discrete", "--tool", "rec")
            w2 = coord.start_window("--job", "multi", "--steps", "4", "--e2e", "--tool", "rec")
            deadline = time.monotonic() + 10
            while hyb.busy or crit.busy or hyb.stats().windows != 2 or crit.stats().windows != 1:
                self.assertLess(time.monotonic(), deadline, "plans did not arrive")
                time.sleep(0.02)
            for n in range(1, 6):
                for c in (hyb, crit):
                    with c.step(n):
                        with c.phase("generate", role="rollout" if c is hyb else None):
                            pass
                        with c.phase("actor_update" if c is hyb else "critic_update"):
                            pass
            # gathered while the workers live (a worker leaving its node at once
            # may reach the coordinator before its node forwards its results)
            self.assertEqual(coord.wait(w1), 0, coord.log()[-2000:])
            self.assertEqual(coord.wait(w2), 0, coord.log()[-2000:])
            hyb.close()
            crit.close()
            m1 = coord.manifest("multi", w1)
            self.assertEqual([(c["dir"], c["pid"]) for c in m1["captures"]],
                             [("rollout.generate/rank0-hv", os.getpid())])
            m2 = coord.manifest("multi", w2)
            got = sorted((c["dir"], c["roles"]) for c in m2["captures"])
            self.assertEqual(got, [("e2e/rank0-hv", ["actor", "rollout", "ref"]),
                                   ("e2e/rank0-hv-pid%d" % os.getpid(), ["critic"])])
        finally:
            for d in (node, coord):
                if d.stop() == 0:
                    d.cleanup()


class TestHooks(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="profd-hooks-")
        sys.path.insert(0, self.dir)

    def tearDown(self):
        sys.path.remove(self.dir)

    def module(self, name, body):
        with open(os.path.join(self.dir, name + ".py"), "w") as f:
            f.write(textwrap.dedent(body))

    def test_runs_after_the_module_before_the_importer(self):
        self.module("hook_target_a", "VALUE = 1\n")
        seen = []
        _hooks.when_imported("hook_target_a", lambda m: (seen.append(m.VALUE), setattr(m, "VALUE", 2)))
        self.assertEqual(seen, [])
        import hook_target_a

        self.assertEqual(seen, [1])
        self.assertEqual(hook_target_a.VALUE, 2)
        self.assertEqual(type(hook_target_a.__spec__.loader).__name__, "SourceFileLoader")
        # already imported: at once
        _hooks.when_imported("hook_target_a", lambda m: seen.append("now"))
        self.assertEqual(seen, [1, "now"])

    def test_a_failing_hook_never_breaks_the_import(self):
        self.module("hook_target_b", "VALUE = 3\n")

        def boom(m):
            raise RuntimeError("boom")

        _hooks.when_imported("hook_target_b", boom)
        with self.assertLogs("profd", "WARNING") as logs:
            import hook_target_b
        self.assertEqual(hook_target_b.VALUE, 3)
        self.assertIn("hook_target_b failed and is off: RuntimeError: boom", logs.output[0])


class TestClaim(unittest.TestCase):
    """Who drives a process's steps: a framework's integration takes them
    from PROFD_AUTO's optimizer steps, MindSpeed-LLM from Megatron-LM, and
    one of lower rank never takes them back. Guards: a lower-ranked
    integration taking the steps from a framework's (claim's rank test)."""

    def setUp(self):
        self._saved = _common._owner
        _common._owner = None

    def tearDown(self):
        _common._owner = self._saved

    def test_higher_rank_takes_lower_never_takes_back(self):
        self.assertTrue(_common.claim("pytorch"))
        self.assertTrue(_common.claim("megatron"))
        self.assertTrue(_common.claim("mindspeed"))
        self.assertFalse(_common.claim("megatron"))
        self.assertFalse(_common.claim("pytorch"))
        self.assertEqual(_common.owner(), "mindspeed")
        self.assertTrue(_common.claim("verl"))
        for lower in ("mindspeed", "megatron", "pytorch"):
            self.assertFalse(_common.claim(lower), lower)
        self.assertEqual(_common.owner(), "verl")
        self.assertTrue(_common.claim("verl"))  # its own, again

    def test_first_claim_of_any_rank(self):
        self.assertTrue(_common.claim("megatron"))
        self.assertEqual(_common.owner(), "megatron")


AUTO_PROBE = r"""
import os, sys, site
site.addsitedir(sys.argv[1])       # the build's python/ folder: its .pth runs
import torch
from profd.integrations import _common, pytorch
if os.environ.get("CLAIM"):
    _common.claim(os.environ["CLAIM"])
w = torch.nn.Linear(2, 2)
a = torch.optim.SGD(w.parameters(), lr=0.1)
b = torch.optim.Adam(w.parameters(), lr=0.1)
for _ in range(3):
    w(torch.ones(1, 2)).sum().backward()
    b.step()                       # Adam steps first each iteration
    a.step()
c = _common.current()
print(pytorch._state["step"], _common.owner(), c is not None)
"""


@unittest.skipUnless(profdtest.have_torch(), "torch does not import")
class TestAutoOptimizer(unittest.TestCase):
    def probe(self, **env_extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROFD_") and k != "PYTHONPATH"}
        env.update(PROFD_AUTO="1", PROFD_URL="ipc:///nonexistent/profd-test.sock", **env_extra)
        p = subprocess.run([sys.executable, "-s", "-c", AUTO_PROBE, os.path.join(profdtest.BUILD, "python")],
                           env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.split()

    def test_first_optimizer_to_step_counts(self):
        # step 1 begins at the first optimizer; each of 3 Adam steps ends one
        self.assertEqual(self.probe(), ["4", "pytorch", "True"])

    def test_a_class_name_counts_that_optimizer(self):
        self.assertEqual(self.probe(PROFD_AUTO_OPTIMIZER="SGD"), ["4", "pytorch", "True"])
        self.assertEqual(self.probe(PROFD_AUTO_OPTIMIZER="Optimizer"), ["4", "pytorch", "True"])
        self.assertEqual(self.probe(PROFD_AUTO_OPTIMIZER="RMSprop"), ["1", "pytorch", "True"])

    def test_any_counts_every_step(self):
        self.assertEqual(self.probe(PROFD_AUTO_OPTIMIZER="any"), ["7", "pytorch", "True"])

    def test_yields_to_a_framework(self):
        self.assertEqual(self.probe(CLAIM="verl"), ["0", "verl", "False"])

    def test_off(self):
        self.assertEqual(self.probe(PROFD_TORCH="0"), ["0", "None", "False"])


# torch >= 2.0's optimizer step hooks, as torch/optim/optimizer.py has them
# (pytorch/pytorch@002d2f0bb40cf08beb74bce80f52ce4f2eda46a0): Optimizer.__init__
# calls _patch_step_function, which wraps each class's step once
# (profile_hook_step) unless it is marked `hooked`; the wrapper opens the
# record_function range "Optimizer.step#<class>.step" and inside it runs the
# global then the object's pre-hooks, the step, _optimizer_step_code, and the
# object's then the global post-hooks (register_optimizer_step_post_hook).
# The stand-in's record_function logs each range's entry and exit.
TORCH2 = {
    "torch/__init__.py": "__version__ = '2.5.0+fake'\nfrom . import autograd, optim\nEVENTS = []\n",
    "torch/autograd/__init__.py": "from . import profiler\n",
    "torch/autograd/profiler.py": """
import torch

class record_function:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        torch.EVENTS.append(("enter", self.name))

    def __exit__(self, *exc):
        torch.EVENTS.append(("exit", self.name))
""",
    "torch/optim/__init__.py": "from .optimizer import Optimizer\nfrom . import optimizer\n",
    "torch/optim/optimizer.py": """
import functools
from collections import OrderedDict
from itertools import chain

import torch

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()

def register_optimizer_step_post_hook(hook):
    _global_optimizer_post_hooks[len(_global_optimizer_post_hooks)] = hook

class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._patch_step_function()

    def _optimizer_step_code(self):
        pass

    @staticmethod
    def profile_hook_step(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self, *_ = args
            profile_name = f"Optimizer.step#{self.__class__.__name__}.step"
            with torch.autograd.profiler.record_function(profile_name):
                for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
                    pre_hook(self, args, kwargs)
                out = func(*args, **kwargs)
                self._optimizer_step_code()
                for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                       _global_optimizer_post_hooks.values()):
                    post_hook(self, args, kwargs)
                return out
        return wrapper

    def _patch_step_function(self):
        hooked = getattr(self.__class__.step, "hooked", None)
        if not hooked:
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True
""",
}

TORCH2_PROBE = r"""
import site, sys
sys.path.insert(0, sys.argv[2])    # the torch 2.x stand-in first
site.addsitedir(sys.argv[1])
import torch
from profd.integrations import _common, pytorch

class Client:   # stands for the process's profd client: logs the boundaries
    enabled = True

    def step_begin(self, n):
        torch.EVENTS.append(("begin", n))

    def step_end(self, n):
        torch.EVENTS.append(("end", n))

    def __getattr__(self, name):   # the rest of the client's calls (sections): not logged
        return lambda *args, **kwargs: None

_common._client = Client()

class SGD(torch.optim.Optimizer):
    def step(self):
        torch.EVENTS.append(("update",))

a = SGD([], {})
b = SGD([], {})   # a second object: its class is wrapped once
for _ in range(3):
    a.step()
print(torch.__version__, pytorch._state["step"], getattr(SGD.step, "_profd", False), SGD.step.hooked)
for e in torch.EVENTS:
    print("/".join(map(str, e)))
"""


class TestAutoTorch2(unittest.TestCase):
    """torch >= 2.0 (its hook order, faithful): the step boundaries land
    outside torch's "Optimizer.step#SGD.step" range, so a window's profiler
    starts and stops between optimizer steps."""

    def test_boundaries_outside_the_step_range(self):
        root = tempfile.mkdtemp(prefix="profd-torch2-")
        for path, text in TORCH2.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(textwrap.dedent(text))
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROFD_") and k != "PYTHONPATH"}
        env.update(PROFD_AUTO="1", PROFD_URL="ipc:///nonexistent/profd-test.sock")
        p = subprocess.run([sys.executable, "-s", "-c", TORCH2_PROBE, os.path.join(profdtest.BUILD, "python"),
                            root], env=env, capture_output=True, text=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.split()
        self.assertEqual(lines[0:4], ["2.5.0+fake", "4", "True", "True"])
        rng = "Optimizer.step#SGD.step"
        one = ["enter/" + rng, "update", "exit/" + rng]
        self.assertEqual(lines[4:], ["begin/1"] + one + ["end/1", "begin/2"] + one + ["end/2", "begin/3"] + one
                         + ["end/3", "begin/4"])


class TestVerl07Profiler(unittest.TestCase):
    """verl <= 0.7: DistProfiler as verl-project/verl v0.7.0
    (f9c855f7cf04d603c9546bc01776c74806a879c1) verl/utils/profiler/profile.py
    has it -- __init__(rank, config, tool_config) keeps _impl / _tool /
    _this_rank, start(**kwargs) and stop() call the tool's backend, the
    classmethod annotate(message, color, domain, category, **kwargs) runs the
    backend's annotate; no step(), no check_enable() / check_this_rank().
    Stages then become profd phases, and on a step a profd window covers
    verl's backend is not started or stopped."""

    def setUp(self):
        self.log = []
        log = self.log

        class Impl:  # verl's backend for the tool (Profiler for torch)
            def start(self, **kwargs):
                log.append(("impl.start", kwargs.get("profile_step")))

            def stop(self):
                log.append(("impl.stop",))

        class DistProfiler:
            def __init__(self, rank, config=None, tool_config=None, **kwargs):
                self._impl = Impl()
                self._tool = getattr(config, "tool", None)
                self._this_rank = True

            def start(self, **kwargs):
                return getattr(self._impl, "start", lambda **_: None)(**kwargs)

            def stop(self):
                return getattr(self._impl, "stop", lambda: None)()

            @classmethod
            def annotate(cls, message=None, color=None, domain=None, category=None, **kwargs_outer):
                def decorator(func):
                    @functools.wraps(func)
                    def wrapper(self_instance, *args, **kwargs_inner):
                        return func(self_instance, *args, **kwargs_inner)

                    return wrapper

                return decorator

        class Client:  # the process's profd client
            enabled = True
            busy = False

            @contextlib.contextmanager
            def phase(self, name, role=None):
                log.append(("phase", role, name))
                yield

            def substep(self):
                log.append(("substep",))

        self.DistProfiler = DistProfiler
        self.client = Client()
        self.saved = (_common._client, _common._owner)
        _common._client = self.client
        verl._proc.depth = 0

    def tearDown(self):
        _common._client, _common._owner = self.saved

    def test_phases_and_own_profiler_off_in_a_window(self):
        m = fake_module("verl.utils.profiler.profile", DistProfiler=self.DistProfiler)
        with self.assertNoLogs("profd", "WARNING"):
            verl._patch_profile(m)
        DistProfiler = self.DistProfiler

        class Worker:  # as verl 0.7's fsdp_workers.ActorRolloutRefWorker annotates its stages
            def __init__(self):
                self.profiler = DistProfiler(rank=0, config=types.SimpleNamespace(tool="torch"))

            @DistProfiler.annotate(color="red", role="actor_update")
            def update_actor(self, data):
                self.profiler  # noqa: B018
                return data + 1

            @DistProfiler.annotate(color="red", role="rollout_generate")
            def generate_sequences(self, data):
                return data

        w = Worker()
        self.assertEqual(w.update_actor(1), 2)
        self.assertEqual(w.generate_sequences(5), 5)
        w.profiler.start(role="e2e", profile_step=1)
        w.profiler.stop()
        self.client.busy = True  # a profd window covers this step
        w.profiler.start(role="e2e", profile_step=2)
        w.profiler.stop()
        self.assertEqual(self.log, [("phase", "actor", "actor_update"), ("phase", "rollout", "rollout_generate"),
                                    ("impl.start", 1), ("impl.stop",)])
        self.assertFalse(hasattr(DistProfiler, "step"))


def fake_module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


class TestFailOpen(unittest.TestCase):
    """One log line, no patch, for a framework version not recognised."""

    def test_verl_trainer_with_other_signatures(self):
        class PPOTrainer:
            def _start_profiling(self, do_profile):  # a V1 trainer with the legacy signature
                return "orig"

            def _stop_profiling(self):
                return "orig"

        orig = PPOTrainer.__dict__["_start_profiling"]
        m = fake_module("verl.trainer.ppo.v1.trainer_base", PPOTrainer=PPOTrainer)
        with self.assertLogs("profd", "WARNING") as logs:
            verl._patch_trainer(m, cls_name="PPOTrainer", start_params=("self",), stop_params=("self",))
        self.assertIs(PPOTrainer.__dict__["_start_profiling"], orig)
        self.assertEqual(len(logs.output), 1)
        self.assertIn("verl.trainer.ppo.v1.trainer_base has no PPOTrainer._start_profiling(self) "
                      "(profd.integrations.verl follows verl@1dda039b): profd leaves it alone", logs.output[0])

    def test_verl_profiler_without_annotate(self):
        class DistProfiler:
            def start(self, **kw):
                pass

            def stop(self):
                pass

            def step(self):
                pass

            def check_enable(self):
                pass

            def check_this_rank(self):
                pass

            def check_this_step(self):
                pass

        m = fake_module("verl.utils.profiler.profile", DistProfiler=DistProfiler)
        before = dict(DistProfiler.__dict__)
        with self.assertLogs("profd", "WARNING") as logs:
            verl._patch_profile(m)
        self.assertEqual(dict(DistProfiler.__dict__), before)
        self.assertEqual(len(logs.output), 1)

    def assert_left_alone(self, patch, m, var):
        """patch(m) with var=1 leaves the module m as it was and warns that
        profd leaves it alone."""
        before = dict(m.__dict__)
        os.environ[var] = "1"
        try:
            with self.assertLogs("profd", "WARNING") as logs:
                patch(m)
        finally:
            del os.environ[var]
        self.assertEqual(m.__dict__, before)
        self.assertIn("profd leaves it alone", logs.output[0])

    def test_mindspeed_train_without_get_profiler(self):
        def train(args):
            return train_step(args)  # noqa: F821 - the names only

        m = fake_module("mindspeed_llm.training.training", train=train, is_profile_enabled=lambda: False,
                        get_profiler=lambda: None, train_step=lambda *a: None)
        self.assert_left_alone(mindspeed._patch, m, "PROFD_MINDSPEED")

    def test_megatron_train_without_train_step(self):
        def train():
            return None

        m = fake_module("megatron.training.training", train=train, train_step=lambda *a: None)
        self.assert_left_alone(megatron._patch, m, "PROFD_MEGATRON")
        self.assertIsNone(_common.owner())


if __name__ == "__main__":
    profdtest.main()
