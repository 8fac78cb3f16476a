# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Check a gathered window against what was asked for.

Usage: check_manifest.py MANIFEST --first F --last L --ranks 0,1,2
           [--role e2e|ROLE] [--phases p,q] [--replicas 0] [--substeps A-B,...]
           [--status complete] [--sim] [--failed 3]
       check_manifest.py MANIFEST --first F --last L --expect ROLE.PHASE=0,1
           [--expect ROLE.PHASE=2 ...]   (discrete, several roles and phases)

Asserts: every listed rank has exactly the expected captures and nothing
else is there; first/last steps; status; each listed file exists with its
size and its xxh64 checksum (xxhsum), or none for a file gathered by a
rename ("moved": true); with --sim, the synthetic trace covers
exactly the captured steps (and sub-steps). Exits 1 with one line per problem.
"""
import argparse
import json
import os
import re
import subprocess
import sys

problems = []


def bad(msg):
    problems.append(msg)


def xxh64(path):
    out = subprocess.run(["xxhsum", "-H1", path], check=True, capture_output=True, text=True)
    return out.stdout.split()[0]


def check_sim_trace(path, cap, spans):
    with open(path) as f:
        trace = json.load(f)
    steps = sorted(e["args"]["step"] for e in trace["traceEvents"] if e["name"] == "profd_step")
    subs = sorted(e["args"]["substep"] for e in trace["traceEvents"]
                  if e["name"] == "profd_substep")
    return steps, subs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("--first", type=int, required=True)
    ap.add_argument("--last", type=int, required=True)
    ap.add_argument("--ranks", default="")
    ap.add_argument("--expect", action="append", default=[],
                    help="ROLE[.PHASE]=RANKS: these ranks captured this role and phase")
    ap.add_argument("--role", default="e2e")
    ap.add_argument("--phases", default="")
    ap.add_argument("--replicas", default="")
    ap.add_argument("--substeps", default="")
    ap.add_argument("--status", default="complete")
    ap.add_argument("--failed", default="",
                    help="RANKS: their one capture each is there, failed (its files unchecked)")
    ap.add_argument("--per-step", action="store_true",
                    help="discrete: one capture per phase and step")
    ap.add_argument("--sim", action="store_true")
    a = ap.parse_args()

    window_dir = os.path.dirname(os.path.abspath(a.manifest))
    with open(a.manifest) as f:
        m = json.load(f)
    if m.get("version") != 1:
        bad(f"version {m.get('version')!r}")
    w = m["window"]
    if w["steps"] != [a.first, a.last + 1]:
        bad(f"window steps {w['steps']} != [{a.first}, {a.last + 1}]")
    if not w["name"].startswith(f"w{w['id']}-"):
        bad(f"window name {w['name']} does not start with w{w['id']}-")
    if os.path.basename(window_dir) != w["name"]:
        bad(f"folder {window_dir} is not named {w['name']}")

    ranks = [int(x) for x in a.ranks.split(",")] if a.ranks else []
    phases = a.phases.split(",") if a.phases else [None]
    replicas = [int(x) for x in a.replicas.split(",")] if a.replicas else []
    want_spans = []
    for s in filter(None, a.substeps.split(",")):
        lo, hi = s.split("-")
        want_spans.append({"first": int(lo), "last": int(hi)})
    steps = list(range(a.first, a.last + 1))
    per_capture_steps = [[s] for s in steps] if a.per_step else [steps]

    expected = {}  # (rank, phase, first step) -> (role, steps)
    for r in ranks:
        for p in phases:
            for ss in per_capture_steps:
                expected[(r, p, ss[0])] = (a.role, ss)
    for spec in a.expect:
        who, _, rs = spec.partition("=")
        role, _, phase = who.partition(".")
        for r in (int(x) for x in rs.split(",") if x):
            for ss in per_capture_steps:
                expected[(r, phase or None, ss[0])] = (role, ss)
    failed = {int(x) for x in a.failed.split(",") if x}
    seen = set()
    for r in failed:
        got = [c for c in m["captures"] if c["rank"] == r]
        if len(got) != 1 or got[0]["status"] != "failed":
            bad(f"rank {r}: expected one failed capture, found {[c['status'] for c in got]}")
    for c in m["captures"]:
        if c["rank"] in failed:
            continue
        key = (c["rank"], c["phase"], c["first_step"])
        if key not in expected:
            bad(f"unexpected capture rank {c['rank']} phase {c['phase']} step {c['first_step']}")
            continue
        if key in seen:
            bad(f"duplicate capture {key}")
        seen.add(key)
        role, ss = expected[key]
        if c["status"] != a.status:
            bad(f"rank {c['rank']} {c['phase']}: status {c['status']} ({c['reason']})")
            continue
        if a.status == "complete" and c["reason"] is not None:
            bad(f"rank {c['rank']}: complete with a reason {c['reason']!r}")
        if c["last_step"] != ss[-1]:
            bad(f"rank {c['rank']} {c['phase']}: last_step {c['last_step']} != {ss[-1]}")
        if c["role"] != role:
            bad(f"rank {c['rank']}: role {c['role']} != {role}")
        if replicas and c["replica_rank"] not in replicas:
            bad(f"rank {c['rank']}: replica {c['replica_rank']} not in {replicas}")
        if want_spans and c.get("substeps") != want_spans:
            bad(f"rank {c['rank']} step {c['first_step']}: substeps {c.get('substeps')} "
                f"!= {want_spans}")
        if a.status != "complete":
            continue
        if not c["files"]:
            bad(f"rank {c['rank']}: no files")
        for f in c["files"]:
            p = os.path.join(window_dir, c["dir"], f["path"])
            if not os.path.isfile(p):
                bad(f"missing file {p}")
                continue
            if os.path.getsize(p) != f["bytes"]:
                bad(f"{p}: {os.path.getsize(p)} bytes, manifest says {f['bytes']}")
            if f.get("moved"):
                # gathered by a rename and not read again: no checksum
                if f["checksum"] is not None:
                    bad(f"{p}: moved, yet checksum {f['checksum']}")
            elif f["checksum"] != "xxh64:" + xxh64(p):
                bad(f"{p}: checksum {f['checksum']} does not match the file")
        if a.sim:
            got_steps, got_subs = set(), set()
            # TensorBoard's naming: rank<R>-<role>[-<phase>].<ms>.pt.trace.json
            # (end to end: the process's role, which the manifest does not name)
            worker = (re.escape("rank%d-%s-%s" % (c["rank"], c["role"], c["phase"])) if c["phase"]
                      else r"rank%d-[A-Za-z0-9_-]+" % c["rank"])
            for f in c["files"]:
                if not re.match(r"^%s\.\d+\.pt\.trace\.json$" % worker, f["path"]):
                    bad(f"rank {c['rank']}: trace {f['path']} is not named "
                        f"rank<R>-<role>[-<phase>].<ms>.pt.trace.json")
                st, su = check_sim_trace(os.path.join(window_dir, c["dir"], f["path"]), c,
                                         want_spans)
                got_steps.update(st)
                got_subs.update(su)
            if sorted(got_steps) != ss:
                bad(f"rank {c['rank']} {c['phase']}: trace covers steps {sorted(got_steps)}, "
                    f"want {ss}")
            if want_spans:
                want_subs = set()
                for sp in want_spans:
                    want_subs.update(range(sp["first"], sp["last"] + 1))
                if not want_subs <= got_subs:
                    bad(f"rank {c['rank']}: trace sub-steps {sorted(got_subs)} miss "
                        f"{sorted(want_subs - got_subs)}")
    for key in expected:
        if key not in seen:
            bad(f"no capture for rank {key[0]} phase {key[1]} step {key[2]}")
    # nothing in the tree that the manifest does not list, but what profd
    # adds: the report, the step times' record, a merged trace, the trace
    # diff of a two-rank window's report, and TensorBoard's run folder
    # holding a link to every listed *.pt.trace.json[.gz]
    listed = {os.path.normpath(os.path.join(c["dir"], f["path"]))
              for c in m["captures"] if c["dir"] for f in c["files"]}
    tb = {}
    for rel in listed:
        if re.search(r"\.pt\.trace\.json(\.gz)?$", rel):
            tb[os.path.join("tensorboard", os.path.basename(rel))] = rel
    own = {"manifest.json", "steps.json", "report.html", "merged.trace.json", "tracediff.json"}
    for root, _, files in os.walk(window_dir):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), window_dir)
            if rel in own or rel in listed:
                continue
            if rel in tb:
                # not `a`: the arguments, read again below
                link = os.stat(os.path.join(window_dir, rel))
                target = os.stat(os.path.join(window_dir, tb[rel]))
                if (link.st_ino, link.st_dev) != (target.st_ino, target.st_dev):
                    bad(f"{rel} is not a link to {tb[rel]}")
                continue
            bad(f"file {rel} is in the tree but not in the manifest")
    for rel in tb:
        if not os.path.exists(os.path.join(window_dir, rel)):
            bad(f"TensorBoard's run folder lacks {rel}")
    if problems:
        for p in problems:
            print(f"{a.manifest}: {p}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
