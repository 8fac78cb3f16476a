#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test: more chunks in flight than the coordinator holds requests.
# Each node daemon streams up to 16 chunks at once and the coordinator
# parks each while its write runs; 256 nodes can have 4,096 in flight
# against its 1,024 contexts. A chunk that could not be parked was written
# anyway and answered "not answered" at once, and the write's completion
# then answered a context already reused: the coordinator died in the
# first 16,384-rank run of the scale benchmark (2026-11-26, "remote: cannot
# park a chunk request" and a crash).
#  A coordinator with coordinator.max_node_requests 8 (at most 7 parked,
#  two of them the nodes' plan long polls), two nodes with 16 ranks each
#  (bench_swarm), a window of 32 captures of 256 KiB streamed in 16 KiB
#  chunks: every capture arrives complete with its checksum, the
#  coordinator logs no error and stays up; the pool was full at least once
#  (nodes told to send a chunk again), as many times as the coordinator's
#  profd_chunks_deferred_total says.
# Usage: test_coord_pool.sh BUILD_DIR
lib_name=coordpool
. "$(dirname "$0")/lib.sh"
port=$(free_port)
printf 'coordinator:\n  max_node_requests: 8\n' >"$tmp/coord.yaml"
printf 'coordinator:\n  chunk_bytes: 16KiB\n' >"$tmp/node.yaml"

mport=$(free_port)
coordinator_start --config "$tmp/coord.yaml" --log-level debug --metrics "http://127.0.0.1:$mport"
node_start 0 --config "$tmp/node.yaml"
node_start 1 --config "$tmp/node.yaml"
swarm_start
coordinator_window --settings '{"bytes": 262144}'
kill -0 "$coord_pid" 2>/dev/null || fail "the coordinator died"
/usr/bin/python3 - "$man" "$tmp/c/save/default/$name" <<'PY' || fail "manifest of $name"
import hashlib, json, os, sys
m = json.load(open(sys.argv[1]))
caps = m["captures"]
assert sorted(c["rank"] for c in caps) == list(range(32)), [c["rank"] for c in caps]
files = 0
for c in caps:
    assert c["status"] == "complete", c
    for f in c["files"]:
        p = os.path.join(sys.argv[2], c["dir"], f["path"])
        assert os.path.getsize(p) == f["bytes"], (p, f)
        assert f["checksum"].startswith("xxh64:"), f
        files += 1
    assert any(f["bytes"] >= 262144 for f in c["files"]), c["files"]
print("ok: 32 complete captures, %d files of the right sizes" % files)
PY
grep -q "error" "$tmp/coordinator.log" && fail "coordinator: $(grep -m3 error "$tmp/coordinator.log")"
full=$(grep -c "pool full" "$tmp/coordinator.log" || true)
[ "$full" -gt 0 ] || fail "the coordinator's request pool never filled: this test shows nothing"
deferred=$(/usr/bin/python3 -c "
import urllib.request
t = urllib.request.urlopen('http://127.0.0.1:$mport/metrics', timeout=10).read().decode()
print([l.split()[1] for l in t.splitlines() if l.startswith('profd_chunks_deferred_total ')][0])")
[ "$deferred" = "$full" ] || fail "profd_chunks_deferred_total $deferred, $full deferrals logged"
echo "ok: the pool filled $full time(s) (profd_chunks_deferred_total $deferred); nothing lost"
check_logs
echo "PASS coord_pool"
