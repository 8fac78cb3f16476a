#!/usr/bin/env bash
# Build profd with AddressSanitizer and UndefinedBehaviorSanitizer and run
# every test (unit, integration, system) through ctest.
# Usage: deploy/test.sh [ctest arguments, e.g. -R system]
set -euo pipefail
cd "$(dirname "$0")/.."

# the report's test renders it in Chromium; the metrics' test scrapes with
# curl and checks with promtool (Debian's prometheus); the after-window hook test uploads with rclone
deploy/deps.sh chromium prometheus curl rclone

build=${PROFD_TEST_BUILD:-build-test}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DPROFD_SANITIZE=ON -DPROFD_WERROR=ON \
  -DPROFD_TESTS=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
# leaks are errors; nng keeps a few process-lifetime allocations we do not own
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --output-on-failure -j2 "$@"
