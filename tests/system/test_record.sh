#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, a window's record of step times is the window's:
#  1. `profctl report` on a window 1,000 steps old writes report.html byte
#     for byte as the window's end wrote it, and leaves steps.json as it was
#     (the live history keeps 128 steps per rank: rebuilt from it, every
#     time was -1);
#  2. so does it after the daemon restarts (the record's checksum is
#     journaled with the window);
#  3. a steps.json changed since is refused, in one line, and kept;
#  4. a window with no record (journaled before records were kept) is not
#     rebuilt from a live history holding fewer times: refused, kept;
#  5. a coordinator and two nodes, actor rank 3 five times slower than ranks
#     0-2 (profd-sim --slow): a window on rank 3's steps ends when the
#     healthy ranks are more than 128 steps past it, and its steps.json
#     still holds every rank's times over the window's steps, rank 3's
#     over twice the healthy ones'.
# Usage: test_record.sh BUILD_DIR
lib_name=record
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
profctl() { "$profctl_bin" "$@"; }
start_daemon() {
  "$profd" --save-path "$tmp/out" --log-level info 2>>"$tmp/profd.log" &
  daemon_pid=$!
  pids+=($daemon_pid)
  for _ in $(seq 100); do profctl status >/dev/null 2>&1 && return 0; sleep 0.05; done
  fail "profd did not start"
}
step_max() { profctl --json status | json 'max([(r["step"] or 0) for r in d["ranks"]] + [0])'; }

start_daemon
"$sim" --layout actor:2 --steps 100000 --rate 250 --substeps 1 --trace-bytes 1024 \
  >"$tmp/sim.log" 2>&1 &
sim_pid=$!
pids+=($sim_pid)
for _ in $(seq 200); do [ "$(step_max)" -ge 20 ] 2>/dev/null && break; sleep 0.05; done
profctl start --next 2 --tool sim >"$tmp/w.txt" || fail "start"
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w.txt")
name=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w.txt")
dir=$tmp/out/default/$name
profctl wait "$id" --timeout 60 >/dev/null || fail "wait"
# the record is final once the steps after the window are in and the report
# is written again (within the daemon's 1 s tick): windows ID shows its
# checksum once that is written
final() { [ "$(profctl --json windows "$id" | json 'd["windows"][0].get("record") or ""')" != "" ]; }
wait_until "the window's record to be final" 40 final
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d['steps'][1] < d['window'][1] - 1 + 8)" \
  "$dir/steps.json" || fail "steps.json did not get the 8 steps after the window: $(cat "$dir/steps.json")"
cp "$dir/steps.json" "$tmp/steps0.json"
cp "$dir/report.html" "$tmp/report0.html"
/usr/bin/python3 - "$tmp/steps0.json" <<'PY' || fail "steps.json at the window's end"
import json, sys
s = json.load(open(sys.argv[1]))
first, end = s["window"]
lo = s["steps"][0]
for r in s["ranks"]:
    assert all(r["step_us"][st - lo] > 0 for st in range(first, end)), (first, end, lo, r)
PY

# 1. 1,000 steps later
last=$(/usr/bin/python3 -c "import json; print(json.load(open('$tmp/steps0.json'))['steps'][1])")
for _ in $(seq 600); do [ "$(step_max)" -ge $((last + 1000)) ] && break; sleep 0.05; done
[ "$(step_max)" -ge $((last + 1000)) ] || fail "the job did not run 1,000 more steps"
rm "$dir/report.html"
[ "$(profctl report "$id")" = "$dir/report.html" ] || fail "profctl report 1,000 steps later"
cmp "$tmp/steps0.json" "$dir/steps.json" || fail "steps.json changed 1,000 steps later"
cmp "$tmp/report0.html" "$dir/report.html" || fail "report.html differs 1,000 steps later"

# 2. the daemon restarts: the record is still the window's
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
start_daemon
rm "$dir/report.html"
[ "$(profctl report "$id")" = "$dir/report.html" ] || fail "profctl report after a restart"
cmp "$tmp/steps0.json" "$dir/steps.json" || fail "steps.json changed after a restart"
cmp "$tmp/report0.html" "$dir/report.html" || fail "report.html differs after a restart"

# 3. a record changed since: refused, kept
echo >>"$dir/steps.json"
cp "$dir/steps.json" "$tmp/steps1.json"
# report_refused WHAT ERROR: profctl report of the window exits 1 with ERROR
# and leaves its steps.json as it was
report_refused() {
  local rc=0
  profctl report "$id" >/dev/null 2>"$tmp/err" || rc=$?
  [ "$rc" = 1 ] || fail "report of $1: exit $rc"
  [ "$(cat "$tmp/err")" = "$2" ] || fail "report of $1: $(cat "$tmp/err")"
  cmp "$tmp/steps1.json" "$dir/steps.json" || fail "a refused report touched steps.json"
}
report_refused "a changed record" "profctl: $name/steps.json, the window's record of step times, is not what the window's end wrote: the report is not written from anything else (ESTATE)"
kill "$sim_pid" 2>/dev/null || true

# 4. a window without a record (journaled before records were kept: the
#    journal's record fields removed), its steps long gone from the live
#    history: rebuilt from that history it would hold less than its
#    steps.json, so it is refused and the file kept
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
journal=$(ls "$tmp"/out/.profd-*.journal)
grep -q '"record":"xxh64:' "$journal" || fail "the journal does not keep the window's record"
sed -i 's/,"record":"xxh64:[0-9a-f]*","record_bytes":[0-9]*//g' "$journal"
grep -q '"record":' "$journal" && fail "the test could not strip the record from the journal"
start_daemon
known=$(/usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for r in d['ranks'] for v in r['step_us'] + r.get('phase_us', []) if v > 0))" "$dir/steps.json")
report_refused "a window without a record, from an empty history" "profctl: the step-time history now holds 0 of the $known step and phase times in $name/steps.json: the report is kept as it is (ESTATE)"

# 5. a coordinator, two nodes, a straggler far behind
port=$(free_port)
ctl() { "$profctl_bin" --url "ipc://$tmp/c/run/control.sock" "$@"; }
coordinator_start --log-level info
for _ in $(seq 100); do ctl status >/dev/null 2>&1 && break; sleep 0.05; done
node_start 0
node_start 1
"$sim" --url "ipc://$tmp/n0/run/worker.sock" --host hosta --layout actor:2 --steps 100000 \
  --rate 50 --substeps 1 --trace-bytes 1024 >"$tmp/sim0.log" 2>&1 &
pids+=($!)
"$sim" --url "ipc://$tmp/n1/run/worker.sock" --host hostb --layout actor:2 --rank-offset 2 \
  --steps 100000 --rate 50 --substeps 1 --slow 3:5 --trace-bytes 1024 >"$tmp/sim1.log" 2>&1 &
pids+=($!)
rstep() { ctl --json status | json "max([(r['step'] or 0) for r in d['ranks'] if r['rank'] == $1] + [0])"; }
for _ in $(seq 300); do
  [ "$(rstep 3)" -ge 12 ] 2>/dev/null && [ "$(rstep 0)" -ge 60 ] && break
  sleep 0.1
done
s3=$(rstep 3)
s=$((s3 + 30))
ctl start --steps "$s:$((s + 2))" --ranks 3 --tool sim >"$tmp/w4.txt" || fail "start on rank 3"
id4=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w4.txt")
name4=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w4.txt")
ctl wait "$id4" --timeout 60 >/dev/null || fail "wait for the straggler's window"
h0=$(rstep 0)
[ "$h0" -gt $((s + 2 + 8 + 128)) ] ||
  fail "the healthy ranks are only at step $h0 at the window's end (window $s-$((s + 1))): no test"
dir=$tmp/c/save/default/$name4
doc=$dir/steps.json
cat >"$tmp/check4.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = int(sys.argv[2])
assert d["window"] == [s, s + 2], d["window"]
lo = d["steps"][0]
ranks = {r["rank"]: r for r in d["ranks"]}
assert sorted(ranks) == [0, 1, 2, 3], sorted(ranks)
got = {k: [r["step_us"][st - lo] for st in (s, s + 1)] for k, r in ranks.items()}
assert all(us > 0 for v in got.values() for us in v), got
# 50 steps/s, rank 3 five times slower: relations, not bands (a loaded machine)
assert all(got[3][i] > 2 * got[k][i] for k in (0, 1, 2) for i in (0, 1)), got
assert ranks[3]["member"] and not ranks[0]["member"]
assert ranks[3]["ratio"] > 2 and all(ranks[k]["ratio"] < 1.5 for k in (0, 1, 2)), \
    [r["ratio"] for r in d["ranks"]]
PY
# the record is complete once rank 3's steps after the window are in: the
# report is written again then (the first, at the window's end, may lack
# rank 3's last step: the coordinator hears of it with the next summary)
for _ in $(seq 150); do /usr/bin/python3 "$tmp/check4.py" "$doc" "$s" 2>/dev/null && break; sleep 0.1; done
/usr/bin/python3 "$tmp/check4.py" "$doc" "$s" || fail "the straggler's steps.json: $(cat "$doc")"
check_logs
echo "system test record: OK"
