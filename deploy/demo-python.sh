#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The PyTorch part of the demo: the GRPO example (client/python/examples/
# grpo_sim.py: 4 torch.distributed ranks on CPU, actor, ref and two rollout
# replicas) under a running profd, with two windows opened by profctl:
#   - discrete, step 3: actor rank 0 `update_actor` and rollout replica 0
#     `generate`, sub-step schedule wait=1,warmup=1,active=2 (sub-steps 2-3)
#   - end-to-end, step 5: every rank
# then the gathered torch traces per role and rank; and a drop-in job: a
# plain PyTorch DDP script (client/python/examples/plain_ddp_train.py, no
# profd in it, 2 ranks) run with PROFD_AUTO=1 and profiled with
# `profctl start --next 2`.
#
# Usage: PROFD_RUN_DIR=<the daemon's run folder> deploy/demo-python.sh [BUILD_DIR]
#   BUILD_DIR  a built tree (default $PROFD_BUILD, else build): profctl and
#              the Python package with its libprofd.so in BUILD_DIR/python
# Needs torch under $PROFD_PYTHON (default /usr/bin/python3, where Debian's
# python3-torch imports); without it the demo says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

build=$(realpath -m "${1:-${PROFD_BUILD:-build}}")
py=${PROFD_PYTHON:-/usr/bin/python3}
job=${PROFD_DEMO_JOB:-grpo}

if ! "$py" -c 'import torch' >/dev/null 2>&1; then
  echo "demo-python: skipped: torch does not import in $py (Debian: apt-get install python3-torch)"
  exit 0
fi
if [ -z "${PROFD_RUN_DIR:-}" ]; then
  echo "demo-python: set PROFD_RUN_DIR to the run folder of a running profd" >&2
  exit 2
fi
if [ ! -x "$build/client/profctl" ] || [ ! -f "$build/python/profd/libprofd.so" ]; then
  echo "demo-python: $build is not a built tree (cmake -S . -B $build && cmake --build $build)" >&2
  exit 2
fi
profctl() { "$build/client/profctl" "$@"; }
if ! profctl status >/dev/null; then
  echo "demo-python: no profd answers in $PROFD_RUN_DIR" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

window() { # window OUTFILE profctl-start-args...
  local out=$1
  shift
  profctl start --job "$job" "$@" | tee "$out"
  sed -n 's/^started window \([0-9]*\) .* -> \(.*\)$/\1 \2/p' "$out" | head -1 >>"$tmp/windows"
}

echo "== discrete window: actor rank 0 update_actor + rollout replica 0 generate, step 3,"
echo "   sub-step schedule wait=1,warmup=1,active=2,repeat=1 (decode steps / micro-batches 2-3)"
window "$tmp/w1" --steps 3 --roles actor,rollout --ranks 0 --replica-ranks 0 \
  --phases update_actor,generate --schedule wait=1,warmup=1,active=2,repeat=1 --tool torch
echo
echo "== end-to-end window: every rank of job $job, step 5"
window "$tmp/w2" --steps 5 --e2e --tool torch

echo
echo "== the job: actor (rank 0), ref (rank 1), rollout replicas 0 and 1 (ranks 2, 3), 8 steps"
PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" "$py" client/python/examples/grpo_sim.py \
  --steps 8 --job "$job" --wait-daemon 10

echo
while read -r id _; do
  profctl wait "$id" --timeout 60 || true
done <"$tmp/windows"

echo
echo "== torch traces per role and rank"
"$py" - "$tmp/windows" <<'PY'
import collections, gzip, json, os, re, sys

def events(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc

for line in open(sys.argv[1]):
    _, folder = line.split(maxsplit=1)
    folder = folder.strip()
    m = json.load(open(os.path.join(folder, "manifest.json")))
    w = m["window"]
    print("%s (%s, steps [%d, %d)) -> %s" % (w["name"], w["mode"], w["steps"][0], w["steps"][1], folder))
    for c in sorted(m["captures"], key=lambda c: c["rank"]):
        who = "%s%s rank %d%s" % (c["role"], "." + c["phase"] if c["phase"] else "", c["rank"],
                                  "" if c["replica_rank"] is None else " replica %d" % c["replica_rank"])
        spans = " sub-steps " + ",".join("%d-%d" % (s["first"], s["last"]) for s in c.get("substeps", [])) \
            if c.get("substeps") else ""
        print("  %-32s %-9s%s" % (who, c["status"], spans) + ("  (%s)" % c["reason"] if c["reason"] else ""))
        for f in c["files"]:
            ev = [e for e in events(os.path.join(folder, c["dir"], f["path"])) if e.get("ph") == "X"]
            ops = collections.Counter()
            for e in ev:
                if e["name"].startswith("aten::"):
                    ops[e["name"]] += e.get("dur", 0)
            marks = sorted({e["name"] for e in ev if re.match(r"(decode|micro_batch)#\d+$", e["name"])},
                           key=lambda n: (n.split("#")[0], int(n.split("#")[1])))
            print("    %s  %d bytes, %d events" % (f["path"], f["bytes"], len(ev)))
            print("      top operators: " + ", ".join("%s %d us" % kv for kv in ops.most_common(3)))
            if marks:
                print("      sub-steps: " + " ".join(marks))
PY

echo
echo "== drop-in: a plain PyTorch DDP script with no profd in it, 2 ranks, PROFD_AUTO=1"
# profd reaches it through profd-auto.pth in a site folder, where
# `cmake --install` puts the package; here a user site holding the build's
# package and .pth
userbase="$tmp/userbase"
site=$(PYTHONUSERBASE=$userbase "$py" -c 'import site; print(site.getusersitepackages())')
mkdir -p "$site"
ln -s "$build/python/profd" "$site/profd"
cp "$build/python/profd-auto.pth" "$site/"
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ranks=()
for rank in 0 1; do
  env -u PYTHONPATH PYTHONUSERBASE="$userbase" PROFD_AUTO=1 PROFD_JOB=dropin RANK=$rank LOCAL_RANK=$rank \
    WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" TRAIN_STOP_FILE="$tmp/stop" TRAIN_MAX_STEPS=2000 \
    TRAIN_SLEEP_S=0.05 "$py" client/python/examples/plain_ddp_train.py &
  ranks+=($!)
done
for _ in $(seq 150); do
  [ "$(profctl --json status --job dropin | grep -c '"step_ms":[[:space:]]*[1-9]')" -ge 2 ] && break
  sleep 0.1
done
profctl status --job dropin
profctl start --next 2 --job dropin --tool torch | tee "$tmp/w3"
w3=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w3" | head -1)
profctl wait "$w3" --timeout 60 || true
touch "$tmp/stop"
wait "${ranks[@]}" || true
folder=$(sed -n 's/^started window [0-9]* .* -> \(.*\)$/\1/p' "$tmp/w3" | head -1)
"$py" - "$folder" <<'PY'
import collections, json, os, sys

folder = sys.argv[1]
m = json.load(open(os.path.join(folder, "manifest.json")))
print("%s: steps [%d, %d) = the script's optimizer steps" % (m["window"]["name"], *m["window"]["steps"]))
for c in m["captures"]:
    doc = json.load(open(os.path.join(folder, c["dir"], c["files"][0]["path"])))
    names = collections.Counter(e.get("name") for e in (doc["traceEvents"] if isinstance(doc, dict) else doc))
    aten = sum(n for k, n in names.items() if k and k.startswith("aten::"))
    print("  %-24s %s, steps %d-%d: %d optimizer steps, %d aten events" % (
        c["dir"], c["status"], c["first_step"], c["last_step"], names["Optimizer.step#SGD.step"], aten))
PY
