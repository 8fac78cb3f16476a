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
# ok, bad, die, skip, checks_done
. "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"
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
  checks_done
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

# wait_started LOG: until the daemon logging to LOG says it serves ("profd
# VERSION on NODE: workers URL, control URL, ..."), logged once both its
# sockets listen (10 s at most); 1 if it exited first or never said so. A
# socket file alone is not that: worker.sock is bound before control.sock
# (a round under load: "Unable to dial ... control.sock: Connection refused").
wait_started() {
  for _ in $(seq 200); do
    grep -q " daemon: profd .* on .*: workers " "$1" 2>/dev/null && return 0
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

# raw_sockets: nngcat, and the daemon's sockets under $tmp/run
# (PROFD_RUN_DIR) for it: $ctl the control socket, $wk the worker socket.
raw_sockets() {
  need nngcat nng-utils
  export PROFD_RUN_DIR=$tmp/run
  ctl=ipc://$tmp/run/control.sock
  wk=ipc://$tmp/run/worker.sock
}
json() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# ---- the usual daemon of a test: sockets in $tmp/run (the test exports
# PROFD_RUN_DIR=$tmp/run), save_path $tmp/out, log $tmp/profd.log ----

# needs_nobody WHY: the test runs something as nobody: root is needed
# (else skip, saying WHY), setpriv installed, nobody's group in $ngid.
needs_nobody() {
  [ "$(id -u)" = 0 ] || skip "needs root ($1)"
  need setpriv util-linux
  ngid=$(id -g nobody)
}
# yaml LINE...: the daemon's configuration $tmp/profd.yaml, a line an argument
yaml() { printf '%s\n' "$@" >"$tmp/profd.yaml"; }
# start_profd [FLAGS...]: profd with $tmp/profd.yaml and save_path $tmp/out;
# returns once its worker socket is in $tmp/run, else fails with its log.
start_profd() {
  start_daemon "$tmp/profd.log" "$PROFD_PROFD" --config "$tmp/profd.yaml" --save-path "$tmp/out" \
    "$@"
  wait_started "$tmp/profd.log" || die "profd did not start: $(cat "$tmp/profd.log")"
}
# status_until EXPR WANT: until the Python expression EXPR over
# `profctl --json status` (d) prints WANT, 10 s at most: 0 once it does,
# else 1. What it printed last is in $got.
status_until() {
  got=
  for _ in $(seq 200); do
    got=$("$PROFD_PROFCTL" --json status 2>/dev/null | json "$1" || echo "")
    [ "$got" = "$2" ] && return 0
    sleep 0.05
  done
  return 1
}
# newest_step: the newest step any rank has begun, once one has (10 s at
# most; 0 if none did).
newest_step() {
  local s=0
  for _ in $(seq 200); do
    s=$("$PROFD_PROFCTL" --json status | json 'max([r["step"] or 0 for r in d["ranks"]] or [0])')
    [ "$s" -gt 0 ] && break
    sleep 0.05
  done
  echo "$s"
}
# start_sim_window JOB STEP: a sim window of JOB over step STEP; its id
# ("" when none started).
start_sim_window() {
  "$PROFD_PROFCTL" start --job "$1" --steps "$2" --tool sim |
    sed -n 's/^started window \([0-9]*\) .*/\1/p'
}
# take_window JOB: a sim window of JOB 20 steps after the newest, waited
# for (60 s at most, however it ends); its id.
take_window() {
  local id
  id=$(start_sim_window "$1" $(($(newest_step) + 20)))
  [ -n "$id" ] || die "no window"
  "$PROFD_PROFCTL" wait "$id" --timeout 60 >/dev/null 2>&1 || true
  echo "$id"
}
# win ID FIELD: that field of window ID (`profctl --json windows`).
win() { "$PROFD_PROFCTL" --json windows "$1" | json "d['windows'][0].get('$2')"; }
# daemon_for_nobody LINE...: start_profd --log-level info with sockets
# nobody may use (security.socket_mode "0666"), limits.client_timeout_ms
# 120000, then these lines (more limits, unless they open a section).
daemon_for_nobody() {
  yaml "security:" "  socket_mode: \"0666\"" "limits:" "  client_timeout_ms: 120000" "$@"
  start_profd --log-level info
}
