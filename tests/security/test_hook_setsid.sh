#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# An after-window hook's descendants that leave its process group and
# session (setsid) go with it (issue 28, item 8): the hook (as nobody)
# starts `setsid sleep N &` and waits;
#  1. past hooks.after_window.timeout_ms (1 s) no process of it is left;
#  2. with a long timeout, the daemon's stop leaves none either.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (the hook runs as nobody)"
: "${PROFD_SIM:?set by ctest}"
export PROFD_RUN_DIR=$tmp/run
ctl=$PROFD_PROFCTL
left() { pgrep -u nobody -f "^sleep $1\$" || true; }
reap() { # what a failed check left: by pid
  local p
  for p in $(left 1717) $(left 1718); do kill -9 "$p" 2>/dev/null || true; done
}
lib_on_exit=reap

daemon_with() { # HOOK-COMMAND TIMEOUT_MS
  printf '%s\n' "limits:" "  client_timeout_ms: 120000" "hooks:" "  after_window:" \
    "    command: \"$1\"" "    user: nobody" "    timeout_ms: $2" >"$tmp/profd.yaml"
  start_daemon "$tmp/profd.log" "$PROFD_PROFD" --config "$tmp/profd.yaml" \
    --save-path "$tmp/out" --log-level info
  wait_started "$tmp/profd.log" || die "profd did not start: $(cat "$tmp/profd.log")"
}
"$PROFD_SIM" --layout actor:1 --steps 1000000 --rate 20 --job h --trace-bytes 2000 \
  >"$tmp/sim.log" 2>&1 &
pids+=($!)

# 1. the timeout
daemon_with "setsid sleep 1717 & sleep 1717" 1000
w=$(take_window h)
for _ in $(seq 600); do
  case "$("$ctl" --json windows "$w" | json 'd["windows"][0].get("hook")')" in
  None | running | "waiting for the report's last write") sleep 0.1 ;;
  *) break ;;
  esac
done
expect "the hook timed out" 0 "timed out after 1s" \
  "$ctl" --json windows "$w"
sleep 0.5
[ -z "$(left 1717)" ] && ok "past its timeout no process of the hook is left" ||
  bad "past its timeout left: $(left 1717 | tr '\n' ' ')"
stop_daemon

# 2. the stop
daemon_with "setsid sleep 1718 & sleep 1718" 600000
take_window h >/dev/null
for _ in $(seq 100); do [ -n "$(left 1718)" ] && break; sleep 0.1; done
[ -n "$(left 1718)" ] || die "the hook did not start: $(tail -5 "$tmp/profd.log")"
stop_daemon
sleep 0.5
[ -z "$(left 1718)" ] && ok "after the daemon's stop no process of the hook is left" ||
  bad "after the stop left: $(left 1718 | tr '\n' ' ')"
finish
