#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# A daemon of another user than its workers (root needed to make both):
# profd runs as nobody, the workers (profd-sim) as root. The daemon may not
# move a folder that root made in the sticky spool, so it copies the
# captures into save_path, leaves the originals in the spool and logs it;
# the manifest lists every capture as complete.
. "$(dirname "$0")/lib.sh"

needs_nobody "runs profd as nobody with setpriv"
: "${PROFD_SIM:?set by ctest}"
nr=$tmp/nr
mkdir -p "$nr"
chown nobody:"$ngid" "$nr"
export PROFD_RUN_DIR=$nr/run
ctl=$PROFD_PROFCTL

start_daemon "$tmp/profd.log" setpriv --reuid=nobody --regid="$ngid" --clear-groups \
  "$PROFD_PROFD" --save-path "$nr/out" --log-level info
wait_started "$tmp/profd.log" || die "profd did not start: $(cat "$tmp/profd.log")"
"$PROFD_SIM" --layout actor:2 --steps 100000 --rate 10 --trace-bytes 2000 --job nr \
  >"$tmp/sim.log" 2>&1 &
pids+=($!)
status_until 'len(d["ranks"])' 2 || die "the workers did not register: $(cat "$tmp/sim.log")"

s=$(("$("$ctl" --json status | json 'max(r["step"] or 0 for r in d["ranks"])')" + 30))
expect "root starts a window on nobody's daemon" 0 "^started window 1 " \
  "$ctl" start --steps "$s:$((s + 2))" --tool sim
expect "every capture is gathered" 0 "2 complete, 0 failed, 0 missed, 0 truncated" \
  "$ctl" wait 1 --timeout 60
man=$(ls "$nr"/out/nr/w1-*/manifest.json)
python3 - "$man" <<'PY' && ok "the manifest lists both captures as complete, with their files" || bad "manifest: $(cat "$man")"
import json, os, sys
m = json.load(open(sys.argv[1]))
caps = m["captures"]
assert len(caps) == 2, caps
for c in caps:
    assert c["status"] == "complete" and c["reason"] is None, c
    assert c["files"] and all(f["checksum"].startswith("xxh64:") for f in c["files"]), c
    for f in c["files"]:
        p = os.path.join(os.path.dirname(sys.argv[1]), c["dir"], f["path"])
        st = os.stat(p)
        assert st.st_size == f["bytes"] and st.st_uid == 65534, (p, st)
PY
left=$(find "$nr/out/.spool/nr" -type f | wc -l)
[ "$left" -ge 2 ] && ok "the originals stay in the spool ($left files)" ||
  bad "the spool holds $left files"
grep -q "warn gather: window w1-[a-z0-9-]* rank [01]: copied: the daemon may not move the capture folder (Permission denied); the original stays in the spool" "$tmp/profd.log" &&
  ok "the copy is logged" || bad "no copy in the log: $(cat "$tmp/profd.log")"
stop_daemon
finish
