#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Benchmarks: profd against its speed targets (RESULTS.md) and against
# what users would do instead (an empty call, nng_send, cp -r, a raw TCP
# stream, training without profd). Installs what it needs (deploy/deps.sh),
# builds into build-bench/ (Release, no sanitizers) and runs
# tests/bench/run.py, which prints the table, writes
# build-bench/bench-results.json and regenerates tests/bench/RESULTS.md.
# About 30 minutes on 2 cores; needs about 5 GiB of free disk and memory.
# The exit status says whether every benchmark ran, not whether targets are
# met.
# Usage: deploy/bench.sh [--quick] [--only hotpath,python,plan,align,ingest,footprint,idle,gather,overhead,
#        turnaround,scale,scale4k,gatherload,startup,straggler]
# Every figure by default, scale at the target's 16,384 simulated ranks over
# 256 node daemons (PROFD_BENCH_SCALE_NODES=N for another size). A full run
# is compared with the previous full run's figures (--compare JSON: another).
set -euo pipefail
cd "$(dirname "$0")/.."
PROFD_BENCH_T0=$(date +%s.%N)
export PROFD_BENCH_T0

deploy/deps.sh socat strace
build=${PROFD_BUILD:-build-bench}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPROFD_SANITIZE=OFF -DPROFD_TESTS=OFF \
  -DPROFD_BENCH=ON >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
exec /usr/bin/python3 tests/bench/run.py --build "$build" "$@"
