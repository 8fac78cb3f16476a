#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The container image, without a container engine: the build stage of
# deploy/Dockerfile is run here as written (with its /src, /build and /stage
# folders moved into a temporary folder), and its result must hold what the
# image's ENTRYPOINT and the Kubernetes manifests use; every library the
# staged programs load must come from a package the runtime stage installs;
# the build stage must install every library package deploy/deps.sh names;
# the manifests must name the image of this version.
. "$(dirname "$0")/lib.sh"

dockerfile=$PROFD_SOURCE_DIR/deploy/Dockerfile
command -v dpkg-query >/dev/null || skip "not a Debian system: dpkg-query not found"

# Instructions of the Dockerfile, continuation lines joined:
# "<stage> <INSTRUCTION> <rest>", stage 0 = build, 1 = runtime.
python3 - "$dockerfile" >"$tmp/instructions" <<'PY'
import sys
stage, line = -1, ""
for raw in open(sys.argv[1]):
    raw = raw.rstrip("\n")
    if not line and (raw.lstrip().startswith("#") or not raw.strip()):
        continue
    if raw.endswith("\\"):
        line += raw[:-1] + " "
        continue
    line += raw
    word, _, rest = line.strip().partition(" ")
    if word.upper() == "FROM":
        stage += 1
    print(stage, word.upper(), " ".join(rest.split()))
    line = ""
PY
packages() { # STAGE: the packages its apt-get install names
  awk -v s="$1" '$1 == s && $2 == "RUN"' "$tmp/instructions" |
    grep -o 'apt-get install [^&]*' | tr ' ' '\n' |
    grep -v -e '^apt-get$' -e '^install$' -e '^-' -e '^$' | sort -u
}
build_pkgs=$(packages 0)
runtime_pkgs=$(packages 1)
[ -n "$build_pkgs" ] && [ -n "$runtime_pkgs" ] || die "no apt-get install found in both stages"
check "two stages: FROM debian:12-slim AS build, then FROM debian:12-slim" test \
  "$(awk '$2 == "FROM" {$1 = ""; $2 = ""; print}' "$tmp/instructions" | xargs)" = \
  "debian:12-slim AS build debian:12-slim"

# Packages exist: this machine builds profd from the same ones.
for p in $build_pkgs $runtime_pkgs; do
  dpkg-query -W "$p" >/dev/null 2>&1 || bad "Dockerfile installs '$p', not installed here"
done
ok "$(echo $build_pkgs $runtime_pkgs | wc -w) Dockerfile packages are Debian packages"

# deps.sh library packages, less the test-only ones, are in the build stage.
deps=$(sed -n '/^packages=(/,/^)/p' "$PROFD_SOURCE_DIR/deploy/deps.sh" | tr ' ' '\n' |
  grep -E '^lib.*-dev$' | grep -v -e '^libcmocka-dev$' | sort -u)
for p in $deps gcc make cmake pkg-config; do
  grep -qx "$p" <<<"$build_pkgs" || bad "build stage lacks '$p' (deploy/deps.sh needs it)"
done
ok "build stage has the libraries of deploy/deps.sh"

# Run the build stage.
src=$tmp/src
mkdir -p "$src"
(cd "$PROFD_SOURCE_DIR" && tar --exclude='./build*' --exclude=./.git -cf - .) | (cd "$src" && tar -xf -)
awk '$1 == 0 && $2 == "RUN"' "$tmp/instructions" | grep -v 'apt-get' | cut -d' ' -f3- |
  sed -e "s#/src#$src#g" -e "s#/build#$tmp/build#g" -e "s#/stage#$tmp/stage#g" >"$tmp/build.sh"
[ -s "$tmp/build.sh" ] || die "no build command in the build stage"
if bash -euo pipefail "$tmp/build.sh" >"$tmp/build.log" 2>&1; then
  ok "build stage commands run"
else
  tail -30 "$tmp/build.log" >&2
  die "build stage commands failed"
fi
stage=$tmp/stage

entry=$(awk '$1 == 1 && $2 == "ENTRYPOINT"' "$tmp/instructions" | cut -d' ' -f3-)
check "ENTRYPOINT [\"/usr/bin/profd\"] (found $entry)" test "$entry" = '["/usr/bin/profd"]'
for f in /usr/bin/profd /usr/bin/profctl /usr/bin/profd-sim; do
  check "image has $f" test -x "$stage$f"
done
libprofd=$(cd "$stage" && find usr/lib -name libprofd.so.0 | head -1)
check "image has libprofd.so.0 (${libprofd:-none})" test -n "$libprofd"
if [ -f "$PROFD_SOURCE_DIR/deploy/profd.yaml" ]; then
  check "image has /etc/profd/profd.yaml" test -f "$stage/etc/profd/profd.yaml"
fi
left=$(cd "$stage" && find usr/include usr/lib/*/cmake usr/lib/*/pkgconfig -maxdepth 0 2>/dev/null || true)
check "no development files in the image${left:+ ($left)}" test -z "$left"

# Libraries the staged programs load directly, and their packages.
in_base="libc6" # in debian:12-slim already
for f in usr/bin/profd usr/bin/profctl usr/bin/profd-sim ${libprofd:+$libprofd}; do
  while read -r lib; do
    [ "$lib" = libprofd.so.0 ] && continue
    path=$(LD_LIBRARY_PATH=$stage/$(dirname "${libprofd:-x}") ldd "$stage/$f" |
      awk -v l="$lib" '$1 == l {print $3}')
    pkg=$( (dpkg-query -S "$path" 2>/dev/null || dpkg-query -S "$(realpath "$path")" 2>/dev/null) |
      head -1 | cut -d: -f1)
    if [ -z "$pkg" ]; then
      bad "$f: $lib ($path) comes from no Debian package"
    elif ! grep -qx "$pkg" <<<"$runtime_pkgs"$'\n'"$in_base"; then
      bad "$f needs $lib from '$pkg', which the runtime stage does not install"
    fi
  done < <(readelf -d "$stage/$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done
ok "runtime stage installs the package of every library loaded"

# The manifests run this version.
images=$(grep -rhoE 'image: *profd[^ ]*' "$PROFD_SOURCE_DIR/deploy/k8s" | sed 's/image: *//' | sort -u)
check "deploy/k8s uses image profd:$PROFD_VERSION (found: $(echo $images))" \
  test "$images" = "profd:$PROFD_VERSION"
check "Dockerfile comment builds profd:$PROFD_VERSION" \
  grep -q "docker build -f deploy/Dockerfile -t profd:$PROFD_VERSION \." "$dockerfile"

finish
