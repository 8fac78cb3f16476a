# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Helpers for the Python tests: a real profd daemon in a temporary folder,
profctl, manifests, and the torch check.

The tests run from ctest (tests/python/CMakeLists.txt) with:
  PYTHONPATH        <build>/python (the package and an unsanitized
                    libprofd.so next to it) and this folder
  PROFD_BUILD_DIR   <build> (daemon/profd, client/profctl)
  PROFD_SOURCE_DIR  the source tree (examples)
Tests that need torch exit 77 (ctest: skipped) when it does not import; so
does a module whose tests skipped (skipTest) when none failed: ctest
reports it as skipped, never as passed.
"""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

BUILD = os.environ.get("PROFD_BUILD_DIR", "")
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("PROFD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
PROFD = os.path.join(BUILD, "daemon", "profd")
PROFCTL = os.path.join(BUILD, "client", "profctl")
SKIP = 77
SANITIZER = re.compile(r"(ERROR|WARNING): [A-Za-z]+Sanitizer|runtime error")


def have_torch():
    try:
        import torch  # noqa: F401

        return True
    except Exception:
        return False


def require(torch=False, daemon=False):
    """Exit 77 (ctest: skipped) when a requirement of the calling test
    module is missing. Call before importing torch."""
    if torch and not have_torch():
        print("SKIP: torch does not import in %s (Debian: apt-get install python3-torch)" % sys.executable)
        sys.exit(SKIP)
    if daemon and not (os.access(PROFD, os.X_OK) and os.access(PROFCTL, os.X_OK)):
        print("SKIP: no profd/profctl in PROFD_BUILD_DIR=%r" % BUILD)
        sys.exit(SKIP)


def main():
    """unittest.main, with skips reported to ctest: exit 1 when a test failed
    or errored (whatever skipped), else 77 when one skipped, else 0.

    The cases that can skip are ctest tests of their own (cases.py, run as
    `module.py Class.test_x`): the module's own test leaves them out
    (PROFD_TEST_EXCLUDE, comma-separated "Class" or "Class.test_x"), so that
    one skipped case is reported as that case skipped, not the module."""
    exclude = {e for e in os.environ.get("PROFD_TEST_EXCLUDE", "").split(",") if e}
    if exclude and len(sys.argv) == 1:
        main_module = sys.modules["__main__"]
        suite = unittest.TestSuite()

        def add(tests):
            for t in tests:
                if isinstance(t, unittest.TestSuite):
                    add(t)
                    continue
                name = t.id().split(".", 1)[1] if t.id().startswith("__main__.") else t.id()
                if name not in exclude and name.split(".")[0] not in exclude:
                    suite.addTest(t)

        add(unittest.defaultTestLoader.loadTestsFromModule(main_module))
        result = unittest.TextTestRunner(verbosity=2).run(suite)
    else:
        result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful() or result.testsRun == 0:
        sys.exit(1)
    if result.skipped:
        print("SKIP: %d of %d test(s) skipped, none failed:" % (len(result.skipped), result.testsRun))
        for test, why in result.skipped:
            print("  %s: %s" % (test.id(), why))
        sys.exit(SKIP)
    sys.exit(0)


class Daemon:
    """profd with its own run folder and save_path, stopped by pid."""

    def __init__(self, root=None, args=()):
        self.root = root or tempfile.mkdtemp(prefix="profd-pytest-")
        self.run_dir = os.path.join(self.root, "run")
        self.save_path = os.path.join(self.root, "profile")
        os.makedirs(self.run_dir, exist_ok=True)
        self.log_path = os.path.join(self.root, "profd.log")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [PROFD, "--run-dir", self.run_dir, "--save-path", self.save_path, "--log-level", "debug"] + list(args),
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 15
        while self.ctl("status", check=False).returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("profd did not start:\n" + self.log())
            time.sleep(0.05)

    def env(self, **extra):
        e = dict(os.environ)
        e["PROFD_RUN_DIR"] = self.run_dir
        e.pop("PROFD_URL", None)
        e.update({k: str(v) for k, v in extra.items()})
        return e

    def ctl(self, *args, check=True, timeout=30):
        p = subprocess.run(
            [PROFCTL] + list(args), env=self.env(), capture_output=True, text=True, timeout=timeout
        )
        if check and p.returncode != 0:
            raise AssertionError("profctl %s: exit %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
        return p

    def start_window(self, *args):
        out = self.ctl("start", *args).stdout
        m = re.search(r"^started window (\d+) ", out, re.M)
        if not m:
            raise AssertionError("no window id in: " + out)
        return int(m.group(1))

    def wait(self, wid, timeout=60):
        """profctl wait: 0 every capture complete, 3 done with others."""
        return self.ctl("wait", str(wid), "--timeout", str(timeout), check=False, timeout=timeout + 10).returncode

    def window_dir(self, job, wid):
        found = glob.glob(os.path.join(self.save_path, job, "w%d-*" % wid))
        if len(found) != 1:
            raise AssertionError("window %d of job %s: %r" % (wid, job, found))
        return found[0]

    def manifest(self, job, wid):
        with open(os.path.join(self.window_dir(job, wid), "manifest.json")) as f:
            return json.load(f)

    def log(self):
        if not self._log.closed:
            self._log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        """SIGTERM; returns the exit status (0 expected: clean, no leaks under ASan).
        A sanitizer report in the daemon's log raises AssertionError."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        report = [l for l in self.log().splitlines() if SANITIZER.search(l)]
        if report:
            raise AssertionError("sanitizer report in the daemon's log:\n" + "\n".join(report[:5]))
        return self.proc.returncode

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def close(self):
        """stop; the daemon's folder is removed when it exited 0, kept to
        look at otherwise."""
        if self.stop() == 0:
            self.cleanup()


def reap(procs, timeout=60):
    """The exit status of each (process, log file) of procs, waited for
    (timeout s each, then killed); the log files closed."""
    codes = []
    for p, log in procs:
        try:
            codes.append(p.wait(timeout=timeout))
        except subprocess.TimeoutExpired:
            p.kill()
            codes.append(p.wait())
        log.close()
    return codes


class DaemonCase(unittest.TestCase):
    """Tests against one daemon of their own: self.d, and its worker URL
    self.url; a daemon that does not exit 0 at the end fails the class.
    daemon_args: the daemon's extra arguments."""

    daemon_args = ()

    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(args=cls.daemon_args)
        cls.url = "ipc://%s/worker.sock" % cls.d.run_dir

    @classmethod
    def tearDownClass(cls):
        rc = cls.d.stop()
        if rc != 0:
            raise AssertionError("profd exited with %s:\n%s" % (rc, cls.d.log()))
        cls.d.cleanup()


def sim_window_client(case, job, first, end, role):
    """A sim window of job over steps first..end-1 (its id in case.wid),
    and a client of that job, rank 0 of role, connected to case's daemon."""
    import profd

    case.wid = case.d.start_window("--job", job, "--steps", "%d:%d" % (first, end), "--tool", "sim")
    c = profd.Client(role=role, rank=0, job=job, url=case.url)
    wait_connected(c)
    return c


def finish_sim_window(case, client, job):
    """After sim_window_client: case.rc the window's end (profctl wait),
    the client closed; returns the window's steps.json."""
    case.rc = case.d.wait(case.wid)
    client.close()
    with open(os.path.join(case.d.window_dir(job, case.wid), "steps.json")) as f:
        return json.load(f)


def wait_connected(client, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not client.stats().connected:
        if time.monotonic() > deadline:
            raise AssertionError("the client did not register with the daemon within %.0f s" % timeout)
        time.sleep(0.01)


def trace_events(doc):
    """Chrome trace: an object with traceEvents, or a bare array of events."""
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def trace_file(capture):
    """The capture's one Chrome trace, named <worker>.<ms>.pt.trace.json[.gz]
    (TensorBoard's naming: the worker is rank<R>-<role>[-<phase>]); a
    rollout engine's traces gathered under engine/ are not it."""
    (path,) = [f["path"] for f in capture["files"]
               if re.search(r"\.pt\.trace\.json(\.gz)?$", f["path"]) and not f["path"].startswith("engine/")]
    if not re.match(r"^rank%d-[A-Za-z0-9_-]+\.\d+\.pt\.trace\.json(\.gz)?$" % capture["rank"], path):
        raise AssertionError("trace %s is not named rank<R>-<role>[-<phase>].<ms>.pt.trace.json" % path)
    return path


def files_below(root):
    out = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            out.append(os.path.relpath(os.path.join(dirpath, n), root))
    return sorted(out)


def user_site(root):
    """A user site (PYTHONUSERBASE=root) holding the build's package and
    profd-auto.pth, where `cmake --install` puts them in a site folder:
    site.py reads .pth files in site folders only, so a process run with
    PYTHONUSERBASE=root (and no PYTHONPATH) reaches profd through the .pth."""
    pybuild = os.path.join(BUILD, "python")
    env = {"PYTHONUSERBASE": root, "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    site = subprocess.run([sys.executable, "-c", "import site; print(site.getusersitepackages())"], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()
    os.makedirs(site, exist_ok=True)
    os.symlink(os.path.join(pybuild, "profd"), os.path.join(site, "profd"))
    shutil.copy(os.path.join(pybuild, "profd-auto.pth"), site)
    return site


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RecorderBase:
    """A user backend that records its calls (each as entry(what, cap)
    makes it) and fails where failed(what, cap) raises; with native, it has
    a step() (the schedule is its own)."""

    def __init__(self, native=False):
        self.calls = []
        if native:
            self.step = self._step

    def _do(self, what, cap):
        self.calls.append(self.entry(what, cap))
        self.failed(what, cap)

    def start(self, cap):
        self._do("start", cap)

    def _step(self, cap):
        self._do("step", cap)

    def stop(self, cap):
        self._do("stop", cap)
