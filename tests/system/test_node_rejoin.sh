#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, under a coordinator a node daemon killed (SIGKILL) and
# started again: its ranks register again in time for windows that start
# later, and those windows capture them (they failed "lost with node node1
# (restarted)", on a window starting 8 s after the restart).
#  1. the node comes back with its journal: the same node to the
#     coordinator, nothing lost;
#  2. the node comes back without it (the journal moved away: a new
#     daemon): its workers, the same processes, are bound again to the
#     windows that had not begun; nothing is failed for them.
# The links are plain tcp:// on loopback (--insecure-tcp-links).
# Usage: test_node_rejoin.sh BUILD_DIR
lib_name=rejoin
. "$(dirname "$0")/lib.sh"
port=$(free_port)
ctl() { "$profctl_bin" --url "ipc://$tmp/c/run/control.sock" "$@"; }
coordinator_start
for _ in $(seq 200); do ctl status >/dev/null 2>&1 && break; sleep 0.05; done
for i in 1 2; do
  node_start $i
  PROFD_RUN_DIR=$tmp/n$i/run "$sim" --layout actor:2 --rank-offset $(((i - 1) * 2)) \
    --steps 100000 --rate 10 --trace-bytes 4096 --host "host$i" >"$tmp/sim$i.log" 2>&1 &
  pids+=($!)
done
active() { ctl --json status | json 'sum(1 for r in d["ranks"] if r["state"] == "running")'; }
for _ in $(seq 300); do [ "$(active)" = 4 ] && break; sleep 0.05; done
[ "$(active)" = 4 ] || fail "4 ranks did not register"

rejoin() { # WHAT [--fresh]
  local s id name rc=0
  s=$(($(ctl --json status | json 'max(r["step"] for r in d["ranks"])') + 80))
  ctl start --steps "$s:$((s + 2))" --tool sim >"$tmp/w.txt" || fail "$1: start"
  id=$(window_id <"$tmp/w.txt")
  name=$(window_name <"$tmp/w.txt")
  poll 100 4 query 'd["windows"][0]["selected"]' ctl --json windows "$id" || true
  kill -9 "${node_pid[1]}"
  wait "${node_pid[1]}" 2>/dev/null || true
  [ "${2:-}" = --fresh ] && mv "$tmp/n1/save/.profd-node1.journal" "$tmp/node1.journal.moved"
  sleep 0.5
  node_start 1
  ctl wait "$id" --timeout 60 >"$tmp/wait.txt" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { ctl --json windows "$id" >&2; fail "$1: $(cat "$tmp/wait.txt"); $(cat "$tmp/c/save/default/$name/manifest.json" 2>/dev/null)"; }
  $check "$tmp/c/save/default/$name/manifest.json" --first "$s" --last $((s + 1)) \
    --ranks 0,1,2,3 --sim || fail "$1: manifest"
  echo "ok: $1: every rank of node1 captured the window that began 8 s later"
}
rejoin "node1 back with its journal"
grep -q "coord: node node1 restarted" "$tmp/coordinator.log" &&
  fail "the coordinator took node1 for a new daemon"
rejoin "node1 back without its journal" --fresh
grep -q "coord: node node1 restarted" "$tmp/coordinator.log" ||
  fail "without its journal node1 should be a new daemon to the coordinator"
check_logs
echo "system test node rejoin: OK"
