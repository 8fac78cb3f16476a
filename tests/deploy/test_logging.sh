#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The daemon's log: --log-level filters by level; on a terminal or a file
# each line carries a time stamp, the level and a component tag; under
# systemd (JOURNAL_STREAM or INVOCATION_ID set) each line starts with its
# syslog priority, <3> error to <7> debug, for the journal.
. "$(dirname "$0")/lib.sh"

unset JOURNAL_STREAM INVOCATION_ID NOTIFY_SOCKET PROFD_CONTROL_URL PROFD_URL

rc=0
"$PROFD_PROFD" --log-level loud 2>"$tmp/err" || rc=$?
check "--log-level loud: exit 1 (found $rc)" test "$rc" -eq 1
check "--log-level loud: one-line reason" test "$(cat "$tmp/err")" = \
  "profd: --log-level: expected error, warn, info or debug, found 'loud'"

# run_daemon NAME [flags]: start, register one rank, query, stop; the log in
# $tmp/NAME.log
run_daemon() {
  local name=$1
  shift
  export PROFD_RUN_DIR=$tmp/$name.run
  "$PROFD_PROFD" --save-path "$tmp/$name.profile" --profile-config "$tmp/missing.yaml" "$@" \
    2>"$tmp/$name.log" &
  local daemon=$!
  for _ in $(seq 100); do
    "$PROFD_PROFCTL" status >/dev/null 2>&1 && break
    sleep 0.05
  done
  "$PROFD_SIM" --layout actor:1 --steps 3 --rate 20 >/dev/null 2>&1 || bad "$name: profd-sim failed"
  "$PROFD_PROFCTL" status >/dev/null || bad "$name: profctl status failed"
  kill -TERM "$daemon"
  wait "$daemon" || bad "$name: daemon exited with status $?"
}

run_daemon plain --log-level debug
stamp='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}'
check "plain: start-up line with time, level and tag" \
  grep -qE "^$stamp profd info daemon: profd $PROFD_VERSION on " "$tmp/plain.log"
check "plain: error line for an unreadable profiling config" \
  grep -qE "^$stamp profd error config: cannot read $tmp/missing.yaml: " "$tmp/plain.log"
check "plain: debug line when a rank registers" \
  grep -qE "^$stamp profd debug worker: rank 0 role actor .* registered$" "$tmp/plain.log"
check "plain: every line has the form" \
  bash -c "! grep -vE '^$stamp profd (error|warn|info|debug) [a-z]+: ' '$tmp/plain.log'"

run_daemon info --log-level info
check "info: no debug line" bash -c "! grep -q ' debug ' '$tmp/info.log'"
check "info: start-up line" grep -q " info daemon: profd $PROFD_VERSION on " "$tmp/info.log"

run_daemon warn --log-level warning
check "warning (= warn): no info line" bash -c "! grep -qE ' (info|debug) ' '$tmp/warn.log'"
check "warning (= warn): the error is kept" grep -q ' error config: cannot read ' "$tmp/warn.log"

run_daemon error -l error
check "-l error: only error lines" bash -c "! grep -vE '^$stamp profd error ' '$tmp/error.log'"

JOURNAL_STREAM=8:12345 run_daemon journal --log-level debug
check "journal: <6> info line without time stamp" \
  grep -qx "<6>daemon: profd $PROFD_VERSION on .*" "$tmp/journal.log"
check "journal: <3> error line" grep -q "^<3>config: cannot read $tmp/missing.yaml: " "$tmp/journal.log"
check "journal: <7> debug line" grep -q '^<7>worker: rank 0 role actor .* registered$' "$tmp/journal.log"
check "journal: every line starts with <3>..<7>" \
  bash -c "! grep -vE '^<[3-7]>[a-z]+: ' '$tmp/journal.log'"
INVOCATION_ID=0123456789abcdef run_daemon invocation
check "INVOCATION_ID alone selects the journal form" \
  grep -qx "<6>daemon: profd $PROFD_VERSION on .*" "$tmp/invocation.log"

[ "$failures" -eq 0 ] || tail -n 5 "$tmp"/*.log >&2
finish
