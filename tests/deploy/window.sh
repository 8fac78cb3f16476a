#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# One profiling window with installed programs: profd, profd-sim (4 ranks:
# 2 actor, 2 rollout in one replica) and profctl, found in BINDIR or, without
# it, on PATH. Runs on any system with bash and coreutils (the deployment
# tests run it in a fresh Debian root too), so it reads the output of the
# programs with grep and sed only.
#
#   window.sh WORKDIR [BINDIR]
#
# Prints one line per step done; exits 0 when the window's manifest lists 4
# complete captures of the expected steps, 1 otherwise (with the logs).
set -euo pipefail

work=$1
bin=${2:+$2/}
mkdir -p "$work"
export PROFD_RUN_DIR=$work/run
unset PROFD_URL PROFD_CONTROL_URL
daemon='' sim=''
stop() {
  for p in $sim $daemon; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
fail() {
  echo "window: FAIL: $*" >&2
  for f in "$work"/*.log; do
    echo "--- $f" >&2
    tail -n 15 "$f" >&2
  done
  exit 1
}
profctl() { command "${bin}profctl" "$@"; }

"${bin}profd" --save-path "$work/out" --log-level info >"$work/profd.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do profctl status >/dev/null 2>&1 && break; sleep 0.1; done
profctl status >/dev/null 2>&1 || fail "profd does not answer profctl status"
echo "window: profd $("${bin}profd" --version | sed 's/^profd //') answers"

"${bin}profd-sim" --layout actor:2,rollout:2@1 --steps 2000 --rate 20 --trace-bytes 4096 \
  --job deploytest >"$work/sim.log" 2>&1 &
sim=$!
n=0
for _ in $(seq 200); do
  n=$( (profctl --json status || true) | grep -c '"client":' || true)
  [ "$n" -eq 4 ] && break
  sleep 0.05
done
[ "$n" -eq 4 ] || fail "4 ranks of profd-sim did not register (found $n)"
# "the next 2 steps" is planned from each rank's measured step time: wait
# until every rank has done a few steps
for _ in $(seq 200); do
  n=$( (profctl --json status || true) | tr -d ' \t\n' | { grep -o '"step":[0-9]*' || true; } |
    sed 's/.*://' | awk '$1 >= 3' | wc -l)
  [ "$n" -eq 4 ] && break
  sleep 0.05
done
[ "$n" -eq 4 ] || fail "the 4 ranks did not reach step 3"
echo "window: 4 ranks registered and stepping"

profctl start --next 2 --tool sim --job deploytest >"$work/start.txt" 2>&1 ||
  fail "profctl start: $(cat "$work/start.txt")"
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$work/start.txt" | head -1)
name=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$work/start.txt" | head -1)
[ -n "$id" ] && [ -n "$name" ] || fail "profctl start printed: $(cat "$work/start.txt")"
profctl wait "$id" --timeout 60 >"$work/wait.txt" 2>&1 || fail "profctl wait: $(cat "$work/wait.txt")"
grep -q "4 complete, 0 failed, 0 missed, 0 truncated" "$work/wait.txt" ||
  fail "window $name: $(cat "$work/wait.txt")"

manifest=$work/out/deploytest/$name/manifest.json
[ -f "$manifest" ] || fail "no $manifest"
first=$(echo "$name" | sed -n 's/^w[0-9]*-steps\([0-9]*\)-\([0-9]*\)$/\1/p')
last=$(echo "$name" | sed -n 's/^w[0-9]*-steps\([0-9]*\)-\([0-9]*\)$/\2/p')
[ -n "$first" ] && [ "$last" = $((first + 1)) ] || fail "window name $name: not two steps"
tr -d ' \t\r\n' <"$manifest" >"$work/manifest.flat"
complete=$( (grep -o '"status":"complete"' "$work/manifest.flat" || true) | wc -l)
[ "$complete" -eq 4 ] || fail "$manifest: $complete complete captures, not 4"
steps=$( (grep -o "\"first_step\":$first,\"last_step\":$last" "$work/manifest.flat" || true) | wc -l)
[ "$steps" -eq 4 ] || fail "$manifest: $steps captures of steps $first-$last, not 4"
traces=$(find "$work/out/deploytest/$name" -name '*.json' ! -name manifest.json | wc -l)
[ "$traces" -ge 4 ] || fail "$name: $traces trace files, expected 4 or more"
echo "window: $name gathered: 4 complete captures of steps $first-$last, $traces trace files"
