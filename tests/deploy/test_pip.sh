#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# pip install of the Python client (client/python), offline, with Debian's
# python3-pip, python3-setuptools, python3-wheel and python3-venv:
#
# 1. `pip wheel --no-build-isolation` makes a platform wheel holding
#    libprofd, profd._speedups, profd-auto.pth at its root, and the
#    Apache-2.0 license in its metadata;
# 2. the wheel installs into a fresh venv (python3 -m venv): the .pth lands
#    in that venv's site-packages, the package loads libprofd from beside
#    itself (no library installed anywhere else), the C step scope is in
#    use, and `python -m profd doctor` says so and names the daemon;
# 3. `pip install --no-build-isolation .` into a venv that sees Debian's
#    torch (--system-site-packages): a plain PyTorch loop with PROFD_AUTO=1
#    and no profd in it registers with the daemon through the .pth.
# A copy of the tree is built (pip builds in the source folder).
source "$(dirname "$0")/lib.sh"

py=/usr/bin/python3
[ -x "$py" ] || skip "no /usr/bin/python3"
for m in pip setuptools wheel venv ensurepip; do
  "$py" -c "import $m" 2>/dev/null || skip "Debian's python3-$m is not installed (deploy/deps.sh)"
done
command -v cmake >/dev/null || skip "no cmake"
: "${PROFD_PROFD:?set by ctest}"
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH PROFD_LIB PROFD_URL PROFD_RUN_DIR PROFD_AUTO
if command -v ccache >/dev/null 2>&1; then export CMAKE_C_COMPILER_LAUNCHER=ccache; fi

src=$tmp/src
mkdir -p "$src"
tar -C "$PROFD_SOURCE_DIR" --exclude='./build*' --exclude=./.git --exclude='./obj-*' \
  --exclude=./client/python/build --exclude='./client/python/*.egg-info' -cf - . | tar -C "$src" -xf -

# ---- 1. the wheel ----
"$py" -m pip wheel --no-build-isolation --no-deps -w "$tmp/dist" "$src/client/python" \
  >"$tmp/wheel.log" 2>&1 || { tail -30 "$tmp/wheel.log" >&2; die "pip wheel failed"; }
tag=$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
whl=$tmp/dist/profd-$PROFD_VERSION-$tag-$tag-linux_x86_64.whl
check "pip wheel: a platform wheel (${whl##*/})" test -f "$whl"
"$py" - "$whl" >"$tmp/contents.txt" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in sorted(z.namelist()):
    print(n)
meta = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")][0]
for line in z.read(meta).decode().splitlines():
    if line.startswith(("License:", "Classifier: License")):
        print("META " + line)
PY
for f in profd/libprofd.so profd/__main__.py profd/client.py profd/_version.py profd/integrations/verl.py \
  profd-auto.pth "META License: Apache-2.0"; do
  check "the wheel holds $f" grep -qx "$f" "$tmp/contents.txt"
done
check "the wheel holds profd._speedups" grep -qE "^profd/_speedups\.cpython-.*\.so$" "$tmp/contents.txt"
check "the wheel holds no C source" test "$(grep -c '\.c$' "$tmp/contents.txt")" = 0

# ---- 2. a fresh venv ----
"$py" -m venv "$tmp/venv" || die "python3 -m venv"
"$tmp/venv/bin/pip" install --no-deps "$whl" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; die "pip install of the wheel into a fresh venv"; }
site=$("$tmp/venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')
check "the drop-in's .pth in the venv's site-packages ($site)" test -f "$site/profd-auto.pth"
run=$tmp/run
"$PROFD_PROFD" --run-dir "$run" --save-path "$tmp/save" --log-level warn >"$tmp/profd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$run/control.sock" ] && break; sleep 0.1; done
[ -S "$run/control.sock" ] || die "profd did not start: $(cat "$tmp/profd.log")"
out=$(cd "$tmp" && "$tmp/venv/bin/python" -c '
import profd, profd._native as n
print(n.load().path)
print(profd.speedups(), profd.speedups_error())' 2>&1)
check "the venv's package loads the wheel's libprofd ($(sed -n 1p <<<"$out"))" \
  test "$(sed -n 1p <<<"$out")" = "$site/profd/libprofd.so"
check "profd._speedups in use from the wheel" test "$(sed -n 2p <<<"$out")" = "True None"
rc=0
doc=$(cd "$tmp" && PROFD_AUTO=1 PROFD_RUN_DIR=$run "$tmp/venv/bin/python" -m profd doctor 2>&1) || rc=$?
check "python -m profd doctor exits 0 with a daemon ($rc)" test "$rc" = 0
for line in "drop-in: installed: $site/profd-auto.pth" \
  "  active: PROFD_AUTO=1 set, so it profiles this interpreter's jobs" \
  "libprofd: $site/profd/libprofd.so" "speedups: profd._speedups (the C step scope)" \
  "daemon: ipc://$run/worker.sock (PROFD_RUN_DIR): listening"; do
  check "doctor: '$line'" grep -qxF -- "$line" <<<"$doc"
done
doc=$(cd "$tmp" && PROFD_RUN_DIR=$run "$tmp/venv/bin/python" -m profd doctor 2>&1) || true
check "doctor without PROFD_AUTO: installed, not active, and how" grep -qxF -- \
  "  not active: set PROFD_AUTO=1 (or PROFD_VERL=1, PROFD_MINDSPEED=1, PROFD_MEGATRON=1)" <<<"$doc"
# relocatable: the venv's package moved elsewhere still finds its library
mkdir -p "$tmp/moved"
cp -r "$site/profd" "$tmp/moved/"
out=$(cd "$tmp" && PYTHONPATH=$tmp/moved "$py" -c 'import profd._native as n; print(n.load().path)' 2>&1)
check "moved, the package loads the library beside it ($out)" test "$out" = "$tmp/moved/profd/libprofd.so"

# ---- 3. pip install --no-build-isolation . and the drop-in ----
if "$py" -c 'import torch' 2>/dev/null; then
  "$py" -m venv --system-site-packages "$tmp/venv2" || die "python3 -m venv --system-site-packages"
  (cd "$src/client/python" && "$tmp/venv2/bin/pip" install --no-build-isolation --no-deps .) \
    >"$tmp/install2.log" 2>&1 || { tail -30 "$tmp/install2.log" >&2; die "pip install --no-build-isolation ."; }
  site2=$("$tmp/venv2/bin/python" -c 'import site; print(site.getsitepackages()[0])')
  check "pip install .: the .pth in the venv's site-packages" test -f "$site2/profd-auto.pth"
  (cd "$tmp" && PROFD_AUTO=1 PROFD_RUN_DIR=$run PROFD_JOB=pip RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 \
    TRAIN_STOP_FILE=$tmp/stop TRAIN_MAX_STEPS=3000 TRAIN_SLEEP_S=0.02 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') \
    "$tmp/venv2/bin/python" "$src/client/python/examples/plain_ddp_train.py" >"$tmp/train.log" 2>&1) &
  pids+=($!)
  n=0
  for _ in $(seq 600); do # importing torch on a loaded machine: seconds
    n=$(PROFD_RUN_DIR=$run "$PROFD_PROFCTL" --json status --job pip 2>/dev/null |
      "$py" -c 'import json,sys; print(sum(1 for r in json.load(sys.stdin)["ranks"] if r.get("step") is not None and r["step"] >= 2))' || echo 0)
    [ "$n" = 1 ] && break
    sleep 0.1
  done
  touch "$tmp/stop"
  if [ "$n" != 1 ]; then
    tail -20 "$tmp/train.log" >&2
    PROFD_RUN_DIR=$run "$PROFD_PROFCTL" status >&2 || true
  fi
  check "PROFD_AUTO=1 through the pip-installed .pth: the plain PyTorch rank registered and steps" test "$n" = 1
else
  echo "SKIP (part 3): Debian's torch does not import under /usr/bin/python3"
fi
finish
