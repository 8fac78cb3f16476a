#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The install tree, for the configured prefix and for any other:
#
# 1. DESTDIR: `DESTDIR=R cmake --install` puts every file under R at the
#    configured paths, and what names a path names the configured prefix,
#    not R.
# 2. Another prefix: `cmake --install --prefix P` (P is not the configured
#    prefix) puts everything under P: profd.pc says prefix=P, the unit runs
#    P/bin/profd with P/etc/profd/profd.yaml and passes systemd-analyze
#    verify, the installed programs find the installed libprofd with nothing
#    set (RUNPATH) and take a window; a program builds against P with
#    pkg-config (PKG_CONFIG_PATH=P/lib/pkgconfig) and with find_package(profd)
#    (CMAKE_PREFIX_PATH=P) alone, shared and static, and runs with no daemon;
#    `import profd` from P finds P's library, and load_error() names what is
#    missing when it is not there.
# 3. A virtual environment as the prefix: its python imports the package
#    with nothing set and loads the library of that prefix.
#
# Environment (from ctest): PROFD_SOURCE_DIR, PROFD_BUILD_DIR, PROFD_VERSION,
# PROFD_PREFIX, the absolute install dirs of the configured prefix
# PROFD_BINDIR, PROFD_LIBDIR, PROFD_INCLUDEDIR, PROFD_MANDIR,
# PROFD_SYSCONFDIR, PROFD_UNITDIR, the relative ones PROFD_REL_BINDIR,
# PROFD_REL_LIBDIR, PROFD_REL_INCLUDEDIR, PROFD_REL_MANDIR,
# PROFD_SYSTEMD_UNITDIR; CC and PROFD_CONSUMER_FLAGS (sanitizer flags of an
# instrumented build).
. "$(dirname "$0")/lib.sh"

command -v systemd-analyze >/dev/null || "$PROFD_SOURCE_DIR/deploy/deps.sh" systemd
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null ||
  "$PROFD_SOURCE_DIR/deploy/deps.sh" python3-venv
sanitized=false
[[ "${PROFD_CONSUMER_FLAGS:-}" == *address* ]] && sanitized=true
unset LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR CMAKE_PREFIX_PATH \
  PYTHONPATH PROFD_LIB PROFD_URL PROFD_RUN_DIR PROFD_CONTROL_URL

# ======== 1. DESTDIR, the configured prefix ========
root=$tmp/root
DESTDIR=$root cmake --install "$PROFD_BUILD_DIR" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; die "cmake --install with DESTDIR failed"; }
ok "DESTDIR=R cmake --install (prefix $PROFD_PREFIX)"
# issue 31: the install printed a CMP0007 policy warning into the demo
if grep -n "CMake Warning\|CMP0" "$tmp/install.log" >&2; then
  die "cmake --install printed a warning"
fi
ok "cmake --install prints no warning"

expected=(
  "$PROFD_BINDIR/profd" "$PROFD_BINDIR/profctl" "$PROFD_BINDIR/profd-sim"
  "$PROFD_LIBDIR/libprofd.so.$PROFD_VERSION" "$PROFD_LIBDIR/libprofd.so.0"
  "$PROFD_LIBDIR/libprofd.so" "$PROFD_LIBDIR/libprofd.a"
  "$PROFD_INCLUDEDIR/profd/client.h" "$PROFD_INCLUDEDIR/profd/errors.h"
  "$PROFD_LIBDIR/pkgconfig/profd.pc"
  "$PROFD_LIBDIR/cmake/profd/profdConfig.cmake"
  "$PROFD_LIBDIR/cmake/profd/profdConfigVersion.cmake"
  "$PROFD_LIBDIR/cmake/profd/profdTargets.cmake"
  "$PROFD_LIBDIR/cmake/profd/profdStaticTargets.cmake"
  "$PROFD_UNITDIR/profd.service"
  "$PROFD_MANDIR/man8/profd.8" "$PROFD_MANDIR/man1/profctl.1" "$PROFD_MANDIR/man1/profd-sim.1"
  "$PROFD_SYSCONFDIR/profd/profd.yaml"
)
missing=0
for f in "${expected[@]}"; do
  [ -e "$root$f" ] || { bad "not installed: $f"; missing=$((missing + 1)); }
done
[ "$missing" -eq 0 ] && ok "${#expected[@]} files installed at the configured paths"
outside=$(cd "$root" && find . -type f | sed 's#^\.##' | grep -v -e "^$PROFD_PREFIX/" \
  -e "^$PROFD_SYSCONFDIR/" || true)
check "nothing installed outside $PROFD_PREFIX and $PROFD_SYSCONFDIR${outside:+ ($outside)}" \
  test -z "$outside"
check "profd.pc names the configured prefix, not DESTDIR" \
  grep -qx "prefix=$PROFD_PREFIX" "$root$PROFD_LIBDIR/pkgconfig/profd.pc"
execstart=$(sed -n 's/^ExecStart=//p' "$root$PROFD_UNITDIR/profd.service")
check "unit runs $PROFD_BINDIR/profd --config $PROFD_SYSCONFDIR/profd/profd.yaml" \
  test "$execstart" = "$PROFD_BINDIR/profd --config $PROFD_SYSCONFDIR/profd/profd.yaml"

# ======== 2. another prefix ========
P=$tmp/opt/profd
[ "$P" != "$PROFD_PREFIX" ] || die "the test prefix is the configured one"
cmake --install "$PROFD_BUILD_DIR" --prefix "$P" >"$tmp/install-p.log" 2>&1 ||
  { cat "$tmp/install-p.log" >&2; die "cmake --install --prefix $P failed"; }
ok "cmake --install --prefix P (P=$P, configured: $PROFD_PREFIX)"
bin=$P/$PROFD_REL_BINDIR
lib=$P/$PROFD_REL_LIBDIR
inc=$P/$PROFD_REL_INCLUDEDIR
unit=$P/$PROFD_SYSTEMD_UNITDIR/profd.service
manifest=$PROFD_BUILD_DIR/install_manifest.txt
all=$(wc -l <"$manifest")
outside=$(grep -v "^$P/" "$manifest" || true)
check "all $all files installed are under P${outside:+ (not: $outside)}" \
  test "$all" -ge "${#expected[@]}" -a -z "$outside"
for f in "$bin/profd" "$bin/profctl" "$bin/profd-sim" "$lib/libprofd.so.0" "$lib/libprofd.a" \
  "$inc/profd/client.h" "$lib/pkgconfig/profd.pc" "$lib/cmake/profd/profdConfig.cmake" \
  "$unit" "$P/etc/profd/profd.yaml" "$P/$PROFD_REL_MANDIR/man8/profd.8"; do
  [ -e "$f" ] || bad "not installed under P: ${f#"$P"/}"
done
ok "programs, library, headers, profd.pc, CMake package, unit, configuration, man pages under P"

headers=$(cd "$inc" && find . -type f | sort | tr '\n' ' ')
# profd/version.h: the version, generated from the CMake project's
check "public headers are exactly profd/client.h, errors.h and version.h ($headers)" \
  test "$headers" = "./profd/client.h ./profd/errors.h ./profd/version.h "
check "libprofd.so -> libprofd.so.0 -> libprofd.so.$PROFD_VERSION" \
  test "$(readlink "$lib/libprofd.so")" = libprofd.so.0 -a \
  "$(readlink "$lib/libprofd.so.0")" = "libprofd.so.$PROFD_VERSION"
soname=$(readelf -d "$lib/libprofd.so.$PROFD_VERSION" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
check "SONAME is libprofd.so.0 (found '$soname')" test "$soname" = libprofd.so.0
others=$(nm -D --defined-only "$lib/libprofd.so.$PROFD_VERSION" | awk '$3 !~ /^profd_/ {print $3}')
check "libprofd.so exports only profd_* symbols${others:+ (also: $others)}" test -z "$others"
libpath=$(readelf -d "$lib/libprofd.so.$PROFD_VERSION" | grep -E 'R(UN)?PATH' || true)
check "libprofd.so has no RUNPATH${libpath:+ ($libpath)}" test -z "$libpath"
runpath=$(readelf -d "$bin/profd-sim" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
check "profd-sim: RUNPATH \$ORIGIN/../$PROFD_REL_LIBDIR (found '$runpath')" \
  test "$runpath" = "\$ORIGIN/$(realpath -m --relative-to="$bin" "$lib")"

# profd.pc: prefix=P, every path through it
check "profd.pc: prefix=$P" grep -qx "prefix=$P" "$lib/pkgconfig/profd.pc"
check "profd.pc: libdir=\${prefix}/$PROFD_REL_LIBDIR" \
  grep -qxF "libdir=\${prefix}/$PROFD_REL_LIBDIR" "$lib/pkgconfig/profd.pc"
check "profd.pc: includedir=\${prefix}/$PROFD_REL_INCLUDEDIR" \
  grep -qxF "includedir=\${prefix}/$PROFD_REL_INCLUDEDIR" "$lib/pkgconfig/profd.pc"

# the unit: P's daemon and configuration, accepted by systemd-analyze verify
execstart=$(sed -n 's/^ExecStart=//p' "$unit")
check "unit runs P/bin/profd --config P/etc/profd/profd.yaml (found '$execstart')" \
  test "$execstart" = "$bin/profd --config $P/etc/profd/profd.yaml"
check "no @VARIABLE@ left in the unit" bash -c "! grep -q '@[A-Z_]*@' '$unit'"
msg=$(cd "$(dirname "$unit")" && MANPATH=$P/$PROFD_REL_MANDIR systemd-analyze verify ./profd.service 2>&1) &&
  [ -z "$msg" ] && ok "systemd-analyze verify of P's unit: no message" ||
  bad "systemd-analyze verify of P's unit: $msg"

# the installed programs, nothing set: they find P's libprofd
check "installed profd --version" test "$("$bin/profd" --version)" = "profd $PROFD_VERSION"
check "installed profctl --version" test "$("$bin/profctl" --version)" = "profctl $PROFD_VERSION"
sim_lib=$(ldd "$bin/profd-sim" | awk '$1 == "libprofd.so.0" {print $3}')
check "installed profd-sim loads P's libprofd.so.0 (found '$sim_lib')" \
  test "$(realpath "${sim_lib:-/nonexistent}")" = "$(realpath "$lib/libprofd.so.0")"
if bash "$PROFD_SOURCE_DIR/tests/deploy/window.sh" "$tmp/w" "$bin" >"$tmp/window.out" 2>&1; then
  ok "installed profd, profd-sim and profctl take a window: $(tail -1 "$tmp/window.out")"
else
  cat "$tmp/window.out" >&2
  bad "a window with the programs installed under P"
fi

# ---- consumers, with nothing but where P is ----
export PROFD_URL="ipc://$tmp/no-daemon.sock" # no daemon: every call a no-op
src=$PROFD_SOURCE_DIR/tests/deploy/consumer
cc=${CC:-cc}
read -r -a flags <<<"${PROFD_CONSUMER_FLAGS:-}"
run_consumer() { # NAME BINARY
  local out
  if ! out=$(LD_LIBRARY_PATH=$lib "$2" 2>&1); then
    bad "$1: $out"
  elif [ "$out" = "ok $PROFD_VERSION" ]; then
    ok "$1 runs with no daemon"
  else
    bad "$1 printed '$out'"
  fi
}
needs_libprofd() { readelf -d "$1" | grep -q 'NEEDED.*\[libprofd\.so\.0\]'; }

pc() { PKG_CONFIG_PATH=$lib/pkgconfig pkg-config "$@"; }
check "pkg-config --modversion profd" test "$(pc --modversion profd)" = "$PROFD_VERSION"
read -r -a pc_cflags <<<"$(pc --cflags profd)"
read -r -a pc_libs <<<"$(pc --libs profd)"
check "pkg-config --cflags: -I$inc first (found ${pc_cflags[*]})" test "${pc_cflags[0]}" = "-I$inc"
if "$cc" "${flags[@]}" "${pc_cflags[@]}" -o "$tmp/consumer-pc" "$src/consumer.c" "${pc_libs[@]}" \
  2>"$tmp/cc.log"; then
  ok "pkg-config: built against P's libprofd.so"
  check "pkg-config: consumer needs libprofd.so.0" needs_libprofd "$tmp/consumer-pc"
  run_consumer "pkg-config consumer" "$tmp/consumer-pc"
else
  cat "$tmp/cc.log" >&2
  bad "pkg-config: build against P's libprofd.so"
fi
read -r -a pc_cflags <<<"$(pc --static --cflags profd)"
read -r -a pc_libs <<<"$(pc --static --libs profd)"
pc_libs=("${pc_libs[@]/#-lprofd/-l:libprofd.a}")
if "$cc" "${flags[@]}" "${pc_cflags[@]}" -o "$tmp/consumer-pc-static" "$src/consumer.c" \
  "${pc_libs[@]}" 2>"$tmp/cc.log"; then
  ok "pkg-config --static: built against P's libprofd.a"
  check "pkg-config --static: consumer does not need libprofd.so" \
    bash -c "! readelf -d '$tmp/consumer-pc-static' | grep -q libprofd"
  run_consumer "pkg-config static consumer" "$tmp/consumer-pc-static"
else
  cat "$tmp/cc.log" >&2
  bad "pkg-config --static: build against P's libprofd.a"
fi

cmake_consumer() { # BUILD-DIR [cmake args...]
  local dir=$1
  shift
  cmake -S "$src" -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${PROFD_CONSUMER_FLAGS:-}" \
    -DCMAKE_PREFIX_PATH="$P" "$@" >"$dir.log" 2>&1
}
if cmake_consumer "$tmp/cm" && cmake --build "$tmp/cm" >>"$tmp/cm.log" 2>&1; then
  ok "find_package(profd) with CMAKE_PREFIX_PATH=P: built against profd::client and profd::client_static"
  check "find_package: profd_DIR is P's" \
    grep -qx "profd_DIR:PATH=$lib/cmake/profd" "$tmp/cm/CMakeCache.txt"
  check "find_package: consumer needs libprofd.so.0" needs_libprofd "$tmp/cm/consumer"
  check "find_package: consumer_static does not need libprofd.so" \
    bash -c "! readelf -d '$tmp/cm/consumer_static' | grep -q libprofd"
  run_consumer "find_package consumer" "$tmp/cm/consumer"
  run_consumer "find_package static consumer" "$tmp/cm/consumer_static"
else
  cat "$tmp/cm.log" >&2
  bad "find_package(profd): configure and build"
fi
check "find_package(profd $PROFD_VERSION) is accepted" \
  cmake_consumer "$tmp/cm-same" -DPROFD_WANT_VERSION="$PROFD_VERSION"
IFS=. read -r major minor _ <<<"$PROFD_VERSION"
next="$major.$((minor + 1))"
if cmake_consumer "$tmp/cm-next" -DPROFD_WANT_VERSION="$next"; then
  bad "find_package(profd $next) accepted version $PROFD_VERSION"
else
  ok "find_package(profd $next) is refused (another minor version)"
fi
unset PROFD_URL

# ---- the Python package under P ----
# P has no python3: the install says where the package went and to set
# PYTHONPATH; the package then finds P's library by itself.
site=$(sed -n 's/^-- Python package profd: \(.*\)\/profd (no python3 of this prefix reads it: set PYTHONPATH=\(.*\))$/\1/p' \
  "$tmp/install-p.log")
check "the install names the package folder and PYTHONPATH (found '${site}')" \
  test -n "$site" -a "${site#"$P"/lib/python3.}" != "$site"
for m in __init__.py _native.py _install.py _version.py capture.py client.py settings.py backends.py \
  _hooks.py _autoload.py integrations/__init__.py integrations/_common.py integrations/pytorch.py \
  integrations/verl.py integrations/mindspeed.py integrations/megatron.py; do
  [ -f "$site/profd/$m" ] || bad "not installed: $site/profd/$m"
done
check "profd-auto.pth installed next to the package" test -f "$site/profd-auto.pth"
# issue 31: the drop-in is silently off from PYTHONPATH: the install says how
# to activate it, and the doctor says it is not active and why
check "the install says how to activate the drop-in from PYTHONPATH" \
  grep -qxF -- "-- profd drop-in (PROFD_AUTO=1): not active through PYTHONPATH (Python reads no .pth file there); activate it with: cp $site/profd-auto.pth \"\$(python3 -c 'import site; print(site.getsitepackages()[0])')\"/ ; check with: PYTHONPATH=$site python3 -m profd doctor" "$tmp/install-p.log"
doc=$(cd "$tmp" && PYTHONPATH="$site" PROFD_AUTO=1 PROFD_RUN_DIR="$tmp/nodaemon" PYTHONDONTWRITEBYTECODE=1 \
  /usr/bin/python3 -m profd doctor 2>&1) && bad "doctor without a daemon exited 0: $doc"
check "python -m profd doctor: the drop-in not installed in a site folder" \
  grep -qx "drop-in: not installed: no profd-auto.pth in this interpreter's site folders (.*)" <<<"$doc"
check "python -m profd doctor: imported through PYTHONPATH, with the command" \
  grep -qx "  to activate it: cp $site/profd-auto.pth .*/   (or pip install the package)" <<<"$doc"
# (a sanitized build's library does not load into python3: the doctor says why)
check "python -m profd doctor: the library of P, or why not" grep -qxE \
  "libprofd: ($P/.*libprofd\.so\.0.*|not loaded: .*$P/.*libprofd\.so\.0 is built with AddressSanitizer: .*)" <<<"$doc"
check "python -m profd doctor: the daemon it would reach, and why not" \
  grep -qx "daemon: ipc://$tmp/nodaemon/worker.sock (PROFD_RUN_DIR): not reachable: No such file or directory" <<<"$doc"
# profd._speedups (the C step scope), where the build made it: installed with
# the package and in use there (it has no sanitizer and links no libprofd)
for ext in "$PROFD_BUILD_DIR"/python/profd/_speedups.*.so; do
  [ -f "$ext" ] || continue
  check "profd._speedups installed with the package" test -f "$site/profd/${ext##*/}"
  sp=$(cd "$tmp" && PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c \
    'import profd; print(profd.speedups(), profd.speedups_error())' 2>&1)
  check "the installed package makes its step calls from C ($sp)" test "$sp" = "True None"
done
check "package metadata with verl's plugin entry point installed next to the package" \
  grep -qx "profd = profd.integrations.verl" "$site/profd-$PROFD_VERSION.dist-info/entry_points.txt"
# pyimport PYTHON [env...]: import the package, make a client and a step,
# print "loaded PATH" or "no-op: REASON" (load_error() asked first)
pyimport() {
  local py=$1
  shift
  (cd "$tmp" && env "$@" PROFD_URL="ipc://$tmp/no-daemon.sock" PYTHONDONTWRITEBYTECODE=1 "$py" -c '
import profd
err = profd.load_error()
from profd import _native
lib = _native.load()
c = profd.Client(role="actor")
with c.step(1):
    pass
c.close()
print("loaded " + lib.path if lib else "no-op: " + err)
' 2>&1)
}
if $sanitized; then
  want_p="no-op: libprofd not found (.*$lib/libprofd.so.0 is built with AddressSanitizer"
else
  want_p="loaded $lib/libprofd.so.0"
fi
py=$(pyimport /usr/bin/python3 PYTHONPATH="$site") || bad "import profd from P: $py"
check "PYTHONPATH=site: the package loads P's library ($py)" grep -qx "$want_p.*" <<<"$py"
mv "$lib/libprofd.so.$PROFD_VERSION" "$tmp/moved.so"
py=$(pyimport /usr/bin/python3 PYTHONPATH="$site") || bad "import profd from P: $py"
mv "$tmp/moved.so" "$lib/libprofd.so.$PROFD_VERSION"
check "library gone: load_error() says so before any client, naming P's library ($py)" \
  grep -qx "no-op: libprofd not found (installed $lib/libprofd.so.0: .*No such file.*" <<<"$py"

# ======== 3. a virtual environment as the prefix ========
V=$tmp/venv
/usr/bin/python3 -m venv --without-pip "$V" >"$tmp/venv.log" 2>&1 ||
  { cat "$tmp/venv.log" >&2; die "python3 -m venv"; }
cmake --install "$PROFD_BUILD_DIR" --prefix "$V" >"$tmp/install-v.log" 2>&1 ||
  { cat "$tmp/install-v.log" >&2; die "cmake --install --prefix $V failed"; }
vsite=$("$V/bin/python3" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
check "venv: the package is in the venv's site-packages ($vsite)" test -f "$vsite/profd/__init__.py"
if $sanitized; then
  want_v="no-op: libprofd not found (.*$V/$PROFD_REL_LIBDIR/libprofd.so.0 is built with AddressSanitizer"
else
  want_v="loaded $V/$PROFD_REL_LIBDIR/libprofd.so.0"
fi
py=$(pyimport "$V/bin/python3") || bad "venv: import profd: $py"
check "venv: its python imports profd with nothing set and loads the venv's library ($py)" \
  grep -qx "$want_v.*" <<<"$py"
# the drop-in hook: the venv's python reads profd-auto.pth at every start; it
# imports nothing unless PROFD_AUTO (or a framework's variable) is set, and
# never torch; verl finds the plugin entry point in the package metadata
pth() { # pth [VAR=value...]: the modules the .pth imported at start
  (cd "$tmp" && env -u PYTHONPATH "$@" PYTHONDONTWRITEBYTECODE=1 "$V/bin/python3" -c '
import sys
print(" ".join(m for m in ("profd", "profd.integrations.pytorch", "torch") if m in sys.modules) or "-")
')
}
check "venv: the .pth imports nothing without PROFD_AUTO" test "$(pth PROFD_AUTO=0)" = "-"
# (since b339406 the .pth's profd._autoload only puts a finder on sys.meta_path:
# the PyTorch hook loads at the first import of torch, not at start-up)
check "venv: the .pth loads profd with PROFD_AUTO=1, neither torch nor its hook yet" \
  test "$(pth PROFD_AUTO=1)" = "profd"
ep=$("$V/bin/python3" -c '
from importlib.metadata import entry_points
print(" ".join("%s=%s" % (e.name, e.value) for e in entry_points(group="verl.plugins")))')
check "venv: verl's plugin entry point is profd.integrations.verl (found '$ep')" \
  test "$ep" = "profd=profd.integrations.verl"

finish
