#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Retention charges each window to its job and uid (issue 28, break 1). A
# worker of nobody (job "b") adds a sparse file to its own gathered folder:
#  1. with the default retention (half of the file system), a sparse file
#     far larger than the file system prunes nothing: retention measures
#     the blocks on disk, not the apparent size;
#  2. with retention.max_bytes 4MiB and 6MiB of real bytes in b's folder,
#     b's own window goes ("job b over its share"), root's older window of
#     job "a" stays: never pruned for another job's bytes.
. "$(dirname "$0")/lib.sh"

needs_nobody "runs a worker as nobody with setpriv"
: "${PROFD_SIM:?set by ctest}"
export PROFD_RUN_DIR=$tmp/run
ctl=$PROFD_PROFCTL

take() { # JOB: one window of a few steps on the job's worker, waited for; its id
  local s id
  s=$(($("$ctl" --json status --job "$1" | json 'max([r["step"] or 0 for r in d["ranks"]] or [0])') + 30))
  id=$(start_sim_window "$1" "$s")
  [ -n "$id" ] || die "no window on job $1"
  "$ctl" wait "$id" --timeout 60 >/dev/null || die "window $id: $("$ctl" --json windows "$id")"
  echo "$id"
}

daemon_for_nobody
"$PROFD_SIM" --layout actor:1 --steps 1000000 --rate 20 --job a --trace-bytes 20000 \
  >"$tmp/sim-a.log" 2>&1 &
pids+=($!)
setpriv --reuid=nobody --regid="$ngid" --clear-groups "$PROFD_SIM" --layout actor:1 \
  --steps 1000000 --rate 20 --job b --trace-bytes 20000 >"$tmp/sim-b.log" 2>&1 &
pids+=($!)
status_until 'sum(1 for r in d["ranks"] if (r["step"] or 0) > 0)' 2 ||
  die "the workers did not register: $(cat "$tmp/sim-a.log" "$tmp/sim-b.log")"

wa=$(take a)
wb=$(take b)
da=$(win "$wa" path)
# b's gathered capture folder: nobody's own (gathered by rename)
capb=$(find "$(win "$wb" path)" -mindepth 1 -type d -user nobody | head -1)
[ -n "$capb" ] || die "no folder of nobody in window $wb: $(ls -laR "$(win "$wb" path)")"
fs=$(df -B1 --output=size "$tmp" | tail -1)
as_user nobody "$ngid" truncate -s $((fs * 4)) "$capb/sparse" ||
  die "nobody cannot add a file to its gathered folder"
# a window finishing kicks a retention pass; its result is logged
wa2=$(take a)
sleep 2
[ "$(win "$wa" pruned)" = None ] && [ -d "$da" ] &&
  ok "a sparse file of $((fs * 4)) bytes in job b's folder prunes nothing of job a" ||
  bad "job a's window $wa pruned for b's sparse file: $(win "$wa" pruned)"
[ "$(win "$wb" pruned)" = None ] &&
  ok "nor job b's own window (0 blocks on disk)" || bad "job b's window $wb pruned: $(win "$wb" pruned)"
rm -f "$capb/sparse"
stop_daemon

# 2. a small total: b's real bytes prune only b's windows
daemon_for_nobody "retention:" "  max_bytes: 4MiB" "  max_fraction: 0"
as_user nobody "$ngid" dd if=/dev/urandom of="$capb/filler" bs=1M count=6 status=none ||
  die "nobody cannot write into its gathered folder"
for _ in $(seq 100); do # the first pass runs a second after the start
  [ "$(win "$wb" pruned)" != None ] && break
  sleep 0.1
done
expect "job b's window is pruned for b's own bytes" 0 \
  "^save_path over 4MiB, job b over its share \\(2MiB\\)$" win "$wb" pruned
for w in "$wa" "$wa2"; do
  [ "$(win "$w" pruned)" = None ] && [ -d "$(win "$w" path)" ] &&
    ok "job a's window $w is kept" || bad "job a's window $w pruned: $(win "$w" pruned)"
done
stop_daemon
finish
