# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The cases of a unittest module that can skip, for ctest.

Usage: cases.py MODULE.py

A module run whole is reported by ctest as one test: skipped (exit 77)
when any of its cases skipped, which hides the cases that ran and passed.
So each case that can skip is its own ctest test instead, and the module's
test runs the others (tests/python/CMakeLists.txt, profdtest.main and
PROFD_TEST_EXCLUDE). Read from the source (nothing is imported: the module
may need torch or the build): a class decorated with unittest.skip* is one
unit ("Class"), a test method decorated with one or calling self.skipTest
is one ("Class.test_x").

Prints one unit a line, then "rest N": the module's other test methods.
"""

import ast
import sys

SKIPS = {"skip", "skipIf", "skipUnless"}


def is_skip_decorator(node):
    if isinstance(node, ast.Call):
        node = node.func
    return isinstance(node, ast.Attribute) and node.attr in SKIPS


def calls_skiptest(fn):
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "skipTest":
            return True
    return False


def main(path):
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    units, rest = [], 0
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        tests = [
            fn
            for fn in cls.body
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith("test")
        ]
        if not tests:
            continue
        if any(is_skip_decorator(d) for d in cls.decorator_list):
            units.append(cls.name)
            continue
        for fn in tests:
            if any(is_skip_decorator(d) for d in fn.decorator_list) or calls_skiptest(fn):
                units.append("%s.%s" % (cls.name, fn.name))
            else:
                rest += 1
    for u in units:
        print(u)
    print("rest %d" % rest)


if __name__ == "__main__":
    main(sys.argv[1])
