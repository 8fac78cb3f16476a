#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Build profd with AddressSanitizer and UndefinedBehaviorSanitizer and run
# every test (unit, integration, system) through ctest.
# Usage: deploy/test.sh [--repeat N] [--load K] [ctest arguments, e.g. -R system]
#   --repeat N  run the suite N times in a row, stop at the first failing
#               round, one summary line per round (default 1)
#   --load K    K CPU-bound processes (busy loops) run beside the suite for
#               its whole duration, stopped when it ends (default 0): the
#               tests must not depend on an idle machine
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

repeat=1
load=0
while [ $# -gt 0 ]; do
  case $1 in
  --repeat) repeat=${2:?--repeat needs a count}; shift 2 ;;
  --repeat=*) repeat=${1#*=}; shift ;;
  --load) load=${2:?--load needs a count}; shift 2 ;;
  --load=*) load=${1#*=}; shift ;;
  *) break ;;
  esac
done
case $repeat$load in *[!0-9]*) echo "test.sh: --repeat and --load take a number" >&2; exit 2 ;; esac
[ "$repeat" -ge 1 ] || { echo "test.sh: --repeat must be at least 1" >&2; exit 2; }

# the report's test renders it in Chromium; the metrics' test scrapes with
# curl and checks with promtool (Debian's prometheus); the after-window hook test uploads with rclone
deploy/deps.sh chromium prometheus curl rclone

build=${PROFD_TEST_BUILD:-build-test}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DPROFD_SANITIZE=ON -DPROFD_WERROR=ON \
  -DPROFD_TESTS=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
# warning-free with gcc and clang at -O2 too (where gcc's flow analysis
# warns: maybe-uninitialized, format-truncation), warnings as errors
for cc in gcc clang; do
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "SKIP: $cc is not installed: its warnings are not checked"
    continue
  fi
  cmake -S . -B "$build-$cc" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release \
    -DPROFD_WERROR=ON -DPROFD_TESTS=ON >/dev/null
  cmake --build "$build-$cc" -j"$(nproc)"
done
cd "$build"
# leaks are errors; nng keeps a few process-lifetime allocations we do not own
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
# one named libnng defect, and nothing of profd's (tests/lsan.supp says why);
# a copy every user can read (the security tests run daemons as nobody), one
# file per uid, overwritten by the next run
supp=${TMPDIR:-/tmp}/profd-lsan-$(id -u).supp
install -m 644 "$root/tests/lsan.supp" "$supp"
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ "$repeat" -eq 1 ] && [ "$load" -eq 0 ]; then
  exec ctest --output-on-failure -j2 "$@"
fi

# the load: K busy loops, each its own process, stopped by pid on any exit
loaders=()
stop_load() {
  local p
  for p in "${loaders[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${loaders[@]}"; do wait "$p" 2>/dev/null || true; done
  loaders=()
}
trap stop_load EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for ((k = 0; k < load; k++)); do
  /bin/sh -c 'while :; do :; done' &
  loaders+=($!)
done

for ((round = 1; round <= repeat; round++)); do
  log=$PWD/Testing/round-$round.log
  mkdir -p Testing
  start=$(date +%s)
  rc=0
  ctest --output-on-failure -j2 "$@" >"$log" 2>&1 || rc=$?
  secs=$(($(date +%s) - start))
  summary=$(grep -Eo '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n1 || true)
  if [ "$rc" -eq 0 ]; then
    echo "round $round/$repeat (load $load): pass, ${summary:-no ctest summary}, ${secs}s"
  else
    echo "round $round/$repeat (load $load): FAIL (ctest exit $rc), ${summary:-no ctest summary}, ${secs}s; log $log"
    grep -E '^\s+[0-9]+ - ' "$log" | sed 's/^/  failed: /' || true
    exit 1
  fi
done
