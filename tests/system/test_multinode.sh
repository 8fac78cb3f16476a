#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, many nodes: a coordinator and three node daemons in their own
# network namespaces (veth links, real TCP), 24 profd-sim ranks with actor,
# rollout and ref roles and a rollout replica spanning two nodes. Checks: a
# window a late-joining node is added to, an aligned on-demand window, a link
# cut while files stream (then restored: the tree ends complete), a node that
# disappears mid-window (its captures fail, the window completes), and a
# coordinator restart under running training. Gathered files are verified
# against the checksums the nodes computed on their spool originals.
# node2 and its workers run in a time namespace whose CLOCK_MONOTONIC is
# 1000 s ahead of the others': the coordinator's step-time history, report
# and merged timeline must see every rank, and put node2's on its clock
# within the error bound it states (the measured error is printed).
# The links are plain tcp:// between the namespaces, opted in with
# --insecure-tcp-links (test_shared.sh runs them over tls+tcp://).
# Needs root (namespaces): exits 77 (skipped) otherwise.
# Usage: test_multinode.sh BUILD_DIR
set -euo pipefail
if [ "$(id -u)" -ne 0 ] || ! ip netns add pdt-probe-$$ 2>/dev/null; then
  echo "SKIP: network namespaces need root (ip netns add failed)"
  exit 77
fi
ip netns del pdt-probe-$$

# namespaces of an earlier run killed beyond cleaning up (its pid is gone)
for ns in $(ip netns list | awk '{print $1}' | grep -E '^pd(c|n[0-9]+)-[0-9]+$' || true); do
  if ! kill -0 "${ns##*-}" 2>/dev/null; then
    ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  fi
done

tag=$$
C=pdc-$tag
N=(pdn1-$tag pdn2-$tag pdn3-$tag)
del_namespaces() { for ns in "$C" "${N[@]}"; do ip netns del "$ns" 2>/dev/null || true; done; }
lib_name=mn
lib_on_exit=del_namespaces
. "$(dirname "$0")/lib.sh"

# --- the network: a star of veth links around the coordinator's namespace
ip netns add "$C"
ip -n "$C" link set lo up
for i in 1 2 3; do
  ns=${N[$((i - 1))]}
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip link add "pdc$i-$tag" type veth peer name "pdn$i-$tag"
  ip link set "pdc$i-$tag" netns "$C"
  ip link set "pdn$i-$tag" netns "$ns"
  ip -n "$C" addr add "10.88.$i.1/24" dev "pdc$i-$tag"
  ip -n "$ns" addr add "10.88.$i.2/24" dev "pdn$i-$tag"
  ip -n "$C" link set "pdc$i-$tag" up
  ip -n "$ns" link set "pdn$i-$tag" up
done

ctl() { "$profctl_bin" --url "ipc://$tmp/c/run/control.sock" "$@"; }
ranks() { ctl --json status | json 'sum(1 for r in d["ranks"] if r["state"] != "lost")'; }
step_now() { ctl --json status | json 'max((r["step"] or 0) for r in d["ranks"])'; }
wid() { sed -n 's/^started window \([0-9]*\) .*/\1/p' | head -1; }
wname() { sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' | head -1; }

start_coordinator() {
  mkdir -p "$tmp/c"
  ip netns exec "$C" "$profd" --coordinator-listen tcp://0.0.0.0:7710 --insecure-tcp-links \
    --node coordinator --run-dir "$tmp/c/run" --save-path "$tmp/c/out" 2>>"$tmp/coordinator.log" &
  coord_pid=$!
  pids=($coord_pid "${pids[@]}") # stopped after the nodes (check_logs)
  for _ in $(seq 100); do ctl status >/dev/null 2>&1 && return 0; sleep 0.05; done
  fail "coordinator did not start"
}
node_pid=()
# node2's clock: 1000 s ahead (a time namespace per process, the same offset)
SKEW=1000
clock_of() { # i: the command prefix that gives node i its clock
  if [ "$1" = 2 ]; then echo "unshare --time --monotonic $SKEW --fork --kill-child"; fi
}
# unshare's parent ignores SIGTERM: its child is killed at the end too
track_child() { # i pid
  [ "$1" = 2 ] || return 0
  local c
  for _ in $(seq 100); do
    c=$(pgrep -P "$2" | head -1 || true)
    if [ -n "$c" ]; then pids+=($c); return 0; fi
    sleep 0.05
  done
  fail "no process under unshare $2"
}
start_node() { # i
  local i=$1 ns=${N[$(($1 - 1))]}
  mkdir -p "$tmp/n$i"
  ip netns exec "$ns" $(clock_of "$i") "$profd" --coordinator-url "tcp://10.88.$i.1:7710" --insecure-tcp-links \
    --node "node$i" --run-dir "$tmp/n$i/run" --save-path "$tmp/n$i/out" 2>>"$tmp/node$i.log" &
  node_pid[$i]=$!
  pids+=(${node_pid[$i]})
  track_child "$i" "${node_pid[$i]}"
}
sim_pid=()
start_sim() { # i layout rank-offset replica-offset start-step
  local i=$1 ns=${N[$(($1 - 1))]}
  ip netns exec "$ns" $(clock_of "$i") env PROFD_RUN_DIR="$tmp/n$i/run" "$sim" --layout "$2" \
    --rank-offset "$3" --replica-offset "$4" --start-step "$5" --steps 100000 --rate 10 \
    --substeps 2 --trace-bytes 8192 --host "host$i" >>"$tmp/sim$i.log" 2>&1 &
  sim_pid[$i]=$!
  pids+=(${sim_pid[$i]})
  track_child "$i" "${sim_pid[$i]}"
}
wait_ranks() { # n
  for _ in $(seq 200); do [ "$(ranks)" = "$1" ] && return 0; sleep 0.05; done
  fail "expected $1 ranks at the coordinator, have $(ranks)"
}

start_coordinator
start_node 1
start_node 2
# node1: actor 0-3, rollout 4-7 (replicas 0, 0, 1, 1)
# node2: rollout 8-11 (replicas 1, 1, 2, 2: replica 1 spans node1 and node2), ref 12-15
start_sim 1 actor:4,rollout:4@2 0 0 1
start_sim 2 rollout:4@2,ref:4 8 1 1
wait_ranks 16
# the coordinator's status table: the ranks grouped by node
ctl status >"$tmp/status.txt" || fail "status"
grep -qx "node node1: 8 rank(s)" "$tmp/status.txt" && grep -qx "node node2: 8 rank(s)" "$tmp/status.txt" ||
  fail "status not grouped by node: $(cat "$tmp/status.txt")"

# 1. a window ahead of time; node3 joins late and is added to it
s=$(( $(step_now) + 40 ))
ctl start --steps "$s:$((s + 2))" --tool sim >"$tmp/wa.txt" || fail "start A"
grep -q "16 rank(s)" "$tmp/wa.txt" || fail "A: $(cat "$tmp/wa.txt")"
wa=$(wid <"$tmp/wa.txt"); na=$(wname <"$tmp/wa.txt")
start_node 3
start_sim 3 actor:4,ref:4 16 0 "$(step_now)" # node3: actor 16-19, ref 20-23
wait_ranks 24
[ "$(ctl --json windows "$wa" | json 'd["windows"][0]["selected"]')" = 24 ] ||
  fail "the late node's ranks did not join window A"
ctl wait "$wa" --timeout 60 >"$tmp/waita.txt" || fail "wait A: $(cat "$tmp/waita.txt")"
$check "$tmp/c/out/default/$na/manifest.json" --first "$s" --last $((s + 1)) \
  --ranks "$(seq -s, 0 23)" --sim || fail "A manifest"

# 2. an aligned on-demand window over every rank of the three nodes
ctl start --next 2 --tool sim >"$tmp/wb.txt" || fail "start B"
wb=$(wid <"$tmp/wb.txt"); nb=$(wname <"$tmp/wb.txt")
grep -q "24 rank(s)" "$tmp/wb.txt" || fail "B: $(cat "$tmp/wb.txt")"
ctl wait "$wb" --timeout 60 >/dev/null || fail "wait B"
fb=$(json 'd["window"]["steps"][0]' <"$tmp/c/out/default/$nb/manifest.json")
$check "$tmp/c/out/default/$nb/manifest.json" --first "$fb" --last $((fb + 1)) \
  --ranks "$(seq -s, 0 23)" --sim || fail "B manifest: not every rank captured the same steps"
# the coordinator's step times: every rank of the three nodes, by role
ctl top --once >"$tmp/top.txt" || fail "top"
for role in actor rollout ref; do
  grep -qE "^default +$role +8 " "$tmp/top.txt" || fail "top $role: $(cat "$tmp/top.txt")"
done
# B's report and merged timeline: node2's clock is $SKEW s ahead
ctl report "$wb" >/dev/null || fail "report B"
ctl merge "$wb" >"$tmp/merge.txt" || fail "merge B: $(cat "$tmp/merge.txt")"
/usr/bin/python3 - "$tmp/c/out/default/$nb" "$SKEW" <<'PY' >"$tmp/clock.txt" || fail "B's clocks"
import json, os, sys
d, skew = sys.argv[1], int(sys.argv[2]) * 1000000
s = json.load(open(os.path.join(d, "steps.json")))
assert sorted(r["rank"] for r in s["ranks"]) == list(range(24)), [r["rank"] for r in s["ranks"]]
first, end = s["window"]
node_of = {}
all_times = []
for r in s["ranks"]:
    node_of[r["rank"]] = r["node"]
    times = [r["step_us"][st - s["steps"][0]] for st in range(first, end)]
    # a rank's own times, none skewed by node2's clock (that would be
    # +-1000 s); a loaded machine stretches a step and shortens the next
    # (profd-sim keeps to its schedule), so no bound on one step
    assert all(0 < t < 10000000 for t in times), (r["rank"], times)
    all_times.extend(times)
    true = -skew if r["node"] == "node2" else 0
    assert r["offset_err_us"] > 0 and abs(r["offset_us"] - true) <= r["offset_err_us"], r
# 10 steps/s at most: over every rank and step, the median is at least
# half the period whatever the load
all_times.sort()
assert all_times[len(all_times) // 2] >= 50000, all_times
t = json.load(open(os.path.join(d, "merged.trace.json")))
info = t["otherData"]["profd"]
assert info["files"] == 24 and info["unaligned"] == 0, info
rank_of = {e["pid"]: int(e["args"]["name"].split()[1]) for e in t["traceEvents"]
           if e.get("ph") == "M" and e["name"] == "process_name"}
worst = {"node2": 0, "others": 0}
for e in t["traceEvents"]:
    mono = (e.get("args") or {}).get("profd_mono_us")
    if mono is None:
        continue
    node = node_of[rank_of[e["pid"]]]
    true = -skew if node == "node2" else 0
    err = abs(e["ts"] - mono - true)
    k = "node2" if node == "node2" else "others"
    worst[k] = max(worst[k], err)
    assert err <= info["clock_err_us"], (node, e, err, info["clock_err_us"])
print("clock across nodes: node2 %d s ahead: largest error %d us (other nodes %d us), stated bound %d us"
      % (skew // 1000000, worst["node2"], worst["others"], info["clock_err_us"]))
PY
cat "$tmp/clock.txt"

# the rollout replica 1 spans node1 and node2
ctl start --next 1 --roles rollout --replica-ranks 1 --phases generate --tool sim >"$tmp/wr.txt" ||
  fail "start R"
grep -q "4 rank(s)" "$tmp/wr.txt" || fail "replica 1 should have 4 ranks: $(cat "$tmp/wr.txt")"
ctl wait "$(wid <"$tmp/wr.txt")" --timeout 60 >/dev/null || fail "wait R"
nr=$(wname <"$tmp/wr.txt"); fr=$(json 'd["window"]["steps"][0]' <"$tmp/c/out/default/$nr/manifest.json")
$check "$tmp/c/out/default/$nr/manifest.json" --first "$fr" --last "$fr" --ranks 6,7,8,9 \
  --role rollout --phases generate --replicas 1 --sim || fail "R manifest"

# 3. a link cut while files stream: slow node2's link, cut it, restore it
ip netns exec "${N[1]}" tc qdisc add dev "pdn2-$tag" root tbf rate 40mbit burst 64kb latency 200ms
ctl start --next 1 --tool sim --settings '{"bytes":3000000}' >"$tmp/wc.txt" || fail "start C"
wc=$(wid <"$tmp/wc.txt"); nc=$(wname <"$tmp/wc.txt")
poll 200 True query 'd["windows"][0]["pending_files"] > 0 and d["windows"][0]["bytes"] > 0' \
  ctl --json windows "$wc" || fail "C: no transfer in progress to cut"
ip -n "${N[1]}" link set "pdn2-$tag" down
sleep 3
[ "$(ctl --json windows "$wc" | json 'd["windows"][0]["state"]')" != done ] ||
  fail "C finished while node2 was cut off"
ip -n "${N[1]}" link set "pdn2-$tag" up
ctl wait "$wc" --timeout 120 >"$tmp/waitc.txt" || fail "wait C: $(cat "$tmp/waitc.txt")"
fc=$(json 'd["window"]["steps"][0]' <"$tmp/c/out/default/$nc/manifest.json")
$check "$tmp/c/out/default/$nc/manifest.json" --first "$fc" --last "$fc" \
  --ranks "$(seq -s, 0 23)" --sim || fail "C manifest after the link came back"
ip netns exec "${N[1]}" tc qdisc del dev "pdn2-$tag" root

# 4. a node that disappears mid-window: its captures fail, the window completes
s=$(( $(step_now) + 40 ))
ctl start --steps "$s:$((s + 1000))" --roles actor --tool sim >"$tmp/wd.txt" || fail "start D"
wd=$(wid <"$tmp/wd.txt"); nd=$(wname <"$tmp/wd.txt")
in_d() { [ "$(step_now)" -ge $((s + 2)) ]; }
wait_until "the ranks inside window D (step $((s + 2)))" 60 in_d
kill -9 "${sim_pid[3]}" "${node_pid[3]}"
ctl stop "$wd" >/dev/null || fail "stop D"
set +e
ctl wait "$wd" --timeout 60 >"$tmp/waitd.txt" 2>&1
rc=$?
set -e
[ "$rc" = 3 ] || fail "wait D: exit $rc: $(cat "$tmp/waitd.txt")"
/usr/bin/python3 - "$tmp/c/out/default/$nd/manifest.json" <<'PY' || fail "D manifest"
import json, sys
m = json.load(open(sys.argv[1]))
by = {c["rank"]: c for c in m["captures"]}
assert sorted(by) == [0, 1, 2, 3, 16, 17, 18, 19], sorted(by)
for r in (16, 17, 18, 19):
    c = by[r]
    assert c["status"] == "failed" and "node3" in c["reason"], c
lasts = {by[r]["last_step"] for r in (0, 1, 2, 3)}
assert all(by[r]["status"] == "complete" for r in (0, 1, 2, 3)), m["captures"]
assert len(lasts) == 1, lasts
PY

# 5. the coordinator restarts: training goes on, the nodes come back
before=$("$profctl_bin" --url "ipc://$tmp/n1/run/control.sock" --json status |
  json 'max(r["step"] for r in d["ranks"])')
kill -TERM "$coord_pid"
for _ in $(seq 100); do kill -0 "$coord_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$coord_pid" 2>/dev/null; then
  command -v gdb >/dev/null && gdb -p "$coord_pid" -batch -ex "thread apply all bt" >&2 2>/dev/null
  fail "the coordinator did not stop within 10 s of SIGTERM"
fi
wait "$coord_pid" || fail "the coordinator exited non-zero on SIGTERM"
n1_step() {
  "$profctl_bin" --url "ipc://$tmp/n1/run/control.sock" --json status | json 'max(r["step"] for r in d["ranks"])'
}
moved_on() { [ "$(n1_step)" -gt "$before" ]; }
wait_until "node1's ranks past step $before without the coordinator" 60 moved_on
start_coordinator
wait_ranks 16
ctl start --next 1 --tool sim >"$tmp/we.txt" || fail "start E"
ctl wait "$(wid <"$tmp/we.txt")" --timeout 60 >/dev/null || fail "wait E after the restart"

check_logs
echo "system test many nodes: OK"
