# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""tests/check_layers.py fails where it must: on a call up the layers that
links, on an impure call in the core, on a folder list or hook table of
docs/architecture.md that drifted from the sources.

    test_check_layers.py SOURCE_DIR LINKED_PROGRAM core=FIXTURE.a --archive LIB.a ...

LINKED_PROGRAM links FIXTURE.a (tests/fixtures/layers/upward.c: a function
of the core layer calling pd_node_reply_ack of node/); the --archive
arguments are the daemon's seven archives, as ctest layers passes them.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check_layers  # noqa: E402

SOURCE, LINKED, FIXTURE = sys.argv[1:4]
ARCHIVES = sys.argv[4:]
del sys.argv[1:]


def run_check(*extra):
    return subprocess.run([sys.executable, os.path.join(HERE, "check_layers.py"), SOURCE] +
                          ARCHIVES + list(extra), capture_output=True, text=True)


class Symbols(unittest.TestCase):
    def test_the_tree_passes(self):
        r = run_check()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertIn("layers: 7 archive(s): ", r.stdout)
        self.assertIn("; 0 include cycle(s); 0 violation(s)\n", r.stdout)

    def test_upward_call_links(self):
        # the linker takes it: the program exists and runs
        self.assertEqual(subprocess.run([LINKED]).returncode, 0)

    def test_upward_call_is_reported(self):
        r = run_check("--archive", FIXTURE)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(r.stderr.splitlines(), [
            "layers: libpd_layers_upward.a(upward.c.o) [core]: calls pd_node_reply_ack, "
            "defined in node (libpd_node.a): upward or sideways from core"])
        self.assertIn("layers: 8 archive(s): ", r.stdout)
        self.assertIn("; 0 include cycle(s); 1 violation(s)\n", r.stdout)

    def test_same_call_from_node_is_fine(self):
        # the same archive as part of node/ calls its own layer
        r = run_check("--archive", "node=" + FIXTURE.split("=", 1)[1])
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_impure_call_in_core(self):
        cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.fail("no C compiler for the impure fixture")
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "impure.c")
            with open(src, "w") as f:
                f.write("#include <time.h>\n"
                        "long pd_fixture_now(void)\n{\n    struct timespec t;\n"
                        "    clock_gettime(CLOCK_MONOTONIC, &t);\n    return t.tv_sec;\n}\n")
            subprocess.run([cc, "-c", "-o", os.path.join(d, "impure.c.o"), src], check=True)
            lib = os.path.join(d, "libimpure.a")
            subprocess.run(["ar", "rcs", lib, os.path.join(d, "impure.c.o")], check=True)
            r = run_check("--archive", "core=" + lib)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertEqual(r.stderr.splitlines(), [
                "layers: libimpure.a(impure.c.o) [core]: the pure core calls clock_gettime"])
            r = run_check("--archive", "base=" + lib)  # base may read the clock
            self.assertEqual(r.returncode, 0, r.stderr)


class Docs(unittest.TestCase):
    """check_docs on a copy of the four files it reads, one drift each."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="check-layers-")
        for rel in ("docs/architecture.md", "daemon/CMakeLists.txt", "daemon/core/windows.h",
                    "daemon/node/node.h"):
            os.makedirs(os.path.join(self.tmp, os.path.dirname(rel)), exist_ok=True)
            shutil.copy(os.path.join(SOURCE, rel), os.path.join(self.tmp, rel))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, rel, old, new):
        path = os.path.join(self.tmp, rel)
        text = open(path).read()
        self.assertEqual(text.count(old), 1, old)
        with open(path, "w") as f:
            f.write(text.replace(old, new))

    def problems(self):
        out = []
        check_layers.check_docs(self.tmp, out)
        return out

    def test_copy_passes(self):
        self.assertEqual(self.problems(), [])

    def test_module_missing_from_the_list(self):
        self.edit("docs/architecture.md", ", hook (the after-window\n            command)",
                  "")
        self.assertEqual(self.problems(), [
            "docs/architecture.md: daemon/node/ misses hook (daemon/CMakeLists.txt builds it)"])

    def test_module_built_but_not_listed(self):
        self.edit("daemon/CMakeLists.txt", "core/prune.c", "core/prune.c core/extra.c")
        self.assertEqual(self.problems(), [
            "docs/architecture.md: daemon/core/ misses extra (daemon/CMakeLists.txt builds it)"])

    def test_module_listed_but_not_built(self):
        self.edit("daemon/CMakeLists.txt", " base/watchdog.c", "")
        self.assertEqual(self.problems(), [
            "docs/architecture.md: daemon/base/ lists watchdog, which daemon/CMakeLists.txt "
            "does not build"])

    def test_hook_missing_from_the_table(self):
        self.edit("docs/architecture.md", "| node modules | `reply_durable`:",
                  "| node modules | reply when durable:")
        self.assertEqual(self.problems(), [
            "docs/architecture.md: the hook table omits pd_node_hooks_t's `reply_durable`"])


class ClientHeader(unittest.TestCase):
    """The daemon takes the version and error codes from profd/version.h and
    profd/errors.h: profd/client.h in a daemon file is reported."""

    def test_client_header_in_the_daemon(self):
        with tempfile.TemporaryDirectory(prefix="check-layers-") as tmp:
            shutil.copytree(os.path.join(SOURCE, "daemon"), os.path.join(tmp, "daemon"))
            os.makedirs(os.path.join(tmp, "docs"))
            shutil.copy(os.path.join(SOURCE, "docs", "architecture.md"),
                        os.path.join(tmp, "docs", "architecture.md"))
            r = subprocess.run([sys.executable, os.path.join(HERE, "check_layers.py"), tmp],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            path = os.path.join(tmp, "daemon", "main.c")
            with open(path) as f:
                text = f.read()
            self.assertEqual(text.count('#include "profd/version.h"'), 1)
            with open(path, "w") as f:
                f.write(text.replace('#include "profd/version.h"', '#include "profd/client.h"'))
            r = subprocess.run([sys.executable, os.path.join(HERE, "check_layers.py"), tmp],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertEqual(r.stderr.splitlines(), [
                "layers: daemon/main.c: includes profd/client.h, the client library's API (the "
                "version and error codes are in profd/version.h and profd/errors.h)"])


if __name__ == "__main__":
    unittest.main()
