#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The GPU check: profd's device backends for real, on a machine with an
# NVIDIA GPU and PyTorch built for CUDA. Starts a profd daemon on a
# temporary save_path, runs a small PyTorch training loop on the GPU under
# `import profd` and one window per backend, each opened with
# `profctl start` and waited for with `profctl wait`:
#   torch         e2e, step 4: torch.profiler with CUDA activities
#   torch_sched   discrete phase `train`, step 5, sub-step schedule
#                 wait=1,warmup=1,active=2 and gzip (torch.profiler's schedule)
#   cuda          e2e, step 6: cudaProfilerStart/Stop through torch.cuda.profiler
#   torch_memory  e2e, step 8: torch.cuda.memory._record_memory_history and
#                 the pickled _snapshot()
# and, in a worker that never imports torch (libprofd's C backend, dlopen of
# libcudart):
#   cuda_c        step 2: the runtime the dynamic loader finds, if any
#   cuda_c_lib    step 4: settings {"library": the libcudart torch loaded}
# and the drop-in (tests/gpu/dropin.sh): PROFD_AUTO=1, a plain DDP script
# with no profd in it as 2 ranks, one torch window (steps 3:5) on every
# rank, aten events in each rank's trace and exactly its two optimizer steps'
# ranges (summary.json "dropin", dropin.json).
# Then prints, per window, its state, each capture's status and reason, its
# files and sizes, and checks inside them (CUDA kernel events and device
# entries in the torch traces, segments and trace entries in the memory
# snapshot); exit 0 when every window is what this machine should give.
# Without a GPU the same run checks each backend's clear failure (torch:
# CPU activities only; torch_memory and cuda: their reasons) and says so.
#
# Usage: tests/gpu/run.sh BIN OUT [LIBDIR]
#   BIN     prebuilt profd: a folder from tests/gpu/pack.sh (bin/profd,
#           bin/profctl, python/profd with libprofd.so, lib/) or a build
#           tree (daemon/profd, client/profctl, python/profd)
#   OUT     where the results go: summary.json, log.txt, profd.log,
#           profile.tar.gz (the gathered save_path tree)
#   LIBDIR  put first on LD_LIBRARY_PATH (default BIN/lib when it exists)
# Environment: PYTHON (default python3: torch must import there),
# PROFD_GPU_CHECK_BUDGET (seconds for the steps up to the report, default
# 200; with the report and the clean-up the run stays under 5 minutes).
set -uo pipefail

if [ $# -lt 2 ]; then
  sed -n '4,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
bin=$(realpath -m "$1")
out=$(realpath -m "$2")
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
libdir=${3:-}
if [ -z "$libdir" ] && [ -d "$bin/lib" ]; then libdir=$bin/lib; fi
[ -n "$libdir" ] && libdir=$(realpath -m "$libdir")
PYTHON=${PYTHON:-python3}
budget_s=${PROFD_GPU_CHECK_BUDGET:-200}
mkdir -p "$out" || exit 2
rm -f "$out/summary.json" "$out/log.txt" "$out/profd.log" "$out/profile.tar.gz"

pick() { # the first of the paths that is a file
  local p
  for p in "$@"; do
    if [ -f "$p" ]; then
      echo "$p"
      return 0
    fi
  done
  echo "$1"
}

main() {
  local t0=$SECONDS
  # seconds for the next step: what it wants, or what the budget has left
  left() {
    local want=$1 rest=$((budget_s - (SECONDS - t0)))
    [ "$rest" -lt 1 ] && rest=1
    if [ "$want" -lt "$rest" ]; then echo "$want"; else echo "$rest"; fi
  }
  local profd profctl pydir check work daemon=""
  profd=$(pick "$bin/bin/profd" "$bin/daemon/profd")
  profctl=$(pick "$bin/bin/profctl" "$bin/client/profctl")
  pydir=$bin/python
  check=$here/gpu_check.py
  work=$(mktemp -d /tmp/profd-gpu-XXXXXX) || exit 2
  export PROFD_RUN_DIR=$work/run
  export PYTHONPATH=$pydir${PYTHONPATH:+:$PYTHONPATH}
  export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
  unset PROFD_URL PROFD_CONTROL_URL PROFD_LIB PROFD_AUTO
  if [ -n "$libdir" ]; then export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
  mkdir -p "$PROFD_RUN_DIR" "$work/profile"

  fail_summary() { # a summary.json when the report could not be made
    "$PYTHON" - "$out/summary.json" "$1" <<'PY' 2>/dev/null ||
import json, sys
json.dump({"result": "fail", "errors": [sys.argv[2]]}, open(sys.argv[1], "w"), indent=1)
PY
      printf '{"result": "fail", "errors": ["%s"]}\n' "${1//\"/\'}" >"$out/summary.json"
  }
  finish() {
    if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then
      kill -TERM "$daemon" 2>/dev/null
      for _ in $(seq 100); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$daemon" 2>/dev/null
      wait "$daemon" 2>/dev/null
      echo "profd stopped"
    fi
    [ -f "$work/profd.log" ] && cp "$work/profd.log" "$out/profd.log"
    if [ -d "$work/profile" ]; then
      # the gathered tree, files over 16 MiB left out (listed in the log)
      (cd "$work" && find profile -type f -size +16M) >"$work/big.txt" 2>/dev/null
      if [ -s "$work/big.txt" ]; then
        echo "left out of profile.tar.gz (over 16 MiB):"
        sed 's/^/  /' "$work/big.txt"
      fi
      tar -C "$work" -czf "$out/profile.tar.gz" -X "$work/big.txt" profile 2>&1 | tail -n 3
      echo "profile.tar.gz: $(du -k "$out/profile.tar.gz" 2>/dev/null | cut -f1) KiB"
    fi
    [ -f "$out/summary.json" ] || fail_summary "the run stopped before its report (see log.txt)"
    rm -rf "$work"
  }
  trap finish EXIT
  trap 'echo "interrupted"; exit 143' TERM INT HUP

  echo "== profd GPU check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n) ($(uname -srm))"
  echo "binaries  $bin"
  echo "profd     $profd"
  echo "profctl   $profctl"
  echo "python    $pydir (PYTHON=$PYTHON: $(command -v "$PYTHON" || echo missing))"
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  [ -f "$bin/BUILDINFO" ] && sed 's/^/  /' "$bin/BUILDINFO"
  command -v nvidia-smi >/dev/null 2>&1 && timeout 20 nvidia-smi 2>&1 | head -n 20

  if [ -f "$profd" ] && [ -f "$profctl" ] && { [ ! -x "$profd" ] || [ ! -x "$profctl" ]; }; then
    # a copy that lost the executable bits: run copies that have them
    mkdir -p "$work/bin" && cp "$profd" "$profctl" "$work/bin/" && chmod 755 "$work"/bin/* &&
      profd=$work/bin/$(basename "$profd") && profctl=$work/bin/$(basename "$profctl")
    echo "(not executable there: running copies in $work/bin)"
  fi

  echo
  echo "== the binaries start"
  local ok=1 f
  timeout 10 "$profd" --version || ok=0
  timeout 10 "$profctl" --version || ok=0
  if [ "$ok" -ne 1 ] || [ ! -f "$pydir/profd/__init__.py" ]; then
    echo "!! the binaries do not start here (or $pydir/profd is missing): what they link"
    for f in "$profd" "$profctl" "$pydir/profd/libprofd.so"; do
      echo "-- ldd $f"
      ldd "$f" 2>&1
    done
    ls -la "$bin" "$bin"/* 2>&1 | head -n 60
    fail_summary "the binaries in $bin do not start (ldd output in log.txt)"
    exit 1
  fi
  if ! command -v "$PYTHON" >/dev/null 2>&1; then
    fail_summary "no Python at PYTHON=$PYTHON"
    exit 1
  fi

  echo
  echo "== this machine's Python, torch and CUDA"
  timeout -k 5 "$(left 120)" "$PYTHON" "$check" env "$work/env.json"
  if [ ! -f "$work/env.json" ]; then
    echo "!! the environment probe failed; what libprofd.so links:"
    ldd "$pydir/profd/libprofd.so" 2>&1
    fail_summary "the Python probe ($PYTHON $check env) failed (see log.txt)"
    exit 1
  fi
  cat "$work/env.json"
  local cudart gpu
  cudart=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("cudart") or "")' "$work/env.json")
  gpu=$("$PYTHON" -c 'import json,sys; print(int(bool(json.load(open(sys.argv[1])).get("cuda_available"))))' \
    "$work/env.json")

  echo
  echo "== profd (save_path $work/profile)"
  "$profd" --run-dir "$PROFD_RUN_DIR" --save-path "$work/profile" --log-level debug >"$work/profd.log" 2>&1 &
  daemon=$!
  local up=0 t1=$SECONDS
  while [ $((SECONDS - t1)) -lt 15 ]; do
    if timeout 5 "$profctl" status >/dev/null 2>&1; then
      up=1
      break
    fi
    kill -0 "$daemon" 2>/dev/null || break
    sleep 0.1
  done
  if [ "$up" -ne 1 ]; then
    echo "!! profd did not start:"
    tail -n 30 "$work/profd.log"
    ldd "$profd" 2>&1
    fail_summary "profd did not start (see log.txt and profd.log)"
    exit 1
  fi
  echo "profd $daemon answers"

  echo
  echo "== windows"
  : >"$work/windows.tsv"
  local keys=() ids=() paths=() tools=() steps=()
  open() { # open KEY JOB TOOL STEPS profctl-start-args...
    local key=$1 job=$2 tool=$3 st=$4 o id path
    shift 4
    o=$(timeout 20 "$profctl" start --job "$job" --steps "$st" --tool "$tool" "$@" 2>&1)
    echo "$key: $o"
    id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' <<<"$o" | head -n 1)
    path=$(sed -n 's/^started window [0-9]* .* -> \(.*\)$/\1/p' <<<"$o" | head -n 1)
    keys+=("$key")
    ids+=("${id:-}")
    paths+=("${path:-profctl start failed: ${o//$'\n'/ }}")
    tools+=("$tool")
    steps+=("$st")
  }
  open torch gpucheck torch 4 --e2e
  open torch_sched gpucheck torch 5 --roles trainer --phases train \
    --schedule wait=1,warmup=1,active=2,repeat=1 --settings '{"gzip": true}'
  open cuda gpucheck cuda 6 --e2e
  open torch_memory gpucheck torch_memory 8 --e2e
  open cuda_c gpucheck-c cuda 2 --e2e
  local cwins=1
  if [ -n "$cudart" ]; then
    open cuda_c_lib gpucheck-c cuda 4 --e2e --settings "{\"library\": \"$cudart\"}"
    cwins=2
  fi

  echo
  echo "== training loop (job gpucheck: 10 steps, 4 micro-batches each)"
  timeout -k 5 "$(left 150)" "$PYTHON" "$check" train "$work/train.json" gpucheck 10 4 4
  echo "train exit $?"

  echo
  echo "== worker without torch (job gpucheck-c: libprofd's C cuda backend)"
  timeout -k 5 "$(left 60)" "$PYTHON" "$check" cworker "$work/cworker.json" gpucheck-c 5 "$cwins"
  echo "cworker exit $?"

  echo
  echo "== waiting for the windows"
  local i rc t
  for i in "${!keys[@]}"; do
    rc=na
    if [ -n "${ids[$i]}" ]; then
      t=$(left 30)
      timeout -k 2 $((t + 3)) "$profctl" wait "${ids[$i]}" --timeout "$t" </dev/null
      rc=$?
    fi
    echo "${keys[$i]}: profctl wait ${ids[$i]:-?}: exit $rc"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${keys[$i]}" "${tools[$i]}" "${steps[$i]}" "${ids[$i]}" "${paths[$i]}" "$rc" \
      >>"$work/windows.tsv"
  done
  if [ -z "$cudart" ]; then
    printf 'cuda_c_lib\tskip\tno libcudart found in this Python (torch loaded none)\n' >>"$work/windows.tsv"
  fi
  timeout 20 "$profctl" windows
  timeout 20 "$profctl" --json windows >"$work/state.json"

  echo
  echo "== the gathered tree"
  (cd "$work/profile" && find . -path ./.spool -prune -o -type f -printf '%10s  %P\n' | sort -k2)

  echo
  timeout -k 5 45 "$PYTHON" "$check" report "$work/windows.tsv" "$work/state.json" "$work/env.json" \
    "$work/train.json" "$work/cworker.json" "$out/summary.json"
  rc=$?
  [ -f "$out/summary.json" ] || fail_summary "the report failed (exit $rc)"

  echo
  echo "== drop-in: PROFD_AUTO=1, a plain DDP script (no profd in it), 2 ranks, window steps 3:5"
  PYTHON=$PYTHON timeout -k 5 240 "$here/dropin.sh" "$profctl" "$pydir" "$work" "$out/dropin.json"
  local drc=$?
  "$PYTHON" - "$out/summary.json" "$out/dropin.json" "$drc" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
try:
    d = json.load(open(sys.argv[2]))
except Exception as e:
    d = {"result": "fail", "errors": ["dropin.sh left no result (exit %s): %s" % (sys.argv[3], e)]}
s["dropin"] = d
if d.get("result") != "pass":
    s["result"] = "fail"
    s.setdefault("errors", []).extend("dropin: " + e for e in d.get("errors", []))
json.dump(s, open(sys.argv[1], "w"), indent=1)
PY
  [ "$rc" -eq 0 ] && [ "$drc" -ne 0 ] && rc=$drc
  if [ "$gpu" != 1 ]; then
    echo "(no GPU here: the checks above are the backends' failures without a device)"
  fi
  echo "took $((SECONDS - t0)) s; results in $out"
  exit "$rc"
}

main 2>&1 | tee "$out/log.txt"
exit "${PIPESTATUS[0]}"
