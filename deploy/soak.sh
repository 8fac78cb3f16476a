#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The fault-injection soak: a benchmark, not a test. A simulated job (16
# ranks of profd-sim, a coordinator and two node daemons on loopback) runs a
# loop of on-demand windows while an injector kill -9s and restarts node
# daemons and the coordinator, SIGSTOPs a daemon for 15 s, kills workers,
# fills and frees the save_path file system (root: a tmpfs of its own) and
# sends malformed and hostile requests (four 50 MB requests at once among
# them), puts a sparse file into a gathered capture folder for retention
# and a forged window record into a node journal; then it reports windows and
# captures (lost ones must be 0), tree entries without a complete capture
# (must be 0), the training thread's longest profd call and the daemons'
# memory. tests/bench/soak.py does the work.
# Builds into build-soak/ (RelWithDebInfo, no sanitizers; --sanitize: ASan
# and UBSan). 10 minutes of faults by default, --quick 2; --minutes M.
# Writes build-soak/SOAK.md, and tests/bench/SOAK.md for a full run.
# Exit status: 0 when no capture was lost and the tree holds nothing
# incomplete.
# Usage: deploy/soak.sh [--quick] [--minutes M] [--seed S] [--sanitize] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=OFF
args=()
full=1
for a in "$@"; do
  case $a in
  --sanitize) sanitize=ON ;;
  --quick) full=0 args+=("$a") ;;
  --minutes | --seed | --keep | [0-9]*) args+=("$a") ;;
  --help | -h)
    sed -n '4,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "soak.sh: unknown argument '$a' (see --help)" >&2
    exit 2
    ;;
  esac
done
deploy/deps.sh
build=${PROFD_BUILD:-build-soak}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFD_SANITIZE="$sanitize" \
  -DPROFD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
out=$build/SOAK.md
rc=0
/usr/bin/python3 tests/bench/soak.py "$build" --out "$out" --json "$build/soak.json" \
  "${args[@]}" || rc=$?
if [ "$full" = 1 ] && [ -s "$out" ]; then
  cp "$out" tests/bench/SOAK.md
fi
exit "$rc"
