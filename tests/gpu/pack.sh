#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Build a Release profd and put into OUTDIR what tests/gpu/run.sh needs on
# another x86-64 Linux that has none of profd's libraries installed:
#   bin/profd, bin/profctl
#   python/profd         the Python package, with its libprofd.so
#   lib/                 libprofd.so.0 and the shared libraries the three
#                        link (libnng, libuv, libyaml, libcjson, libmbed*,
#                        libxxhash: whatever ldd resolves outside the C
#                        library and zlib), each under its SONAME
#   run.sh, gpu_check.py, dropin.sh, ddp_plain.py
#                        the check itself (the same as in tests/gpu)
#   BUILDINFO            the commit, the build, the newest glibc symbol
#                        version the binaries and libraries need
# Then `LD_LIBRARY_PATH=OUTDIR/lib OUTDIR/bin/profd` runs on any x86-64 Linux
# with that glibc or a newer one; run.sh sets it itself:
#   tests/gpu/run.sh OUTDIR RESULTS_DIR
# Usage: tests/gpu/pack.sh OUTDIR   (build folder: $PROFD_GPU_BUILD, default
# build-gpu in the source tree; jobs: $PROFD_GPU_JOBS, default 2; niced)
set -euo pipefail
if [ $# -ne 1 ]; then
  sed -n '4,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1")
build=$(realpath -m "${PROFD_GPU_BUILD:-$src/build-gpu}")
jobs=${PROFD_GPU_JOBS:-2}
case "$out" in
"$src" | / | "$HOME") echo "pack.sh: refusing to empty $out" >&2 && exit 2 ;;
esac

echo "building Release profd in $build"
mkdir -p "$build"
nice cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPROFD_TESTS=OFF -DPROFD_BENCH=OFF \
  -DPROFD_SANITIZE=OFF -DPROFD_FUZZ=OFF >"$build/pack-cmake.log" 2>&1 || {
  cat "$build/pack-cmake.log" >&2
  exit 1
}
# profd_python: the package's own libprofd.so (client/python)
nice cmake --build "$build" -j"$jobs" --target profd-daemon profctl profd profd_python profd_python_package \
  >"$build/pack-build.log" 2>&1 || {
  tail -n 40 "$build/pack-build.log" >&2
  exit 1
}

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/python"
install -m 755 "$build/daemon/profd" "$build/client/profctl" "$out/bin/"
cp -L "$build/client/libprofd.so.0" "$out/lib/libprofd.so.0"
(cd "$build/python" && tar -cf - --exclude=__pycache__ --exclude='*.pyc' profd profd-auto.pth) | tar -C "$out/python" -xf -
cp "$src/tests/gpu/run.sh" "$src/tests/gpu/gpu_check.py" "$src/tests/gpu/dropin.sh" "$src/tests/gpu/ddp_plain.py" "$out/"
strip --strip-unneeded "$out/bin/profd" "$out/bin/profctl" "$out/lib/libprofd.so.0" \
  "$out/python/profd/libprofd.so" 2>/dev/null || true

# The libraries the binaries resolve, except the C library's own (libc,
# libm, libpthread, libdl, librt, the loader) and zlib, which every Linux
# has: putting an older one first on LD_LIBRARY_PATH would shadow the
# system's for the Python process too.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libresolv\.so|libutil\.so|libz\.so)'
copied=()
for f in "$out/bin/profd" "$out/bin/profctl" "$out/python/profd/libprofd.so"; do
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [[ "$name" =~ $skip ]]; then continue; fi
    if [ "$path" = "not" ]; then
      echo "pack.sh: $f: $name not found" >&2
      exit 1
    fi
    if [ ! -f "$out/lib/$name" ]; then
      cp -L "$path" "$out/lib/$name"
      chmod 644 "$out/lib/$name"
      copied+=("$name")
    fi
  done < <(ldd "$f")
done

# every file resolves inside OUTDIR/lib and the system's C library
missing=$(for f in "$out"/bin/* "$out"/lib/*.so* "$out/python/profd/libprofd.so"; do
  LD_LIBRARY_PATH=$out/lib ldd "$f" | grep -v '=> /lib\|=> /usr/lib' | grep '=>' |
    grep -v "=> $out/lib/" || true
done)
if [ -n "$missing" ]; then
  echo "pack.sh: unresolved libraries: $missing" >&2
  exit 1
fi
glibc=$(for f in "$out"/bin/* "$out"/lib/*.so* "$out/python/profd/libprofd.so"; do
  objdump -T "$f" | grep -o 'GLIBC_[0-9.]*'
done | sort -u -V | tail -n 1)

{
  echo "profd $(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$out/python/profd/_version.py")," \
    "commit $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
      git -C "$src" diff --quiet HEAD -- 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -m)," \
    "Release, $(gcc --version | head -n 1)"
  echo "needs glibc >= ${glibc#GLIBC_}"
  echo "lib: libprofd.so.0 ${copied[*]}"
} >"$out/BUILDINFO"
cat "$out/BUILDINFO"
LD_LIBRARY_PATH=$out/lib "$out/bin/profd" --version >/dev/null
LD_LIBRARY_PATH=$out/lib "$out/bin/profctl" --version >/dev/null
echo "packed into $out: $(du -sh "$out" | cut -f1)"
