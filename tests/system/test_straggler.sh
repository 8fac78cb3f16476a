#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, the straggler trigger: profd-sim slows actor rank 2 to 4x its
# step time from step 40; the daemon, its trigger enabled in its config file
# (triggers.straggler.*), opens exactly one window, on rank 2 and one healthy
# actor, whose manifest says why; the rate limit keeps it at one. Then
# profctl watch disarms and re-arms it on demand, with a 1 s interval: once
# its window is done the next one opens (guards: the trigger never seeing
# its window as over, which kept it at one window for good).
# Usage: test_straggler.sh BUILD_DIR
lib_name=straggler
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
profctl() { "$profctl_bin" "$@"; }

cat >"$tmp/profd.yaml" <<YAML
save_path: $tmp/out
triggers:
  straggler:
    enable: true
    roles: [actor]
    factor: 2.0
    consecutive: 3
    steps: 2
    interval_ms: 600000
    tool: sim
YAML
"$profd" --config "$tmp/profd.yaml" --log-level info 2>"$tmp/profd.log" &
pids+=($!)
up() { profctl status >/dev/null 2>&1; }
wait_until "profd to answer status" 30 up
profctl top --once >"$tmp/top0.txt" || fail "top"
grep -q "^straggler trigger: armed: a rank over 2.00x its role's median for 3 step(s) (roles actor)" \
  "$tmp/top0.txt" || fail "trigger not armed from the config: $(cat "$tmp/top0.txt")"

"$sim" --layout actor:4,rollout:2 --steps 100000 --rate 20 --substeps 1 --slow 2:4@40 \
  --trace-bytes 4096 >"$tmp/sim.log" 2>&1 &
pids+=($!)
windows() { profctl --json windows | json 'len(d["windows"])'; }
windows_at_least() { [ "$(windows)" -ge "$1" ]; }
wait_until "the trigger's first window" 120 windows_at_least 1
[ "$(windows)" = 1 ] || fail "no window opened for the straggler ($(windows) window(s))"
id=$(profctl --json windows | json 'd["windows"][0]["id"]')
profctl wait "$id" --timeout 60 >"$tmp/wait.txt" || fail "wait: $(cat "$tmp/wait.txt")"
man=$(profctl --json windows "$id" | json 'd["windows"][0]["path"]')/manifest.json
/usr/bin/python3 - "$man" <<'PY' || fail "the trigger's window"
import json, re, sys
m = json.load(open(sys.argv[1]))
w = m["window"]
src = w["source"]
g = re.match(r"straggler trigger: rank 2 \(actor\) took at least ([0-9.]+) ms per step for 3 "
             r"step\(s\), over 2\.00 x the median of the role's other ranks \(([0-9.]+) ms\); "
             r"healthy peer rank ([013]) \(([0-9.]+) ms\)$", src)
assert g, src
slow, p50, peer = float(g.group(1)), float(g.group(2)), int(g.group(3))
assert slow > 2 * p50 and 40 <= p50 <= 70, (slow, p50)
assert w["roles"] == ["actor"] and w["tool"] == "sim" and w["steps"][1] - w["steps"][0] == 2, w
ranks = sorted(c["rank"] for c in m["captures"])
assert ranks == sorted([2, peer]), ranks
assert all(c["status"] == "complete" for c in m["captures"]), m["captures"]

PY
grep -q "trigger: window $id opened: straggler trigger: rank 2 (actor)" "$tmp/profd.log" ||
  fail "the log does not say why the window was opened"
# the report says it too
grep -q 'id="source">straggler trigger: rank 2 (actor)' "$(dirname "$man")/report.html" ||
  fail "report.html does not say why the window was opened"
# the straggler stays slow: the rate limit holds it at one window for 60
# more steps (3 s at 20 steps/s; counted in steps, as a loaded machine runs)
front() { profctl --json status | json 'max(r["step"] for r in d["ranks"])'; }
later=$(($(front) + 60))
past() { [ "$(front)" -ge "$later" ]; }
wait_until "60 more steps of the slow rank (to step $later)" 120 past
[ "$(windows)" = 1 ] || fail "the rate limit let $(windows) windows through"

# on demand: off, then armed again with a short interval: a second window
profctl watch --off >"$tmp/off.txt" || fail "watch --off"
grep -q "^straggler trigger: off; 1 window(s) opened, the last $id" "$tmp/off.txt" ||
  fail "watch --off: $(cat "$tmp/off.txt")"
profctl watch --roles actor --factor 2 --consecutive 3 --steps 1 --interval 1 --tool sim \
  >"$tmp/on.txt" || fail "watch"
grep -q "^straggler trigger: armed: a rank over 2.00x its role's median for 3 step(s) (roles actor) gets a window of 1 step(s) (tool sim) with a healthy peer; at most one every 1 s; 0 window(s) opened" \
  "$tmp/on.txt" || fail "watch: $(cat "$tmp/on.txt")"
wait_until "the re-armed trigger's window" 60 windows_at_least 2
[ "$(profctl --json windows | json 'd["windows"][1]["selected"]')" = 2 ] || fail "second window"
id2=$(profctl --json windows | json 'd["windows"][1]["id"]')
profctl wait "$id2" --timeout 60 >"$tmp/wait2.txt" || fail "wait $id2: $(cat "$tmp/wait2.txt")"
# its window over, the trigger opens the next one (the straggler is still slow)
wait_until "a window after window $id2 was done" 60 windows_at_least 3
profctl watch --off >/dev/null || fail "watch --off"
profctl --json windows >"$tmp/windows.json"
/usr/bin/python3 - "$tmp/windows.json" <<'PY' || fail "the trigger's windows: $(cat "$tmp/windows.json")"
import json, sys
w = json.load(open(sys.argv[1]))["windows"]
# one at a time: each begins after the one before it ended
for a, b in zip(w[1:], w[2:]):
    assert b["first_step"] > a["last_step"], (a, b)
    assert b["selected"] == 2, b
PY
set +e
profctl watch --factor 0.5 >/dev/null 2>"$tmp/e1"; [ $? = 2 ] || fail "watch --factor 0.5"
grep -q "expected a number over 1" "$tmp/e1" || fail "watch --factor message"
set -e
grep -q "ERROR: AddressSanitizer\|runtime error" "$tmp/profd.log" && fail "sanitizer report"
echo "system test straggler: OK"
