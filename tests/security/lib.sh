# Shared by the security system tests: sourced, not run. Each test prints
# one line per check and exits 0 (pass), 1 (fail) or 77 (skipped, with the
# reason). Daemons started with start_daemon are stopped on exit.
set -euo pipefail

: "${PROFD_PROFD:?set by ctest}"
: "${PROFD_PROFCTL:?set by ctest}"

here=$(dirname "$(realpath "$0")")
test_name=$(basename "$0" .sh)
failures=0
pids=()

tmp=$(mktemp -d "${TMPDIR:-/tmp}/profd-${test_name}.XXXXXX")
chmod 755 "$tmp" # other users reach the sockets below it
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

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
  echo "SKIP: $*"
  exit 77
}
finish() {
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

# start_daemon LOG ARGS...: profd in the background, until its control
# socket answers (PROFD_RUN_DIR or --run-dir names it).
start_daemon() {
  local log=$1
  shift
  "$@" 2>"$log" &
  pids+=($!)
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

json() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
