#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, retention of the save_path tree and the free-disk floor:
#  1. retention.max_bytes 1MiB, windows of about 400KB each: once the third
#     is done the oldest is pruned (its folder gone), `profctl windows`
#     says "pruned: save_path over 1MiB", the other two are kept;
#  2. a window's files made two days old, a window waiting for its steps,
#     the daemon restarted: the first pass prunes the old one ("older than
#     1d": max_age_hours 24 in its largest unit), the pending window is
#     untouched and completes, and the window pruned before the restart is
#     still shown as pruned (the journal);
#  3. limits.min_free_bytes above the free space: a start is refused with
#     ELIMIT and the reason.
# Usage: test_retention.sh BUILD_DIR
lib_name=retention
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
save=$tmp/save
ctl() { "$profctl_bin" "$@"; }
cat >"$tmp/profd.yaml" <<'YAML'
limits:
  client_timeout_ms: 120000
retention:
  max_age_hours: 24
  max_bytes: 1MiB
  max_fraction: 0
YAML
start_profd "$tmp/profd.yaml"
"$sim" --layout actor:2 --steps 100000 --rate 20 --job ret --trace-bytes 200000 \
  >"$tmp/sim.log" 2>&1 &
pids+=($!)
step() { ctl --json status | json 'max([r["step"] for r in d["ranks"]] or [0])'; }
for _ in $(seq 200); do
  [ "$(ctl --json status | json 'sum(1 for r in d["ranks"] if r["step_ms"] > 0)')" = 2 ] && break
  sleep 0.05
done
win() { # ID FIELD
  ctl --json windows "$1" | json "d['windows'][0].get('$2')"
}
take() { # one window of one step, waited for; prints its id
  local s id
  s=$(($(step) + 40)) # 2 s ahead: a loaded machine reaches every rank in time
  id=$(ctl start --job ret --steps "$s" --tool sim | sed -n 's/^started window \([0-9]*\) .*/\1/p')
  ctl wait "$id" --timeout 60 >/dev/null || fail "window $id: $(ctl --json windows "$id")"
  echo "$id"
}
dir_of() { win "$1" path; }
wait_pruned() { # ID
  for _ in $(seq 100); do [ "$(win "$1" pruned)" != None ] && return 0; sleep 0.1; done
  fail "window $1 not pruned: $(ctl --json windows "$1")"
}

# ---- 1. over the total: the oldest goes ----------------------------------------
w1=$(take)
d1=$(dir_of "$w1")
w2=$(take)
w3=$(take)
wait_pruned "$w1"
[ "$(win "$w1" pruned)" = "save_path over 1MiB" ] || fail "w1: $(win "$w1" pruned)"
[ "$(win "$w1" state)" = done ] || fail "w1 state $(win "$w1" state)"
[ -e "$d1" ] && fail "w1's folder $d1 is still there"
for w in "$w2" "$w3"; do
  [ "$(win "$w" pruned)" = None ] || fail "window $w pruned: $(win "$w" pruned); $(du -sb "$save"/ret/* | tr "\n" " "); $(ls -la "$save"/ret/*)"
  [ -f "$(dir_of "$w")/manifest.json" ] || fail "window $w lost its manifest"
done
ctl windows >"$tmp/windows1.txt"
grep -qx "$w1 $(win "$w1" name): pruned: save_path over 1MiB" "$tmp/windows1.txt" ||
  fail "profctl windows: $(cat "$tmp/windows1.txt")"
grep -q "retention: window $w1 pruned: save_path over 1MiB" "$tmp/profd.log" || fail "no log line"
echo "ok: over retention.max_bytes, the oldest window pruned"

# ---- 2. too old, a pending window, a restart ------------------------------------
d2=$(dir_of "$w2")
s=$(($(step) + 120))
w4=$(ctl start --job ret --steps "$s" --tool sim | sed -n 's/^started window \([0-9]*\) .*/\1/p')
find "$d2" -exec touch -h -d '2 days ago' {} +
kill -TERM "$profd_pid"
wait "$profd_pid" 2>/dev/null || true
start_profd "$tmp/profd.yaml"
wait_pruned "$w2"
[ "$(win "$w2" pruned)" = "older than 1d" ] || fail "w2: $(win "$w2" pruned)"
[ -e "$d2" ] && fail "w2's folder is still there"
[ "$(win "$w1" pruned)" = "save_path over 1MiB" ] || fail "w1 after the restart: $(win "$w1" pruned)"
[ "$(win "$w3" pruned)" = None ] || fail "w3 pruned: $(win "$w3" pruned)"
case "$(win "$w4" state)" in pending | active) ;; *) fail "w4: $(ctl --json windows "$w4")" ;; esac
[ "$(win "$w4" pruned)" = None ] || fail "the pending window pruned"
ctl wait "$w4" --timeout 60 >/dev/null || fail "window $w4: $(ctl --json windows "$w4")"
[ -f "$(dir_of "$w4")/manifest.json" ] || fail "w4 has no manifest"
echo "ok: older than retention.max_age_hours pruned after a restart, a pending window kept"

# ---- 3. the free-disk floor --------------------------------------------------------
printf 'limits:\n  client_timeout_ms: 120000\n  min_free_bytes: 1PiB\n' >"$tmp/floor.yaml"
kill -TERM "$profd_pid"
wait "$profd_pid" 2>/dev/null || true
start_profd "$tmp/floor.yaml"
rc=0
ctl start --job ret --steps "$(($(step) + 10))" --tool sim >"$tmp/floor.out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a start below the free-disk floor: $(cat "$tmp/floor.out")"
grep -Eq "ELIMIT|limit" "$tmp/floor.out" && grep -q "save_path $save has .* free, below limits.min_free_bytes (1.0PiB): no new window" "$tmp/floor.out" ||
  fail "floor: $(cat "$tmp/floor.out")"
echo "ok: a start below limits.min_free_bytes refused"
check_logs
echo "PASS"
