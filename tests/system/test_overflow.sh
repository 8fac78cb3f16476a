#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, numbers at the int64 edge on both sockets (raw nng messages,
# the daemon under ASan and UBSan): step events with steps of +-9.2e18 on
# the worker socket, `start` with next and roundup of 9.2e18 on the control
# socket, and numbers within 2^53 that would still end a window past the
# last step. Each is refused with its error code and reason, the rank keeps
# its step, no window is made, the daemon keeps serving and its log holds
# no sanitizer report.
# Usage: test_overflow.sh BUILD_DIR
lib_name=overflow
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
ctl=ipc://$tmp/run/control.sock
wk=ipc://$tmp/run/worker.sock
command -v nngcat >/dev/null || fail "nngcat not found (Debian package nng-utils)"

"$profd" --save-path "$tmp/out" 2>"$tmp/profd.log" &
daemon_pid=$!
pids+=($daemon_pid)
for _ in $(seq 100); do "$profctl_bin" status >/dev/null 2>&1 && break; sleep 0.05; done
"$profctl_bin" status >/dev/null || fail "profd did not come up"

send() { # URL JSON: the reply
  nngcat --req --dial "$1" --recv-timeout 5 --format ascii --data "$2" 2>&1 || true
}
expect_reply() { # WHAT URL JSON PATTERN
  local out
  out=$(send "$2" "$3")
  echo "$out" | grep -Eq -- "$4" || fail "$1: no /$4/ in: $out"
  kill -0 "$daemon_pid" 2>/dev/null || fail "$1: the daemon died"
  echo "ok: $1"
}

# the worker socket, one connection (nngreq.py; a registration is bound to
# the process that made it): steps of +-9.2e18 (UBSan aborted the daemon at
# the step-time division; a release build kept a garbage step)
ev() { echo "{\"v\":1,\"type\":\"events\",\"client\":CLIENT,\"ev\":[$1]}"; }
/usr/bin/python3 "$here/nngreq.py" "$wk" \
  '{"v":1,"type":"hello","job":"j","role":"actor","rank":0,"host":"h1","pid":4242}' \
  "$(ev 1,7,1000000)" "$(ev 1,9200000000000000000,2000000)" "$(ev 1,-9200000000000000000,2000000)" \
  "$(ev 1,-9007199254740991,2000000)" "$(ev 1,8,-9007199254740991)" \
  '{"v":1,"type":"result","client":CLIENT,"window":1,"captures":[{"role":"actor","status":"complete","first_step":-1}]}' \
  >"$tmp/worker.out" || fail "nngreq: $(cat "$tmp/worker.out")"
wline() { # WHAT LINE PATTERN
  local out
  out=$(sed -n "$2p" "$tmp/worker.out")
  echo "$out" | grep -Eq -- "$3" || fail "$1: no /$3/ in: $out"
  echo "ok: $1"
}
wline "a worker registers" 1 '"type":"welcome"'
wline "a step begun" 2 '"type":"ack"'
wline "events with a step of 9.2e18" 3 '"name":"EPROTO".*integer out of range'
wline "events with a step of -9.2e18" 4 '"name":"EPROTO".*integer out of range'
wline "events with a step of -(2^53-1)" 5 '"name":"EPROTO".*events must be'
wline "events with a time of -(2^53-1)" 6 '"name":"EPROTO".*events must be'
wline "a result with a first step of -1" 7 \
  "\"name\":\"EPROTO\".*captures\\[0\\].first_step': a step must be"
kill -0 "$daemon_pid" 2>/dev/null || fail "the daemon died"
step=$("$profctl_bin" --json status | json 'd["ranks"][0]["step"]')
[ "$step" = 7 ] || fail "the rank's step is $step after the refused events, not 7"

# the control socket: next and roundup of 9.2e18 (UBSan aborted in the
# planner's roundup; a release build made a window ending before it began)
expect_reply "start with next and roundup of 9.2e18" "$ctl" \
  '{"v":1,"type":"start","next":9200000000000000000,"roundup":9200000000000000000}' \
  "\"name\":\"EPROTO\".*'next': integer out of range"
expect_reply "start with roundup of 9.2e18" "$ctl" \
  '{"v":1,"type":"start","next":2,"roundup":9200000000000000000}' \
  "\"name\":\"EPROTO\".*'roundup': integer out of range"
expect_reply "start with next of 2^53-1, rounded up" "$ctl" \
  '{"v":1,"type":"start","next":9007199254740991,"roundup":2}' \
  '"name":"EINVAL".*the window would end past step 9007199254740991'
expect_reply "start with roundup of 2^53-1" "$ctl" \
  '{"v":1,"type":"start","next":2,"roundup":9007199254740991}' \
  '"name":"EINVAL".*the window would end past step 9007199254740991'
expect_reply "start with steps past 2^53" "$ctl" \
  '{"v":1,"type":"start","steps":[9007199254740992]}' \
  "\"name\":\"EPROTO\".*'steps\\[0\\]': integer out of range"
expect_reply "start with a negative start" "$ctl" \
  '{"v":1,"type":"start","start":-9200000000000000000,"end":-1}' \
  "\"name\":\"EPROTO\".*'start': integer out of range"
n=$("$profctl_bin" --json windows | json 'len(d["windows"])')
[ "$n" = 0 ] || fail "$n window(s) made by refused requests"

# profctl says the same before sending
rc=0
"$profctl_bin" start --next 9200000000000000000 2>"$tmp/p.err" || rc=$?
[ "$rc" = 2 ] && grep -q -- '--next: expected a positive number of steps' "$tmp/p.err" ||
  fail "profctl start --next 9.2e18: exit $rc, $(cat "$tmp/p.err")"

# still serving
expect_reply "a worker after all that" "$wk" \
  '{"v":1,"type":"hello","job":"j","role":"actor","rank":1,"host":"h1","pid":4343}' \
  '"type":"welcome"'
check_logs
grep -q "runtime error" "$tmp/profd.log" && fail "UBSan report"
echo "system test overflow: OK"
