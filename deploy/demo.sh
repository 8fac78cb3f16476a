#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The main job on embedded defaults: one node, local save_path.
# Builds profd, starts the daemon, runs a simulated RL job (actor, rollout in
# two inference replicas, ref), takes an end-to-end and a discrete profiling
# window with profctl, waits for the gathering, prints the tree and a
# manifest summary; arms the straggler trigger against a rollout rank the
# simulation slows down and merges a window into one timeline; then, with
# PyTorch, deploy/demo-python.sh: a GRPO job written against `import profd`
# and a drop-in job (a plain DDP script with no profd in it, run with
# PROFD_AUTO=1); and ends by printing where report.html is and a
# `profctl top --once` snapshot.
# Usage: deploy/demo.sh [output folder, default ./profd-demo]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

deploy/deps.sh
build=${PROFD_BUILD:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFD_TESTS=OFF -DPROFD_SANITIZE=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
bin=$top/$build

out=$(realpath -m "${1:-profd-demo}")
rm -rf "$out"
mkdir -p "$out"
export PROFD_RUN_DIR="$out/run"
profctl() { "$bin/client/profctl" "$@"; }

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

echo "== starting profd (save_path $out/profile, sockets in $PROFD_RUN_DIR)"
"$bin/daemon/profd" --save-path "$out/profile" 2>"$out/profd.log" &
pids+=($!)
for _ in $(seq 50); do profctl status >/dev/null 2>&1 && break; sleep 0.1; done

echo "== the straggler trigger: a rank over 2x its role's median for 3 steps gets a window"
profctl watch --roles rollout --factor 2 --consecutive 3 --steps 2 --tool sim

echo
echo "== starting a simulated job: 2 actor, 4 rollout ranks in 2 replicas, 2 ref (10 steps/s);"
echo "   rollout rank 4 slows down to a quarter of its pace at step 60"
"$bin/client/profd-sim" --layout actor:2,rollout:4@2,ref:2 --steps 100000 --rate 10 \
  --trace-bytes 262144 --slow 4:4@60 >"$out/sim.log" 2>&1 &
sim=$!
pids+=($sim)
for _ in $(seq 100); do
  n=$(profctl --json status | grep -c '"client"' || true)
  [ "$n" -ge 8 ] && break
  sleep 0.1
done
profctl status

echo
echo "== end-to-end window: the next 2 steps every rank can reach"
profctl start --next 2 --tool sim | tee "$out/start1.txt"
w1=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$out/start1.txt" | head -1)

echo
echo "== discrete window: rollout replica 1 'generate' with a sub-step schedule"
profctl start --next 1 --roundup 5 --roles rollout --replica-ranks 1 --phases generate \
  --schedule wait=1,warmup=0,active=2,repeat=1 --tool sim | tee "$out/start2.txt"
w2=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$out/start2.txt" | head -1)

echo
profctl wait "$w1" --timeout 60
profctl wait "$w2" --timeout 60
echo
profctl windows

echo
echo "== the gathered tree"
(cd "$out/profile" && find . -path ./.spool -prune -o -print | sort | sed 's/^\.\///' | grep -v '^\.$')

echo
echo "== manifest summary"
for m in "$out"/profile/*/w*/manifest.json; do
  python3 - "$m" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
w = m["window"]
print(f"{w['name']}: job {m['job']}, steps [{w['steps'][0]}, {w['steps'][1]}), "
      f"tool {w['tool']}, mode {w['mode']}")
for c in m["captures"]:
    rep = "" if c["replica_rank"] is None else f" replica {c['replica_rank']}"
    phase = c["phase"] or "-"
    size = sum(f["bytes"] for f in c["files"])
    print(f"  {c['role']:8} {phase:10} rank {c['rank']}{rep:11} steps {c['first_step']}-"
          f"{c['last_step']}  {c['status']:9} {len(c['files'])} file(s) {size} bytes")
PY
done

echo
echo "== one timeline of window $w1: every rank a process, on the daemon's clock"
profctl merge "$w1"

echo
echo "== the straggler: waiting for the trigger's window"
for _ in $(seq 300); do
  wt=$(profctl --json windows | python3 -c 'import json,sys
w=[w for w in json.load(sys.stdin)["windows"] if (w.get("source") or "").startswith("straggler")]
print(w[0]["id"] if w else "")')
  [ -n "$wt" ] && break
  sleep 0.1
done
[ -n "$wt" ] || { echo "demo: the straggler trigger opened no window" >&2; exit 1; }
profctl wait "$wt" --timeout 60 || true
profctl windows "$wt" | sed -n '1,2p;/^source/p'

echo
echo "== PyTorch: a small GRPO job on CPU (torch.distributed, 4 ranks) with real traces, then a drop-in job"
PROFD_BUILD="$build" deploy/demo-python.sh "$bin"

echo
echo "demo done: outputs in $out/profile, daemon log $out/profd.log"
echo "report of the straggler's window (open it in a browser): $(profctl report "$wt")"
echo
profctl top --once
kill "$sim" 2>/dev/null || true
wait "$sim" 2>/dev/null || true
