# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Shared by the deployment tests: sourced, not run.
# Each test prints one line per check and exits 0 (pass), 1 (fail) or
# 77 (skipped, with the reason; a skip after a failed check is a failure).
set -euo pipefail

: "${PROFD_SOURCE_DIR:?set by ctest}"
: "${PROFD_BUILD_DIR:?set by ctest}"

test_name=$(basename "$0" .sh)
# ok, bad, die, skip, checks_done
. "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/profd-${test_name}.XXXXXX")
pids=() # processes a test started: killed on exit
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # a daemon writes its state as it stops: gone before its tree is removed
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# check DESCRIPTION COMMAND...: run a command, record the outcome
check() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
# quiet COMMAND...: run it with its output discarded (for check)
quiet() { "$@" >/dev/null 2>&1; }
# ranks_stepped N MATCH PROFCTL...: until N ranks of `PROFCTL --json status`
# whose record matches MATCH (a grep -o pattern ending before "step") have
# begun step 3, a few steps done (10 s at most; the checks that follow say
# what is missing).
ranks_stepped() {
  local want=$1 match=$2 n
  shift 2
  for _ in $(seq 200); do
    n=$( { "$@" --json status 2>/dev/null || true; } | tr -d ' \t\n' |
      { grep -o "$match\"step\":[0-9]*" || true; } | sed 's/.*://' | awk '$1 >= 3' | wc -l)
    [ "$n" -eq "$want" ] && break
    sleep 0.05
  done
}
finish() {
  checks_done
}
