#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""check_extending.py fails when docs/extending.md's lists drift: a tree
where a recipe lost a row, and one where a listed file lost the marker.

    test_check_extending.py SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

root = os.path.abspath(sys.argv[1])
checker = os.path.join(root, "tests", "check_extending.py")


def run(tree):
    p = subprocess.run([sys.executable, checker, tree], capture_output=True, text=True)
    return p.returncode, p.stderr.strip()


with tempfile.TemporaryDirectory() as t:
    for top in ("client", "common", "config", "daemon", "proto"):
        shutil.copytree(os.path.join(root, top), os.path.join(t, top),
                        ignore=shutil.ignore_patterns("__pycache__"))
    os.mkdir(os.path.join(t, "docs"))
    doc = open(os.path.join(root, "docs", "extending.md"), encoding="utf-8").read()
    ext = os.path.join(t, "docs", "extending.md")

    open(ext, "w", encoding="utf-8").write(doc)
    assert run(t) == (0, ""), run(t)

    row = [l for l in doc.splitlines() if l.startswith("| `client/profctl/dryrun.c`")]
    assert len(row) == 1, row
    open(ext, "w", encoding="utf-8").write(doc.replace(row[0] + "\n", ""))
    assert run(t) == (1, "replica_ranks: client/profctl/dryrun.c holds the marker but the "
                         "recipe does not list it"), run(t)

    open(ext, "w", encoding="utf-8").write(doc)
    main_c = os.path.join(t, "client", "profctl", "main.c")
    text = open(main_c, encoding="utf-8").read()
    assert "cmd_doctor" in text
    open(main_c, "w", encoding="utf-8").write(text.replace("cmd_doctor", "cmd_dr"))
    assert run(t) == (1, "cmd_doctor: the recipe lists client/profctl/main.c, which does not "
                         "hold the marker"), run(t)
print("check_extending: fails on a missing row and on a stale one")
