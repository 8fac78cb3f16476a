#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# A finished window's own files are read back below save_path one folder at
# a time, never through a symlink (issue 30, review): a user who may write
# into the save_path tree swaps a folder above a window's file for a
# symlink to a copy of it, byte for byte, so that a read through the link
# would pass every check:
#  1. untouched, `profctl report ID` writes the report (the copy would pass
#     the record's checksum);
#  2. the window's folder a symlink to its copy: the report is refused
#     (ESTATE, the record "not what the window's end wrote"), its steps.json
#     not read through the link (it was, with O_NOFOLLOW on the last
#     component alone), nothing written at the copy;
#  3. the job's folder alike;
#  4. steps.json a fifo: refused at once, the daemon serves on (it hung
#     in open(2) waiting for a writer);
#  5. a compacted window, its folder a symlink to its copy: its manifest is
#     not read through it (`profctl windows ID` says why, in one line).
# Cases 2-4 read steps.json with the window's captures in memory (read back
# by `profctl windows ID` just before, kept PD_WCAPS_KEEP_MS, 2 s): a
# report of a compacted window reads its manifest first, which stops there.
. "$(dirname "$0")/lib.sh"

: "${PROFD_SIM:?set by ctest}"
export PROFD_RUN_DIR=$tmp/run
ctl=$PROFD_PROFCTL
yaml "limits:" "  client_timeout_ms: 120000"
start_profd --log-level info
"$PROFD_SIM" --layout actor:1 --steps 1000000 --rate 50 --job f --trace-bytes 2000 \
  >"$tmp/sim.log" 2>&1 &
pids+=($!)
id=$(take_window f)
[ "$(win "$id" state)" = done ] || die "window $id: $("$ctl" --json windows "$id")"
name=$(win "$id" name)
job=$tmp/out/f
dir=$job/$name
# the record is final once the steps after the window are in (the
# daemon's 1 s tick): windows ID shows its checksum then
for _ in $(seq 400); do
  [ "$(win "$id" record)" != None ] && break
  sleep 0.1
done
[ "$(win "$id" record)" != None ] || die "the record of window $id is not final: $(win "$id" record)"
cp -a "$dir" "$tmp/wcopy"
cp -a "$job" "$tmp/jcopy"
rm "$tmp/wcopy/report.html" "$tmp/jcopy/$name/report.html"

# 1. untouched
expect "the report of the untouched window" 0 "^$dir/report.html\$" "$ctl" report "$id"
cmp -s "$dir/steps.json" "$tmp/wcopy/steps.json" || die "the copy's steps.json differs"

record="profctl: $name/steps.json, the window's record of step times, is not what the window's \
end wrote: the report is not written from anything else (ESTATE)"
# report_while SET UNSET: `profctl report` on the window with SET's change
# in place (UNSET undoes it after), its captures in memory (read back just
# before; again when it was compacted meanwhile): its exit code in rc, its
# output in out
report_while() {
  for _ in $(seq 5); do
    "$ctl" windows "$id" >/dev/null || die "windows $id"
    "$1"
    rc=0
    out=$(timeout 30 "$ctl" report "$id" 2>&1) || rc=$?
    "$2"
    case $out in *"captures cannot be read back"*) continue ;; esac
    break
  done
}
link_in() { mv "$folder" "$folder.real" && ln -s "$copy" "$folder"; }
link_out() { rm "$folder" && mv "$folder.real" "$folder"; }
fifo_in() { mv "$dir/steps.json" "$tmp/steps.json" && mkfifo "$dir/steps.json"; }
fifo_out() { rm "$dir/steps.json" && mv "$tmp/steps.json" "$dir/steps.json"; }

# swapped WHAT FOLDER COPY: FOLDER (the window's or the job's) a symlink to
# COPY while the report runs: refused with the record's line, nothing
# written in COPY
swapped() {
  local what=$1
  folder=$2 copy=$3
  report_while link_in link_out
  if [ "$rc" != 1 ] || [ "$out" != "$record" ]; then
    bad "$what a symlink to a copy: exit $rc: $out"
  elif [ -n "$(find "$copy" -name report.html)" ]; then
    bad "$what a symlink to a copy: report.html written in the copy"
  else
    ok "$what a symlink to a copy: refused, not read through it"
  fi
}
# 2. the window's folder
swapped "the window's folder" "$dir" "$tmp/wcopy"
# 3. the job's folder
swapped "the job's folder" "$job" "$tmp/jcopy"

# 4. steps.json a fifo
report_while fifo_in fifo_out
[ "$rc" = 1 ] && [ "$out" = "$record" ] && ok "steps.json a fifo: refused" ||
  bad "steps.json a fifo: exit $rc: $out"
expect "the daemon serves on" 0 "^$dir/report.html\$" timeout 30 "$ctl" report "$id"

# 5. a compacted window's manifest: the read back over (2 s) and compacted
# (the next tick), its folder swapped
want="warning   window $id: its captures cannot be read back: $dir/manifest.json: 'f/$name' is \
a symlink (not followed)"
for _ in $(seq 5); do
  sleep 3.5
  mv "$dir" "$dir.real"
  ln -s "$tmp/wcopy" "$dir"
  "$ctl" windows "$id" >"$tmp/detail.txt" 2>&1 || true
  rm "$dir"
  mv "$dir.real" "$dir"
  grep -q "captures cannot be read back" "$tmp/detail.txt" && break
done
grep -qxF "$want" "$tmp/detail.txt" && ok "a compacted window's manifest: not read through a symlink" ||
  bad "a compacted window's manifest through a symlink: $(cat "$tmp/detail.txt")"
finish
