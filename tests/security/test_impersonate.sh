#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# One uid may not pass for another's worker. A worker of nobody (profd-sim)
# registers with job "imp"; everything about it (job, role, rank, host,
# pid) is shown by profctl status. root, then another process of nobody,
# registering again with exactly that identity get EPERM instead of its
# client id; no step, result or departure can be sent for it; no rank can
# be added to its job by another uid; the real worker keeps running and its
# window completes. With security.shared_jobs other uids may join the job,
# still not take over a registration.
. "$(dirname "$0")/lib.sh"

needs_nobody "runs the worker as nobody with setpriv"
: "${PROFD_SIM:?set by ctest}"
need nngcat nng-utils
export PROFD_RUN_DIR=$tmp/run
ctl=$PROFD_PROFCTL
wk=ipc://$tmp/run/worker.sock

daemon_with() { # CONFIG LINES...
  yaml "security:" "  socket_mode: \"0666\"" "$@"
  start_profd --log-level info
}
send() { nngcat --req --dial "$wk" --recv-timeout 5 --format ascii --data "$1" 2>&1 || true; }
send_as_nobody() {
  as_user nobody "$ngid" nngcat --req --dial "$wk" --recv-timeout 5 --format ascii \
    --data "$1" 2>&1 || true
}
reply_is() { # WHAT REPLY PATTERN
  if echo "$2" | grep -Eq -- "$3"; then ok "$1"; else bad "$1: no /$3/ in: $2"; fi
}

daemon_with
# setpriv itself in the background (not as_user: $! would be the subshell
# running the function, and the cleanup's kill would leave the worker
# running after the test)
setpriv --reuid=nobody --regid="$ngid" --clear-groups "$PROFD_SIM" --layout actor:1 \
  --steps 100000 --rate 10 --job imp --trace-bytes 2000 >"$tmp/sim.log" 2>&1 &
pids+=($!)
status_until 'len(d["ranks"])' 1 || die "the worker did not register: $(cat "$tmp/sim.log")"
read -r id job role rank host pid < <("$ctl" --json status |
  json '" ".join(str(d["ranks"][0][k]) for k in ("client","job","role","rank","host","pid"))')
hello="{\"v\":1,\"type\":\"hello\",\"job\":\"$job\",\"role\":\"$role\",\"rank\":$rank,\"host\":\"$host\",\"pid\":$pid}"

# 1. the victim's identity from another uid, then from another process of its uid
reply_is "root registering as nobody's worker gets EPERM, not its client id" "$(send "$hello")" \
  "\"name\":\"EPERM\",\"message\":\"rank $rank of job $job \\(pid $pid\\) is registered by uid 65534: another uid may not register it again\""
reply_is "another process of nobody registering as its worker gets EPERM" \
  "$(send_as_nobody "$hello")" \
  "\"name\":\"EPERM\",\"message\":\"rank $rank of job $job \\(pid $pid\\) is registered by another process \\(pid [0-9]+\\): only that process may register it again\""
grep -q "warn worker: refused a registration of rank $rank of job $job (pid $pid) from uid 0 pid [0-9]*" \
  "$tmp/profd.log" && ok "the refusal is logged with the peer's uid and pid" ||
  bad "no refusal in the log: $(grep worker "$tmp/profd.log" | tail -3)"

# 2. nothing can be said for it
reply_is "steps for it from root" \
  "$(send "{\"v\":1,\"type\":\"events\",\"client\":$id,\"ev\":[1,1000041,1]}")" \
  "\"name\":\"EPERM\",\"message\":\"client $id was registered by another user\""
reply_is "steps for it from another process of nobody" \
  "$(send_as_nobody "{\"v\":1,\"type\":\"events\",\"client\":$id,\"ev\":[1,1000041,1]}")" \
  "\"name\":\"EPERM\",\"message\":\"client $id belongs to another process \\(pid [0-9]+\\)\""
reply_is "its departure from root" "$(send "{\"v\":1,\"type\":\"bye\",\"client\":$id}")" \
  '"name":"EPERM"'
step=$("$ctl" --json status | json 'd["ranks"][0]["step"]')
[ "$step" -lt 1000000 ] && ok "its step is its own ($step)" || bad "its step is $step"

# 3. its job belongs to its uid
other="{\"v\":1,\"type\":\"hello\",\"job\":\"$job\",\"role\":\"$role\",\"rank\":7,\"host\":\"$host\",\"pid\":4242}"
reply_is "root may not add a rank to nobody's job" "$(send "$other")" \
  "\"name\":\"EPERM\",\"message\":\"job $job belongs to uid 65534: another uid may not register ranks of it \\(security.shared_jobs\\)\""
reply_is "root may register a job of its own" \
  "$(send "{\"v\":1,\"type\":\"hello\",\"job\":\"mine\",\"role\":\"actor\",\"rank\":0,\"host\":\"h\",\"pid\":4242}")" \
  '"type":"welcome"'
reply_is "nobody may add a rank to its own job" \
  "$(send_as_nobody "{\"v\":1,\"type\":\"hello\",\"job\":\"$job\",\"role\":\"ref\",\"rank\":1,\"host\":\"$host\",\"pid\":4243}")" \
  '"type":"welcome"'

# 4. the real worker was never disturbed: its window completes
s=$(("$("$ctl" --json status --job imp | json 'max(r["step"] or 0 for r in d["ranks"] if r["role"] == "actor")')" + 20))
expect "a window on the real worker" 0 "^started window 1 " \
  "$ctl" start --job imp --roles actor --steps "$s" --tool sim
expect "its capture is complete" 0 "1 complete, 0 failed, 0 missed, 0 truncated" \
  "$ctl" wait 1 --timeout 60
grep -q "profd: .*refused" "$tmp/sim.log" && bad "the worker was refused: $(cat "$tmp/sim.log")" ||
  ok "the worker was never refused"
stop_daemon

# 5. security.shared_jobs: others may join the job, still not take a rank over
daemon_with "  shared_jobs: true"
# the daemon kept its ranks (its journal): the worker goes on under its id
status_until '[r["state"] for r in d["ranks"] if r["client"] == '"$id"']' "['running']" ||
  die "the worker did not come back under its id ($got): $(cat "$tmp/sim.log")"
reply_is "with shared_jobs root may add a rank to nobody's job" "$(send "$other")" \
  '"type":"welcome"'
reply_is "with shared_jobs root still may not register as nobody's worker" "$(send "$hello")" \
  '"name":"EPERM"'
stop_daemon
finish
