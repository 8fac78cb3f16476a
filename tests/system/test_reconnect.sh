#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, a daemon killed (SIGKILL) and started again, over and over,
# under many workers: every worker registers again each time, within
# seconds. Before the fix one worker in a few dozen never came back
# (CI: system_node_rejoin, "did not come back within 10002 ms of the
# daemon's restart"): its background thread waited forever on a hello
# whose timeout libnng 1.5.2 had lost (the aio left in an expiry queue
# whose thread slept without a deadline), and the socket's dialer, whose
# reconnection timer went the same way, never dialed again. Here that
# happened within 3 rounds of 32 workers; the library now ends an overdue
# request itself and dials anew after unanswered hellos (client/io.c).
# Usage: test_reconnect.sh BUILD_DIR [WORKERS] [ROUNDS]
lib_name=reconnect
. "$(dirname "$0")/lib.sh"
workers=${2:-32}
rounds=${3:-12}
export PROFD_RUN_DIR=$tmp/run
ctl() { "$profctl_bin" "$@"; }
daemon_pid=
start_daemon() {
  "$profd" --save-path "$tmp/save" --node node1 2>>"$tmp/profd.log" &
  daemon_pid=$!
  pids+=($daemon_pid)
  # control.sock: bound after worker.sock, so both listen once it is there
  for _ in $(seq 200); do [ -S "$tmp/run/control.sock" ] && return 0; sleep 0.05; done
  fail "profd did not start"
}
running() { ctl --json status 2>/dev/null | json 'sum(1 for r in d["ranks"] if r["state"] == "running")' 2>/dev/null; }
# restarts WHAT WANT COUNT START PIDVAR: wait up to 15 s for COUNT to
# print WANT; then $rounds times kill -9 the process whose pid is in
# $PIDVAR, START it again and wait for WANT again. It ends with the last
# one up: a SIGTERM from check_logs to the shell's fork of a process just
# started, before its exec, ran this script's traps in that fork (its
# cleanup killed the test's processes and removed $tmp).
restarts() {
  local what=$1 want=$2 count=$3 start=$4 pidvar=$5 r n
  for r in $(seq 0 "$rounds"); do
    if [ "$r" -gt 0 ]; then
      sleep "0.$((RANDOM % 10))"
      kill -9 "${!pidvar}"
      wait "${!pidvar}" 2>/dev/null || true
      sleep "0.$((RANDOM % 10))"
      $start
    fi
    n=
    for _ in $(seq 300); do # 15 s
      n=$($count || true)
      [ "$n" = "$want" ] && break
      sleep 0.05
    done
    [ "$n" = "$want" ] || fail "round $r: ${n:-no} $what of $want back within 15 s of the restart"
  done
}
start_daemon
"$sim" --layout "actor:$workers" --steps 1000000 --rate 10 >"$tmp/sim.log" 2>&1 &
pids+=($!)
restarts "worker(s)" "$workers" running start_daemon daemon_pid
echo "ok: $rounds restarts under $workers workers, every worker back each time"

# The same for node daemons' links (daemon/net/reqc.c) to a coordinator
# killed and started again: every node joins it again each time.
nodes=8
port=$(free_port)
coordinator_start
for i in $(seq "$nodes"); do node_start "$i"; done
joined() { # nodes whose link to the coordinator is up, by their own status
  local i k=0
  for i in $(seq "$nodes"); do
    [ "$("$profctl_bin" --url "ipc://$tmp/n$i/run/control.sock" --json status 2>/dev/null |
      json 'd["connected"]' 2>/dev/null)" = True ] && k=$((k + 1))
  done
  echo "$k"
}
restarts "node(s)" "$nodes" joined coordinator_start coord_pid
echo "ok: $rounds restarts of a coordinator under $nodes nodes, every node back each time"
check_logs
echo "system test reconnect: OK"
