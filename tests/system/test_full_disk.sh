#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, a full disk: spool and save_path on one small tmpfs (root
# mounts it; unmounted on exit, also when killed), with no free-disk floor
# (limits.min_free_bytes: 0; the floor has its own tests).
#  1. a window whose last capture arrives once the file system is full
#     (its worker stopped inside the window while the disk filled): the
#     manifest is written all the same, from room kept for it when the
#     first capture was gathered; the capture that could not be written is
#     failed with the reason, and no .part file reaches the save tree;
#  2. a window that ends while the disk is full and nothing could be kept
#     for it: it is not `done` (it was, and `profctl wait` named a manifest
#     that did not exist), `wait` does not return; once space is freed the
#     manifest is written and the window is done.
# Usage: test_full_disk.sh BUILD_DIR
lib_name=fulldisk
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (mounts a tmpfs)"; exit 77; }
fs=$tmp/fs
mkdir -p "$fs"
unmount() { umount -l "$fs" 2>/dev/null || true; }
lib_on_exit=unmount
mount -t tmpfs -o size=16m tmpfs "$fs" || fail "cannot mount a tmpfs"
export PROFD_RUN_DIR=$tmp/run
ctl() { "$profctl_bin" "$@"; }
printf 'limits:\n  client_timeout_ms: 120000\n  min_free_bytes: 0\n' >"$tmp/profd.yaml"
"$profd" --config "$tmp/profd.yaml" --save-path "$fs/save" --log-level info 2>"$tmp/profd.log" &
pids+=($!)
for _ in $(seq 100); do ctl status >/dev/null 2>&1 && break; sleep 0.05; done
"$sim" --layout actor:2 --steps 100000 --rate 10 --job full --trace-bytes 200000 \
  >"$tmp/sim.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do
  [ "$(ctl --json status | json 'sum(1 for r in d["ranks"] if r["step_ms"] > 0)')" = 2 ] && break
  sleep 0.05
done
rank1=$(ctl --json status | json '[r["pid"] for r in d["ranks"] if r["rank"] == 1][0]')
step() { ctl --json status | json '[r["step"] for r in d["ranks"] if r["rank"] == 1][0]'; }
fill() { dd if=/dev/zero of="$fs/filler" bs=64k >/dev/null 2>&1 || true; }
tree_parts() { find "$fs/save/full" -name '*.part' 2>/dev/null | grep -v '/manifest.json.part$' || true; }

# ---- 1. the disk fills while a window waits for its last capture -----------
s=$(($(step) + 30))
# 20 steps (2 s): a loaded machine still stops rank 1 inside the window
ctl start --job full --steps "$s:$((s + 20))" --tool sim >"$tmp/w1.txt" || fail "start 1"
w1=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w1.txt")
in_window() { [ "$(step)" -ge $((s + 1)) ]; }
wait_until "rank 1 inside window 1 (step $((s + 1)))" 60 in_window
kill -STOP "$rank1" # inside the window, its trace begun
at=$(step)
[ "$at" -lt $((s + 19)) ] || fail "rank 1 was stopped at step $at, after window 1 (nothing to test)"
for _ in $(seq 400); do
  [ "$(ctl --json windows "$w1" | json 'd["windows"][0]["reported"]')" = 1 ] && break
  sleep 0.05
done
[ "$(ctl --json windows "$w1" | json 'd["windows"][0]["complete"]')" = 1 ] ||
  fail "rank 0's capture was not gathered: $(ctl --json windows "$w1")"
sleep 0.5
fill
kill -CONT "$rank1"
ctl wait "$w1" --timeout 30 >"$tmp/wait1.txt" 2>&1 && fail "window 1 complete on a full disk?"
m1=$(ls "$fs"/save/full/w"$w1"-*/manifest.json 2>/dev/null) ||
  fail "window 1 has no manifest on the full disk: $(cat "$tmp/wait1.txt"); $(ctl --json windows "$w1")"
grep -q "done: 1 complete, 1 failed" "$tmp/wait1.txt" || fail "window 1: $(cat "$tmp/wait1.txt")"
/usr/bin/python3 - "$m1" <<'EOF' || fail "window 1 manifest"
import json, sys
m = json.load(open(sys.argv[1]))
caps = {c["rank"]: c for c in m["captures"]}
assert caps[0]["status"] == "complete", caps[0]
assert caps[1]["status"] in ("failed", "truncated"), caps[1]
assert "No space left on device" in caps[1]["reason"], caps[1]["reason"]
assert not any(f["path"].endswith(".part") for c in m["captures"] for f in c["files"]), m
EOF
[ -z "$(tree_parts)" ] || fail ".part files in the save tree: $(tree_parts)"
echo "ok: a manifest written on a full disk, from the room kept for it"

# ---- 2. a window that ends on a full disk with no room kept ------------------
s=$(($(step) + 20))
ctl start --job full --steps "$s" --tool sim >"$tmp/w2.txt" || fail "start 2"
w2=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w2.txt")
rc=0
ctl wait "$w2" --timeout 12 >"$tmp/wait2.txt" 2>&1 || rc=$?
grep -q "timed out" "$tmp/wait2.txt" ||
  fail "window 2 over on a full disk: exit $rc, $(cat "$tmp/wait2.txt"); $(ls "$fs"/save/full/w"$w2"-* 2>&1)"
state=$(ctl --json windows "$w2" | json 'd["windows"][0]["state"]')
reason=$(ctl --json windows "$w2" | json 'd["windows"][0]["reason"]')
[ "$state" = gathering ] || fail "window 2 is $state on a full disk ($reason)"
case $reason in
"manifest not written yet: "*"No space left on device"*) ;;
*) fail "window 2 reason: $reason" ;;
esac
echo "ok: a window that cannot have its manifest yet is not done: $reason"
rm -f "$fs/filler"
ctl wait "$w2" --timeout 30 >"$tmp/wait2.txt" 2>&1 || true
grep -q "done: .*manifest $fs/save/full/w$w2-" "$tmp/wait2.txt" || fail "window 2: $(cat "$tmp/wait2.txt")"
[ -f "$(ls "$fs"/save/full/w"$w2"-*/manifest.json)" ] || fail "window 2 done without its manifest"
[ -z "$(tree_parts)" ] || fail ".part files in the save tree: $(tree_parts)"
[ -z "$(find "$fs/save/full" -name manifest.json.part)" ] || fail "a manifest's room is left over"
echo "ok: freed, the manifest is written and the window done"
check_logs
echo "system test full disk: OK"
