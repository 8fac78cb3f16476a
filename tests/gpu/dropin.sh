#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The drop-in check (part of tests/gpu/run.sh, runnable alone): a plain DDP
# script with nothing of profd in it (tests/gpu/ddp_plain.py), started by
# torchrun (torch >= 2) as 2 ranks with PROFD_AUTO=1 and profd-auto.pth in a site folder,
# and one torch window over steps 3:5 on every rank. Checked
# (gpu_check.py dropin): a complete capture per rank, steps 3 and 4, aten
# events in each trace (CUDA kernels too on a GPU), and exactly two
# "Optimizer.step#SGD.step" host ranges in each, inside the window's step
# markers: the window opened and closed between optimizer steps, not inside
# one (torch >= 2 runs its global step
# post-hooks inside that range).
#
# Usage: tests/gpu/dropin.sh PROFCTL PYDIR WORK OUT.json
#   a profd daemon answers on PROFD_RUN_DIR; PYDIR holds the package `profd`
#   and profd-auto.pth (else the one of this source tree is used); PYTHON as
#   in run.sh.
set -uo pipefail
profctl=$1 pydir=$2 work=$3 out=$4
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
PYTHON=${PYTHON:-python3}
pth=$pydir/profd-auto.pth
[ -f "$pth" ] || pth=$here/../../client/python/profd-auto.pth
export PYTHONPATH=$pydir${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$work/userbase"
site=$(PYTHONUSERBASE=$work/userbase "$PYTHON" -c \
  'import site; print(site.getusersitepackages() if site.ENABLE_USER_SITE else "")')
if [ -z "$site" ]; then # a virtual environment: its own site-packages
  site=$("$PYTHON" -c 'import os, site; print(next((d for d in site.getsitepackages() if os.access(d, os.W_OK)), ""))')
fi
if [ -z "$site" ]; then
  echo "dropin: no site folder to put profd-auto.pth in"
  "$PYTHON" "$here/gpu_check.py" dropin "$out" "" "no site folder to put profd-auto.pth in"
  exit 1
fi
mkdir -p "$site" && cp "$pth" "$site/profd-auto-check.pth"
echo "dropin: $site/profd-auto-check.pth"
o=$(timeout 20 "$profctl" start --job dropin --steps 3:5 --tool torch --e2e --ranks all 2>&1)
echo "dropin: $o"
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' <<<"$o" | head -n 1)
path=$(sed -n 's/^started window [0-9]* .* -> \(.*\)$/\1/p' <<<"$o" | head -n 1)
export PYTHONUSERBASE=$work/userbase PROFD_AUTO=1 PROFD_JOB=dropin
if "$PYTHON" -c 'import sys, torch; sys.exit(int(torch.__version__.split(".")[0]) < 2)'; then
  timeout -k 5 150 "$PYTHON" -m torch.distributed.run --standalone --nproc_per_node 2 "$here/ddp_plain.py" 8
  echo "dropin: torchrun exit $?"
else # torch 1.x (Debian's 1.13 torchrun fails on its own): the two workers as torchrun starts them
  port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  pids=()
  for r in 0 1; do
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      timeout -k 5 150 "$PYTHON" "$here/ddp_plain.py" 8 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; echo "dropin: rank exit $?"; done
fi
unset PYTHONUSERBASE PROFD_AUTO PROFD_JOB
rc=na
if [ -n "$id" ]; then
  timeout -k 2 45 "$profctl" wait "$id" --timeout 40 </dev/null
  rc=$?
fi
echo "dropin: profctl wait ${id:-?}: exit $rc"
rm -f "$site/profd-auto-check.pth"
"$PYTHON" "$here/gpu_check.py" dropin "$out" "$path" "profctl wait exit $rc"
