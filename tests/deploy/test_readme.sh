#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The README as a newcomer reads it: at most 250 lines, the two commands
# first, and its quick starts run as written. The code blocks after
# `<!-- quickstart: NAME -->` (setup, pytorch, verl, c, output) are
# extracted and run in order, as one shell script, in a copy of the tree
# (they build it, pip install the client into a venv in $HOME, start a
# daemon, profile a plain PyTorch job and a C worker, dry-run a verl launch
# line in a verl configuration tree, read the output). The test gives them
# a HOME, a run folder (PROFD_RUN_DIR, which the README names), offline pip
# settings, and `verl` (the verl config tree of tests/fixtures/launch); then
# it checks what they left: both windows done with complete captures.
source "$(dirname "$0")/lib.sh"

readme=$PROFD_SOURCE_DIR/README.md
py=/usr/bin/python3
n=$(wc -l <"$readme")
check "README.md is at most 250 lines ($n)" test "$n" -le 250
check "README.md begins with the two commands" test "$(sed -n 1,4p "$readme")" = '```sh
deploy/demo.sh    # build profd, profile a simulated multi-rank RL job, print the gathered tree
deploy/test.sh    # build with ASan/UBSan and run every test (unit, integration, system)
```'

"$py" - "$readme" "$tmp/quickstart.sh" >"$tmp/blocks.txt" <<'PY' || die "extracting: $(cat "$tmp/blocks.txt")"
import re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"<!-- quickstart: (\w+) -->\n```sh\n(.*?)\n```\n", text, re.S)
names = [b[0] for b in blocks]
assert names == ["setup", "pytorch", "verl", "c", "output"], names
with open(sys.argv[2], "w") as f:
    f.write("set -euo pipefail\n")
    for name, body in blocks:
        f.write("echo '==== quickstart: %s'\n%s\n" % (name, body))
print(" ".join(names))
PY
ok "quick starts found: $(cat "$tmp/blocks.txt")"

# The quick starts wait for a measured step time with an awk on `profctl
# status` (the P50_MS column of the role table). The lines below the table
# are not rows of it: "  roles: ROLE 1; 0 lost" (every node, always) and
# "stalled: ROLE rank 0 on HOST, ..." (a rank in its long first step) have
# the role 2nd and something other than "-" 6th. A wait that took them for
# a measurement ended as soon as the rank registered, and --next planned
# from an unmeasured rank (CI at 08616ee: "plan arrived at step 6, after
# start step 5", exit 3). The status below is laid out as
# client/profctl/print.c prints it.
fails() { ! "$@"; }
status() { # JOB ROLE STEP P50 STALLED: `profctl status` of one rank
  printf 'node vm  version 0.1.0  save_path /x  windows 0 (0 open)  ranks 1\n\n'
  printf '%-10s %-12s %6s %8s %9s %9s %9s %7s  %s\n' JOB ROLE RANKS STEP MIN_MS P50_MS MAX_MS STALLED \
    'SLOWEST (rank: ms, x median)'
  printf '%-10s %-12s %6s %8s %9s %9s %9s %7s  %s\n' "$1" "$2" 1 "$3" "$4" "$4" "$4" "$5" -
  [ "$5" = 0 ] || printf 'stalled: %s rank 0 on vm, in step %s for 3.1 s\n' "$2" "$3"
  printf '\nnode vm: 1 rank(s)\n  roles: %s 1; 0 lost\n(every rank: profctl status --ranks)\n' "$2"
}
waits=$(grep -o "^until profctl status[^|]*| awk '[^']*'" "$readme" | sed "s/^[^']*'//; s/'\$//")
check "two quick starts wait for a measured step time" test "$(printf '%s\n' "$waits" | grep -c .)" = 2
while IFS= read -r prog; do
  job=$(sed -n 's/.*\$1 == "\([a-z]*\)".*/\1/p' <<<"$prog")
  job=${job:-default}
  role=$(sed -n 's/.*\$2 == "\([a-z]*\)".*/\1/p' <<<"$prog")
  check "the wait for $job/$role goes on while the rank is unmeasured" \
    fails awk "$prog" < <(status "$job" "$role" 4 - 0)
  check "the wait for $job/$role goes on while the rank is unmeasured and stalled" \
    fails awk "$prog" < <(status "$job" "$role" 4 - 1)
  check "the wait for $job/$role ends once P50_MS is measured" \
    awk "$prog" < <(status "$job" "$role" 9 21.4 0)
done <<<"$waits"

for m in pip venv ensurepip setuptools wheel torch; do
  "$py" -c "import $m" 2>/dev/null || skip "python3 cannot import $m (the PyTorch quick start needs it)"
done
command -v cmake >/dev/null || skip "no cmake"
command -v cc >/dev/null || skip "no cc"

src=$tmp/src
mkdir -p "$src" "$tmp/home"
tar -C "$PROFD_SOURCE_DIR" --exclude='./build*' --exclude=./.git --exclude='./obj-*' \
  --exclude=./client/python/build --exclude='./client/python/*.egg-info' -cf - . | tar -C "$src" -xf -
cp -r "$PROFD_SOURCE_DIR/tests/fixtures/launch/trees/verl" "$src/verl" # "a verl checkout"

# the environment a newcomer's shell would have, fenced into $tmp
env_vars=(HOME="$tmp/home" PROFD_RUN_DIR="$tmp/run" PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
  PIP_NO_BUILD_ISOLATION=0 CMAKE_BUILD_PARALLEL_LEVEL=2 PYTHONDONTWRITEBYTECODE=1
  PATH="/usr/bin:/bin")
if command -v ccache >/dev/null 2>&1; then
  env_vars+=(CMAKE_C_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$src"
    CCACHE_DIR="${CCACHE_DIR:-$HOME/.ccache}")
fi
rc=0
(cd "$src" && env -i "${env_vars[@]}" timeout 1500 bash -c '
  trap "kill \$(jobs -p) 2>/dev/null; wait 2>/dev/null" EXIT
  source "$1"' quickstart "$tmp/quickstart.sh") >"$tmp/run.log" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
  tail -40 "$tmp/run.log" >&2
  die "the quick starts as written: exit $rc"
fi
ok "the quick starts ran as written"

log() { sed -n "/^==== quickstart: $1\$/,/^==== quickstart: /p" "$tmp/run.log"; }
check "doctor found the library and the daemon" grep -q "^daemon: ipc://$tmp/run/worker.sock (PROFD_RUN_DIR): listening" \
  <(log pytorch)
check "the verl launch line: verl's windows (steps 2 and 4, torch, e2e)" \
  test "$(log verl | grep -c '^window steps [24]: torch e2e$')" = 2
"$py" - "$tmp/home/profd-out" >"$tmp/out.txt" 2>&1 <<'PY' || bad "the output: $(cat "$tmp/out.txt")"
import glob, json, os, sys
root = sys.argv[1]
for job, wid in (("default", 1), ("cdemo", 2)):
    (d,) = glob.glob(os.path.join(root, job, "w%d-*" % wid))
    m = json.load(open(os.path.join(d, "manifest.json")))
    st = [c["status"] for c in m["captures"]]
    assert st == ["complete"], (job, st, [c.get("reason") for c in m["captures"]])
    for f in ("report.html", "steps.json"):
        assert os.path.isfile(os.path.join(d, f)), (d, f)
print("ok")
PY
check "window 1 (PyTorch) and window 2 (C) gathered complete, with their reports" grep -qx ok "$tmp/out.txt"
finish
