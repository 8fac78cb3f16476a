#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, a daemon that stalls (SIGSTOP for longer than
# limits.client_timeout_ms; swap or a slow disk do the same) does not count
# its own stall as its workers' silence:
#  - a window running across the stall, whose captures end while the daemon
#    is stopped, completes with every capture once it runs again;
#  - a window planned for later is captured by every rank;
#  - no rank is lost (they used to be, "was silent for 5016 ms", with every
#    capture of both windows failed and their traces left in the spool);
#  - a worker that exits while the daemon is stopped is lost.
# Usage: test_stall.sh BUILD_DIR
lib_name=stall
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
ctl() { "$profctl_bin" "$@"; }
printf 'limits:\n  client_timeout_ms: 3000\n' >"$tmp/profd.yaml"
"$profd" --config "$tmp/profd.yaml" --save-path "$tmp/save" --node node1 --log-level info \
  2>>"$tmp/profd.log" &
daemon_pid=$!
pids+=($daemon_pid)
for _ in $(seq 200); do ctl status >/dev/null 2>&1 && break; sleep 0.05; done
"$sim" --layout actor:3 --steps 100000 --rate 10 --trace-bytes 20000 >"$tmp/sim.log" 2>&1 &
pids+=($!)
"$sim" --layout actor:1 --rank-offset 3 --steps 100000 --rate 10 --trace-bytes 20000 \
  >"$tmp/sim3.log" 2>&1 &
sim3=$!
pids+=($sim3)
for _ in $(seq 200); do
  [ "$(ctl --json status | json 'sum(1 for r in d["ranks"] if r["step_ms"] > 0)')" = 4 ] && break
  sleep 0.05
done
front() { ctl --json status | json 'max(r["step"] for r in d["ranks"] if r["state"] != "lost")'; }
s=$(($(front) + 40))
ctl start --steps "$s:$((s + 30))" --tool sim --ranks 0,1,2 >"$tmp/w1.txt" || fail "start w1"
w1=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w1.txt")
n1=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w1.txt")
p=$((s + 150))
ctl start --steps "$p:$((p + 2))" --tool sim --ranks 0,1,2 >"$tmp/w2.txt" || fail "start w2"
w2=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w2.txt")
n2=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w2.txt")

# stopped inside window 1 (3 s long), for 5 s: its captures end while it is
# stopped
for _ in $(seq 1200); do [ "$(front)" -ge $((s + 1)) ] && break; sleep 0.01; done
kill -STOP "$daemon_pid"
sleep 1
kill -TERM "$sim3" # rank 3 exits while the daemon is stopped
sleep 4
kill -CONT "$daemon_pid"
for w in "$w1" "$w2"; do
  ctl wait "$w" --timeout 60 >"$tmp/wait$w.txt" 2>&1 || fail "window $w: $(cat "$tmp/wait$w.txt")"
done
for n in "$n1" "$n2"; do
  /usr/bin/python3 - "$tmp/save/default/$n/manifest.json" <<'PY' || fail "window $n manifest"
import json, sys
m = json.load(open(sys.argv[1]))
got = sorted((c["rank"], c["status"]) for c in m["captures"])
assert got == [(0, "complete"), (1, "complete"), (2, "complete")], got
PY
done
echo "ok: both windows complete across a 5 s stall"
ctl --json status >"$tmp/status.json"
got=$(json 'sorted((r["rank"], r["state"]) for r in d["ranks"] if r["rank"] != 3)' <"$tmp/status.json")
[ "$got" = "[(0, 'running'), (1, 'running'), (2, 'running')]" ] || fail "ranks after the stall: $got"
[ "$(json '[r["state"] for r in d["ranks"] if r["rank"] == 3]' <"$tmp/status.json")" = "['lost']" ] ||
  fail "rank 3 exited: $(cat "$tmp/status.json")"
[ -z "$(grep -E 'rank [0-2] .*was silent for' "$tmp/profd.log" || true)" ] ||
  fail "ranks called silent: $(grep 'was silent for' "$tmp/profd.log")"
grep -q "stalled for [0-9]* ms" "$tmp/profd.log" || fail "the stall was not logged"
echo "ok: no rank lost to the stall; the one that exited is lost"
[ -z "$(find "$tmp/save/default" -name '*.part')" ] || fail ".part files left in the tree"
check_logs
echo "system test stall: OK"
