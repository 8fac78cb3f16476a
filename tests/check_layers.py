#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The daemon's layers (docs/architecture.md), checked on the sources.

    check_layers.py SOURCE_DIR [PURE_BINARY ...]

A daemon file's layer is its folder: base/, net/, core/, node/, cluster/, or
the daemon/ folder itself (the composition root). Includes go down only:

    base  <  net, core  <  node  <  cluster  <  daemon.c, main.c

net and core are peers and include neither each other; core is pure: of
base it may include only the log, text and hash-index helpers, of the system no libuv,
nng, threads, clock or file headers. Every daemon header's name is unique,
no two modules include each other through any chain (no include cycle), and
each PURE_BINARY (a test linking the core alone) needs neither libuv nor
nng. Prints what it checked; exit 1 with each violation on stderr.
"""
import os
import re
import subprocess
import sys

RANK = {"base": 0, "net": 1, "core": 1, "node": 2, "cluster": 3, "root": 4}
PEERS = {("net", "core"), ("core", "net")}
CORE_MAY_USE_OF_BASE = {"log.h", "text.h", "uix.h"}
CORE_FORBIDDEN_SYSTEM = re.compile(r"^(uv\.h|nng/.*|pthread\.h|time\.h|unistd\.h|fcntl\.h|dirent\.h|"
                                   r"sys/.*)$")
# Headers from outside the daemon, by where they may be included.
OUTSIDE_ANY = re.compile(r"^profd/(proto|errors)\.h$")
OUTSIDE_NOT_CORE = re.compile(r"^(profd/client\.h|tlsconf\.h|yamltree\.h|omegaconf\.h|hydra\.h|compose\.h|"
                              r"profcfg\.h)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def layer_of(rel):
    parts = rel.split(os.sep)
    return parts[1] if len(parts) > 2 else "root"


def main():
    root = sys.argv[1]
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
            elif OUTSIDE_NOT_CORE.match(inc):
                if layer == "core":
                    problems.append("%s: the pure core includes %s" % (rel, inc))
            else:
                problems.append("%s: includes \"%s\", which is no known header" % (rel, inc))
    cycles = strongly_connected(edges)
    for c in cycles:
        problems.append("include cycle: %s" % " ".join(sorted(c)))
    for binary in sys.argv[2:]:
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


def strongly_connected(edges):
    """Tarjan: the sets of modules that include each other (size > 1)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
