#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, a coordinator acknowledges only what its journal holds.
# A node daemon forgets a result, a file or a plan once the coordinator has
# acknowledged it; a coordinator killed (SIGKILL) after its reply and
# before its state file holds what it replied would come back without it,
# and the window's captures would be failed ("left node") although their
# traces lie in the tree (seen in the fault-injection soak: 16 tree entries
# of one window not in its manifest).
# Here the coordinator cannot write its journal at all (a file-size limit,
# RLIMIT_FSIZE, set on the running process at the journal's size: every
# write past it fails with EFBIG) from the moment its node holds the
# window's plan until it is killed, after the window's steps, once the node
# has sent its results. Started again without the limit, it must still
# complete the window with every capture, and every trace in the tree must
# be in the manifest:
#  1. nothing the node sent while the journal could not be written was
#     acknowledged (the node sends it again to the restarted coordinator);
#  2. the coordinator retries the write and says why it cannot;
#  3. a result sent again for a rank already reported (its reply was lost)
#     is acknowledged, not refused.
# The links are plain tcp:// on loopback (--insecure-tcp-links).
# Usage: test_coord_durable.sh BUILD_DIR
lib_name=cdurable
. "$(dirname "$0")/lib.sh"
port=$(free_port)
ctl() { "$profctl_bin" --url "ipc://$tmp/c/run/control.sock" "$@"; }
state=$tmp/c/save/.profd-coordinator.journal
# as lib.sh's coordinator_start, but its log goes through a pipe: a
# file-size limit on the coordinator (below) would stop its writes to a log
# file too, and the log must say why the journal cannot be written
start_coordinator() {
  "$profd" --coordinator-listen "tcp://127.0.0.1:$port" --insecure-tcp-links --node coordinator \
    --run-dir "$tmp/c/run" --save-path "$tmp/c/save" 2> >(exec cat >>"$tmp/coordinator.log") &
  coord_pid=$!
  pids=("$coord_pid" "${pids[@]}")
  for _ in $(seq 200); do ctl status >/dev/null 2>&1 && return 0; sleep 0.05; done
  fail "the coordinator did not start"
}
start_coordinator
node_start 1
rate=10
launched=$(date +%s%N)
PROFD_RUN_DIR=$tmp/n1/run "$sim" --layout actor:4 --steps 100000 --rate $rate --trace-bytes 200000 \
  --host host1 >"$tmp/sim.log" 2>&1 &
pids+=($!)
running() { ctl --json status | json 'sum(1 for r in d["ranks"] if r["state"] == "running")'; }
for _ in $(seq 300); do [ "$(running)" = 4 ] && break; sleep 0.05; done
[ "$(running)" = 4 ] || fail "4 ranks did not register"

# 20 s ahead of any rank by the clock: the journal's writes are blocked
# before the window's first step (checked below, not assumed)
s=$(($(sim_step_bound "$launched" $rate) + 20 * rate))
ctl start --steps "$s:$((s + 2))" --tool sim >"$tmp/w.txt" || fail "start"
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w.txt")
name=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w.txt")
# the node holds the plan (the coordinator wrote the window before it told
# anyone): its log says so at once, a loaded machine's status polls lag
mirrored() { grep -q "mirror: window $name from the coordinator" "$tmp/node1.log"; }
wait_until "node1 to get the plan" 60 mirrored
grep -q "\"$name\"" "$state" || fail "the journal does not hold the started window"
# no write to the journal succeeds from here on (nor to any file past that
# size: the files the node streams stop there too)
prlimit --pid "$coord_pid" --fsize="$(stat -c %s "$state")" ||
  fail "cannot block the journal's writes"
b=$(sim_step_bound "$launched" $rate)
[ "$b" -le "$s" ] || fail "the journal's writes blocked too late: the ranks may have begun step $s (none from $b)"

# the window's steps pass and the node sends its results
dir=$tmp/c/save/default/$name
forwarded() { grep -q "window $name: forwarding 4 rank(s) to the coordinator" "$tmp/node1.log"; }
wait_until "node1 to forward its results" 90 forwarded
write_failed() {
  grep -q "cannot write $state: File too large (kept in memory, written later)" \
    "$tmp/coordinator.log"
}
wait_until "the coordinator to say why it cannot write its journal" 60 write_failed
sleep 1.5 # and a retry of the write (every second): an absence is checked over time
[ "$(ctl --json windows "$id" | json 'd["windows"][0]["state"]')" != done ] ||
  fail "the window reads done while the coordinator cannot write its journal"
kill -9 "$coord_pid"
wait "$coord_pid" 2>/dev/null || true

start_coordinator
grep -q "1 unfinished window(s), 1 node(s) awaited" "$tmp/coordinator.log" ||
  fail "the state was not read back"
rc=0
ctl wait "$id" --timeout 60 >"$tmp/wait.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "profctl wait: exit $rc: $(cat "$tmp/wait.txt"); $(cat "$dir/manifest.json" 2>/dev/null)"
$check "$dir/manifest.json" --first "$s" --last $((s + 1)) --ranks 0,1,2,3 --sim ||
  fail "manifest after the restart"
# every trace in the tree is one the manifest lists
/usr/bin/python3 - "$dir" <<'EOF' || fail "tree entries outside the manifest"
import json, os, sys
root = sys.argv[1]
m = json.load(open(os.path.join(root, "manifest.json")))
listed = {os.path.normpath(os.path.join(c["dir"], f["path"]))
          for c in m["captures"] for f in c.get("files") or []}
found = set()
for d, _, files in os.walk(root):
    for f in files:
        rel = os.path.relpath(os.path.join(d, f), root)
        # the window's own documents, next to its manifest
        if rel not in ("manifest.json", "steps.json", "report.html", "merged.trace.json") \
                and not rel.startswith("tensorboard" + os.sep):
            found.add(rel)
assert found == listed, (sorted(found - listed), sorted(listed - found))
assert len(listed) >= 4, sorted(listed)
EOF
echo "ok: a coordinator killed while it could not write its journal acknowledged nothing it would forget"
check_logs
echo "system test coordinator durability: OK"
