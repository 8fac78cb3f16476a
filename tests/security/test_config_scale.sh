#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Config lookups are not a scan of every key (issue 28, item 8): profctl
# apply --dry-run of a 0.5 MB config of 40,000 keys each interpolating one
# key takes at most 40 times as long as the same config of 4,000 keys (a
# lookup in O(1): about 10 times; a scan of every key: about 100 times,
# 15.6 s on the report's machine), and at most max(60 s, 40 x) whatever.
. "$(dirname "$0")/lib.sh"

gen() { # N FILE
  /usr/bin/python3 -c '
import sys
n = int(sys.argv[1])
with open(sys.argv[2], "w") as f:
    f.write("x: 1\n")
    for i in range(n):
        f.write("k%d: ${x}\n" % i)' "$1" "$2"
}
gen 4000 "$tmp/k4k.yaml"
gen 40000 "$tmp/k40k.yaml"
secs() { /usr/bin/python3 -c 'import time; print(time.monotonic())'; }
run() { # FILE LIMIT_S: prints the seconds it took, or "timeout"
  local t0 t1 rc=0
  t0=$(secs)
  timeout "$2" "$PROFD_PROFCTL" apply --dry-run "$1" >"$tmp/apply.out" 2>&1 || rc=$?
  t1=$(secs)
  if [ "$rc" = 124 ]; then echo timeout; else /usr/bin/python3 -c "print($t1 - $t0)"; fi
}
t4=$(run "$tmp/k4k.yaml" 60)
grep -q "no profiling settings found" "$tmp/apply.out" ||
  die "4,000 keys: $(head -c 300 "$tmp/apply.out")"
limit=$(/usr/bin/python3 -c "print(int(max(60, 40 * max($t4, 0.05))) + 1)")
t40=$(run "$tmp/k40k.yaml" "$limit")
if [ "$t40" = timeout ]; then
  bad "40,000 keys: over $limit s (4,000 keys: $t4 s)"
elif /usr/bin/python3 -c "import sys; sys.exit(0 if $t40 <= 40 * max($t4, 0.05) else 1)"; then
  grep -q "no profiling settings found" "$tmp/apply.out" &&
    ok "40,000 keys in $t40 s, 4,000 in $t4 s" || bad "40,000 keys: $(head -c 300 "$tmp/apply.out")"
else
  bad "40,000 keys in $t40 s, over 40 times the 4,000 keys' $t4 s"
fi
finish
