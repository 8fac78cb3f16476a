#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The Debian packages: built from a copy of the tree with
# `dpkg-buildpackage -us -uc -b` (debian/), each holding what it should,
# lintian-clean (every override carries the reason in a comment; a spelling
# hint in a binary only for a word no source holds, i.e. machine code), then
# installed with apt into a fresh Debian root (debootstrap, minbase, the
# release of this system), where the installed profd, profctl and
# profd-sim take a window, the Python package loads libprofd0, a program
# builds against libprofd-dev with pkg-config, and removing and purging
# profd leave nothing of it.
#
# The fresh root is made once into $PROFD_CACHE_DIR (a tarball) and
# unpacked anew for every run; packages apt downloads into it are kept there
# too. $PROFD_DEBIAN_MIRROR overrides the mirror (default: the first of
# this system's apt sources, else http://deb.debian.org/debian).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (chroot into the fresh root)"
command -v dpkg >/dev/null || skip "not a Debian system"
need=()
command -v dpkg-buildpackage >/dev/null || need+=(dpkg-dev)
command -v dh >/dev/null || need+=(debhelper)
command -v dh_python3 >/dev/null || need+=(dh-python)
command -v lintian >/dev/null || need+=(lintian)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v unshare >/dev/null || need+=(util-linux)
if [ "${#need[@]}" -gt 0 ]; then
  "$PROFD_SOURCE_DIR/deploy/deps.sh" "${need[@]}" || die "cannot install ${need[*]}"
fi
cache=${PROFD_CACHE_DIR:-$PROFD_BUILD_DIR/deploy-cache}
mkdir -p "$cache/apt-archives"
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
V=$PROFD_VERSION
t0=$(date +%s)

# ======== build ========
src=$tmp/src/profd-$V
mkdir -p "$src"
(cd "$PROFD_SOURCE_DIR" && tar --exclude='./build*' --exclude=./.git --exclude='./obj-*' \
  --exclude=./debian/.debhelper --exclude=./debian/tmp --exclude=./debian/files \
  --exclude='./debian/*.substvars' --exclude='./debian/*.debhelper.log' \
  --exclude=./debian/profd --exclude=./debian/libprofd0 --exclude=./debian/libprofd-dev \
  --exclude=./debian/python3-profd --exclude='./debian/*-dbgsym' -cf - .) | (cd "$src" && tar -xf -)
check "debian/changelog is at version $V" \
  test "$(cd "$src" && dpkg-parsechangelog -S Version)" = "$V"
if (cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) \
  >"$tmp/build.log" 2>&1; then
  ok "dpkg-buildpackage -us -uc -b ($(($(date +%s) - t0)) s)"
else
  tail -40 "$tmp/build.log" >&2
  die "dpkg-buildpackage failed"
fi
debs=("profd_${V}_$arch.deb" "libprofd0_${V}_$arch.deb" "libprofd-dev_${V}_$arch.deb"
  "python3-profd_${V}_all.deb")
for d in "${debs[@]}"; do
  [ -f "$tmp/src/$d" ] || die "not built: $d ($(cd "$tmp/src" && echo *.deb))"
done
ok "built: ${debs[*]}"

# ======== contents ========
files() { dpkg-deb -c "$tmp/src/$1" | awk '{print $6}' | sed 's#^\./#/#' | grep -v '/$' | sort; }
has() { # DEB FILE...
  local deb=$1 f
  shift
  for f in "$@"; do
    files "$deb" | grep -qxF "$f" || { bad "$deb lacks $f"; return; }
  done
  ok "$deb holds $*"
}
has "${debs[0]}" /usr/bin/profd /usr/bin/profctl /usr/bin/profd-sim \
  /lib/systemd/system/profd.service /etc/profd/profd.yaml /usr/share/man/man8/profd.8.gz \
  /usr/share/man/man1/profctl.1.gz /usr/share/man/man1/profd-sim.1.gz
has "${debs[1]}" "/usr/lib/$multiarch/libprofd.so.$V" "/usr/lib/$multiarch/libprofd.so.0"
has "${debs[2]}" /usr/include/profd/client.h /usr/include/profd/errors.h \
  "/usr/lib/$multiarch/libprofd.so" "/usr/lib/$multiarch/libprofd.a" \
  "/usr/lib/$multiarch/pkgconfig/profd.pc" "/usr/lib/$multiarch/cmake/profd/profdConfig.cmake"
has "${debs[3]}" /usr/lib/python3/dist-packages/profd/__init__.py \
  /usr/lib/python3/dist-packages/profd/_native.py /usr/lib/python3/dist-packages/profd/integrations/verl.py \
  /usr/lib/python3/dist-packages/profd-auto.pth \
  "/usr/lib/python3/dist-packages/profd-$V.dist-info/entry_points.txt"
leaked=$(files "${debs[1]}" | grep -v -e "^/usr/lib/$multiarch/libprofd\.so\.0" -e '^/usr/share/doc/' || true)
check "libprofd0 holds only the shared library${leaked:+ (also: $leaked)}" test -z "$leaked"
dpkg-deb -e "$tmp/src/${debs[0]}" "$tmp/ctl"
check "profd: /etc/profd/profd.yaml is a conffile" grep -qx /etc/profd/profd.yaml "$tmp/ctl/conffiles"
dpkg-deb --fsys-tarfile "$tmp/src/${debs[0]}" | tar -xO ./lib/systemd/system/profd.service >"$tmp/unit"
check "profd: the unit runs /usr/bin/profd --config /etc/profd/profd.yaml" \
  grep -qx 'ExecStart=/usr/bin/profd --config /etc/profd/profd.yaml' "$tmp/unit"
dep() { dpkg-deb -f "$tmp/src/$1" Depends; }
check "libprofd-dev depends on libprofd0 (= $V) ($(dep "${debs[2]}"))" \
  grep -q "libprofd0 (= $V)" <<<"$(dep "${debs[2]}")"
check "python3-profd depends on libprofd0 and python3 ($(dep "${debs[3]}"))" \
  grep -q "libprofd0 (>= $V).*python3" <<<"$(dep "${debs[3]}")"
check "profd depends on libprofd0 (profd-sim) ($(dep "${debs[0]}"))" \
  grep -q "libprofd0 (>= $V)" <<<"$(dep "${debs[0]}")"

# ======== lintian ========
# every override says why, in a comment right above it
for f in "$src"/debian/*.lintian-overrides; do
  [ -f "$f" ] || continue
  awk -v f="${f#"$src"/}" '
    /^#/ { c = 1; next }
    /^[[:space:]]*$/ { c = 0; next }
    { if (!c) { print f ": override without a comment: " $0; bad = 1 } }
    END { exit bad }' "$f" || bad "lintian override without its reason"
done
# spelling-error-in-binary is checked apart: lintian reads every printable
# run of bytes in an ELF file, machine code included, and which runs look
# like a misspelt word changes with every build of the code.
changes=$tmp/src/profd_${V}_$arch.changes
if lintian --allow-root --pedantic -I -E --fail-on error,warning,info,pedantic \
  --suppress-tags spelling-error-in-binary "$changes" >"$tmp/lintian.txt" 2>&1 &&
  [ ! -s "$tmp/lintian.txt" ]; then
  ok "lintian (errors, warnings, info, pedantic, experimental): no tag"
else
  cat "$tmp/lintian.txt" >&2
  bad "lintian tags (above)"
fi
# a binary's spelling hint stands only for a word that is in no source
lintian --allow-root -I --tags spelling-error-in-binary "$changes" 2>/dev/null |
  awk '$3 == "spelling-error-in-binary" {print $4}' | sort -u >"$tmp/spelling.txt" || true
misspelt=""
while read -r word; do
  [ -n "$word" ] || continue
  if grep -rqwF -- "$word" "$src/client" "$src/daemon" "$src/proto" "$src/common" \
    $( [ -d "$src/config" ] && echo "$src/config"); then
    misspelt="$misspelt $word"
  fi
done <"$tmp/spelling.txt"
check "lintian: no misspelt word of the sources in a binary (machine-code hints: $(echo $(cat "$tmp/spelling.txt")))" \
  test -z "$misspelt"
t_built=$(date +%s)

# ======== a fresh root ========
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || die "no VERSION_CODENAME in /etc/os-release"
mirror=${PROFD_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list 2>/dev/null |
    sed -n -e 's/^URIs: *\([^ ]*\/debian\)\/\?$/\1/p' \
      -e 's/^deb  *\(\[[^]]*\] *\)\?\([^ ]*\/debian\)\/\? .*/\2/p' | head -1 || true)
  mirror=${mirror:-http://deb.debian.org/debian}
fi
rootfs=$cache/debian-$suite-$arch-minbase.tar
if [ ! -f "$rootfs" ]; then
  echo "making a $suite root with debootstrap (once, into $cache)"
  debootstrap --variant=minbase "$suite" "$tmp/bootstrap" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
    { tail -20 "$tmp/debootstrap.log" >&2; die "debootstrap $suite $mirror failed"; }
  tar -C "$tmp/bootstrap" -cf "$rootfs.part" . && mv "$rootfs.part" "$rootfs"
  rm -rf "$tmp/bootstrap"
fi
root=$tmp/root
mkdir -p "$root"
tar -C "$root" -xf "$rootfs"
check "the fresh root has no profd" test ! -e "$root/usr/bin/profd" -a ! -e "$root/usr/lib/$multiarch/libprofd.so.0"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$root/tmp/debs" "$root/tmp/consumer"
for d in "${debs[@]}"; do cp "$tmp/src/$d" "$root/tmp/debs/"; done
cp "$PROFD_SOURCE_DIR/tests/deploy/window.sh" "$root/tmp/window.sh"
cp "$PROFD_SOURCE_DIR/tests/deploy/consumer/consumer.c" "$root/tmp/consumer/"
cp "$cache"/apt-archives/*.deb "$root/var/cache/apt/archives/" 2>/dev/null || true

cat >"$root/tmp/in-root.sh" <<EOF
#!/bin/bash
# Run in the fresh root: one line "ok: ..." or "FAIL: ..." per check.
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin
V=$V multiarch=$multiarch
EOF
cat >>"$root/tmp/in-root.sh" <<'EOF'
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; }
apt() { apt-get -o Dpkg::Use-Pty=0 -o APT::Keep-Downloaded-Packages=true "$@"; }
apt update -qq >/tmp/apt-update.log 2>&1 || { cat /tmp/apt-update.log; bad "apt-get update"; exit 1; }
if apt install -y --no-install-recommends /tmp/debs/*.deb >/tmp/apt-install.log 2>&1; then
  ok "apt-get install of the 4 packages, with their dependencies from $(. /etc/os-release; echo "$PRETTY_NAME")"
else
  tail -20 /tmp/apt-install.log
  bad "apt-get install of the packages"
  exit 1
fi
for p in profd libprofd0 libprofd-dev python3-profd; do
  s=$(dpkg-query -W -f='${Status} ${Version}' "$p" 2>&1)
  [ "$s" = "install ok installed $V" ] || bad "$p: $s"
done
ok "dpkg: profd libprofd0 libprofd-dev python3-profd $V installed"
[ "$(profd --version)" = "profd $V" ] && ok "profd --version" || bad "profd --version: $(profd --version 2>&1)"
[ -L /etc/systemd/system/multi-user.target.wants/profd.service ] &&
  ok "the unit is enabled (multi-user.target.wants)" || bad "profd.service not enabled"
if bash /tmp/window.sh /tmp/w >/tmp/window.out 2>&1; then
  ok "installed programs: $(tail -1 /tmp/window.out)"
else
  cat /tmp/window.out
  bad "a window with the installed profd, profd-sim and profctl"
fi
py=$(cd /tmp && PROFD_URL=ipc:///tmp/no-daemon.sock python3 -c '
import profd
from profd import _native
lib = _native.load()
c = profd.Client(role="actor")
with c.step(1):
    pass
c.close()
print(profd.__file__, lib.path if lib else "no-op: " + profd.load_error())' 2>&1)
[ "$py" = "/usr/lib/python3/dist-packages/profd/__init__.py libprofd.so.0" ] &&
  ok "python3-profd: import profd loads libprofd.so.0 ($py)" || bad "python3-profd: $py"
if apt install -y --no-install-recommends gcc libc6-dev pkgconf >/tmp/apt-cc.log 2>&1; then
  if cc -o /tmp/consumer/consumer /tmp/consumer/consumer.c $(pkg-config --cflags --libs profd) \
    2>/tmp/cc.log; then
    out=$(PROFD_URL=ipc:///tmp/no-daemon.sock /tmp/consumer/consumer 2>&1)
    [ "$out" = "ok $V" ] && ok "libprofd-dev: a program built with pkg-config runs ($out)" ||
      bad "consumer: $out"
  else
    cat /tmp/cc.log
    bad "libprofd-dev: cc \$(pkg-config --cflags --libs profd)"
  fi
else
  tail -5 /tmp/apt-cc.log
  bad "apt-get install gcc libc6-dev pkgconf"
fi
apt remove -y profd >/tmp/apt-remove.log 2>&1 || bad "apt-get remove profd"
[ ! -e /usr/bin/profd ] && [ -f /etc/profd/profd.yaml ] &&
  [ "$(dpkg-query -W -f='${Status}' profd)" = "deinstall ok config-files" ] &&
  ok "remove: the programs go, the configuration stays" || bad "apt-get remove profd left: $(ls /usr/bin/prof* /etc/profd 2>&1)"
apt purge -y profd >/tmp/apt-purge.log 2>&1 || bad "apt-get purge profd"
[ ! -e /etc/profd ] && [ ! -e /etc/systemd/system/multi-user.target.wants/profd.service ] &&
  ok "purge: configuration and enablement gone" || bad "apt-get purge profd left: $(ls -d /etc/profd /etc/systemd/system/multi-user.target.wants/profd.service 2>&1)"
EOF
# Private mount and process namespaces: /proc in the root goes away with
# them, and so does every process started there when the script ends (it
# is their init) or runs past its time.
timeout -k 10 600 unshare --pid --fork --mount --propagation private -- /bin/bash -c \
  'mount -t proc proc "$1/proc" && exec chroot "$1" /bin/bash /tmp/in-root.sh' _ "$root" \
  >"$tmp/in-root.out" 2>&1 || echo "the checks in the fresh root ended with status $?" >>"$tmp/in-root.out"
cp -n "$root"/var/cache/apt/archives/*.deb "$cache/apt-archives/" 2>/dev/null || true
while IFS= read -r line; do
  case $line in
  "ok: "*) ok "fresh root: ${line#ok: }" ;;
  "FAIL: "*) bad "fresh root: ${line#FAIL: }" ;;
  *) echo "  $line" ;;
  esac
done <"$tmp/in-root.out"
grep -q '^ok: purge:' "$tmp/in-root.out" || bad "the checks in the fresh root did not all run"
t_end=$(date +%s)
echo "times: build and lintian $((t_built - t0)) s, fresh root $((t_end - t_built)) s"
finish
