#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The daemon configurations shipped for deployment load: the example
# deploy/profd.yaml (installed as /etc/profd/profd.yaml, what the systemd
# unit starts with) and the three of the Kubernetes ConfigMap (sidecar, node
# daemons, coordinator), checked with `profd --check-config`. Skipped until the tree has deploy/profd.yaml,
# which comes with the configuration loader.
. "$(dirname "$0")/lib.sh"

example=$PROFD_SOURCE_DIR/deploy/profd.yaml
k8s=$PROFD_SOURCE_DIR/deploy/k8s
[ -f "$example" ] || skip "deploy/profd.yaml is not in this tree yet"

export PROFD_RUN_DIR=$tmp/run
check_config() { # NAME FILE EXPECTED-LINE...
  local name=$1 file=$2
  shift 2
  if ! (cd "$tmp" && "$PROFD_PROFD" --config "$file" --check-config) >"$tmp/out" 2>&1; then
    bad "$name: $(cat "$tmp/out")"
    return
  fi
  ok "$name loads"
  for line in "$@"; do
    grep -qxF -- "$line" "$tmp/out" || bad "$name: no '$line' in: $(cat "$tmp/out")"
  done
}
check_config deploy/profd.yaml "$example"
check_config "deploy/k8s/base/profd.yaml (ConfigMap, sidecar)" "$k8s/base/profd.yaml" \
  "save_path: /var/lib/profd/profile" "spool_dir: /var/lib/profd/profile/.spool" \
  "run_dir: $tmp/run"
check_config "deploy/k8s/node/profd.yaml (ConfigMap, node daemons)" "$k8s/node/profd.yaml" \
  "save_path: /var/lib/profd/profile" "spool_dir: /var/lib/profd/spool" \
  "worker_url: tls+tcp://0.0.0.0:7712" "run_dir: $tmp/run"
check_config "deploy/k8s/coordinator/coordinator-profd.yaml (ConfigMap, coordinator)" \
  "$k8s/coordinator/coordinator-profd.yaml" "save_path: /var/lib/profd/profile" \
  "control_remote_url: tls+tcp://0.0.0.0:7711"

# The check itself: an unknown key is refused, naming the key.
printf 'save_path: /x\nno_such_key: 1\n' >"$tmp/bad.yaml"
rc=0
"$PROFD_PROFD" --config "$tmp/bad.yaml" --check-config >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" -eq 1 ] && grep -q "no_such_key" "$tmp/out"; then
  ok "a config with an unknown key is refused"
else
  bad "a config with an unknown key: exit $rc, $(cat "$tmp/out")"
fi

finish
