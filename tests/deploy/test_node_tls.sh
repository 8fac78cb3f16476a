#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The node-daemon form of deploy/k8s (node/ and coordinator/), without
# Kubernetes: what a training pod in a restricted namespace relies on.
#
# - Two CAs, as docs/deploy.md makes them: the operators' CA signs the node
#   daemons, the coordinator and the operators' profctl; the jobs' CA signs
#   one client certificate per job (deploy/k8s/certs.sh makes them). Node
#   daemons trust both (a bundle), the coordinator only the operators'.
# - A node daemon (root) serves workers on tls+tcp:// (the Service
#   profd-node.profd.svc); workers of a job (another uid, as in a pod) dial
#   it with their job's certificate (PROFD_TLS_*) and write into the spool,
#   a folder they share with the daemon by path (the claim profd-spool).
# - The node daemon links to the coordinator over tls+tcp://; an operator
#   with no access to any pod runs profctl against the coordinator's remote
#   control endpoint (the Service profd-coordinator.profd.svc:7711) with
#   her certificate: status, a window over the node's ranks, gathered on the
#   coordinator with every capture complete.
# - Refused: a worker with no certificate, or one of another CA, never
#   registers; a job's certificate cannot control the coordinator; profctl
#   without a certificate cannot either.
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || "$PROFD_SOURCE_DIR/deploy/deps.sh" openssl
command -v setpriv >/dev/null || "$PROFD_SOURCE_DIR/deploy/deps.sh" util-linux
chmod 0755 "$tmp" # the workers run as another user
unset PROFD_URL PROFD_CONTROL_URL PROFD_TLS_CA PROFD_TLS_CERT PROFD_TLS_KEY PROFD_TLS_SERVER_NAME
NODE_NAME=profd-node.profd.svc
COORD_NAME=profd-coordinator.profd.svc
worker_uid=65534

# ---- certificates, as deploy/k8s/certs.sh makes them ----
pki=$tmp/pki
certs() { bash "$PROFD_SOURCE_DIR/deploy/k8s/certs.sh" "$@" >>"$tmp/certs.log" 2>&1; }
certs -d "$pki" ca && certs -d "$pki" node && certs -d "$pki" coordinator &&
  certs -d "$pki" operator alice && certs -d "$pki" job trainer ||
  { cat "$tmp/certs.log" >&2; die "deploy/k8s/certs.sh failed"; }
# a job certificate of a CA nobody trusts
certs -d "$tmp/rogue" ca && certs -d "$tmp/rogue" job rogue ||
  { cat "$tmp/certs.log" >&2; die "deploy/k8s/certs.sh failed"; }
for c in "$pki/node" "$pki/coordinator" "$pki/alice" "$pki/job-trainer" "$tmp/rogue/job-rogue"; do
  [ -s "$c.pem" ] && [ -s "$c.key" ] || die "certs.sh made no $c.pem and $c.key"
done
check "certs.sh: the node daemons trust both CAs (node-ca.pem)" \
  test "$(cat "$pki/ops-ca.pem" "$pki/jobs-ca.pem")" = "$(cat "$pki/node-ca.pem")"
check "certs.sh: keys are private to their owner" \
  test "$(stat -c %a "$pki/ops-ca.key" "$pki/node.key" | sort -u)" = 600
chmod 0755 "$pki" "$tmp/rogue"
chmod 0644 "$pki/job-trainer.key" "$tmp/rogue/job-rogue.key" # the workers' user reads it (a Secret in a pod)
ok "certificates: operators' CA (node, coordinator, alice), jobs' CA (trainer), another CA (rogue)"

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wport=$(free_port) lport=$(free_port) cport=$(free_port)
[ "$wport" != "$lport" ] && [ "$lport" != "$cport" ] && [ "$wport" != "$cport" ] ||
  die "no three distinct free ports"

# tls_yaml CA NAME: a daemon's tls: section, trusting $pki/CA.pem, its
# certificate $pki/NAME.pem and key
tls_yaml() {
  printf 'tls:\n  ca_file: %s\n  cert_file: %s\n  key_file: %s\n' \
    "$pki/$1.pem" "$pki/$2.pem" "$pki/$2.key"
}

# ---- the coordinator ----
# align_margin_ms 2000 (default 100): --next places the window 2 s ahead of
# the ranks, so a plan that crosses TLS twice on loaded cores still arrives
# before the window's first step (at 100 ms a round under load 11 missed all
# 4: "plan arrived at step 112, after start step 112"); this test is about
# who may connect, not how close a window can be planned
cat >"$tmp/coordinator.yaml" <<EOF
listen:
  control_remote: tls+tcp://127.0.0.1:$cport
coordinator:
  listen: tls+tcp://127.0.0.1:$lport
limits:
  align_margin_ms: 2000
$(tls_yaml ops-ca coordinator)
EOF
PROFD_RUN_DIR=$tmp/crun "$PROFD_PROFD" --coordinator --config "$tmp/coordinator.yaml" \
  --node coordinator --save-path "$tmp/gathered" >"$tmp/coordinator.log" 2>&1 &
pids+=($!)

# ---- the node daemon ----
cat >"$tmp/node.yaml" <<EOF
listen:
  worker: tls+tcp://127.0.0.1:$wport
save_path: $tmp/node/profile
spool_dir: $tmp/node/spool
coordinator:
  url: tls+tcp://127.0.0.1:$lport
$(tls_yaml node-ca node)
  server_name: $COORD_NAME
EOF
PROFD_RUN_DIR=$tmp/nrun "$PROFD_PROFD" --config "$tmp/node.yaml" --node node1 \
  >"$tmp/node.log" 2>&1 &
pids+=($!)

# profctl of an operator, from anywhere: the coordinator's remote endpoint
op() {
  "$PROFD_PROFCTL" --url "tls+tcp://127.0.0.1:$cport" --tls-ca "$pki/ops-ca.pem" \
    --tls-cert "$pki/alice.pem" --tls-key "$pki/alice.key" --tls-server-name "$COORD_NAME" "$@"
}
nodectl() { PROFD_RUN_DIR=$tmp/nrun "$PROFD_PROFCTL" "$@"; }
for _ in $(seq 100); do op status >/dev/null 2>&1 && nodectl status >/dev/null 2>&1 && break; sleep 0.1; done
check "the coordinator answers profctl over tls+tcp:// with an operator's certificate" quiet op status
check "the node daemon answers on its local socket" quiet nodectl status

# ---- workers of a job, as another user ----
sim() { # JOB CERT-NAME CA-FILE: profd-sim, 4 ranks, as $worker_uid
  local job=$1 certname=$2 cafile=$3
  setpriv --reuid=$worker_uid --regid=$worker_uid --clear-groups env \
    PROFD_URL="tls+tcp://127.0.0.1:$wport" PROFD_TLS_CA="$cafile" \
    ${certname:+PROFD_TLS_CERT="$pki/$certname.pem" PROFD_TLS_KEY="$pki/$certname.key"} \
    PROFD_TLS_SERVER_NAME="$NODE_NAME" \
    "$PROFD_SIM" --layout actor:2,rollout:2@1 --steps 4000 --rate 20 --trace-bytes 4096 \
    --job "$job" >"$tmp/sim-$job.log" 2>&1 &
  pids+=($!)
}
ranks_of() { # JOB: ranks of that job the coordinator knows
  { op --json status 2>/dev/null || true; } | tr -d ' \t\n' | { grep -o "\"job\":\"$1\"" || true; } | wc -l
}
sim trainer job-trainer "$pki/ops-ca.pem"
sim nocert "" "$pki/ops-ca.pem"
cp "$tmp/rogue/job-rogue.pem" "$tmp/rogue/job-rogue.key" "$pki/"
sim rogue job-rogue "$pki/ops-ca.pem"
n=0
for _ in $(seq 200); do
  n=$(ranks_of trainer)
  [ "$n" -eq 4 ] && break
  sleep 0.05
done
check "4 ranks of job trainer (uid $worker_uid, jobs' CA) registered through the node daemon (found $n)" \
  test "$n" -eq 4
ranks_stepped 4 '"job":"trainer"[^}]*' op # each rank's step time measured
sleep 0.5
check "a worker without a certificate never registers (found $(ranks_of nocert))" \
  test "$(ranks_of nocert)" -eq 0
check "a worker with a certificate of another CA never registers (found $(ranks_of rogue))" \
  test "$(ranks_of rogue)" -eq 0

# ---- a window, planned by the coordinator, gathered there ----
if op start --next 2 --tool sim --job trainer >"$tmp/start.txt" 2>&1; then
  ok "operator: profctl start on the coordinator ($(head -1 "$tmp/start.txt"))"
else
  bad "operator: profctl start: $(cat "$tmp/start.txt")"
fi
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/start.txt" | head -1)
name=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/start.txt" | head -1)
if [ -n "$id" ] && op wait "$id" --timeout 60 >"$tmp/wait.txt" 2>&1; then
  check "window $name: $(tail -1 "$tmp/wait.txt")" \
    grep -q "4 complete, 0 failed, 0 missed, 0 truncated" "$tmp/wait.txt"
else
  bad "operator: profctl wait $id: $(cat "$tmp/wait.txt" 2>/dev/null)"
fi
manifest=$tmp/gathered/trainer/$name/manifest.json
if [ -f "$manifest" ]; then
  complete=$(tr -d ' \t\n' <"$manifest" | { grep -o '"status":"complete"' || true; } | wc -l)
  check "the coordinator's tree holds the manifest with 4 complete captures (found $complete)" \
    test "$complete" -eq 4
else
  bad "no manifest $manifest on the coordinator"
fi

# ---- who may not ----
out=$("$PROFD_PROFCTL" --url "tls+tcp://127.0.0.1:$cport" --tls-ca "$pki/ops-ca.pem" \
  --tls-cert "$pki/job-trainer.pem" --tls-key "$pki/job-trainer.key" \
  --tls-server-name "$COORD_NAME" --timeout 3 start --next 2 --tool sim 2>&1) && rc=0 || rc=$?
check "a job's certificate cannot control the coordinator (exit $rc: $out)" \
  test "$rc" -eq 1 -a -n "$(grep 'cannot reach profd' <<<"$out")"
out=$("$PROFD_PROFCTL" --url "tls+tcp://127.0.0.1:$cport" --tls-ca "$pki/ops-ca.pem" \
  --tls-server-name "$COORD_NAME" --timeout 3 status 2>&1) && rc=0 || rc=$?
check "profctl without a certificate cannot reach the coordinator (exit $rc)" test "$rc" -eq 1

finish
