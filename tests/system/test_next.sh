#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, `--next` stays near: a peer that joins late must not be
# taken as a plan-delivery sample of seconds (it was: its first plan watch
# measured the time since the last plan was published, and every later
# --next window started that many seconds ahead: steps 500-501 chosen at
# step 140).
#  1. a coordinator, node1 with 2 ranks; 8 s later node2 joins with 2 more
#     ranks; `start --next 2` picks steps within 1.5 s of the front;
#  2. a lone daemon, a rank that registers 8 s after the first: the same;
#  3. a window of a job whose ranks have all left expires with the reason,
#     instead of waiting for (and capturing) a later job of the same name.
# The links are plain tcp:// on loopback (--insecure-tcp-links).
# Usage: test_next.sh BUILD_DIR
lib_name=next
. "$(dirname "$0")/lib.sh"
port=$(free_port)
cctl() { "$profctl_bin" --url "ipc://$tmp/c/run/control.sock" "$@"; }
nctl() { "$profctl_bin" --url "ipc://$tmp/n/run/control.sock" "$@"; }
up() { # URL-FUNCTION
  for _ in $(seq 200); do "$1" status >/dev/null 2>&1 && return 0; sleep 0.05; done
  fail "a daemon did not start"
}
wait_ranks() { # CTL N
  poll 300 "$2" query 'sum(1 for r in d["ranks"] if r["state"] != "lost" and r["step_ms"] > 0)' \
    "$1" --json status || fail "$2 ranks with a step time did not register (have $got)"
}
# start --next 2 and check how far ahead of the front it starts. The fault
# guarded: a late joiner's own start (8 s after the plan was published)
# taken as a delivery sample, which pushed every --next window 8 s (80
# steps at 10 steps/s) ahead. Idle, it is about 15 steps (latency estimate
# + margin + the plan's way); a loaded machine's real delivery latency adds
# to that, so the bound is a relation to the 8 s: under half of it.
near() { # WHAT CTL
  local front first
  front=$("$2" --json status | json 'max(r["step"] for r in d["ranks"] if r["state"] != "lost")')
  "$2" start --next 2 --tool sim --settings '{"bytes": 1024}' >"$tmp/near.txt" || fail "$1: start"
  first=$(sed -n 's/^started window [0-9]* w[0-9]*-steps\([0-9]*\)-.*/\1/p' "$tmp/near.txt")
  [ -n "$first" ] || fail "$1: $(cat "$tmp/near.txt")"
  [ $((first - front)) -lt 40 ] ||
    fail "$1: steps from $first chosen at step $front ($((first - front)) steps, $(((first - front) * 100)) ms ahead)"
  echo "ok: $1: steps from $first chosen at step $front"
  # withdrawn: the next call's window would overlap it on the same ranks
  "$2" stop "$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/near.txt")" >/dev/null ||
    fail "$1: stop"
}

# ---- 1. a node that joins late ---------------------------------------------
coordinator_start
up cctl
start_node() { # I: node daemon I and its two ranks
  node_start "$1"
  PROFD_RUN_DIR=$tmp/n$1/run "$sim" --layout actor:2 --rank-offset $((($1 - 1) * 2)) \
    --steps 100000 --rate 10 --host "host$1" >"$tmp/sim$1.log" 2>&1 &
  pids+=($!)
}
start_node 1
wait_ranks cctl 2
sleep 8
start_node 2
wait_ranks cctl 4
sleep 1
near "a node joined 8 s late" cctl
near "and again" cctl

# ---- 2. a rank that registers late, one daemon -------------------------------
"$profd" --run-dir "$tmp/n/run" --save-path "$tmp/n/save" 2>"$tmp/lone.log" &
pids+=($!)
up nctl
PROFD_RUN_DIR=$tmp/n/run "$sim" --layout actor:1 --steps 100000 --rate 10 --job lone \
  >"$tmp/lone1.log" 2>&1 &
pids+=($!)
wait_ranks nctl 1
sleep 8
PROFD_RUN_DIR=$tmp/n/run "$sim" --layout actor:1 --rank-offset 1 --steps 100000 --rate 10 \
  --job lone >"$tmp/lone2.log" 2>&1 &
lone2=$!
pids+=($lone2)
wait_ranks nctl 2
sleep 1
near "a rank registered 8 s late" nctl

# ---- 3. a window whose job has gone ------------------------------------------
# (steps ahead of the job: a role it may still register; --next, aligned on
# no rank, would begin at a step long past and be refused)
nctl start --job lone --roles critic --steps 1000000:1000002 --tool sim >"$tmp/orphan.txt" ||
  fail "start orphan"
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/orphan.txt")
[ "$(nctl --json windows "$id" | json 'd["windows"][0]["state"]')" = pending ] ||
  fail "the window for a role the job does not have is not pending"
for p in $(pgrep -f "profd-sim .*--job lone" || true); do kill -TERM "$p" 2>/dev/null || true; done
poll 200 cancelled query 'd["windows"][0]["state"]' nctl --json windows "$id" ||
  fail "the window of a job with no rank left is $got, not expired"
reason=$(nctl --json windows "$id" | json 'd["windows"][0]["reason"]')
[ "$reason" = "expired: job lone has no registered rank left" ] || fail "reason: $reason"
rc=0
nctl wait "$id" --timeout 5 >"$tmp/wait.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "expired: job lone has no registered rank left" "$tmp/wait.txt" ||
  fail "profctl wait on the expired window: exit $rc, $(cat "$tmp/wait.txt")"
echo "ok: a window of a job with no rank left expires: $reason"
# a later job of the same name is not captured by it
PROFD_RUN_DIR=$tmp/n/run "$sim" --layout critic:1 --steps 100000 --rate 10 --job lone \
  >"$tmp/lone3.log" 2>&1 &
pids+=($!)
wait_ranks nctl 1
[ "$(nctl --json windows "$id" | json 'd["windows"][0]["selected"]')" = 0 ] ||
  fail "the expired window took the next job's rank"
check_logs
echo "system test next: OK"
