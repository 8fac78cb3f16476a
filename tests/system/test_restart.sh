#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, a coordinator that restarts: it keeps its unfinished windows
# in its journal, <save_path>/.profd-coordinator.journal, and takes up
# where it stopped.
#  1. killed (SIGKILL) while node daemons stream a window's files: started
#     again, it keeps its identity, the nodes register again without
#     dropping the window, the files resume from their .part and the window
#     completes with every capture and checksum;
#  2. stopped while a window waits for future steps, one node gone for good:
#     the window still completes, that node's ranks failed with the reason;
#  3. a corrupt journal: the coordinator does not start, says why in one
#     line (the file and the line), and leaves the file as it was.
# The links are plain tcp:// on loopback, opted in with --insecure-tcp-links
# (refused without it, warned about with it); test_shared.sh runs tls+tcp://.
# Usage: test_restart.sh BUILD_DIR
lib_name=restart
. "$(dirname "$0")/lib.sh"
ctl() { "$profctl_bin" --url "ipc://$tmp/c/run/control.sock" "$@"; }
port=$(free_port)
state=$tmp/c/save/.profd-coordinator.journal

# small chunks: streaming a window takes long enough to be cut
printf 'coordinator:\n  chunk_bytes: 4KiB\n' >"$tmp/node.yaml"
printf 'coordinator:\n  node_timeout_ms: 4000\n' >"$tmp/coordinator.yaml"
coordinator_pid=
start_coordinator() { # LOG
  "$profd" --config "$tmp/coordinator.yaml" --coordinator-listen "tcp://127.0.0.1:$port" \
    --insecure-tcp-links --node coordinator --run-dir "$tmp/c/run" --save-path "$tmp/c/save" 2>>"$tmp/$1" &
  coordinator_pid=$!
  pids=($coordinator_pid "${pids[@]}") # stopped after the nodes (check_logs), also when restarted
  for _ in $(seq 200); do ctl status >/dev/null 2>&1 && return 0; sleep 0.05; done
  fail "the coordinator did not start"
}
ranks() { ctl --json status | json 'sum(1 for r in d["ranks"] if r["state"] != "lost")'; }
wait_ranks() { # N
  for _ in $(seq 300); do [ "$(ranks)" = "$1" ] && return 0; sleep 0.05; done
  fail "$1 ranks did not register (have $(ranks))"
}

# plain tcp:// links without the option: refused at start, in one line
reason="plain tcp:// node links are unauthenticated and unencrypted: use tls+tcp:// (with tls.ca_file, tls.cert_file and tls.key_file), or set security.insecure_tcp_links: true (--insecure-tcp-links)"
rc=0
"$profd" --coordinator-listen "tcp://127.0.0.1:$port" --node coordinator --run-dir "$tmp/x/run" \
  --save-path "$tmp/x/save" 2>"$tmp/refused.err" || rc=$?
[ "$rc" = 1 ] && [ "$(cat "$tmp/refused.err")" = "profd: coordinator listen endpoint tcp://127.0.0.1:$port: $reason" ] ||
  fail "--coordinator-listen tcp:// without --insecure-tcp-links: exit $rc, $(cat "$tmp/refused.err")"
printf 'coordinator:\n  url: tcp://127.0.0.1:%s\n' "$port" >"$tmp/plain.yaml"
rc=0
"$profd" --config "$tmp/plain.yaml" --node n0 --run-dir "$tmp/x/run" --save-path "$tmp/x/save" \
  2>"$tmp/refused.err" || rc=$?
[ "$rc" = 1 ] && [ "$(cat "$tmp/refused.err")" = "profd: $tmp/plain.yaml:2:8: key 'coordinator.url': $reason" ] ||
  fail "coordinator.url: tcp:// without security.insecure_tcp_links: exit $rc, $(cat "$tmp/refused.err")"
[ -e "$tmp/x" ] && fail "a refused daemon created its folders"

start_coordinator coordinator.log
grep -q "warn coord: tcp://127.0.0.1:$port is plain tcp:// (security.insecure_tcp_links): the node links are unauthenticated and unencrypted" \
  "$tmp/coordinator.log" || fail "no warning about the insecure coordinator endpoint"
node_pids=()
sim_pids=()
for i in 1 2; do
  "$profd" --config "$tmp/node.yaml" --coordinator-url "tcp://127.0.0.1:$port" --node "node$i" \
    --insecure-tcp-links --run-dir "$tmp/n$i/run" --save-path "$tmp/n$i/save" 2>"$tmp/node$i.log" &
  node_pids+=($!)
  pids+=($!)
done
for i in 1 2; do
  for _ in $(seq 100); do [ -S "$tmp/n$i/run/worker.sock" ] && break; sleep 0.05; done
  PROFD_RUN_DIR=$tmp/n$i/run "$sim" --layout actor:4 --rank-offset $(((i - 1) * 4)) \
    --steps 100000 --rate 10 --trace-bytes 3000000 --host "host$i" >"$tmp/sim$i.log" 2>&1 &
  sim_pids+=($!)
  pids+=($!)
done
wait_ranks 8
for _ in $(seq 200); do
  [ "$(ctl --json status | json 'all(r["step_ms"] > 0 for r in d["ranks"])')" = True ] && break
  sleep 0.05
done
instance=$(ctl --json status | json 'd["instance"]')

# ---- 1. killed while streaming -------------------------------------------
ctl start --next 1 --tool sim >"$tmp/w1.txt" || fail "start"
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w1.txt")
name=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w1.txt")
# a capture's file partly received is a .part in the window's folder: seen
# (the coordinator writes it as chunks arrive), the node daemons are stopped
# so the streams stand still until the coordinator is killed: the kill cuts
# them, however loaded the machine
cut=
for _ in $(seq 3000); do
  if [ -n "$(find "$tmp/c/save/default/$name" -name '*.part' -size +100k 2>/dev/null | head -1)" ]; then
    kill -STOP "${node_pids[@]}"
    cut=$(ctl --json windows "$id" | json '(d["windows"][0]["pending_files"], d["windows"][0]["pending_bytes"])')
    break
  fi
  sleep 0.01
done
[ -n "$cut" ] || { kill -CONT "${node_pids[@]}"; fail "never saw the window half streamed"; }
# files announced and partly received: 8 captures of 3 MB in 4 KiB chunks
/usr/bin/python3 -c "f, b = $cut; exit(0 if f > 0 and 0 < b < 8 * 3000000 - 100000 else 1)" ||
  { kill -CONT "${node_pids[@]}"; fail "a .part but not half streamed: $cut"; }
sleep 0.3 # past the journal's write delay
kill -9 "$coordinator_pid"
wait "$coordinator_pid" 2>/dev/null || true
[ -f "$state" ] || fail "no journal"
parts=$(find "$tmp/c/save/default/$name" -name '*.part' | wc -l)
[ "$parts" -gt 0 ] || fail "no partial file left by the kill (cut at $cut)"
# back before the nodes run again: they learn of the restart only from
# what the new coordinator answers (their connections come back at once);
# a node it restored from its state must join again before it is heard
start_coordinator coordinator.log
kill -CONT "${node_pids[@]}"
grep -q "1 unfinished window(s), 2 node(s) awaited" "$tmp/coordinator.log" ||
  fail "the state was not read back"
[ "$(ctl --json status | json 'd["instance"]')" = "$instance" ] || fail "a new instance"
ctl wait "$id" --timeout 90 >/dev/null || fail "the window did not complete after the restart"
first=$(json 'd["window"]["steps"][0]' <"$tmp/c/save/default/$name/manifest.json")
$check "$tmp/c/save/default/$name/manifest.json" --first "$first" --last "$first" \
  --ranks 0,1,2,3,4,5,6,7 --sim || fail "manifest after the restart"
[ -z "$(find "$tmp/c/save/default/$name" -name '*.part')" ] || fail ".part files left"
grep -q "node node1 is back" "$tmp/coordinator.log" || fail "node1 was not taken back"
grep -q "node node2 is back" "$tmp/coordinator.log" || fail "node2 was not taken back"
grep -q "the coordinator restarted" "$tmp"/node*.log && fail "a node dropped its windows"
echo "restart 1 (killed while streaming at $cut): OK"

# ---- 2. stopped with a window ahead; one node does not come back ----------
step=$(ctl --json status | json 'max(r["step"] for r in d["ranks"])')
first=$((step + 80)) # 8 s ahead: past the node's timeout
ctl start --steps "$first:$((first + 1))" --tool sim --settings '{"bytes": 4096}' \
  >"$tmp/w2.txt" || fail "start 2"
id=$(window_id <"$tmp/w2.txt")
name=$(window_name <"$tmp/w2.txt")
poll 100 8 query 'd["windows"][0]["selected"]' ctl --json windows "$id" || true
kill -TERM "$coordinator_pid"
wait "$coordinator_pid" 2>/dev/null || true
kill -TERM "${sim_pids[1]}"
kill -9 "${node_pids[1]}"
start_coordinator coordinator.log
grep -q "1 unfinished window(s)" "$tmp/coordinator.log" || fail "window 2 not read back"
rc=0
ctl wait "$id" --timeout 60 >/dev/null || rc=$?
[ "$rc" = 3 ] || fail "window 2: profctl wait exit $rc, expected 3 (incomplete)"
manifest=$tmp/c/save/default/$name/manifest.json
/usr/bin/python3 - "$manifest" <<'EOF' || fail "window 2 manifest"
import json, sys
m = json.load(open(sys.argv[1]))
caps = {c["rank"]: c for c in m["captures"]}
assert sorted(caps) == list(range(8)), sorted(caps)
for r in range(4):
    assert caps[r]["status"] == "complete", (r, caps[r])
for r in range(4, 8):
    assert caps[r]["status"] == "failed", (r, caps[r])
    assert "lost with node node2 (did not come back within" in caps[r]["reason"], caps[r]["reason"]
EOF
echo "restart 2 (a node gone for good): OK"

# ---- 3. a corrupt journal -------------------------------------------------
kill -TERM "$coordinator_pid"
wait "$coordinator_pid" 2>/dev/null || true
# a whole line that is no record (a torn last line, without its newline,
# would be cut instead)
bad=$(($(wc -l <"$state") + 1))
printf '{"version": 1, "instance": \n' >>"$state"
sum=$(md5sum <"$state")
rc=0
"$profd" --coordinator-listen "tcp://127.0.0.1:$port" --insecure-tcp-links --node coordinator \
  --run-dir "$tmp/c/run" --save-path "$tmp/c/save" 2>"$tmp/corrupt.err" || rc=$?
[ "$rc" = 1 ] || fail "a corrupt journal: exit $rc, expected 1"
grep -q "^profd: journal $state:$bad: .*(move the file away to start afresh)$" "$tmp/corrupt.err" ||
  fail "no clear error: $(cat "$tmp/corrupt.err")"
[ "$(md5sum <"$state")" = "$sum" ] || fail "the corrupt journal was overwritten"
# well-formed, but a file arriving for a member the window does not have
printf '{"kind":"head","head":{"version":1,"instance":"0123456789abcdef"}}
{"kind":"window","window":{"id":1,"name":"w1","job":"default","dir":"%s/c/save/default/w1","root_len":%d,"state":"gathering"}}
{"kind":"incoming","id":1,"index":0,"incoming":{"path":"x/trace.json","member":3}}\n' \
  "$tmp" $((${#tmp} + 7)) >"$state"
rc=0
"$profd" --coordinator-listen "tcp://127.0.0.1:$port" --insecure-tcp-links --node coordinator \
  --run-dir "$tmp/c/run" --save-path "$tmp/c/save" 2>"$tmp/corrupt.err" || rc=$?
[ "$rc" = 1 ] || fail "an inconsistent journal: exit $rc, expected 1"
grep -q "^profd: journal $state:3: an incoming file is not valid (move the file away" \
  "$tmp/corrupt.err" || fail "no clear error: $(cat "$tmp/corrupt.err")"
echo "restart 3 (a corrupt journal): OK"
check_logs
echo "system test coordinator restart: OK"
