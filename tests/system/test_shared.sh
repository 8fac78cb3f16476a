#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, many nodes on shared storage, over TLS: a coordinator and two
# node daemons linked by tls+tcp:// (certificates made here with openssl;
# both sides present one) whose save_path is one folder every daemon mounts
# (coordinator.shared_save_path). The node daemons gather their workers'
# captures into the shared tree themselves and send the coordinator only the
# listing; the coordinator checks the files and writes the manifest. A node
# whose certificate the coordinator's CA did not sign never joins.
# Usage: test_shared.sh BUILD_DIR
lib_name=shared
. "$(dirname "$0")/lib.sh"
ctl() { "$profctl_bin" --url "ipc://$tmp/c/run/control.sock" "$@"; }
port=$(free_port)

shared=$tmp/shared
"$here/../security/make_certs.sh" "$tmp/certs" || fail "certificates"
tls() { # CERT KEY CA
  printf 'tls:\n  cert_file: %s\n  key_file: %s\n  ca_file: %s\n' "$1" "$2" "$3"
}
tls "$tmp/certs/server.pem" "$tmp/certs/server.key" "$tmp/certs/ca.pem" >"$tmp/coordinator.yaml"
tls "$tmp/certs/client.pem" "$tmp/certs/client.key" "$tmp/certs/ca.pem" >"$tmp/node.yaml"
tls "$tmp/certs/rogue.pem" "$tmp/certs/rogue.key" "$tmp/certs/ca.pem" >"$tmp/rogue.yaml"
"$profd" --config "$tmp/coordinator.yaml" --coordinator-listen "tls+tcp://localhost:$port" \
  --node coordinator --run-dir "$tmp/c/run" --save-path "$shared" 2>"$tmp/coordinator.log" &
pids+=($!)
for _ in $(seq 100); do ctl status >/dev/null 2>&1 && break; sleep 0.05; done
for i in 1 2; do
  "$profd" --config "$tmp/node.yaml" --coordinator-url "tls+tcp://localhost:$port" \
    --node "node$i" --run-dir "$tmp/n$i/run" --save-path "$shared" --shared-save-path \
    2>"$tmp/node$i.log" &
  pids+=($!)
done
# a node with a certificate from another CA cannot join
"$profd" --config "$tmp/rogue.yaml" --coordinator-url "tls+tcp://localhost:$port" --node rogue \
  --run-dir "$tmp/r/run" --save-path "$tmp/rogue" 2>"$tmp/rogue.log" &
pids+=($!)
for i in 1 2; do
  for _ in $(seq 100); do [ -S "$tmp/n$i/run/worker.sock" ] && break; sleep 0.05; done
  PROFD_RUN_DIR=$tmp/n$i/run "$sim" --layout actor:2,rollout:2@1 --rank-offset $(((i - 1) * 4)) \
    --replica-offset $((i - 1)) --steps 100000 --rate 10 --trace-bytes 20000 --host "host$i" \
    >"$tmp/sim$i.log" 2>&1 &
  pids+=($!)
done
for _ in $(seq 200); do
  [ "$(ctl --json status | json 'len(d["ranks"])')" = 8 ] && break
  sleep 0.05
done
[ "$(ctl --json status | json 'len(d["ranks"])')" = 8 ] || fail "8 ranks did not register"
# an aligned window needs the step times measured
for _ in $(seq 200); do
  [ "$(ctl --json status | json 'all(r["step_ms"] > 0 for r in d["ranks"])')" = True ] && break
  sleep 0.05
done

grep -q "joined coordinator" "$tmp/rogue.log" && fail "a node with a foreign certificate joined"
[ "$(ctl --json status | json 'd["nodes"]')" = 2 ] || fail "the coordinator knows other nodes"
ctl start --next 2 --tool sim >"$tmp/w.txt" || fail "start"
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/w.txt")
name=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/w.txt")
ctl wait "$id" --timeout 60 >/dev/null || fail "wait"
first=$(json 'd["window"]["steps"][0]' <"$shared/default/$name/manifest.json")
$check "$shared/default/$name/manifest.json" --first "$first" --last $((first + 1)) \
  --ranks 0,1,2,3,4,5,6,7 --sim || fail "manifest"
# each node kept its own spool and emptied it; nothing was streamed
[ -d "$shared/.spool/node1" ] && [ -d "$shared/.spool/node2" ] || fail "per-node spools"
[ -z "$(find "$shared/.spool" -type f)" ] || fail "files left in the spools"
grep -q "forwarding 4 rank(s)" "$tmp/node1.log" || fail "node1 did not forward"
[ "$(ctl --json windows "$id" | json 'd["windows"][0]["pending_files"]')" = 0 ] ||
  fail "files pending on shared storage"
check_logs
echo "system test shared save_path over TLS: OK"
