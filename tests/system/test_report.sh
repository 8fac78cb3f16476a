#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, the whole job at a glance: a window over 8 profd-sim ranks
# (actor and rollout) gets steps.json, report.html and a TensorBoard run
# folder with its manifest; report.html, opened in a real headless Chromium,
# renders a heatmap cell per rank and step and a screenshot that is not
# blank; profctl merge writes one trace in which every event of every rank's
# trace is present, each rank a named process, on one clock (the offsets'
# error within the bound the daemon states); profctl top and status show the
# roles' figures.
# Usage: test_report.sh BUILD_DIR
lib_name=report
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
profctl() { "$profctl_bin" "$@"; }
need_tool chromium chromium

"$profd" --save-path "$tmp/out" --log-level info 2>"$tmp/profd.log" &
pids+=($!)
for _ in $(seq 100); do profctl status >/dev/null 2>&1 && break; sleep 0.05; done
"$sim" --layout actor:4,rollout:4@2 --steps 100000 --rate 20 --substeps 2 \
  --trace-bytes 16384 >"$tmp/sim.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do
  [ "$(profctl --json status | json 'len(d["ranks"])')" = 8 ] && break
  sleep 0.05
done
[ "$(profctl --json status | json 'len(d["ranks"])')" = 8 ] || fail "8 ranks did not register"
sleep 1.5 # a few steps of history before the window

# 1. a window over every rank: its folder gets the report with the manifest
profctl start --next 3 --tool sim >"$tmp/w.txt" || fail "start"
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w.txt")
name=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w.txt")
dir=$tmp/out/default/$name
profctl wait "$id" --timeout 60 >/dev/null || fail "wait"
for f in manifest.json steps.json report.html; do
  [ -f "$dir/$f" ] || fail "$f is not in the window's folder once it is done"
done
sleep 0.6 # steps after the window, for the report written again
[ "$(profctl report "$id")" = "$dir/report.html" ] || fail "profctl report: $(profctl report "$id")"

# steps.json: every rank, a time for every step of the window
/usr/bin/python3 - "$dir" <<'PY' || fail "steps.json"
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "steps.json")))
m = json.load(open(os.path.join(d, "manifest.json")))
first, end = m["window"]["steps"]
assert s["version"] == 1 and s["window"] == [first, end], (s["window"], first, end)
lo, hi = s["steps"]
assert lo <= first - 4 and hi >= end - 1, (lo, hi, first, end)  # steps around the window
assert sorted(r["rank"] for r in s["ranks"]) == list(range(8)), [r["rank"] for r in s["ranks"]]
assert {r["role"] for r in s["roles"]} == {"actor", "rollout"}
for r in s["ranks"]:
    assert r["member"], r
    assert len(r["step_us"]) == hi - lo + 1
    # every step of the window measured; 20 steps/s on the sim's schedule,
    # which catches up after a late step (a loaded machine): the mean over
    # the steps around the window, not each step, is 50 ms
    for st in range(first, end):
        us = r["step_us"][st - lo]
        assert us > 0, (r["rank"], st, us)
    known = [us for us in r["step_us"] if us > 0]
    assert len(known) >= end - first + 4, (r["rank"], known)
    mean = sum(known) / len(known)
    assert 30000 < mean < 200000, (r["rank"], mean, known)
    assert 0.5 < r["ratio"] < 2, r
    # its clock against the daemon's, measured: one host, so the truth is 0
    assert r["offset_err_us"] > 0 and abs(r["offset_us"]) <= r["offset_err_us"], r
for ro in s["roles"]:
    # the sim's phases: actor compute_log_prob and update_actor, rollout generate
    assert ro["phases"], ro
    assert all(p > 0 for p in ro["phase_p50_us"]), ro
PY

# report.html in a real browser: a cell per rank and step, and pixels
chrome --dump-dom "file://$dir/report.html" >"$tmp/dom.html" 2>"$tmp/chrome.log" ||
  fail "chromium --dump-dom failed: $(tail -5 "$tmp/chrome.log")"
/usr/bin/python3 - "$tmp/dom.html" "$dir/steps.json" <<'PY' || fail "report.html as rendered"
import html.parser, json, sys
s = json.load(open(sys.argv[2]))
nsteps = s["steps"][1] - s["steps"][0] + 1
cells, rows, titles = {}, set(), 0
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "rect" and a.get("class") == "cell":
            cells[a["data-rank"]] = cells.get(a["data-rank"], 0) + 1
        if tag == "g" and a.get("class") == "row":
            rows.add(a["data-rank"])
        if tag == "svg" and a.get("id") == "heatmap":
            assert int(a["width"]) > 300 and int(a["height"]) > 100, a
p = P()
p.feed(open(sys.argv[1]).read())
assert sorted(cells, key=int) == [str(r) for r in range(8)], cells
assert all(n == nsteps for n in cells.values()), (cells, nsteps)
assert rows == set(cells), rows
text = open(sys.argv[1]).read()
for want in ("Phases per role", "Slowest ranks", "Captures", "compute_log_prob", "generate",
             'id="window-frame"', 'id="source">profctl<'):
    assert want in text, want
PY
chrome --screenshot="$tmp/report.png" --window-size=1200,900 --hide-scrollbars \
  "file://$dir/report.html" >>"$tmp/chrome.log" 2>&1 || fail "chromium --screenshot failed"
[ -s "$tmp/report.png" ] || fail "no screenshot"
read -r w h colours nonwhite < <(/usr/bin/python3 "$here/png_stats.py" "$tmp/report.png")
[ "$w" = 1200 ] && [ "$h" = 900 ] || fail "screenshot is ${w}x$h"
[ "$colours" -ge 8 ] || fail "screenshot has $colours colour(s): blank"
/usr/bin/python3 -c "import sys; sys.exit(not 2.0 <= float('$nonwhite') <= 98.0)" ||
  fail "screenshot is $nonwhite% non-white"

# TensorBoard's run folder: a trace per rank, linked, named rank and role
/usr/bin/python3 - "$dir" <<'PY' || fail "tensorboard folder"
import json, os, re, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
tb = sorted(os.listdir(os.path.join(d, "tensorboard")))
assert len(tb) == 8, tb
pat = re.compile(r"^rank(\d+)-(actor|rollout)\.\d+\.pt\.trace\.json$")
for c in m["captures"]:
    (f,) = [f["path"] for f in c["files"] if f["path"].endswith(".pt.trace.json")]
    g = pat.match(f)
    assert g and int(g.group(1)) == c["rank"], f
    assert f in tb, (f, tb)
    a = os.stat(os.path.join(d, "tensorboard", f))
    b = os.stat(os.path.join(d, c["dir"], f))
    assert (a.st_ino, a.st_dev) == (b.st_ino, b.st_dev), f  # a link, not a copy
PY

# 2. the merged timeline: every event of every rank, one clock
profctl merge "$id" >"$tmp/merge.txt" || fail "merge: $(cat "$tmp/merge.txt")"
[ "$(head -1 "$tmp/merge.txt")" = "$dir/merged.trace.json" ] || fail "merge: $(cat "$tmp/merge.txt")"
/usr/bin/python3 - "$dir" <<'PY' >"$tmp/clock.txt" || fail "merged trace"
import json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
t = json.load(open(os.path.join(d, "merged.trace.json")))
ev = t["traceEvents"]
info = t["otherData"]["profd"]
assert info["files"] == 8 and info["unaligned"] == 0 and info["skipped"] == 0, info
# the processes profd named: one per rank (the sim writes one pid per file)
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
rank_of = {}
for pid, n in names.items():
    parts = n.split()
    assert parts[0] == "rank" and parts[2] in ("actor", "rollout"), n
    rank_of[pid] = int(parts[1])
assert sorted(rank_of.values()) == list(range(8)), names
DROPPED = ("process_name", "process_labels", "process_sort_index")
got = {}
for e in ev:
    if e.get("ph") == "M" and e["name"] in DROPPED:
        continue
    got.setdefault(rank_of[e["pid"]], []).append(e)
worst, bound = 0, info["clock_err_us"]
first, end = m["window"]["steps"]
for c in m["captures"]:
    (f,) = [f["path"] for f in c["files"] if f["path"].endswith(".pt.trace.json")]
    src = json.load(open(os.path.join(d, c["dir"], f)))["traceEvents"]
    src = [e for e in src if not (e.get("ph") == "M" and e["name"] in DROPPED)]
    out = got[c["rank"]]
    assert len(out) == len(src), (c["rank"], len(out), len(src))
    assert sorted(e["name"] for e in out) == sorted(e["name"] for e in src), c["rank"]
    steps = {e["args"]["step"] for e in out if e["name"].startswith("ProfilerStep#")}
    assert set(range(first, end)) <= steps, (c["rank"], steps)
    # same host, one CLOCK_MONOTONIC: the true offset is 0, so what the
    # daemon applied is the error of its estimate
    for e in out:
        mono = (e.get("args") or {}).get("profd_mono_us")
        if mono is not None:
            err = abs(e["ts"] - mono)
            worst = max(worst, err)
            assert err <= bound, (c["rank"], e["name"], err, bound)
print("clock: largest offset applied %d us, stated bound %d us" % (worst, bound))
PY
echo "$(cat "$tmp/clock.txt")"

# 3. top and status: the roles' figures, the ranks on request
profctl top --once >"$tmp/top.txt" || fail "top"
grep -qE "^default +actor +4 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +0 " "$tmp/top.txt" ||
  fail "top: $(cat "$tmp/top.txt")"
grep -qE "^default +rollout +4 " "$tmp/top.txt" || fail "top rollout: $(cat "$tmp/top.txt")"
grep -q "^straggler trigger: off" "$tmp/top.txt" || fail "top trigger: $(cat "$tmp/top.txt")"
profctl status >"$tmp/status.txt" || fail "status"
grep -qx "node $(hostname): 8 rank(s)" "$tmp/status.txt" || fail "status: $(cat "$tmp/status.txt")"
grep -qx "  roles: actor 4 rollout 4; 0 lost" "$tmp/status.txt" || fail "status roles"
[ "$(grep -cE '^default +[0-9]+ (actor|rollout) ' "$tmp/status.txt")" = 0 ] ||
  fail "status lists ranks without --ranks"
[ "$(profctl status --ranks | grep -cE '^default +[0-9]+ (actor|rollout) ')" = 8 ] ||
  fail "status --ranks: $(profctl status --ranks)"
# issue 31: the header said "windows 0" with every window done
kept=$(profctl --json windows | json 'len(d["windows"])')
[ "$kept" -ge 1 ] || fail "no window kept"
grep -qE "^node .* windows $kept \(0 open\)  ranks 8$" "$tmp/status.txt" ||
  fail "status header, $kept window(s) kept: $(head -1 "$tmp/status.txt")"
# issue 31: top --ranks had no JOB column; --json top streamed indented
# documents (one JSON document per line now, every refresh)
profctl top --once --ranks >"$tmp/topr.txt" || fail "top --ranks"
grep -qE "^JOB +ROLE +RANK +HOST" "$tmp/topr.txt" || fail "top --ranks header: $(cat "$tmp/topr.txt")"
[ "$(grep -cE '^default +(actor|rollout) +[0-9]+ +[^ ]+ +[^ ]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +(yes|no)$' \
  "$tmp/topr.txt")" = 8 ] ||
  fail "top --ranks rows: $(cat "$tmp/topr.txt")"
# streamed until two documents are out, then stopped: a signal sent at a
# fixed time (timeout -s INT 3.5) could come before profctl's handler on
# loaded cores, and an INT inherited as ignored (a background job's) was
# lost: profctl went on streaming until ctest's timeout
"$profctl_bin" --json top --interval 1 --ranks >"$tmp/topj.txt" &
topj=$!
two_docs() { [ "$(wc -l <"$tmp/topj.txt")" -ge 2 ]; }
wait_until "two documents from profctl --json top --interval 1" 60 two_docs
kill -TERM "$topj"
wait "$topj" || fail "profctl --json top stopped by SIGTERM: exit $?"
/usr/bin/python3 - "$tmp/topj.txt" <<'PY' || fail "--json top stream: $(head -c 600 "$tmp/topj.txt")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) >= 2, lines
for line in lines:
    d = json.loads(line)  # each line one whole document
    assert [r["job"] for r in d["ranks"]] == ["default"] * 8, d["ranks"]
    assert [r["role"] for r in d["roles"]] == ["actor", "rollout"], d["roles"]
PY

# refused: no such window, not done yet, a bad id
set +e
profctl report 999 >/dev/null 2>"$tmp/e1"; [ $? = 1 ] || fail "report 999"
grep -q "no window 999 (ENOENT)" "$tmp/e1" || fail "report 999 message"
profctl merge abc >/dev/null 2>&1; [ $? = 2 ] || fail "merge abc"
set -e
s=$(( $(profctl --json status | json 'max(r["step"] for r in d["ranks"])') + 400 ))
profctl start --steps "$s" --tool sim >"$tmp/w2.txt" || fail "start far"
id2=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w2.txt")
set +e
profctl merge "$id2" >/dev/null 2>"$tmp/e2"; [ $? = 1 ] || fail "merge pending"
set -e
grep -q "window $id2 is pending: merge it once it is done (ESTATE)" "$tmp/e2" ||
  fail "merge pending message: $(cat "$tmp/e2")"
grep -q "ERROR: AddressSanitizer\|runtime error" "$tmp/profd.log" && fail "sanitizer report"
echo "system test report: OK"
