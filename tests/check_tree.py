# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The whole tree outside the daemon (check_layers.py's --tree and
--objects): no circle between the source files of the folders named.

    --tree DIR       a folder (relative to SOURCE_DIR, walked whole) whose
                     .c, .h and .def files are judged
    --objects DIR=OBJ|OBJ|...
                     the object files of one CMake target
                     ($<TARGET_OBJECTS:...>), DIR the folder of the
                     CMakeLists.txt that defines it: the call graph

Two graphs over the source files of the --tree folders:

- includes: A -> B when file A includes file B ("x.h" is looked for beside
  the includer, then in each --tree folder and its include/; <x.h> in
  those folders only; a header found nowhere is the system's);
- calls: A.c -> B.c when A.c's object has an undefined symbol that B.c's
  object defines (nm -g), over the objects of every --objects given.

Neither graph may have a cycle (a strongly connected set of more than one
file): calls go one way, shared pieces live in a file of their own.
"""
import os
import re
import subprocess

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
SUFFIXES = (".c", ".h", ".def")


def split_args(argv):
    """(the other arguments, tree folders, [(folder, [object])])."""
    rest, trees, objects = [], [], []
    it = iter(argv)
    for a in it:
        if a in ("--tree", "--objects"):
            spec = next(it, None)
            if spec is None:
                raise SystemExit("check_layers.py: %s needs a value" % a)
            if a == "--tree":
                trees.append(spec.strip("/"))
            else:
                folder, eq, objs = spec.partition("=")
                if not eq:
                    raise SystemExit("check_layers.py: --objects DIR=OBJ|OBJ|..., not %s" % spec)
                objects.append((folder.strip("/"), [o for o in objs.split("|") if o]))
        else:
            rest.append(a)
    return rest, trees, objects


def tree_files(root, trees):
    out = []
    for t in trees:
        for d, dirs, names in os.walk(os.path.join(root, t)):
            dirs.sort()
            for n in sorted(names):
                if n.endswith(SUFFIXES):
                    out.append(os.path.relpath(os.path.join(d, n), root))
    return out


def include_graph(root, trees, files):
    """{file: files it includes} over the files of the trees."""
    known = set(files)
    search = []
    for t in trees:
        search += [t, os.path.join(t, "include")]
    edges = {}
    for rel in files:
        edges.setdefault(rel, set())
        with open(os.path.join(root, rel), errors="replace") as f:
            text = f.read()
        for kind, inc in INCLUDE.findall(text):
            cands = ([os.path.join(os.path.dirname(rel), inc)] if kind == '"' else []) + \
                    [os.path.join(s, inc) for s in search]
            for c in cands:
                c = os.path.normpath(c)
                if c in known:
                    if c != rel:
                        edges[rel].add(c)
                    break
    return edges


def object_source(folder, obj):
    """The source (relative to the source dir) CMake built obj from:
    <build>/.../CMakeFiles/<target>.dir/<path>.o, <path> relative to the
    target's folder with each .. written __."""
    m = re.search(r"/CMakeFiles/[^/]+\.dir/(.+)\.o(bj)?$", obj.replace(os.sep, "/"))
    if m is None:
        return None
    parts = [".." if p == "__" else p for p in m.group(1).split("/")]
    return os.path.normpath(os.path.join(folder, *parts))


def nm_object(path):
    """(defined, undefined) external symbols of one object file."""
    out = subprocess.run(["nm", "-g", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("nm %s: %s" % (path, out.stderr.strip()))
    defined, undefined = set(), set()
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) >= 2:
            (undefined if f[-2] in ("U", "w", "v") else defined).add(f[-1])
    return defined, undefined


def call_graph(root, trees, objects, problems):
    """{source: sources it calls}, and the number of objects read."""
    def in_tree(rel):
        return any(rel == t or rel.startswith(t + os.sep) for t in trees)

    defs, uses, seen = {}, [], set()
    for folder, objs in objects:
        for obj in objs:
            src = object_source(folder, obj)
            if src is None:
                problems.append("%s: not an object file CMake built (no CMakeFiles/<target>.dir/)"
                                % obj)
                continue
            if not os.path.exists(os.path.join(root, src)):
                problems.append("%s: its source %s does not exist" % (obj, src))
                continue
            if not in_tree(src) or (src, obj) in seen:
                continue
            seen.add((src, obj))
            d, u = nm_object(obj)
            for name in d:
                defs.setdefault(name, set()).add(src)
            uses.append((src, u))
    edges = {}
    for mod, undefined in uses:
        edges.setdefault(mod, set())
        for name in undefined:
            for target in defs.get(name, ()):
                if target != mod:
                    edges[mod].add(target)
    return edges, len(seen)


def strongly_connected(edges):
    """Tarjan, iterative: the sets of nodes reaching each other (size > 1)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def check_tree(root, trees, objects, problems):
    """Appends each include and call cycle to problems; returns the line
    saying what was checked."""
    files = tree_files(root, trees)
    inc = include_graph(root, trees, files)
    calls, nobj = call_graph(root, trees, objects, problems)
    ic, cc = strongly_connected(inc), strongly_connected(calls)
    for c in ic:
        problems.append("include cycle outside the daemon: %s" % " ".join(c))
    for c in cc:
        problems.append("call cycle outside the daemon: %s" % " ".join(c))
    return ("tree: %s: %d files, %d include(s) between them, %d include cycle(s); %d object(s), "
            "%d call edge(s) between their sources, %d call cycle(s)"
            % (" ".join(t + "/" for t in trees), len(files),
               sum(len(v) for v in inc.values()), len(ic), nobj,
               sum(len(v) for v in calls.values()), len(cc)))
