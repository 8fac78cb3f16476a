#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""docs/extending.md's file lists are true.

    check_extending.py SOURCE_DIR

Each recipe of docs/extending.md has a block

    <!-- extending: MARKER -->
    | file | what to add |
    | `path` | ... |
    <!-- /extending -->

MARKER is a Python regular expression. The files of the product (client/,
common/, config/, daemon/, proto/: C, headers, messages.def, Python,
CMakeLists.txt, .pth) where it matches must be exactly the paths the block lists: a file that took the marker and
is not listed, or a listed one that lost it, fails. Exit 1 with each
difference on stderr.
"""
import os
import re
import sys

PRODUCT = ("client", "common", "config", "daemon", "proto")
KINDS = re.compile(r"(\.c|\.h|\.def|\.py|\.pth|\.toml|CMakeLists\.txt)$")
BLOCK = re.compile(r"<!-- extending: (\S+) -->\n(.*?)<!-- /extending -->", re.S)
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|", re.M)


def holders(root, marker):
    rx = re.compile(marker)
    out = set()
    for top in PRODUCT:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [x for x in dirs if x != "__pycache__"]
            for f in files:
                if not KINDS.search(f):
                    continue
                p = os.path.join(d, f)
                with open(p, encoding="utf-8", errors="replace") as fh:
                    if rx.search(fh.read()):
                        out.add(os.path.relpath(p, root))
    return out


def check(root, doc):
    errors = []
    blocks = BLOCK.findall(doc)
    if not blocks:
        errors.append("docs/extending.md: no recipe blocks")
    for marker, body in blocks:
        listed = set(ROW.findall(body)) - {"file"}
        found = holders(root, marker)
        for p in sorted(found - listed):
            errors.append("%s: %s holds the marker but the recipe does not list it" % (marker, p))
        for p in sorted(listed - found):
            errors.append("%s: the recipe lists %s, which does not hold the marker" % (marker, p))
        print("%-16s %d files" % (marker, len(listed)))
    return errors


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_extending.py SOURCE_DIR")
    root = sys.argv[1]
    with open(os.path.join(root, "docs", "extending.md"), encoding="utf-8") as f:
        errors = check(root, f.read())
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
