# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""tests/check_tree.py (check_layers.py --tree) fails where it must: on a
deliberate include cycle and call cycle (tests/fixtures/tree_cycle: x.h
and y.h include each other, a.c and b.c call each other, c.c calls a.c one
way), and its pieces do what they say.

    test_check_tree.py SOURCE_DIR FIXTURE_OBJECTS LINKED_PROGRAM

FIXTURE_OBJECTS: the fixture's objects, |-separated ($<TARGET_OBJECTS>);
LINKED_PROGRAM links them (tests/fixtures/tree_cycle_main.c): the circle
links and runs.
"""

import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check_tree  # noqa: E402

SOURCE, OBJECTS, LINKED = sys.argv[1:4]
del sys.argv[1:]
FIX = "tests/fixtures/tree_cycle"


def run_check(*extra):
    return subprocess.run([sys.executable, os.path.join(HERE, "check_layers.py"), SOURCE] +
                          list(extra), capture_output=True, text=True)


class Fixture(unittest.TestCase):
    def test_the_call_cycle_links_and_runs(self):
        self.assertEqual(subprocess.run([LINKED]).returncode, 0)

    def test_cycles_are_reported(self):
        r = run_check("--tree", FIX, "--objects", "tests=" + OBJECTS)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(r.stderr.splitlines(), [
            "layers: include cycle outside the daemon: %s/x.h %s/y.h" % (FIX, FIX),
            "layers: call cycle outside the daemon: %s/a.c %s/b.c" % (FIX, FIX)])
        self.assertIn("layers: tree: %s/: 5 files, 5 include(s) between them, 1 include "
                      "cycle(s); 3 object(s), 3 call edge(s) between their sources, 1 call "
                      "cycle(s)\n" % FIX, r.stdout)

    def test_graphs(self):
        files = check_tree.tree_files(SOURCE, [FIX])
        self.assertEqual(files, [FIX + "/a.c", FIX + "/b.c", FIX + "/c.c", FIX + "/x.h",
                                 FIX + "/y.h"])
        inc = check_tree.include_graph(SOURCE, [FIX], files)
        self.assertEqual(inc, {FIX + "/a.c": {FIX + "/x.h"}, FIX + "/b.c": {FIX + "/x.h"},
                               FIX + "/c.c": {FIX + "/x.h"}, FIX + "/x.h": {FIX + "/y.h"},
                               FIX + "/y.h": {FIX + "/x.h"}})
        problems = []
        calls, n = check_tree.call_graph(SOURCE, [FIX], [("tests", OBJECTS.split("|"))], problems)
        self.assertEqual(problems, [])
        self.assertEqual(n, 3)
        self.assertEqual(calls, {FIX + "/a.c": {FIX + "/b.c"}, FIX + "/b.c": {FIX + "/a.c"},
                                 FIX + "/c.c": {FIX + "/a.c"}})

    def test_objects_outside_the_tree_are_not_judged(self):
        # the same objects, their folder not among the --tree folders
        problems = []
        calls, n = check_tree.call_graph(SOURCE, ["client"], [("tests", OBJECTS.split("|"))],
                                         problems)
        self.assertEqual((calls, n, problems), ({}, 0, []))


class Pieces(unittest.TestCase):
    def test_strongly_connected(self):
        self.assertEqual(check_tree.strongly_connected({"a": {"b"}, "b": {"c"}, "c": set()}),
                         [])
        self.assertEqual(check_tree.strongly_connected(
            {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}),
            [["a", "b", "c"], ["d", "e"]])
        self.assertEqual(check_tree.strongly_connected({"a": {"a"}}), [])

    def test_object_source(self):
        self.assertEqual(check_tree.object_source(
            "client", "/b/client/CMakeFiles/profd_client_obj.dir/__/common/pu_buf.c.o"),
            "common/pu_buf.c")
        self.assertEqual(check_tree.object_source(
            "client", "/b/client/CMakeFiles/profctl.dir/profctl/print.c.o"),
            "client/profctl/print.c")
        self.assertIsNone(check_tree.object_source("client", "/b/libprofd.a"))

    def test_split_args(self):
        self.assertEqual(check_tree.split_args(
            ["src", "--archive", "x.a", "--tree", "client/", "--objects", "proto=a.o|b.o", "bin"]),
            (["src", "--archive", "x.a", "bin"], ["client"], [("proto", ["a.o", "b.o"])]))
        with self.assertRaises(SystemExit):
            check_tree.split_args(["src", "--objects", "a.o"])

    def test_missing_source_is_reported(self):
        problems = []
        check_tree.call_graph(SOURCE, ["client"], [
            ("client", ["/b/client/CMakeFiles/t.dir/gone.c.o"])], problems)
        self.assertEqual(problems, [
            "/b/client/CMakeFiles/t.dir/gone.c.o: its source client/gone.c does not exist"])


if __name__ == "__main__":
    unittest.main()
