#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# profctl merge is bounded (issue 28, breaks 5 and 6):
#  1. a window without any trace file (its capture over a 1-byte budget):
#     merging it does not abort the daemon (qsort of no inputs: undefined
#     behaviour UBSan stopped the daemon on), which keeps serving;
#  2. a worker of nobody rewrites its gathered trace as a gzip stream that
#     expands to 150 MB (over 100 times its size): the merge skips it with
#     the reason, and the merged file stays small;
#  3. rewritten as a 40 MB stream of ordinary ratio, with
#     limits.window_byte_budget 16MiB: the merge is refused (ELIMIT, the
#     bound named) and writes nothing (no merged file, no .part left).
. "$(dirname "$0")/lib.sh"

needs_nobody "runs the worker as nobody with setpriv"
: "${PROFD_SIM:?set by ctest}"
export PROFD_RUN_DIR=$tmp/run
ctl=$PROFD_PROFCTL


setpriv --reuid=nobody --regid="$ngid" --clear-groups "$PROFD_SIM" --layout actor:1 \
  --steps 1000000 --rate 20 --job b --trace-bytes 20000 >"$tmp/sim.log" 2>&1 &
pids+=($!)

# 1. no trace to merge
daemon_for_nobody "  window_byte_budget: 1"
w1=$(take_window b)
[ "$("$ctl" --json windows "$w1" | json 'd["windows"][0]["state"]')" = done ] || die "window $w1 not done"
"$ctl" merge "$w1" >"$tmp/merge1.out" 2>&1 || true
expect "after merging window $w1 (no trace file) the daemon still serves" 0 "ranks" \
  "$ctl" status
stop_daemon

# 2. and 3.: nobody's gathered trace rewritten
daemon_for_nobody "  window_byte_budget: 16MiB"
w2=$(take_window b)
dir=$("$ctl" --json windows "$w2" | json 'd["windows"][0]["path"]')
trace=$(find "$dir" -name '*.pt.trace.json' -user nobody | head -1)
[ -n "$trace" ] || die "no trace of nobody in $dir: $(ls -laR "$dir")"
gz() { # MODE: nobody rewrites the trace
  as_user nobody "$ngid" /usr/bin/python3 - "$trace" "$1" <<'PY'
import gzip, random, sys
path, mode = sys.argv[1], sys.argv[2]
with gzip.open(path, "wb", compresslevel=9 if mode == "bomb" else 1) as f:
    f.write(b'{"traceEvents":[\n{"name":"a","ph":"X","ts":1,"dur":1,"pid":1,"tid":1}')
    if mode == "bomb":  # 150 MB of blanks between two events: about 1000 times its size
        chunk = b" " * 1_000_000
        for _ in range(150):
            f.write(chunk)
        f.write(b',\n{"name":"a","ph":"X","ts":2,"dur":1,"pid":1,"tid":1}')
    else:  # 40 MB of varied events: an ordinary ratio
        r = random.Random(1)
        out, n = [], 0
        while n < 40_000_000:
            e = b',\n{"name":"op%x","ph":"X","ts":%d,"dur":%d,"pid":1,"tid":%d}' % (
                r.getrandbits(32), n, r.getrandbits(16), r.getrandbits(8))
            out.append(e)
            n += len(e)
            if len(out) == 10000:
                f.write(b"".join(out))
                out = []
        f.write(b"".join(out))
    f.write(b"\n]}\n")
PY
}
gz bomb
size=$(stat -c %s "$trace")
expect "a trace of $size bytes expanding to 150 MB is skipped (nothing else to merge)" 1 \
  "nothing to merge: .*decompresses to more than 100 times its $size bytes" "$ctl" merge "$w2"
merged=$dir/merged.trace.json
[ -f "$merged" ] && [ "$(stat -c %s "$merged")" -lt 1000000 ] &&
  ok "the merged file is $(stat -c %s "$merged") bytes" ||
  bad "merged file: $(ls -la "$dir")"
rm -f "$merged"
gz plain
expect "a trace expanding to 40 MB, over limits.window_byte_budget 16MiB: refused" 1 \
  "would pass 16777216 bytes \\(the window's byte budget" "$ctl" merge "$w2"
[ ! -e "$merged" ] && [ -z "$(find "$dir" -name '*.part')" ] && ok "nothing written" ||
  bad "written: $(ls -la "$dir")"
expect "the daemon still serves" 0 "ranks" "$ctl" status
stop_daemon
finish
