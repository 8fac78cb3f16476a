# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Shared by the security system tests: sourced, not run. Each test prints
# one line per check and exits 0 (pass), 1 (fail) or 77 (skipped, with the
# reason: only what cannot be installed, such as root; a skip after a failed
# check is a failure). A missing tool is installed (need), or the test
# fails. Daemons started with start_daemon are stopped on exit, also when
# the test is killed (after $lib_on_exit, a function, if set); finish()
# reads every daemon's log for sanitizer reports.
set -euo pipefail

: "${PROFD_PROFD:?set by ctest}"
: "${PROFD_PROFCTL:?set by ctest}"

here=$(dirname "$(realpath "$0")")
test_name=$(basename "$0" .sh)
failures=0
pids=()
daemon_logs=() # every log start_daemon wrote, earlier daemons' included

tmp=$(mktemp -d "${TMPDIR:-/tmp}/profd-${test_name}.XXXXXX")
chmod 755 "$tmp" # other users reach the sockets below it
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${lib_on_exit:-}" ]; then "$lib_on_exit" || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
# a killed test cleans up too (ctest's timeout sends SIGTERM first)
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

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
# need COMMAND PACKAGE: install the Debian package when the command is
# missing (apt may be busy: retried), or fail.
need() {
  command -v "$1" >/dev/null && return 0
  [ "$(id -u)" = 0 ] || die "$1 not found (Debian package $2) and not root to install it"
  echo "installing $2 for $1"
  local i
  for i in $(seq 30); do
    if DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$2" \
      >"$tmp/apt.log" 2>&1 ||
      { apt-get update -qq >>"$tmp/apt.log" 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$2" \
          >>"$tmp/apt.log" 2>&1; }; then
      break
    fi
    grep -q "Could not get lock\|Unable to acquire\|is locked" "$tmp/apt.log" || break
    sleep 2
  done
  command -v "$1" >/dev/null || die "$1 not found and $2 did not install: $(tail -3 "$tmp/apt.log")"
}
# Sanitizer reports (ASan, LSan, UBSan) in any daemon log of this test.
check_logs() {
  local log
  for log in "${daemon_logs[@]}"; do
    if grep -Eq "(ERROR|WARNING): [A-Za-z]+Sanitizer|runtime error" "$log"; then
      bad "sanitizer report in the daemon log $(basename "$log"): $(grep -Em3 "Sanitizer|runtime error" "$log")"
    fi
  done
}
finish() {
  local p
  for p in "${daemon_pids[@]}"; do # still running: stopped, so that LSan reports
    kill -TERM "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  check_logs
  if [ "$failures" -ne 0 ]; then
    echo "$test_name: $failures check(s) failed" >&2
    exit 1
  fi
  echo "$test_name: all checks passed"
}

# expect NAME RC PATTERN COMMAND...: the command exits RC and its output
# (stdout and stderr) matches the extended regular expression PATTERN.
expect() {
  local name=$1 want=$2 pattern=$3 rc=0
  shift 3
  "$@" >"$tmp/expect.out" 2>&1 || rc=$?
  if [ "$rc" -ne "$want" ]; then
    bad "$name: exit $rc, want $want: $(head -c 600 "$tmp/expect.out")"
  elif ! grep -Eq -- "$pattern" "$tmp/expect.out"; then
    bad "$name: no /$pattern/ in: $(head -c 600 "$tmp/expect.out")"
  else
    ok "$name"
  fi
}

# start_daemon LOG ARGS...: profd in the background (PROFD_RUN_DIR or
# --run-dir names its sockets). The log of an earlier daemon with the same
# name is kept as LOG.1, LOG.2, ... for check_logs.
daemon_pids=()
start_daemon() {
  local log=$1 i n=1
  shift
  if [ -e "$log" ]; then
    while [ -e "$log.$n" ]; do n=$((n + 1)); done
    mv "$log" "$log.$n"
    for i in "${!daemon_logs[@]}"; do
      if [ "${daemon_logs[$i]}" = "$log" ]; then daemon_logs[$i]=$log.$n; fi
    done
  fi
  daemon_logs+=("$log")
  "$@" 2>"$log" &
  pids+=($!)
  daemon_pids+=($!)
  daemon_pid=$!
}

# wait_for FILE: until it exists (a socket), at most 10 s
wait_for() {
  for _ in $(seq 200); do
    [ -e "$1" ] && return 0
    kill -0 "$daemon_pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# stop_daemon: SIGTERM to the last daemon started, and wait for it (its
# sanitizer reports are in its log: check_logs)
stop_daemon() {
  kill -TERM "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || true
}

# as_user USER GROUP COMMAND...: run with that uid and gid, no other groups
as_user() {
  local user=$1 group=$2
  shift 2
  setpriv --reuid="$user" --regid="$group" --clear-groups "$@"
}
# as_user_in USER GROUP GROUPS COMMAND...: the same, with these
# supplementary groups in the process (comma-separated)
as_user_in() {
  local user=$1 group=$2 groups=$3
  shift 3
  setpriv --reuid="$user" --regid="$group" --groups="$groups" "$@"
}

json() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
