#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, a daemon killed (SIGKILL) and started again under running
# workers forgets nothing (its journal, <save_path>/.profd-<node>.journal):
#  - a window running when it died, whose captures ended while it was away:
#    the workers report them when it is back, the window completes with
#    every capture (they used to vanish: no manifest, no status, files left
#    in the spool);
#  - a window planned for later: still there (profctl windows, wait) and
#    captured by every rank that came back;
#  - a rank that exited while the daemon was away: failed with the reason
#    ("did not come back within ... of the daemon's restart");
#  - the workers registered again under their client ids;
#  - a journal cut in the middle of its last line (a kill during a write)
#    is read back without it; one with a corrupt line stops the daemon with
#    one line naming the file and the line.
# Usage: test_node_restart.sh BUILD_DIR
lib_name=noderestart
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
ctl() { "$profctl_bin" "$@"; }
printf 'limits:\n  client_timeout_ms: 3000\n' >"$tmp/profd.yaml"
daemon_pid=
start_daemon() {
  "$profd" --config "$tmp/profd.yaml" --save-path "$tmp/save" --node node1 --log-level info \
    2>>"$tmp/profd.log" &
  daemon_pid=$!
  pids+=($daemon_pid)
  for _ in $(seq 200); do ctl status >/dev/null 2>&1 && return 0; sleep 0.05; done
  fail "profd did not start"
}
start_daemon
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
ids=$(ctl --json status | json 'sorted((r["rank"], r["client"]) for r in d["ranks"])')
front() { ctl --json status | json 'max(r["step"] for r in d["ranks"] if r["state"] != "lost")'; }

s=$(($(front) + 15))
ctl start --steps "$s:$((s + 4))" --tool sim >"$tmp/w1.txt" || fail "start w1"
w1=$(sed -n 's/^started window \([0-9]*\) \([^:]*\):.*/\1/p' "$tmp/w1.txt")
n1=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w1.txt")
p=$((s + 150))
ctl start --steps "$p:$((p + 2))" --tool sim >"$tmp/w2.txt" || fail "start w2"
w2=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w2.txt")
n2=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w2.txt")
# killed inside window 1; away until its steps are over
for _ in $(seq 400); do [ "$(front)" -ge $((s + 1)) ] && break; sleep 0.01; done
kill -9 "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
kill -TERM "$sim3" # a rank that leaves while the daemon is away
sleep 2
start_daemon
ctl --json windows >"$tmp/windows.json"
[ "$(json 'sorted(w["id"] for w in d["windows"])' <"$tmp/windows.json")" = "[$w1, $w2]" ] ||
  fail "the windows after the restart: $(cat "$tmp/windows.json")"
grep -q "journal: instance .*: 2 window(s) and 4 rank(s) kept over a restart" "$tmp/profd.log" ||
  fail "the journal was not read back: $(grep journal "$tmp/profd.log")"
echo "ok: both windows are known after the restart"

rc=0
ctl wait "$w1" --timeout 60 >"$tmp/wait1.txt" 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "window 1: exit $rc, $(cat "$tmp/wait1.txt")"
/usr/bin/python3 - "$tmp/save/default/$n1/manifest.json" <<'EOF' || fail "window 1 manifest"
import json, sys
m = json.load(open(sys.argv[1]))
caps = {c["rank"]: c for c in m["captures"]}
assert sorted(caps) == [0, 1, 2, 3], sorted(caps)
for r in (0, 1, 2):
    assert caps[r]["status"] == "complete", caps[r]
# rank 3 captured too, but left before it could report: marked, not forgotten
assert caps[3]["status"] == "failed", caps[3]
assert "did not come back within" in caps[3]["reason"] and "of the daemon's restart" in caps[3]["reason"], caps[3]
EOF
$check "$tmp/save/default/$n1/manifest.json" --first "$s" --last $((s + 3)) --ranks 0,1,2 --sim \
  2>/dev/null || true
echo "ok: window 1 (captures ended while the daemon was away) completes"
ctl wait "$w2" --timeout 60 >"$tmp/wait2.txt" 2>&1 || true
/usr/bin/python3 - "$tmp/save/default/$n2/manifest.json" <<'EOF' || fail "window 2 manifest"
import json, sys
m = json.load(open(sys.argv[1]))
caps = {c["rank"]: c for c in m["captures"]}
assert sorted(caps) == [0, 1, 2, 3], sorted(caps)
for r in (0, 1, 2):
    assert caps[r]["status"] == "complete", caps[r]
assert caps[3]["status"] == "failed" and "of the daemon's restart" in caps[3]["reason"], caps[3]
EOF
echo "ok: window 2 (planned before the restart) completes"
now=$(ctl --json status | json 'sorted((r["rank"], r["client"]) for r in d["ranks"] if r["rank"] != 3)')
[ "$now" = "$(echo "$ids" | /usr/bin/python3 -c 'import sys, ast; print([x for x in ast.literal_eval(sys.stdin.read()) if x[0] != 3])')" ] ||
  fail "client ids changed: $ids, now $now"
echo "ok: the workers registered again under their ids"
[ -z "$(find "$tmp/save/default" -name '*.part')" ] || fail ".part files left in the tree"

# ---- the journal itself ----------------------------------------------------
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
journal=$tmp/save/.profd-node1.journal
printf '{"kind":"window","window":{"id":99,"na' >>"$journal" # cut in the middle
start_daemon
grep -q "a torn last one ignored" "$tmp/profd.log" || fail "the torn line was not ignored"
[ "$(ctl --json windows | json 'len(d["windows"])')" = 2 ] || fail "windows after a torn line"
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
printf 'not a record\n{"kind":"head","head":{"version":1,"instance":"x"}}\n' >>"$journal"
rc=0
"$profd" --config "$tmp/profd.yaml" --save-path "$tmp/save" --node node1 2>"$tmp/corrupt.err" || rc=$?
[ "$rc" = 1 ] && grep -q "^profd: journal $journal:[0-9]*: not valid JSON (move the file away to start afresh)$" \
  "$tmp/corrupt.err" || fail "a corrupt journal: exit $rc, $(cat "$tmp/corrupt.err")"
echo "ok: a torn last line is ignored, a corrupt one stops the daemon"
check_logs
echo "system test node restart: OK"
