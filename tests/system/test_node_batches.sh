#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, capture results and files sent in batches: node1 joins
# through a proxy playing a coordinator from before node_results and chunks
# (its node_welcome without "batches" and "files"), node2 through one that
# passes everything as it is. One window of both nodes' 3 ranks each: node1
# sends one node_result per rank and no node_results, one chunk per file
# and no chunks (an older coordinator refuses types it does not know),
# node2 its 3 results in node_results requests and no node_result, its
# files in chunks requests and no chunk, its first chunks request answered
# busy by its proxy (none taken) and its files sent again in requests, not
# one by one; the window completes with all 6 captures either way. node3, its limits.max_msg_bytes at 4 KiB, splits its
# 16 results and its files into requests within it.
# The links are plain tcp:// on loopback (--insecure-tcp-links).
# Usage: test_node_batches.sh BUILD_DIR
lib_name=batches
. "$(dirname "$0")/lib.sh"
port=$(free_port)
coord_port=$port
ctl() { "$profctl_bin" --url "ipc://$tmp/c/run/control.sock" "$@"; }
coordinator_start
for _ in $(seq 200); do ctl status >/dev/null 2>&1 && break; sleep 0.05; done
printf 'limits:\n  max_msg_bytes: 4KiB\n' >"$tmp/small.yaml"
layout=(x actor:3 actor:3 actor:16)
for i in 1 2 3; do
  port=$(free_port)
  older=() args=()
  [ "$i" = 1 ] && older=(--older)
  [ "$i" = 2 ] && older=(--busy-first)
  [ "$i" = 3 ] && args=(--config "$tmp/small.yaml")
  /usr/bin/python3 "$here/nngproxy.py" "tcp://127.0.0.1:$port" "tcp://127.0.0.1:$coord_port" \
    "$tmp/proxy$i.txt" "${older[@]}" 2>>"$tmp/proxy$i.log" &
  pids+=($!)
  node_start $i "${args[@]}"
  PROFD_RUN_DIR=$tmp/n$i/run "$sim" --layout "${layout[i]}" --rank-offset $(((i - 1) * 3)) \
    --steps 100000 --rate 10 --trace-bytes 4096 --host "host$i" >"$tmp/sim$i.log" 2>&1 &
  pids+=($!)
done
active() { ctl --json status | json 'sum(1 for r in d["ranks"] if r["state"] == "running")'; }
for _ in $(seq 300); do [ "$(active)" = 22 ] && break; sleep 0.05; done
[ "$(active)" = 22 ] || fail "22 ranks did not register"

s=$(($(ctl --json status | json 'max(r["step"] for r in d["ranks"])') + 30))
ctl start --steps "$s:$((s + 2))" --tool sim >"$tmp/w.txt" || fail "start"
id=$(window_id <"$tmp/w.txt")
name=$(window_name <"$tmp/w.txt")
ctl wait "$id" --timeout 60 >"$tmp/wait.txt" 2>&1 || fail "wait: $(cat "$tmp/wait.txt")"
grep -q "22 complete, 0 failed, 0 missed, 0 truncated" "$tmp/wait.txt" ||
  fail "window: $(cat "$tmp/wait.txt")"
$check "$tmp/c/save/default/$name/manifest.json" --first "$s" --last $((s + 1)) \
  --ranks "$(seq -s, 0 21)" --sim || fail "manifest"

count() { grep -c "^$1\$" "$2" || true; }
[ "$(count node_result "$tmp/proxy1.txt")" = 3 ] ||
  fail "node1 (older coordinator): 3 node_result expected: $(sort "$tmp/proxy1.txt" | uniq -c)"
[ "$(count 'node_results.*' "$tmp/proxy1.txt")" = 0 ] ||
  fail "node1 sent node_results to a coordinator that did not take them"
[ "$(count node_result "$tmp/proxy2.txt")" = 0 ] ||
  fail "node2 sent single results: $(sort "$tmp/proxy2.txt" | uniq -c)"
items=$(awk '$1 == "node_results" { n += $2 } END { print n + 0 }' "$tmp/proxy2.txt")
[ "$items" = 3 ] || fail "node2: 3 results in node_results expected, got ${items:-none}"
items=$(awk '$1 == "node_results" { n += $2; k++; if ($3 > 4096) big++ }
  END { print n + 0, k + 0, big + 0 }' "$tmp/proxy3.txt")
read -r n k big <<<"$items"
[ "$n" = 16 ] && [ "$k" -ge 2 ] && [ "$big" = 0 ] ||
  fail "node3: 16 results in 2 or more node_results of 4 KiB at most expected: $(grep node_results "$tmp/proxy3.txt")"
# files: each node's as its manifest lists them (host1..3)
files() { /usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(len(c.get("files") or []) for c in d["captures"] if c["host"] == sys.argv[2]))' \
  "$tmp/c/save/default/$name/manifest.json" "$1"; }
sent() { awk -v t="$1" '$1 == t { n += $2 } END { print n + 0 }' "$2"; }
f1=$(files host1) f2=$(files host2) f3=$(files host3)
[ "$f1" -ge 3 ] && [ "$f2" -ge 3 ] && [ "$f3" -ge 16 ] || fail "files listed: $f1 $f2 $f3"
[ "$(count chunk "$tmp/proxy1.txt")" -ge "$f1" ] && [ "$(sent chunks "$tmp/proxy1.txt")" = 0 ] ||
  fail "node1 (older coordinator): one chunk a file expected: $(sort "$tmp/proxy1.txt" | uniq -c)"
busy=$(awk '$1 == "chunks" && $4 == "busy" { n += $2 } END { print n + 0 }' "$tmp/proxy2.txt")
[ "$busy" -ge 1 ] || fail "node2: no chunks request answered busy: $(cat "$tmp/proxy2.txt")"
[ "$(count chunk "$tmp/proxy2.txt")" = 0 ] && [ "$(sent chunks "$tmp/proxy2.txt")" = $((f2 + busy)) ] ||
  fail "node2: its $f2 files in chunks, the $busy answered busy again in chunks, expected: $(sort "$tmp/proxy2.txt" | uniq -c)"
items=$(awk '$1 == "chunks" { n += $2; k++; if ($3 > 4096) big++ }
  END { print n + 0, k + 0, big + 0 }' "$tmp/proxy3.txt")
read -r n k big <<<"$items"
[ "$n" = "$f3" ] && [ "$big" = 0 ] && [ "$(count chunk "$tmp/proxy3.txt")" = 0 ] ||
  fail "node3: its $f3 files in chunks of 4 KiB of JSON at most expected: $(grep chunk "$tmp/proxy3.txt" | sort | uniq -c)"
grep -q "coordinator refused\|refused by the coordinator" "$tmp"/node*.log && fail "a result or a file was refused"
check_logs
echo "system test node batches: OK"
