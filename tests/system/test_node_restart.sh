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
#  - a rank that said goodbye, the daemon killed the moment the rank has
#    its reply: not restored (guards: rank_gone ignored on replay; a node
#    replying before its journal holds the goodbye, inside the 100 ms flush
#    delay);
#  - a journal cut in the middle of its last line (a kill during a write)
#    is read back without it, and cut: the next restarts read it cleanly
#    (guards: the torn line left in place, the next record glued to it);
#    one with a corrupt line stops the daemon with one line naming the file
#    and the line.
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
launched=$(date +%s%N)
four_actors
ids=$(ctl --json status | json 'sorted((r["rank"], r["client"]) for r in d["ranks"])')

# window 1: 100 steps (10 s), planned 15 s ahead of any rank by the clock
# (lib.sh's sim_step_bound, not the ranks' reports, which lag on a loaded
# machine): the workers hold the plan before its first step, and a loaded
# machine still kills inside it (the kill's timing is checked below, not
# assumed)
s=$(($(sim_step_bound "$launched" 10) + 150))
last=$((s + 99))
ctl start --steps "$s:$((s + 100))" --tool sim >"$tmp/w1.txt" || fail "start w1"
w1=$(sed -n 's/^started window \([0-9]*\) \([^:]*\):.*/\1/p' "$tmp/w1.txt")
n1=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w1.txt")
p=$((s + 250)) # 15 s after window 1 ends: the daemon is back before it
ctl start --steps "$p:$((p + 2))" --tool sim >"$tmp/w2.txt" || fail "start w2"
w2=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w2.txt")
n2=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w2.txt")
# killed inside window 1; away until its steps are over
in_window() { [ "$(front_step)" -ge $((s + 1)) ]; }
wait_until "the ranks inside window 1 (step $((s + 1)))" 60 in_window
kill -9 "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
kill -TERM "$sim3" # a rank that leaves while the daemon is away
# each of ranks 0..2 has ended its capture (the trace renamed from .part)
last_traces() {
  [ "$(find "$tmp/save/.spool/default/$n1" -name 'rank[012]-*.pt.trace.json' |
    sed 's|.*/\(rank[012]\)-.*|\1|' | sort -u | wc -l)" = 3 ]
}
! last_traces || fail "the kill landed after window 1 ended (step $last): nothing to test"
wait_until "ranks 0..2 to end window 1 (step $last) while the daemon is away" 60 last_traces
start_daemon
ctl --json windows >"$tmp/windows.json"
[ "$(json 'sorted(w["id"] for w in d["windows"])' <"$tmp/windows.json")" = "[$w1, $w2]" ] ||
  fail "the windows after the restart: $(cat "$tmp/windows.json")"
grep -q "journal: instance .*: 2 window(s) and 4 rank(s) kept over a restart" "$tmp/profd.log" ||
  fail "the journal was not read back: $(grep journal "$tmp/profd.log")"
echo "ok: both windows are known after the restart"

# restart_caps MANIFEST NEEDLE...: ranks 0-3 captured, 0-2 complete, rank 3
# failed with a reason that holds every NEEDLE
restart_caps() {
  /usr/bin/python3 - "$@" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
caps = {c["rank"]: c for c in m["captures"]}
assert sorted(caps) == [0, 1, 2, 3], sorted(caps)
for r in (0, 1, 2):
    assert caps[r]["status"] == "complete", caps[r]
assert caps[3]["status"] == "failed", caps[3]
for needle in sys.argv[2:]:
    assert needle in caps[3]["reason"], caps[3]
EOF
}
rc=0
ctl wait "$w1" --timeout 60 >"$tmp/wait1.txt" 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "window 1: exit $rc, $(cat "$tmp/wait1.txt")"
# rank 3 captured too, but left before it could report: marked, not forgotten
restart_caps "$tmp/save/default/$n1/manifest.json" "did not come back within" \
  "of the daemon's restart" || fail "window 1 manifest"
$check "$tmp/save/default/$n1/manifest.json" --first "$s" --last "$last" --ranks 0,1,2 --failed 3 \
  --sim >"$tmp/check1.txt" 2>&1 || fail "window 1's captures: $(cat "$tmp/check1.txt")"
echo "ok: window 1 (captures ended while the daemon was away) completes"
ctl wait "$w2" --timeout 60 >"$tmp/wait2.txt" 2>&1 || true
restart_caps "$tmp/save/default/$n2/manifest.json" "of the daemon's restart" ||
  fail "window 2 manifest"
echo "ok: window 2 (planned before the restart) completes"
now=$(ctl --json status | json 'sorted((r["rank"], r["client"]) for r in d["ranks"] if r["rank"] != 3)')
[ "$now" = "$(echo "$ids" | /usr/bin/python3 -c 'import sys, ast; print([x for x in ast.literal_eval(sys.stdin.read()) if x[0] != 3])')" ] ||
  fail "client ids changed: $ids, now $now"
echo "ok: the workers registered again under their ids"
[ -z "$(find "$tmp/save/default" -name '*.part')" ] || fail ".part files left in the tree"

# ---- a goodbye, then a kill the moment the rank has its reply ---------------
# Its goodbye is in the journal before the reply (not 100 ms later, when
# the flush timer writes it): a daemon killed then does not bring the rank
# back. profd-sim in one process, no leak scan at its exit: it is gone
# within milliseconds of the reply.
# The check needs the goodbye answered: on loaded cores the answer can come
# after the client's close timeout (500 ms), the rank is then gone without
# knowing it and proves nothing: it goes again (--verbose: the library's log
# says whether its goodbye was acknowledged). --open-wait: its 5 steps
# (0.1 s) begin once it is registered; on loaded cores they were over
# before it was, and a rank never registered says no goodbye.
rank7_gone() { [ "$(ctl --json status | json 'sum(r["rank"] == 7 for r in d["ranks"])')" = 0 ]; }
before=$(ctl --json status | json 'sorted(r["rank"] for r in d["ranks"])')
journal=$tmp/save/.profd-node1.journal
for try in 1 2 3 4 5; do
  gone_before=$(grep -c '"kind":"rank_gone"' "$journal" || true)
  ASAN_OPTIONS=detect_leaks=0 "$sim" --layout actor:1 --rank-offset 7 --steps 5 --rate 50 \
    --threads --open-wait 60000 --verbose >"$tmp/sim7.log" 2>&1 || fail "profd-sim of rank 7: $(cat "$tmp/sim7.log")"
  grep -q "goodbye acknowledged" "$tmp/sim7.log" && break
  grep -q "goodbye not acknowledged" "$tmp/sim7.log" ||
    fail "profd-sim of rank 7 said nothing of its goodbye: $(tail -5 "$tmp/sim7.log")"
  [ "$try" -lt 5 ] || fail "5 goodbyes of rank 7 went unanswered: $(grep goodbye "$tmp/sim7.log")"
  wait_until "rank 7 gone after an unanswered goodbye" 60 rank7_gone
done
kill -9 "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
# this goodbye's record, not an earlier unanswered one's
[ "$(grep -c '"kind":"rank_gone"' "$journal" || true)" -gt "$gone_before" ] ||
  fail "no goodbye in the journal: $(tail -c 600 "$journal")"
start_daemon
ranks=$(ctl --json status | json 'sorted(r["rank"] for r in d["ranks"])')
[ "$ranks" = "$before" ] || fail "rank 7 said goodbye, yet after a restart the ranks are $ranks, not $before"
echo "ok: a rank that said goodbye is not brought back by a restart"

# ---- the journal itself ----------------------------------------------------
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
journal=$tmp/save/.profd-node1.journal
printf '{"kind":"window","window":{"id":99,"na' >>"$journal" # cut in the middle
start_daemon
grep -q "a torn last one ignored" "$tmp/profd.log" || fail "the torn line was not ignored"
[ "$(ctl --json windows | json 'len(d["windows"])')" = 2 ] || fail "windows after a torn line"
# the torn line was cut: the records written since start a line of their
# own, and the next restart reads the journal whole
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
start_daemon
[ "$(grep -c "a torn last one ignored" "$tmp/profd.log")" = 1 ] ||
  fail "a torn line again after a clean stop: $(grep journal "$tmp/profd.log")"
[ "$(ctl --json windows | json 'len(d["windows"])')" = 2 ] || fail "windows after a clean restart"
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
bad=$(($(wc -l <"$journal") + 1))
printf 'not a record\n{"kind":"head","head":{"version":1,"instance":"x"}}\n' >>"$journal"
rc=0
# its own bound: a daemon that runs on instead of stopping fails here
timeout 60 "$profd" --config "$tmp/profd.yaml" --save-path "$tmp/save" --node node1 \
  2>"$tmp/corrupt.err" || rc=$?
[ "$rc" != 124 ] || fail "profd ran on for 60 s with a corrupt journal"
[ "$rc" = 1 ] && grep -q "^profd: journal $journal:$bad: not valid JSON (move the file away to start afresh)$" \
  "$tmp/corrupt.err" || fail "a corrupt journal (line $bad): exit $rc, $(cat "$tmp/corrupt.err")"
echo "ok: a torn last line is ignored, a corrupt one stops the daemon"
check_logs
echo "system test node restart: OK"
