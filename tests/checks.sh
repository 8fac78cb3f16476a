# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The checks of the shell tests' libraries (tests/deploy/lib.sh,
# tests/security/lib.sh): sourced, not run. A test prints one line per
# check (ok, bad) and exits 0 (pass), 1 (fail: die, or checks_done after a
# failed check) or 77 (skip, with the reason; a skip after a failed check
# is a failure). Uses $test_name; counts in $failures.
failures=0
ok() { echo "ok: $*"; }
bad() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
die() {
  echo "FAIL: $*" >&2
  exit 1
}
skip() {
  if [ "$failures" -ne 0 ]; then
    echo "FAIL: $failures check(s) failed before the test skipped ($*)" >&2
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
# checks_done: the test's verdict, from the checks so far.
checks_done() {
  if [ "$failures" -ne 0 ]; then
    echo "$test_name: $failures check(s) failed" >&2
    exit 1
  fi
  echo "$test_name: all checks passed"
}
