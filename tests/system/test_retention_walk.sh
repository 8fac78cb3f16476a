#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, what a retention pass costs (profd_retention_* on the metrics
# endpoint; the entries counted with find):
#  1. three done windows, the daemon restarted (a pass reuses nothing from
#     before): the pass 1 s after the start walks the three folder trees,
#     every entry once (files and folders exactly as find counts them);
#  2. a pass on SIGHUP with nothing changed walks nothing: the three
#     windows' measures are reused (before the fix: every tree again);
#  3. a window merged (merged.trace.json written into its folder): the
#     next pass walks that window's tree only, the two others reused;
#  4. a file put by hand in a capture folder is not seen by the next pass
#     (the window's own folder did not change: it is noticed within
#     retention's re-measure interval, 10 minutes); one put in the window's
#     folder is: that window walked again, with both files.
# Usage: test_retention_walk.sh BUILD_DIR
lib_name=retention_walk
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
save=$tmp/save
ctl() { "$profctl_bin" "$@"; }
need_tool curl curl
port=$(free_port)
url=http://127.0.0.1:$port/metrics
cat >"$tmp/profd.yaml" <<'YAML'
limits:
  client_timeout_ms: 120000
retention:
  max_age_hours: 24
  max_bytes: 0
  max_fraction: 0
YAML
start() {
  "$profd" --config "$tmp/profd.yaml" --save-path "$save" --metrics "http://127.0.0.1:$port" \
    --log-level info 2>>"$tmp/profd.log" &
  pids+=($!)
  profd_pid=$!
  for _ in $(seq 100); do ctl status >/dev/null 2>&1 && return 0; sleep 0.05; done
  fail "profd did not start"
}
metric() { # NAME{LABELS}: its value
  curl -sf "$url" | awk -v k="$1" '$1 == k { print $2 }'
}
passes() { metric profd_retention_passes_total; }
# walked: windows walked, files and folders the walks looked at; reused
walked() {
  echo "$(metric 'profd_retention_windows_measured_total{how="walked"}')" \
    "$(metric 'profd_retention_walked_entries_total{kind="file"}')" \
    "$(metric 'profd_retention_walked_entries_total{kind="folder"}')" \
    "$(metric 'profd_retention_windows_measured_total{how="reused"}')"
}
count() { # DIR...: files (not folders) and folders in and below them, itself included
  echo "$(find "$@" ! -type d | wc -l) $(find "$@" -type d | wc -l)"
}
expect() { # WINDOWS FILES FOLDERS REUSED WHAT
  local got
  got=$(walked)
  [ "$got" = "$1 $2 $3 $4" ] || fail "$5: walked windows, files, folders and reused windows $got, expected $1 $2 $3 $4"
}
# a pass that began after now and ended
pass_now() { # WHY: kill -HUP, the next pass waited for
  local p
  p=$(passes)
  kill -HUP "$profd_pid"
  for _ in $(seq 200); do [ "$(passes)" -gt "$p" ] && return 0; sleep 0.05; done
  fail "no retention pass after SIGHUP ($1)"
}

start
"$sim" --layout actor:2 --steps 100000 --rate 20 --job walk --trace-bytes 4096 \
  >"$tmp/sim.log" 2>&1 &
pids+=($!)
wait_until "2 ranks with a step time" 60 ranks_measured 2
win() { ctl --json windows "$1" | json "d['windows'][0].get('$2')"; }
take() { # one window of one step, waited for until its record is final; prints its id
  local s id
  s=$(($(step_now) + 40))
  id=$(ctl start --job walk --steps "$s" --tool sim | sed -n 's/^started window \([0-9]*\) .*/\1/p')
  ctl wait "$id" --timeout 60 >/dev/null || fail "window $id: $(ctl --json windows "$id")"
  # the report is written once more when the steps after the window are in
  for _ in $(seq 800); do [ -n "$(win "$id" record)" ] && [ "$(win "$id" record)" != None ] && break; sleep 0.05; done
  [ "$(win "$id" record)" != None ] || fail "window $id: no final record"
  echo "$id"
}
w1=$(take)
w2=$(take)
w3=$(take)
d1=$(win "$w1" path)
d2=$(win "$w2" path)
d3=$(win "$w3" path)

# ---- 1. the first pass after a start walks every window once ---------------------
kill -TERM "$profd_pid"
wait "$profd_pid" 2>/dev/null || true
start
for _ in $(seq 200); do [ "$(passes)" -ge 1 ] 2>/dev/null && break; sleep 0.05; done
[ "$(passes)" = 1 ] || fail "passes after the start: $(passes)"
read -r f f1 <<<"$(count "$d1" "$d2" "$d3")"
[ "$f" -ge 9 ] || fail "three windows of $f files: $(find "$d1" "$d2" "$d3")"
expect 3 "$f" "$f1" 0 "the first pass"
echo "ok: the first pass walked the 3 windows: $f files, $f1 folders"

# ---- 2. nothing changed: nothing walked -------------------------------------------
pass_now "nothing changed"
expect 3 "$f" "$f1" 3 "a pass with nothing changed"
echo "ok: a second pass walked nothing, its 3 windows reused"

# ---- 3. a merge: that window only -------------------------------------------------
ctl merge "$w2" >"$tmp/merge.txt" || fail "merge: $(cat "$tmp/merge.txt")"
[ -f "$d2/merged.trace.json" ] || fail "no merged trace: $(cat "$tmp/merge.txt")"
pass_now "a merge"
read -r g g1 <<<"$(count "$d2")"
expect 4 $((f + g)) $((f1 + g1)) 5 "a pass after window $w2's merge"
echo "ok: after a merge the pass walked that window only: $g files, $g1 folders"

# ---- 4. files by hand ---------------------------------------------------------------
sub=$(find "$d3" -mindepth 1 -type d | sort | head -1)
[ -n "$sub" ] || fail "window $w3 has no capture folder: $(find "$d3")"
echo deep >"$sub/by-hand.txt"
pass_now "a file in a capture folder"
expect 4 $((f + g)) $((f1 + g1)) 8 "a pass after a file put in $sub"
echo top >"$d3/by-hand.txt"
pass_now "a file in the window's folder"
read -r h h1 <<<"$(count "$d3")"
expect 5 $((f + g + h)) $((f1 + g1 + h1)) 10 "a pass after a file put in $d3"
echo "ok: a file put in the window's folder walked it again ($h files), one deeper waits"
check_logs
echo "PASS"
