#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Error replies never echo invalid UTF-8 (issue 28, item 8): requests
# carrying bytes that are not UTF-8 (an unknown type "r\xffx", a tool
# "sim\xff", a cut sequence "\xc3(") get replies that are valid UTF-8, the
# bytes written as \xNN, on both sockets.
. "$(dirname "$0")/lib.sh"

need nngcat nng-utils
export PROFD_RUN_DIR=$tmp/run
start_daemon "$tmp/profd.log" "$PROFD_PROFD" --save-path "$tmp/out"
wait_started "$tmp/profd.log" || die "profd did not start: $(cat "$tmp/profd.log")"

check() { # WHAT SOCKET REQUEST PATTERN: the reply is UTF-8 and matches
  nngcat --req --dial "ipc://$tmp/run/$2" --recv-timeout 5 --format raw --data "$3" \
    >"$tmp/reply" 2>&1 || true
  if ! /usr/bin/python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' \
    "$tmp/reply" 2>/dev/null; then
    bad "$1: the reply is not UTF-8: $(od -c "$tmp/reply" | head -5)"
  elif ! grep -qF -- "$4" "$tmp/reply"; then
    bad "$1: no '$4' in $(cat "$tmp/reply")"
  else
    ok "$1"
  fi
}
for s in control.sock worker.sock; do
  check "an unknown type of invalid UTF-8 to $s" "$s" $'{"v":1,"type":"r\xffx"}' \
    "unknown message type 'r\\\\xffx'"
done
check "a tool of invalid UTF-8" control.sock \
  $'{"v":1,"type":"start","steps":[1],"tool":"sim\xff"}' "found 'sim\\\\xff'"
check "a cut sequence" control.sock $'{"v":1,"type":"r\xc3("}' "unknown message type 'r\\\\xc3('"
stop_daemon
finish
