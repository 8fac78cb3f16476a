# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Sourced by the system tests, with the build folder as $1: the paths of the
# binaries, a temporary folder ($tmp, named after $lib_name), the processes
# in $pids killed and the folder removed on exit, also on SIGINT, SIGTERM
# and SIGHUP (after $lib_on_exit, a function, if set), fail() with the tails
# of $tmp/*.log, check_logs() at the end of a test, and json().
set -euo pipefail
build=$(realpath "$1")
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
profd=$build/daemon/profd
profctl_bin=$build/client/profctl
sim=$build/client/profd-sim
check="/usr/bin/python3 $here/check_manifest.py"

tmp=$(mktemp -d "/tmp/profd-${lib_name:-sys}-XXXXXX")
pids=()
lib_cleanup() {
  # SIGCONT too: a test may fail while it holds a process stopped
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && kill -CONT "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${lib_on_exit:-}" ]; then "$lib_on_exit"; fi
  rm -rf "$tmp"
}
trap lib_cleanup EXIT
# a killed test cleans up too (ctest's timeout sends SIGTERM first)
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
fail() {
  echo "FAIL: $*" >&2
  for f in "$tmp"/*.log; do
    [ -f "$f" ] || continue
    echo "--- $f" >&2
    tail -n 20 "$f" >&2
  done
  exit 1
}
# The end of a test: every process in $pids is stopped (SIGTERM, so that
# LeakSanitizer reports), the last in $pids first (a coordinator is put at
# its head, also when it is started again), each gone before the
# next (workers before their node, nodes before the coordinator, as an
# orderly shutdown goes), then every log in $tmp is read for sanitizer
# reports: each daemon's and worker's, the earlier runs of a restarted one
# included (their logs are appended to). Stopped all at once, a node's
# request to a coordinator whose connection closes at that moment was
# leaked inside libnng 1.5.2 (its aio_begin drops a stopped aio's message
# without a callback; fixed upstream in nng commit 8d45fbc4): a leak of
# the library in a race, not the daemon's.
check_logs() {
  local i p f
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    p=${pids[i]}
    kill -TERM "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  for f in "$tmp"/*.log "$tmp"/*.err; do
    [ -f "$f" ] || continue
    if grep -Eq "(ERROR|WARNING): [A-Za-z]+Sanitizer|runtime error" "$f"; then
      fail "sanitizer report in $(basename "$f"): $(grep -Em3 "Sanitizer|runtime error" "$f")"
    fi
    # a daemon's own consistency checks (debug builds)
    if grep -q "BUG: " "$f"; then
      fail "consistency check in $(basename "$f"): $(grep -m3 "BUG: " "$f")"
    fi
  done
}
json() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# wait_until WHAT SECONDS COMMAND [ARGS...]: run COMMAND every 50 ms until
# it succeeds; after SECONDS (a generous bound: the machine may be loaded)
# fail naming WHAT was waited for. Wait for a state, never sleep for one.
wait_until() {
  local what=$1 secs=$2 end
  shift 2
  end=$((SECONDS + secs))
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || fail "timed out after ${secs} s waiting for $what"
    sleep 0.05
  done
}
# poll TRIES WANT COMMAND [ARGS...]: run COMMAND every 50 ms, at most TRIES
# times, until what it prints is WANT: 0 once it is, else 1. What it printed
# last is in $got.
poll() {
  local tries=$1 want=$2
  shift 2
  got=
  for _ in $(seq "$tries"); do
    got=$("$@")
    [ "$got" = "$want" ] && return 0
    sleep 0.05
  done
  return 1
}
# query EXPR COMMAND [ARGS...]: the Python expression EXPR (json) over the
# document COMMAND prints.
query() {
  local expr=$1
  shift
  "$@" | json "$expr"
}
# free_port: a TCP port free on loopback now.
free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# coordinator_start [ARGS...]: a coordinator on tcp://127.0.0.1:$port (plain
# tcp://, loopback), its folders under $tmp/c, its log appended to
# $tmp/coordinator.log; its pid in coord_pid (and in pids). Not waited for.
coordinator_start() {
  "$profd" --coordinator-listen "tcp://127.0.0.1:$port" --insecure-tcp-links --node coordinator \
    --run-dir "$tmp/c/run" --save-path "$tmp/c/save" "$@" 2>>"$tmp/coordinator.log" &
  coord_pid=$!
  pids=("$coord_pid" "${pids[@]}") # stopped last (check_logs), even when started again
}
# node_start I [ARGS...]: node daemon node<I> of that coordinator, folders
# under $tmp/n<I>, log appended to $tmp/node<I>.log, pid in node_pid[I] (and
# in pids); returns once its control socket is there (fails after 60 s): the
# daemon binds it after its worker socket, so both then listen.
node_pid=()
node_start() {
  local i=$1
  shift
  "$profd" --coordinator-url "tcp://127.0.0.1:$port" --insecure-tcp-links --node "node$i" \
    --run-dir "$tmp/n$i/run" --save-path "$tmp/n$i/save" "$@" 2>>"$tmp/node$i.log" &
  node_pid[i]=$!
  pids+=("${node_pid[i]}")
  wait_until "node$i's control socket $tmp/n$i/run/control.sock" 60 test -S "$tmp/n$i/run/control.sock"
}
# swarm_start: tests/bench/bench_swarm (the scale benchmark's ranks) with
# 16 ranks on each of node0 and node1 (hosts host0, host1) at 10 steps/s,
# log $tmp/swarm.log, pid in swarm_pid; returns once the coordinator has
# all 32 with a step time (10 s at most).
swarm_start() {
  local n=0
  [ -x "$build/tests/bench/bench_swarm" ] || fail "bench_swarm is missing (PROFD_BENCH off?)"
  "$build/tests/bench/bench_swarm" --node "ipc://$tmp/n0/run/worker.sock,host0,0" \
    --node "ipc://$tmp/n1/run/worker.sock,host1,1" --per 16 --rate 10 --flush-ms 100 \
    >"$tmp/swarm.log" 2>&1 &
  swarm_pid=$!
  pids+=("$swarm_pid")
  for _ in $(seq 200); do
    n=$("$profctl_bin" --url "ipc://$tmp/c/run/control.sock" --json status 2>/dev/null |
      json 'sum(1 for r in d["ranks"] if r["state"] != "lost" and r["step_ms"] > 0)' || echo 0)
    [ "$n" = 32 ] && return 0
    sleep 0.05
  done
  fail "32 ranks with a step time did not register (have $n)"
}
# coordinator_window [ARGS...]: `start --next 2 --tool sim ARGS` at the
# coordinator; sets name (the window's) and man (its manifest's path) and
# returns once the manifest is there (30 s at most).
coordinator_window() {
  "$profctl_bin" --url "ipc://$tmp/c/run/control.sock" start --next 2 --tool sim "$@" \
    >"$tmp/start.txt" || fail "start: $(cat "$tmp/start.txt")"
  name=$(sed -n 's/^started window [0-9]* \(w[^:]*\):.*/\1/p' "$tmp/start.txt")
  man=$tmp/c/save/default/$name/manifest.json
  for _ in $(seq 600); do [ -f "$man" ] && return 0; sleep 0.05; done
  fail "no manifest for $name"
}
# need_tool COMMAND PACKAGE: install the Debian package when the command is
# missing (as root; apt may be busy with another session: retried), else
# fail: a missing tool is never a pass.
need_tool() {
  command -v "$1" >/dev/null 2>&1 && return 0
  [ "$(id -u)" -eq 0 ] || fail "$1 is missing (Debian package $2; run as root to install it)"
  for _ in 1 2 3 4 5 6; do
    if DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$2" \
      >>"$tmp/apt.log" 2>&1; then
      command -v "$1" >/dev/null 2>&1 && return 0
    fi
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$tmp/apt.log" 2>&1 || true
    sleep 20
  done
  fail "$1 is missing and apt-get could not install $2 (see $tmp/apt.log)"
}
# A headless Chromium with nothing of its own going to the network.
chrome() {
  timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-default-apps --user-data-dir="$tmp/chrome-$RANDOM" "$@"
}
# ---- one daemon found by $PROFD_RUN_DIR (profctl with no --url) ----
# start_profd CONFIG: profd with that configuration, save_path $save, its
# log appended to $tmp/profd.log, its pid in profd_pid (and in pids);
# returns once it answers status (5 s at most).
start_profd() {
  "$profd" --config "$1" --save-path "$save" --log-level info 2>>"$tmp/profd.log" &
  pids+=($!)
  profd_pid=$!
  for _ in $(seq 100); do "$profctl_bin" status >/dev/null 2>&1 && return 0; sleep 0.05; done
  fail "profd did not start"
}
# ranks_measured N: N ranks have a step time.
ranks_measured() {
  [ "$("$profctl_bin" --json status | json 'sum(1 for r in d["ranks"] if r["step_ms"] > 0)')" = "$1" ]
}
# four_actors: profd-sim actors 0-2 (log $tmp/sim.log) and actor 3 apart
# (its pid in sim3, log $tmp/sim3.log), 10 steps/s, 20 kB traces; returns
# once all 4 have a step time (60 s at most).
four_actors() {
  "$sim" --layout actor:3 --steps 100000 --rate 10 --trace-bytes 20000 >"$tmp/sim.log" 2>&1 &
  pids+=($!)
  "$sim" --layout actor:1 --rank-offset 3 --steps 100000 --rate 10 --trace-bytes 20000 \
    >"$tmp/sim3.log" 2>&1 &
  sim3=$!
  pids+=($sim3)
  wait_until "4 ranks with a step time" 60 ranks_measured 4
}
# sim_step_bound LAUNCHED RATE: a step that no rank of a profd-sim at RATE
# steps/s launched at LAUNCHED (`date +%s%N`, taken before the launch) can
# have begun yet, read off the clock, not off the ranks' reports (which lag
# on a loaded machine): a rank begins its first step (1) after its sim was
# launched and each next one 1/RATE s later at the earliest (steps it is
# late for are run back to back, never early).
sim_step_bound() { echo $((2 + ($(date +%s%N) - $1) * $2 / 1000000000)); }
# front_step: the newest step of the ranks not lost.
front_step() {
  "$profctl_bin" --json status | json 'max(r["step"] for r in d["ranks"] if r["state"] != "lost")'
}
# step_now: the newest step any rank began (0: none yet).
step_now() { "$profctl_bin" --json status | json 'max(r["step"] or 0 for r in d["ranks"])'; }
# window_id: the id of the (first) window a `profctl start` printed on stdin.
window_id() { sed -n 's/^started window \([0-9]*\) .*/\1/p' | head -1; }
# window_name: the name of that window.
window_name() { sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' | head -1; }
# registered_ranks N: until N ranks are registered (10 s at most), else fail.
registered_ranks() {
  poll 200 "$1" query 'len(d["ranks"])' "$profctl_bin" --json status ||
    fail "$1 ranks did not register (got $got)"
}
