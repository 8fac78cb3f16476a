#!/usr/bin/env bash
# Install into a temporary DESTDIR, check the tree, then build a small
# program against it twice -- with pkg-config and with find_package(profd),
# each against the shared and the static library -- and run it with no
# daemon: every libprofd call must succeed as a no-op.
#
# Environment (from ctest): PROFD_SOURCE_DIR, PROFD_BUILD_DIR, PROFD_VERSION,
# PROFD_PREFIX and the absolute install dirs PROFD_BINDIR, PROFD_LIBDIR,
# PROFD_INCLUDEDIR, PROFD_MANDIR, PROFD_SYSCONFDIR, PROFD_UNITDIR; CC and
# PROFD_CONSUMER_FLAGS (sanitizer flags of an instrumented build).
. "$(dirname "$0")/lib.sh"

root=$tmp/root
DESTDIR=$root cmake --install "$PROFD_BUILD_DIR" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; die "cmake --install with DESTDIR failed"; }
ok "cmake --install into DESTDIR"

# ---- the tree ----
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
)
if [ -f "$PROFD_SOURCE_DIR/deploy/profd.yaml" ]; then
  expected+=("$PROFD_SYSCONFDIR/profd/profd.yaml")
fi
for f in "${expected[@]}"; do
  [ -e "$root$f" ] || bad "not installed: $f"
done
ok "${#expected[@]} files installed"
for b in profd profctl profd-sim; do
  [ -x "$root$PROFD_BINDIR/$b" ] || bad "$b is not executable"
done

headers=$(cd "$root$PROFD_INCLUDEDIR" && find . -type f | sort | tr '\n' ' ')
# profd/version.h: the version, generated from the CMake project's
check "public headers are exactly profd/client.h, errors.h and version.h ($headers)" \
  test "$headers" = "./profd/client.h ./profd/errors.h ./profd/version.h "

lib=$root$PROFD_LIBDIR
check "libprofd.so -> libprofd.so.0 -> libprofd.so.$PROFD_VERSION" \
  test "$(readlink "$lib/libprofd.so")" = libprofd.so.0 -a \
  "$(readlink "$lib/libprofd.so.0")" = "libprofd.so.$PROFD_VERSION"
soname=$(readelf -d "$lib/libprofd.so.$PROFD_VERSION" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
check "SONAME is libprofd.so.0 (found '$soname')" test "$soname" = libprofd.so.0
others=$(nm -D --defined-only "$lib/libprofd.so.$PROFD_VERSION" | awk '$3 !~ /^profd_/ {print $3}')
check "libprofd.so exports only profd_* symbols${others:+ (also: $others)}" test -z "$others"

unit=$root$PROFD_UNITDIR/profd.service
execstart=$(sed -n 's/^ExecStart=//p' "$unit")
check "unit runs $PROFD_BINDIR/profd with $PROFD_SYSCONFDIR/profd/profd.yaml" \
  test "$execstart" = "$PROFD_BINDIR/profd --config $PROFD_SYSCONFDIR/profd/profd.yaml"
check "no @VARIABLE@ left in the unit" bash -c "! grep -q '@[A-Z_]*@' '$unit'"

export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
check "installed profd --version" \
  test "$("$root$PROFD_BINDIR/profd" --version)" = "profd $PROFD_VERSION"
check "installed profctl --version" \
  test "$("$root$PROFD_BINDIR/profctl" --version)" = "profctl $PROFD_VERSION"
check "installed profd-sim --help" quiet "$root$PROFD_BINDIR/profd-sim" --help

# ---- the Python package ----
if [ -n "${PROFD_PYTHON_SITEDIR:-}" ] && [ -x /usr/bin/python3 ]; then
  case $PROFD_PYTHON_SITEDIR in
  /*) site=$root$PROFD_PYTHON_SITEDIR ;;
  *) site=$root$PROFD_PREFIX/$PROFD_PYTHON_SITEDIR ;;
  esac
  for m in __init__.py _native.py capture.py client.py settings.py backends.py _hooks.py \
    _autoload.py integrations/__init__.py integrations/_common.py integrations/pytorch.py \
    integrations/verl.py integrations/mindspeed.py integrations/megatron.py; do
    [ -f "$site/profd/$m" ] || bad "not installed: $PROFD_PYTHON_SITEDIR/profd/$m"
  done
  # the drop-in hook: a .pth next to the package, read when the folder is a
  # site folder; it imports nothing unless PROFD_AUTO (or a framework's
  # variable) is set, and never torch
  check "profd-auto.pth installed next to the package" test -f "$site/profd-auto.pth"
  pth() { # pth [VAR=value...]: the modules the site folder's .pth imported
    (cd "$tmp" && env -u PYTHONPATH "$@" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -S -c '
import site, sys
site.addsitedir(sys.argv[1])
print(" ".join(m for m in ("profd", "profd.integrations.pytorch", "torch") if m in sys.modules) or "-")
' "$site")
  }
  check "the .pth imports nothing without PROFD_AUTO" test "$(pth PROFD_AUTO=0)" = "-"
  check "the .pth loads the PyTorch hook with PROFD_AUTO=1, not torch" \
    test "$(pth PROFD_AUTO=1)" = "profd profd.integrations.pytorch"
  # the installed package, finding the installed library through the linker
  # path; a sanitized build's library is refused (it would abort python),
  # and the package is then a no-op, as documented
  py=$(cd "$tmp" && PYTHONPATH=$site LD_LIBRARY_PATH=$lib PROFD_URL="ipc://$tmp/no-daemon.sock" \
    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c '
import sys, profd
from profd import _native
assert profd.__file__.startswith(sys.argv[1] + "/profd/"), profd.__file__
lib = _native.load()
c = profd.Client(role="actor")
with c.step(1):
    pass
c.close()
print("loaded " + lib.path if lib else "no-op: " + _native.load_error())
' "$site" 2>&1) || bad "import profd from the installed package: $py"
  if [[ "${PROFD_CONSUMER_FLAGS:-}" == *address* ]]; then
    check "installed Python package imports; the sanitized library is refused ($py)" \
      grep -q '^no-op: libprofd not found (.*AddressSanitizer' <<<"$py"
  else
    check "installed Python package imports and loads libprofd.so.0 ($py)" \
      grep -qx 'loaded libprofd.so.0' <<<"$py"
  fi
fi

# ---- consumers ----
# No daemon: a socket path that does not exist.
export PROFD_URL="ipc://$tmp/no-daemon.sock"
unset PROFD_RUN_DIR PROFD_CONTROL_URL
src=$PROFD_SOURCE_DIR/tests/deploy/consumer
cc=${CC:-cc}
read -r -a flags <<<"${PROFD_CONSUMER_FLAGS:-}"

run_consumer() { # NAME BINARY
  local out
  if ! out=$("$2" 2>&1); then
    bad "$1: $out"
    return
  fi
  if [ "$out" = "ok $PROFD_VERSION" ]; then ok "$1 runs with no daemon"; else bad "$1 printed '$out'"; fi
}
needs_libprofd() { readelf -d "$1" | grep -q 'NEEDED.*\[libprofd\.so\.0\]'; }

export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
unset PKG_CONFIG_LIBDIR
check "pkg-config --modversion profd" test "$(pkg-config --modversion profd)" = "$PROFD_VERSION"
read -r -a pc_cflags <<<"$(pkg-config --cflags profd)"
read -r -a pc_libs <<<"$(pkg-config --libs profd)"
if "$cc" "${flags[@]}" "${pc_cflags[@]}" -o "$tmp/consumer-pc" "$src/consumer.c" "${pc_libs[@]}" \
  2>"$tmp/cc.log"; then
  ok "pkg-config: built against libprofd.so"
  check "pkg-config: consumer needs libprofd.so.0" needs_libprofd "$tmp/consumer-pc"
  run_consumer "pkg-config consumer" "$tmp/consumer-pc"
else
  cat "$tmp/cc.log" >&2
  bad "pkg-config: build against libprofd.so"
fi
read -r -a pc_cflags <<<"$(pkg-config --static --cflags profd)"
read -r -a pc_libs <<<"$(pkg-config --static --libs profd)"
pc_libs=("${pc_libs[@]/#-lprofd/-l:libprofd.a}")
if "$cc" "${flags[@]}" "${pc_cflags[@]}" -o "$tmp/consumer-pc-static" "$src/consumer.c" \
  "${pc_libs[@]}" 2>"$tmp/cc.log"; then
  ok "pkg-config --static: built against libprofd.a"
  check "pkg-config --static: consumer does not need libprofd.so" \
    bash -c "! readelf -d '$tmp/consumer-pc-static' | grep -q libprofd"
  run_consumer "pkg-config static consumer" "$tmp/consumer-pc-static"
else
  cat "$tmp/cc.log" >&2
  bad "pkg-config --static: build against libprofd.a"
fi

cmake_consumer() { # BUILD-DIR [cmake args...]
  local dir=$1
  shift
  cmake -S "$src" -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${PROFD_CONSUMER_FLAGS:-}" \
    -DCMAKE_PREFIX_PATH="$root$PROFD_PREFIX" "$@" >"$dir.log" 2>&1
}
if cmake_consumer "$tmp/cm" && cmake --build "$tmp/cm" >>"$tmp/cm.log" 2>&1; then
  ok "find_package(profd): built against profd::client and profd::client_static"
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

finish
