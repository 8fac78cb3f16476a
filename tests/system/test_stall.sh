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
# long polls held 500 ms at most: during the stall every rank's poll runs
# out, so its silence is judged from its last message, and only the stall's
# credit keeps it (guards: the stall not credited at the daemon's call site,
# credit_stall; a rank holding a poll counts as live whatever the credit)
printf 'limits:\n  client_timeout_ms: 3000\n  watch_hold_ms: 500\n' >"$tmp/profd.yaml"
"$profd" --config "$tmp/profd.yaml" --save-path "$tmp/save" --node node1 --log-level info \
  2>>"$tmp/profd.log" &
daemon_pid=$!
pids+=($daemon_pid)
up() { ctl status >/dev/null 2>&1; }
wait_until "profd to answer status" 30 up
four_actors
s=$(($(front_step) + 40))
ctl start --steps "$s:$((s + 30))" --tool sim --ranks 0,1,2 >"$tmp/w1.txt" || fail "start w1"
w1=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w1.txt")
n1=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w1.txt")
p=$((s + 150))
ctl start --steps "$p:$((p + 2))" --tool sim --ranks 0,1,2 >"$tmp/w2.txt" || fail "start w2"
w2=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w2.txt")
n2=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w2.txt")

# stopped inside window 1 (3 s long), for 5 s: its captures end while it is
# stopped
in_window() { [ "$(front_step)" -ge $((s + 1)) ]; }
wait_until "the ranks inside window 1 (step $((s + 1)))" 60 in_window
# the stimulus: 5 s stopped (past the 3 s client timeout), not a wait
kill -STOP "$daemon_pid"
sleep 1
kill -TERM "$sim3" # rank 3 exits while the daemon is stopped
sleep 4
kill -CONT "$daemon_pid"
for w in "$w1" "$w2"; do
  ctl wait "$w" --timeout 60 >"$tmp/wait$w.txt" 2>&1 || fail "window $w: $(cat "$tmp/wait$w.txt") $(ctl --json windows "$w")"
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
