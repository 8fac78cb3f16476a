#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, honest control output about ranks whose process is gone
# (limits.client_timeout_ms 1500, watch_hold_ms 1000):
#  1. a worker killed (SIGKILL: no goodbye, its connection closes) leaves
#     status, top and profd_ranks_stalled; it is counted lost;
#  2. a worker stopped (SIGSTOP: its connection open, silent) leaves them
#     once lost: silent past the client timeout after its held plan poll
#     (the idle worker's liveness) ran out;
# (both stayed "stalled ... for N s" for ever, an alert on the gauge never
# clearing); the live rank is still there, not stalled.
#  3. a window whose captures all failed (its one rank killed before the
#     window's first step): `profctl wait` exits 3 printing each capture's reason, `profctl
#     windows ID` prints them under their rank, and `profctl merge` exits 1
#     saying there is nothing to merge (it said "0 event(s)", exit 0).
# Usage: test_gone.sh BUILD_DIR
lib_name=gone
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
profctl() { "$profctl_bin" "$@"; }
mport=$(free_port)
printf 'limits:\n  client_timeout_ms: 1500\n  watch_hold_ms: 1000\n' >"$tmp/profd.yaml"
"$profd" --config "$tmp/profd.yaml" --save-path "$tmp/out" --metrics "http://127.0.0.1:$mport" \
  --log-level info 2>"$tmp/profd.log" &
pids+=($!)
wait_until "profd to answer" 10 profctl status
"$sim" --layout actor:3 --steps 100000 --rate 20 --substeps 1 --trace-bytes 1024 \
  >"$tmp/sim.log" 2>&1 &
pids+=($!)
stepping() { [ "$(profctl --json status | json 'sum(1 for r in d["ranks"] if (r["step"] or 0) > 5)')" = 3 ]; }
wait_until "3 ranks stepping" 20 stepping
pid_of() { profctl --json status | json "[r['pid'] for r in d['ranks'] if r['rank'] == $1 and r['state'] != 'lost'][0]"; }
p0=$(pid_of 0)
p1=$(pid_of 1)
# a stopped worker would keep its sim (and the cleanup's wait) for ever
trap 'kill -KILL "$p1" 2>/dev/null || true; lib_cleanup' EXIT
metric() { # NAME{LABELS}: its value, 0 when absent
  curl -s "http://127.0.0.1:$mport/metrics" |
    /usr/bin/python3 -c "import sys; print(sum(float(l.split()[-1]) for l in sys.stdin if l.startswith('$1')))"
}
# the live figures: ranks of the role, stalled, from top --once
top_is() { # RANKS STALLED
  profctl top --once >"$tmp/top.txt" &&
    grep -qE "^profd top: node [^ ]+ \(standalone\), $1 rank\(s\), $2 stalled " "$tmp/top.txt" &&
    grep -qE "^default +actor +$1 " "$tmp/top.txt"
}
status_clear() { # no rank listed as stalled
  profctl status >"$tmp/status.txt" && ! grep -q "^stalled:" "$tmp/status.txt"
}
stalled_is() { [ "$(metric 'profd_ranks_stalled{job="default",role="actor"}')" = "$1" ]; }
lost_is() { [ "$(metric 'profd_ranks{job="default",role="actor",state="lost"}')" = "$1" ]; }

# 1. killed: its connection closes
kill -KILL "$p0"
wait_until "rank 0 lost" 10 lost_is 1.0
wait_until "top without rank 0" 10 top_is 2 0
status_clear || fail "status lists a killed rank as stalled: $(cat "$tmp/status.txt")"
stalled_is 0.0 || fail "profd_ranks_stalled counts a killed rank: $(metric profd_ranks_stalled)"
sleep 3 # well past the timeout and the stall threshold (2 s): still not stalled
top_is 2 0 || fail "top 3 s after: $(cat "$tmp/top.txt")"
status_clear || fail "status 3 s after: $(cat "$tmp/status.txt")"
stalled_is 0.0 || fail "profd_ranks_stalled 3 s after: $(metric profd_ranks_stalled)"

# 2. stopped: silent past the client timeout
kill -STOP "$p1"
wait_until "rank 1 lost" 10 lost_is 2.0
grep -q "rank 1 (actor, pid $p1) was silent for" "$tmp/profd.log" ||
  fail "the daemon does not say rank 1 was silent"
wait_until "top without rank 1" 10 top_is 1 0
status_clear || fail "status lists a silent rank as stalled: $(cat "$tmp/status.txt")"
stalled_is 0.0 || fail "profd_ranks_stalled counts a silent rank: $(metric profd_ranks_stalled)"
kill -KILL "$p1"

# 3. a window whose captures all failed
p2=$(pid_of 2)
s=$(( $(profctl --json status | json "[r['step'] for r in d['ranks'] if r['rank'] == 2 and r['state'] != 'lost'][0]") + 60 ))
profctl start --steps "$s:$((s + 2))" --ranks 2 --tool sim >"$tmp/w.txt" || fail "start"
kill -KILL "$p2" # before the window's first step: its capture fails
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w.txt")
name=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w.txt")
rc=0
profctl wait "$id" --timeout 60 >"$tmp/wait.out" 2>"$tmp/wait.err" || rc=$?
[ "$rc" = 3 ] || fail "wait: exit $rc: $(cat "$tmp/wait.out" "$tmp/wait.err")"
reason="closed its connection"
grep -qE "^profctl: $name: rank 2 actor \([^)]+\): failed(, steps? [0-9-]+)?: $reason" "$tmp/wait.err" ||
  fail "wait does not print the capture's reason: $(cat "$tmp/wait.err")"
profctl windows "$id" >"$tmp/windows.txt" || fail "windows $id"
grep -qE "^ +failed(, steps? [0-9-]+)?: $reason" "$tmp/windows.txt" ||
  fail "windows $id does not print the capture's reason: $(cat "$tmp/windows.txt")"
rc=0
profctl merge "$id" >"$tmp/merge.out" 2>"$tmp/merge.err" || rc=$?
[ "$rc" = 1 ] || fail "merge of a window with nothing to merge: exit $rc: $(cat "$tmp/merge.out")"
[ "$(cat "$tmp/merge.err")" = "profctl: window $id has nothing to merge: none of its 1 capture(s) has a trace (0 complete, 1 failed, 0 missed, 0 truncated) (ENOENT)" ] ||
  fail "merge message: $(cat "$tmp/merge.err")"
[ ! -e "$tmp/out/default/$name/merged.trace.json" ] || fail "merge wrote a file anyway"
check_logs
echo "system test gone: OK"
