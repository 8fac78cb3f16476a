# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Every source file carries the license header as its first line (its
second after a shebang): `// SPDX-License-Identifier: Apache-2.0` in C,
headers and JavaScript, `# SPDX-License-Identifier: Apache-2.0` in Python,
shell and CMake. The root holds the license's text (LICENSE) and
debian/copyright names the same license.
Usage: check_license.py SOURCE_DIR"""
import os
import re
import subprocess
import sys

SPDX = "SPDX-License-Identifier: Apache-2.0"


def comment_of(path):
    """The comment leader a source file's header is written with, or None for
    a file that is not source (data, documents, fixtures copied from other
    projects, which keep their own notices)."""
    base = os.path.basename(path)
    if path.startswith("tests/fixtures/"):
        return None
    if re.search(r"\.(c|h|def|js)$", path) or base.endswith(".h.in"):
        return "//"
    if (re.search(r"\.(py|sh|cmake)$", path) or base == "CMakeLists.txt"
            or base.endswith((".cmake.in", ".py.in"))):
        return "#"
    return None


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], check=True,
                             capture_output=True, text=True).stdout
        return [f for f in out.split("\n") if f]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            found += [os.path.relpath(os.path.join(d, f), root) for f in files]
        return found


def header_problem(root, path):
    """None when PATH starts with its header; else what is wrong."""
    try:
        with open(os.path.join(root, path), "rb") as f:
            head = f.read(4096).decode("utf-8", "replace").split("\n")
    except OSError as e:
        return str(e)
    if len(head) > 1 and head[1].startswith("#!"):
        return "the shebang is not on the first line (the header goes after it)"
    leader = comment_of(path)
    if leader is None:
        if not head[0].startswith("#!"):
            return "not source"
        leader = "//" if "node" in head[0] else "#"  # a script without a suffix
    line = head[1] if head[0].startswith("#!") else head[0]
    if line.strip() != f"{leader} {SPDX}":
        where = "second line (after the shebang)" if head[0].startswith("#!") else "first line"
        return f"{where} is not '{leader} {SPDX}'"
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = []
    for path in tracked(root):
        if not os.path.isfile(os.path.join(root, path)):
            continue  # deleted in the work tree, not yet in the index
        problem = header_problem(root, path)
        if problem and problem != "not source":
            bad.append(f"{path}: {problem}")
    lic = os.path.join(root, "LICENSE")
    if not os.path.isfile(lic) or "Apache License" not in open(lic).read(200):
        bad.append("LICENSE: missing or not the Apache License 2.0 text")
    cr = os.path.join(root, "debian", "copyright")
    if os.path.isfile(cr) and "License: Apache-2.0" not in open(cr).read():
        bad.append("debian/copyright: no 'License: Apache-2.0' paragraph")
    if bad:
        print("license header missing:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    print(f"license: {root}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
