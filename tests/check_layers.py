#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The daemon's layers (docs/architecture.md), checked on the sources and,
where given, on the built archives.

    check_layers.py SOURCE_DIR [--archive [LAYER=]LIB.a ...] [PURE_BINARY ...]
                    [--tree DIR ... --objects DIR=OBJ|OBJ|... ...]

A daemon file's layer is its folder: base/, net/, core/, node/, cluster/, or
the daemon/ folder itself (the composition root). Includes go down only:

    base  <  net, core  <  node  <  cluster  <  daemon.c, main.c

net and core are peers and include neither each other; core is pure: of
base it may include only the log, text and hash-index helpers, of the system no libuv,
nng, threads, clock or file headers. Every daemon header's name is unique,
no two modules include each other through any chain (no include cycle), and
each PURE_BINARY (a test linking the core alone) needs neither libuv nor
nng.

Symbols (nm -g on each --archive; LAYER is log, base, net, core, node,
cluster or root, else read from the name libpd_LAYER.a, libpd_daemon.a
being root): every undefined symbol of a layer's archive that one of the
given archives defines is defined in that layer or below (log < base < net,
core < node < cluster < root; core's archive may use log's only), and the
archives of log and core call no libuv, nng, pthread, clock, environment or
file function. Symbols no given archive defines (the C library, proto/,
config/, common/, libuv, nng) are otherwise not judged.

Docs: the module list of daemon/ in docs/architecture.md ("The folders")
names exactly the modules of daemon/CMakeLists.txt's source lists, folder by
folder, and the hook table names every hook of pd_windows_hooks_t and
pd_node_hooks_t.

Outside the daemon (check_tree.py): with --tree, no include cycle between
the files of those folders and no call cycle (nm on the --objects) between
their .c files.

Prints what it checked; exit 1 with each violation on stderr.
"""
import os
import re
import subprocess
import sys

import check_tree

RANK = {"base": 0, "net": 1, "core": 1, "node": 2, "cluster": 3, "root": 4}
PEERS = {("net", "core"), ("core", "net")}
CORE_MAY_USE_OF_BASE = {"log.h", "text.h", "uix.h", "intern.h"}
CORE_FORBIDDEN_SYSTEM = re.compile(r"^(uv\.h|nng/.*|pthread\.h|time\.h|unistd\.h|fcntl\.h|dirent\.h|"
                                   r"sys/.*)$")
# Headers from outside the daemon, by where they may be included.
OUTSIDE_ANY = re.compile(r"^(profd/(proto|errors|version)\.h|pu_buf\.h)$")
# The client library's API is no daemon's business: the version and the
# error codes come from profd/version.h and profd/errors.h.
OUTSIDE_NEVER = re.compile(r"^profd/client\.h$")
OUTSIDE_NOT_CORE = re.compile(r"^(tlsconf\.h|pu_nng\.h|pu_clock\.h|yamltree\.h|omegaconf\.h|hydra\.h|compose\.h|"
                              r"profcfg\.h)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def layer_of(rel):
    parts = rel.split(os.sep)
    return parts[1] if len(parts) > 2 else "root"


# The archives' layers: which layers' symbols each may use (daemon/CMakeLists.txt).
SYMBOL_LAYERS = ("log", "base", "net", "core", "node", "cluster", "root")
MAY_USE = {"log": {"log"}, "base": {"log", "base"}, "net": {"log", "base", "net"},
           "core": {"log", "core"}, "node": {"log", "base", "net", "core", "node"},
           "cluster": {"log", "base", "net", "core", "node", "cluster"},
           "root": set(SYMBOL_LAYERS)}
# What the pure archives (log, core) may not call: libuv, nng, threads, the
# clock, the environment, files (the log's own clock and stderr are in log.c).
IMPURE = re.compile(r"^(uv_|nng_|pthread_|(clock_gettime|gettimeofday|time|getenv|open|openat|"
                    r"creat|fopen|fdopen|read|pread|write|pwrite|close|fsync|fdatasync|rename|"
                    r"renameat|unlink|unlinkat|mkdir|mkdirat|opendir|fdopendir|readdir|stat|"
                    r"fstat|lstat|fstatat|statx)(64)?$)")
IMPURE_ALLOWED = {("log", "log.c.o"): {"clock_gettime", "getenv"}}
LIB_NAME = re.compile(r"^libpd_(\w+)\.a$")


def parse_args(argv):
    root, archives, binaries = None, [], []
    it = iter(argv)
    for a in it:
        if a == "--archive":
            spec = next(it, None)
            if spec is None:
                raise SystemExit("check_layers.py: --archive needs [LAYER=]LIB.a")
            layer, eq, path = spec.partition("=")
            if not eq:
                path = spec
                m = LIB_NAME.match(os.path.basename(spec))
                layer = m.group(1) if m else ""
                layer = "root" if layer == "daemon" else layer
            if layer not in SYMBOL_LAYERS:
                raise SystemExit("check_layers.py: %s: no layer (name it: LAYER=%s)" % (spec, spec))
            archives.append((layer, path))
        elif root is None:
            root = a
        else:
            binaries.append(a)
    if root is None:
        raise SystemExit(__doc__)
    return root, archives, binaries


def nm_symbols(path):
    """(object, type, name) of every external symbol of an archive."""
    out = subprocess.run(["nm", "-A", "-g", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("nm %s: %s" % (path, out.stderr.strip()))
    syms = []
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        where, kind, name = f[0], f[-2], f[-1]
        obj = where.rstrip(":").split(":")[-1] if where.count(":") >= 2 else ""
        syms.append((obj, kind, name))
    return syms


def check_symbols(archives, problems):
    """Every undefined symbol an archive takes from another given archive
    comes from its layer or below; the pure archives call nothing impure.
    Returns the number of undefined references judged."""
    defined, undefined = {}, []
    for layer, path in archives:
        for obj, kind, name in nm_symbols(path):
            where = "%s(%s)" % (os.path.basename(path), obj)
            if kind in ("U", "w", "v"):
                undefined.append((layer, where, obj, name))
            else:
                defined.setdefault(name, (layer, os.path.basename(path)))
    judged = 0
    for layer, where, obj, name in undefined:
        if name in defined:
            judged += 1
            dlayer, dlib = defined[name]
            if dlayer not in MAY_USE[layer]:
                problems.append("%s [%s]: calls %s, defined in %s (%s): upward or sideways "
                                "from %s" % (where, layer, name, dlayer, dlib, layer))
        elif layer in ("log", "core") and IMPURE.match(name) and \
                name not in IMPURE_ALLOWED.get((layer, obj), ()):
            problems.append("%s [%s]: the pure %s calls %s" % (where, layer, layer, name))
    return judged


DOC_FOLDERS = "## The folders"
MODULE_ITEM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\.[ch])?$")


def strip_parens(text):
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif not depth:
            out.append(ch)
    return "".join(out)


def doc_modules(text):
    """{folder: modules} of the daemon/ block of docs/architecture.md's
    folder list: each folder's line (and the lines indented under it) is a
    list of items separated by commas or semicolons, each starting with a
    module's name (a .c or .h suffix is allowed), comments in parentheses.
    None when the list is not found."""
    if DOC_FOLDERS not in text:
        return None
    block = text.split(DOC_FOLDERS, 1)[1].split("```")[1]
    lines = block.splitlines()
    try:
        start = lines.index("daemon/")
    except ValueError:
        return None
    entries, cur = [], None
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        m = re.match(r"^  (\w+/|\w+\.c)\s+(.*)$", line)
        if m:
            cur = [m.group(1), m.group(2)]
            entries.append(cur)
        elif cur and line.startswith("    "):
            cur[1] += " " + line.strip()
    out = {}
    for head, desc in entries:
        if head.endswith("/"):
            folder, items = head[:-1], re.split(r"[,;]", strip_parens(desc))
        else:  # "daemon.c  the composition root"
            folder, items = "root", [head]
        mods = out.setdefault(folder, set())
        for item in items:
            words = item.split()
            if not words:
                continue
            m = MODULE_ITEM.match(words[0])
            mods.add(m.group(1) if m else "?" + words[0])
    return out


def cmake_modules(text):
    """{folder: modules} of daemon/CMakeLists.txt's add_library/add_executable
    source lists ("root" for the daemon/ folder itself)."""
    out = {}
    for body in re.findall(r"add_(?:library|executable)\(([^)]*)\)", text):
        for tok in body.split():
            if tok.endswith(".c"):
                folder, _, name = tok.rpartition("/")
                out.setdefault(folder or "root", set()).add(name[:-2])
    return out


def hook_names(text, typedef):
    m = re.search(r"typedef struct \w+ \{(.*?)\} %s;" % typedef, text, re.S)
    return re.findall(r"\(\*(\w+)\)", m.group(1)) if m else []


def check_docs(root, problems):
    """The folder list and the hook table of docs/architecture.md against
    the CMake lists and the hook structs. Returns the modules compared."""
    arch = os.path.join(root, "docs", "architecture.md")
    text = open(arch).read()
    doc = doc_modules(text)
    cm = cmake_modules(open(os.path.join(root, "daemon", "CMakeLists.txt")).read())
    if doc is None:
        problems.append("docs/architecture.md: no daemon/ block under \"%s\"" % DOC_FOLDERS)
        return 0
    for folder in sorted(set(doc) | set(cm)):
        d, c = doc.get(folder, set()), cm.get(folder, set())
        name = "daemon/" if folder == "root" else "daemon/%s/" % folder
        for mod in sorted(c - d):
            problems.append("docs/architecture.md: %s misses %s (daemon/CMakeLists.txt builds it)"
                            % (name, mod))
        for mod in sorted(d - c):
            problems.append("docs/architecture.md: %s lists %s, which daemon/CMakeLists.txt "
                            "does not build" % (name, mod))
    table = text.split("## The hooks", 1)[1] if "## The hooks" in text else ""
    for header, typedef in (("core/windows.h", "pd_windows_hooks_t"),
                            ("node/node.h", "pd_node_hooks_t")):
        names = hook_names(open(os.path.join(root, "daemon", header)).read(), typedef)
        if not names:
            problems.append("daemon/%s: no %s found" % (header, typedef))
        for h in names:
            if h != "arg" and "`%s`" % h not in table:
                problems.append("docs/architecture.md: the hook table omits %s's `%s`"
                                % (typedef, h))
    return sum(len(v) for v in cm.values())


def main():
    argv, trees, objects = check_tree.split_args(sys.argv[1:])
    root, archives, binaries = parse_args(argv)
    daemon = os.path.join(root, "daemon")
    files, headers, problems = [], {}, []
    for d, _, names in os.walk(daemon):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                rel = os.path.relpath(os.path.join(d, n), root)
                files.append(rel)
                if n.endswith(".h"):
                    if n in headers:
                        problems.append("%s and %s: two daemon headers named %s" % (headers[n], rel, n))
                    headers[n] = rel
    modules, edges = {}, {}
    for rel in files:
        layer = layer_of(rel)
        text = open(os.path.join(root, rel), errors="replace").read()
        mod = os.path.splitext(os.path.basename(rel))[0]
        modules.setdefault(mod, layer)
        edges.setdefault(mod, set())
        for kind, inc in INCLUDE.findall(text):
            base = os.path.basename(inc)
            if kind == "<":
                if layer == "core" and CORE_FORBIDDEN_SYSTEM.match(inc):
                    problems.append("%s: the pure core includes <%s>" % (rel, inc))
                continue
            if base in headers and inc == base:
                target = layer_of(headers[base])
                tmod = os.path.splitext(base)[0]
                if tmod != mod:
                    edges[mod].add(tmod)
                if target == layer:
                    continue
                if (layer, target) in PEERS or RANK[target] > RANK[layer]:
                    problems.append("%s: includes %s of layer %s (upward or sideways from %s)"
                                    % (rel, headers[base], target, layer))
                elif layer == "core" and target == "base" and base not in CORE_MAY_USE_OF_BASE:
                    problems.append("%s: the pure core includes %s" % (rel, headers[base]))
            elif OUTSIDE_ANY.match(inc):
                continue
            elif OUTSIDE_NEVER.match(inc):
                problems.append("%s: includes %s, the client library's API (the version and "
                                "error codes are in profd/version.h and profd/errors.h)"
                                % (rel, inc))
            elif OUTSIDE_NOT_CORE.match(inc):
                if layer == "core":
                    problems.append("%s: the pure core includes %s" % (rel, inc))
            else:
                problems.append("%s: includes \"%s\", which is no known header" % (rel, inc))
    cycles = check_tree.strongly_connected(edges)
    for c in cycles:
        problems.append("include cycle: %s" % " ".join(sorted(c)))
    for binary in binaries:
        out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True)
        if out.returncode != 0:
            problems.append("%s: readelf failed: %s" % (binary, out.stderr.strip()))
            continue
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout)
        bad = [n for n in needed if n.startswith(("libuv", "libnng"))]
        if bad:
            problems.append("%s: the pure core's test links %s" % (binary, ", ".join(bad)))
        else:
            print("ok: %s needs neither libuv nor nng (%s)" % (os.path.basename(binary),
                                                               ", ".join(needed)))
    if archives:
        n = check_symbols(archives, problems)
        print("layers: %d archive(s): %d reference(s) between them checked" % (len(archives), n))
    if trees:
        print("layers: " + check_tree.check_tree(root, trees, objects, problems))
    mods = check_docs(root, problems)
    print("layers: docs/architecture.md's folder list against %d modules of "
          "daemon/CMakeLists.txt, its hook table against the hook structs" % mods)
    for p in problems:
        print("layers: " + p, file=sys.stderr)
    per_layer = {}
    for m, l in modules.items():
        per_layer.setdefault(l, []).append(m)
    print("layers: %d daemon modules: %s; %d include cycle(s); %d violation(s)"
          % (len(modules), ", ".join("%s %d" % (l, len(per_layer.get(l, [])))
                                     for l in ("base", "net", "core", "node", "cluster", "root")),
             len(cycles), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
