#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, the metrics endpoint: off unless listen.metrics is set; with
# --metrics a real scrape with curl passes promtool check metrics and holds
# the exact figures of a run (ranks by role, windows and captures, bytes,
# step events); a bad URL stops the daemon at start. Guards: the cancelled
# windows' gauge dropped (a window stopped before it began is counted
# cancelled); min and max step time swapped (actor rank 2 runs 3x slower:
# min < p50 < max). Times are asserted as relations, never as a bound a
# loaded machine can cross.
# Usage: test_metrics.sh BUILD_DIR
lib_name=metrics
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
profctl() { "$profctl_bin" "$@"; }
need_tool curl curl
need_tool promtool prometheus

port=$(free_port)
url=http://127.0.0.1:$port/metrics

# a bad URL: one line, exit 1
set +e
"$profd" --save-path "$tmp/out" --metrics ftp://127.0.0.1:1 2>"$tmp/bad.log"
rc=$?
set -e
[ "$rc" = 1 ] || fail "a bad listen.metrics: exit $rc"
grep -q "listen.metrics: expected http://HOST:PORT, found 'ftp://127.0.0.1:1'" "$tmp/bad.log" ||
  fail "bad URL message: $(cat "$tmp/bad.log")"

# off by default
"$profd" --save-path "$tmp/out" 2>"$tmp/profd0.log" &
p0=$!
pids+=($p0)
up() { profctl status >/dev/null 2>&1; }
wait_until "profd to answer status" 30 up
if curl -s -o /dev/null "http://127.0.0.1:$port/metrics"; then fail "metrics served by default"; fi
kill -TERM "$p0"
wait "$p0" || fail "profd exited non-zero"

"$profd" --save-path "$tmp/out" --metrics "http://127.0.0.1:$port" --log-level info \
  2>"$tmp/profd.log" &
pids+=($!)
wait_until "profd to answer status" 30 up
"$sim" --layout actor:3,rollout:2 --steps 100000 --rate 20 --substeps 1 --trace-bytes 8192 \
  --slow 2:3 >"$tmp/sim.log" 2>&1 &
pids+=($!)
# every rank with a step time: the step-time gauges have their ranks
wait_until "5 ranks with a step time" 60 ranks_measured 5
profctl start --next 2 --tool sim >"$tmp/w.txt" || fail "start"
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w.txt")
profctl wait "$id" --timeout 60 >/dev/null || fail "wait"
# a window far ahead, stopped before it began: cancelled
far=$(($(profctl --json status | json 'max(r["step"] for r in d["ranks"])') + 100000))
profctl start --steps "$far:$((far + 1))" --tool sim >"$tmp/w2.txt" || fail "start far"
id2=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w2.txt")
profctl stop "$id2" >"$tmp/stop.txt" 2>&1 || fail "stop $id2: $(cat "$tmp/stop.txt")"
cancelled() { [ "$(profctl --json windows "$id2" | json 'd["windows"][0]["state"]')" = cancelled ]; }
wait_until "window $id2 to be cancelled" 30 cancelled

curl -sf -D "$tmp/headers.txt" -o "$tmp/metrics.txt" "$url" || fail "curl $url"
grep -qi "^content-type: text/plain; version=0.0.4; charset=utf-8" "$tmp/headers.txt" ||
  fail "content type: $(cat "$tmp/headers.txt")"
promtool check metrics <"$tmp/metrics.txt" >"$tmp/promtool.txt" 2>&1 ||
  fail "promtool check metrics: $(cat "$tmp/promtool.txt")"
[ ! -s "$tmp/promtool.txt" ] || fail "promtool has remarks: $(cat "$tmp/promtool.txt")"
bytes=$(profctl --json windows "$id" | json 'd["windows"][0]["bytes"]')
/usr/bin/python3 - "$tmp/metrics.txt" "$bytes" <<'PY' || fail "metrics values"
import re, sys
v = {}
for line in open(sys.argv[1]):
    if not line.startswith("#"):
        k, x = line.rsplit(" ", 1)
        v[k] = float(x)
def eq(k, want):
    assert v.get(k) == want, (k, v.get(k), want)
eq('profd_ranks{job="default",role="actor",state="active"}', 3)
eq('profd_ranks{job="default",role="rollout",state="active"}', 2)
eq('profd_ranks{job="default",role="actor",state="lost"}', 0)
eq('profd_ranks_stalled{job="default",role="actor"}', 0)
eq('profd_windows{state="done"}', 1)
eq('profd_windows{state="cancelled"}', 1)
eq('profd_windows{state="active"}', 0)
eq("profd_windows_done_total", 1)
eq('profd_captures_total{status="complete"}', 5)
eq('profd_captures_total{status="failed"}', 0)
eq("profd_gathered_bytes_total", float(sys.argv[2]))
eq("profd_trigger_windows_total", 0)
eq('profd_errors_total{kind="manifest"}', 0)
eq("profd_step_events_dropped_total", 0)
# a coordinator's state file: none on a daemon that is not one
eq("profd_state_saves_total", 0)
eq('profd_state_members_total{how="encoded"}', 0)
eq('profd_state_members_total{how="unchanged"}', 0)
eq("profd_chunks_deferred_total", 0)
eq("profd_batches_busy_total", 0)
assert v["profd_step_events_total"] > 100, v["profd_step_events_total"]
for role in ("actor", "rollout"):
    p50 = v['profd_step_seconds{job="default",role="%s",stat="p50"}' % role]
    lo, hi = (v['profd_step_seconds{job="default",role="%s",stat="%s"}' % (role, q)] for q in ("min", "max"))
    assert 0.04 <= lo <= p50 <= hi, (role, lo, p50, hi)  # 20 steps/s at most
    if role == "actor":  # rank 2, 3x slower, is the max; the min is another
        assert hi > 2 * lo and hi > 2 * p50, (lo, p50, hi)
    assert v['profd_step{job="default",role="%s"}' % role] > 10
assert any(k.startswith('profd_phase_seconds{job="default",role="actor",phase="update_actor"}') for k in v)
assert [k for k in v if k.startswith("profd_info{")], v
PY
# a second scrape: counters only grow
curl -sf -o "$tmp/metrics2.txt" "$url" || fail "second scrape"
a=$(grep '^profd_step_events_total ' "$tmp/metrics.txt" | cut -d' ' -f2)
b=$(grep '^profd_step_events_total ' "$tmp/metrics2.txt" | cut -d' ' -f2)
[ "$b" -ge "$a" ] || fail "step events went back: $a -> $b"
# only GET /metrics
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/other")
[ "$code" = 404 ] || fail "GET /other: $code"
grep -q "ERROR: AddressSanitizer\|runtime error" "$tmp/profd.log" && fail "sanitizer report"
echo "system test metrics: OK"
