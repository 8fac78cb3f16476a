#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, one node: the real profd, driven by profctl, with profd-sim
# workers (9 ranks in 3 roles, rollout in 2 replicas). Reads the tree and the
# manifests. Also: malformed control requests, profctl usage errors, a window
# that selects nobody, an aligned stop, and a clean SIGTERM.
# Usage: test_onenode.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
export PROFD_RUN_DIR=$tmp/run
profctl() { "$profctl_bin" "$@"; }

"$profd" --save-path "$tmp/out" --log-level info 2>"$tmp/profd.log" &
daemon_pid=$!
pids+=($daemon_pid)
for _ in $(seq 100); do profctl status >/dev/null 2>&1 && break; sleep 0.05; done
profctl status >/dev/null || fail "profd did not come up"

"$sim" --layout actor:3,rollout:4@2,ref:2 --steps 400 --rate 20 --substeps 4 \
  --trace-bytes 4096 >"$tmp/sim.log" 2>&1 &
sim_pid=$!
pids+=($sim_pid)
registered_ranks 9


# 1. explicit steps, half-open range, every rank, end to end
s=$(( $(step_now) + 40 ))
profctl start --steps "$s:$((s + 3))" --tool sim >"$tmp/w1.txt" || fail "start w1"
w1=$(window_id <"$tmp/w1.txt")
grep -q "steps $s-$((s + 2)), 9 rank(s)" "$tmp/w1.txt" || fail "w1: $(cat "$tmp/w1.txt")"
profctl wait "$w1" --timeout 60 >"$tmp/wait1.txt" || fail "wait w1: $(cat "$tmp/wait1.txt")"
grep -q "9 complete, 0 failed, 0 missed, 0 truncated" "$tmp/wait1.txt" || fail "w1 summary"
man1=$tmp/out/default/w$w1-steps$s-$((s + 2))/manifest.json
$check "$man1" --first "$s" --last $((s + 2)) --ranks 0,1,2,3,4,5,6,7,8 --sim ||
  fail "w1 manifest"

# 2. a step list: one window per step
s=$(( $(step_now) + 40 ))
profctl start --steps "$s,$((s + 2))" --roles actor,ref --tool sim >"$tmp/w2.txt" || fail "start w2"
[ "$(grep -c '^started window' "$tmp/w2.txt")" = 2 ] || fail "w2: two windows expected"
for id in $(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w2.txt"); do
  profctl wait "$id" --timeout 60 >/dev/null || fail "wait $id"
done
w2a=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w2.txt" | head -1)
$check "$tmp/out/default/w$w2a-step$s/manifest.json" --first "$s" --last "$s" \
  --ranks 0,1,2,7,8 --sim || fail "w2a manifest"
$check "$tmp/out/default/w$((w2a + 1))-step$((s + 2))/manifest.json" --first $((s + 2)) \
  --last $((s + 2)) --ranks 0,1,2,7,8 --sim || fail "w2b manifest"

# 3. discrete, rollout replica 0 only, one phase, sub-step schedule
profctl start --next 2 --roles rollout --replica-ranks 0 --phases generate \
  --schedule wait=1,warmup=1,active=2,repeat=1 --tool sim >"$tmp/w3.txt" || fail "start w3"
w3=$(window_id <"$tmp/w3.txt")
name3=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w3.txt")
first3=$(echo "$name3" | sed -n 's/^w[0-9]*-steps\([0-9]*\)-\([0-9]*\)$/\1/p')
[ -n "$first3" ] || fail "w3 name $name3"
profctl wait "$w3" --timeout 60 >/dev/null || fail "wait w3"
$check "$tmp/out/default/$name3/manifest.json" --first "$first3" --last $((first3 + 1)) \
  --ranks 3,4 --role rollout --phases generate --replicas 0 --per-step --substeps 2-3 --sim ||
  fail "w3 manifest"
[ -d "$tmp/out/default/$name3/rollout.generate/rank3-replica0-$(hostname)/step$first3" ] ||
  fail "w3 folder layout"

# 4. an open window stopped by profctl stop: every rank ends at the same step
s=$(( $(step_now) + 40 ))
profctl start --steps "$s:" --roles actor --tool sim >"$tmp/w4.txt" || fail "start w4"
w4=$(window_id <"$tmp/w4.txt")
while [ "$(step_now)" -lt $((s + 3)) ]; do sleep 0.05; done
profctl stop "$w4" >"$tmp/stop4.txt" || fail "stop w4"
profctl wait "$w4" --timeout 60 >/dev/null || fail "wait w4"
man4=$(ls "$tmp"/out/default/w"$w4"-from"$s"/manifest.json)
last4=$(json 'd["window"]["steps"][1] - 1' <"$man4")
[ "$last4" -ge $((s + 3)) ] || fail "w4 stopped too early ($last4)"
$check "$man4" --first "$s" --last "$last4" --ranks 0,1,2 --sim || fail "w4 manifest"

# 5. a window that selects no rank is accepted, reported, and wait says so
profctl start --steps 5 --job nosuchjob --tool sim >"$tmp/w5.txt" 2>"$tmp/w5.err" ||
  fail "start w5"
grep -q "0 rank(s)" "$tmp/w5.txt" || fail "w5: $(cat "$tmp/w5.txt")"
grep -q "selects no registered rank of job 'nosuchjob'" "$tmp/w5.err" || fail "w5 warning"
w5=$(window_id <"$tmp/w5.txt")
if profctl wait "$w5" --timeout 5 2>"$tmp/wait5.err"; then fail "wait w5 should fail"; fi
grep -q "selects no registered rank: nothing to wait for" "$tmp/wait5.err" || fail "wait5 msg"

# 6. malformed requests get error replies; the daemon keeps serving
ctl=ipc://$PROFD_RUN_DIR/control.sock
reply() { nngcat --req --dial "$ctl" --recv-timeout 5 --format ascii "$@" 2>&1 || true; }
reply --data 'not json' | grep -q '"name":"EPROTO"' || fail "garbage not refused"
reply --data '{"v":2,"type":"status"}' | grep -q '"name":"EVERSION"' || fail "version"
reply --data '{"v":1,"type":"reboot"}' | grep -q '"name":"ETYPE"' || fail "unknown type"
reply --data '{"v":1,"type":"start","steps":[1],"selectors":[{"ranks":"x"}]}' |
  grep -q "selectors\[0\].ranks': expected array" || fail "schema"
head -c 1100000 /dev/zero | tr '\0' ' ' >"$tmp/big.json"
reply --file "$tmp/big.json" | grep -q '"name":"ETOOBIG"' || fail "oversized"
wk=ipc://$PROFD_RUN_DIR/worker.sock
nngcat --req --dial "$wk" --recv-timeout 5 --format ascii --data '{"v":1,"type":"bye","client":999}' |
  grep -q '"name":"ECLIENT"' || fail "worker endpoint: unknown client"
bad=$(profctl --json status | json 'd["bad_requests"]')
[ "$bad" -ge 5 ] || fail "bad requests not counted ($bad)"
[ "$(profctl --json status | json 'len(d["ranks"])')" = 9 ] || fail "ranks lost after bad input"

# 7. profctl usage errors: exit 2 and a reason; unreachable daemon: exit 1
set +e
profctl start --steps abc >/dev/null 2>"$tmp/e1"; [ $? = 2 ] || fail "bad --steps exit"
grep -q "\-\-steps: expected" "$tmp/e1" || fail "bad --steps message"
profctl frobnicate >/dev/null 2>"$tmp/e2"; [ $? = 2 ] || fail "unknown command exit"
grep -q "unknown command 'frobnicate'" "$tmp/e2" || fail "unknown command message"
profctl wait >/dev/null 2>&1; [ $? = 2 ] || fail "wait without id"
profctl start --next 2 --schedule wait=1 >/dev/null 2>&1; [ $? = 2 ] || fail "schedule"
profctl --url "ipc://$tmp/none.sock" status >/dev/null 2>"$tmp/e3"; [ $? = 1 ] || fail "no daemon"
grep -q "cannot reach profd" "$tmp/e3" || fail "no daemon message"
profctl stop 999 >/dev/null 2>"$tmp/e4"; [ $? = 1 ] || fail "stop unknown"
grep -q "no window 999 (ENOENT)" "$tmp/e4" || fail "stop unknown message"
set -e

# 8. windows list, JSON
profctl windows | grep -q "w$w1-steps" || fail "windows table"
[ "$(profctl --json windows | json 'sum(1 for w in d["windows"] if w["state"] == "done")')" = 5 ] ||
  fail "5 windows done expected"

# 9. clean shutdown: the sim ends its workers, the daemon exits 0 on SIGTERM
kill "$sim_pid"; wait "$sim_pid" || true; sim_pid=
kill -TERM "$daemon_pid"
if ! wait "$daemon_pid"; then daemon_pid=; fail "profd exited non-zero on SIGTERM"; fi
daemon_pid=
check_logs
echo "system test one node: OK"
