# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The library loader, the ctypes layouts, and the no-op client.

Each loader case runs in a fresh interpreter (the loader loads once per
process) with its own environment and package location.
"""

import ctypes
import ctypes.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import profdtest
import profd
from profd import _native as N

PKG = os.path.dirname(os.path.abspath(profd.__file__))
BUILD_LIB = os.path.join(PKG, "libprofd.so")

# Every call of a worker, then what the process saw.
WORKER = r"""
import io, json, logging, time
stream = io.StringIO()
logging.basicConfig(stream=stream, level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")
import profd
from profd import _native
clients = [profd.Client(role="worker", url="ipc:///nonexistent-profd/worker.sock") for _ in range(2)]
c = clients[0]
for s in range(1, 4):
    with c.step(s):
        with c.phase("generate"):
            c.substep()
c.step_begin(4); c.phase_begin("update_actor"); c.substep(); c.phase_end(); c.step_end(4)
stats = c.stats()
enabled = c.enabled
t0 = time.monotonic()
for x in clients:
    x.close()
lib = _native.load()
print(json.dumps({
    "enabled": enabled, "path": lib.path if lib else None, "error": profd.load_error(),
    "stats": list(stats), "close_s": time.monotonic() - t0, "log": stream.getvalue()}))
"""


def run_worker(env_extra=None, pythonpath=None, drop=()):
    env = dict(os.environ)
    for k in ("PROFD_LIB", "PROFD_URL", "PROFD_RUN_DIR") + tuple(drop):
        env.pop(k, None)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, "-c", WORKER], env=env, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("worker failed (%d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
    return json.loads(p.stdout)


def system_has_profd():
    try:
        ctypes.CDLL("libprofd.so.0")
        return True
    except OSError:
        return ctypes.util.find_library("profd") is not None


class TestLoader(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="profd-loader-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def copy_package(self, with_lib):
        dst = os.path.join(self.tmp, "site", "profd")
        shutil.copytree(PKG, dst, ignore=shutil.ignore_patterns("__pycache__", "libprofd.so"))
        if with_lib:
            shutil.copy(BUILD_LIB, dst)
        return os.path.dirname(dst)

    def test_version_is_the_project_version(self):
        # one definition: CMake's project version, in the C header and here
        self.assertEqual(profd.__version__, os.environ["PROFD_VERSION"])
        out = subprocess.run([os.path.join(os.environ["PROFD_BUILD_DIR"], "client", "profctl"),
                              "--version"], capture_output=True, text=True, check=True)
        self.assertEqual(out.stdout, "profctl %s\n" % os.environ["PROFD_VERSION"])

    def test_next_to_the_package(self):
        r = run_worker()
        self.assertEqual(r["path"], BUILD_LIB)
        self.assertIsNone(r["error"])
        self.assertTrue(r["enabled"])
        self.assertFalse(r["stats"][0])  # no daemon: not connected, and no error either
        self.assertEqual(r["log"], "")
        self.assertLess(r["close_s"], 3.0)

    def test_profd_lib_wins(self):
        lib = os.path.join(self.tmp, "libprofd-custom.so")
        shutil.copy(BUILD_LIB, lib)
        r = run_worker({"PROFD_LIB": lib})
        self.assertEqual(r["path"], lib)
        self.assertTrue(r["enabled"])

    def test_missing_library_is_a_no_op(self):
        r = run_worker({"PROFD_LIB": "/nonexistent/libprofd.so"})
        self.assertIsNone(r["path"])
        self.assertFalse(r["enabled"])
        self.assertEqual(
            r["error"],
            "libprofd not found (PROFD_LIB=/nonexistent/libprofd.so: /nonexistent/libprofd.so: "
            "cannot open shared object file: No such file or directory)",
        )
        self.assertEqual(r["stats"], [False, 0, 0, 0, 0, 0, 0, 0])
        # said once for the process, not once per client
        self.assertEqual(r["log"], "WARNING profd disabled: " + r["error"] + "\n")

    def test_sanitized_library_is_refused_not_loaded(self):
        lib = os.path.join(profdtest.BUILD, "client", "libprofd.so")
        try:
            with open(lib, "rb") as f:
                asan = b"libasan.so" in f.read()
        except OSError:
            asan = False
        if not asan:
            self.skipTest("this build is not sanitized")
        # loading it would abort the interpreter ("ASan runtime does not come first")
        r = run_worker({"PROFD_LIB": lib})
        self.assertFalse(r["enabled"])
        self.assertEqual(
            r["error"],
            "libprofd not found (PROFD_LIB=%s: %s is built with AddressSanitizer: preload libasan "
            "(LD_PRELOAD=$(gcc -print-file-name=libasan.so)) or use a build without PROFD_SANITIZE)" % (lib, lib),
        )

    def test_system_linker_path(self):
        site = self.copy_package(with_lib=False)
        libdir = os.path.join(self.tmp, "lib")
        os.makedirs(libdir)
        shutil.copy(BUILD_LIB, os.path.join(libdir, "libprofd.so.0"))
        r = run_worker({"LD_LIBRARY_PATH": libdir}, pythonpath=site)
        self.assertEqual(r["path"], "libprofd.so.0")
        self.assertTrue(r["enabled"])

    def test_nowhere(self):
        if system_has_profd():
            self.skipTest("libprofd is installed on this system")
        site = self.copy_package(with_lib=False)
        r = run_worker(pythonpath=site, drop=("LD_LIBRARY_PATH",))
        self.assertFalse(r["enabled"])
        self.assertTrue(r["error"].startswith("libprofd not found (libprofd.so.0: "), r["error"])


class TestLayout(unittest.TestCase):
    """ctypes declarations == the C structs of client.h."""

    def test_layouts(self):
        exe = os.environ.get("PROFD_LAYOUT_BIN")
        if not exe:
            self.skipTest("PROFD_LAYOUT_BIN not set")
        want = json.loads(subprocess.run([exe], capture_output=True, text=True, check=True).stdout)
        mine = {
            "options": N.Options,
            "capture": N.Capture,
            "schedule": N.Schedule,
            "backend": N.Backend,
            "stats": N.Stats,
        }
        for name, cls in mine.items():
            got_fields = {f: getattr(cls, f).offset for f, _ in cls._fields_}
            self.assertEqual(ctypes.sizeof(cls), want[name]["size"], name)
            self.assertEqual(got_fields, want[name]["fields"], name)


class TestNoDaemon(unittest.TestCase):
    def test_calls_are_no_ops_and_close_is_bounded(self):
        c = profd.Client(role="actor", rank=3, url="ipc:///nonexistent-profd/worker.sock")
        self.assertTrue(c.enabled)
        t0 = time.perf_counter()
        for s in range(1, 1001):
            with c.step(s):
                with c.phase("update_actor"):
                    for _ in range(4):
                        c.substep()
        per_step = (time.perf_counter() - t0) / 1000
        self.assertLess(per_step, 1e-3)  # 6 calls; no wait anywhere
        st = c.stats()
        self.assertFalse(st.connected)
        self.assertEqual((st.client_id, st.windows, st.captures), (0, 0, 0))
        t0 = time.monotonic()
        c.close()
        self.assertLess(time.monotonic() - t0, 3.0)
        self.assertFalse(c.enabled)
        # after close: still no-ops, also through objects taken before
        scope = c.step(2000)
        with scope:
            c.substep()
        self.assertEqual(c.stats(), profd.Stats(False, 0, 0, 0, 0, 0, 0, 0))

    def test_bad_arguments_disable_instead_of_raising(self):
        with self.assertLogs("profd", "WARNING") as logs:
            c = profd.Client(role="not a role", url="ipc:///nonexistent-profd/worker.sock")
        self.assertFalse(c.enabled)
        self.assertIn("disabled: profd_open: invalid argument", logs.output[0])
        with c.step(1):
            c.substep()
        with self.assertLogs("profd", "WARNING") as logs:
            c = profd.Client(role="actor", rank="zero", url="ipc:///nonexistent-profd/worker.sock")
        self.assertFalse(c.enabled)
        self.assertEqual(logs.output, ["WARNING:profd:disabled: invalid literal for int() with base 10: 'zero'"])

    def test_odd_step_values(self):
        with profd.Client(role="actor", url="ipc:///nonexistent-profd/worker.sock") as c:
            with self.assertLogs("profd", "WARNING") as logs:
                with c.step(1.0):  # an integral float is taken as the integer
                    pass
                with c.step("two"):
                    pass
                with c.step("three"):  # said once per type
                    pass
                with c.phase("not a phase"):
                    pass
                with c.phase(["generate"]):
                    pass
            self.assertEqual(
                logs.output,
                [
                    "WARNING:profd:ignoring step 'two': steps are integers",
                    "WARNING:profd:ignoring phase 'not a phase': names are 1-64 of [A-Za-z0-9_-]",
                    "WARNING:profd:ignoring phase ['generate']: names are 1-64 of [A-Za-z0-9_-]",
                ],
            )


if __name__ == "__main__":
    profdtest.main()
