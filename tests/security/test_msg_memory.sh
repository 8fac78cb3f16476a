#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Oversized requests are refused before they are read (issue 28, break 3).
# limits.max_msg_bytes 1MiB (the default):
#  1. twelve connections of nobody at once, each sending a 100 MB request
#     (rawsp.py speaks the wire protocol: the bytes really travel), on the
#     worker and the control socket: every one is cut, the daemon's peak
#     resident memory (VmHWM) stays under 300 MB (it held 12 x 100 MB when
#     it read each whole) and profctl status still answers;
#  2. a request a little over the limit still gets its ETOOBIG reply;
#  3. one uid holds at most limits.max_connections_per_peer connections:
#     past them a connection is closed as it arrives, another uid still
#     connects.
. "$(dirname "$0")/lib.sh"

needs_nobody "the peer runs as nobody with setpriv"
raw_sockets
raw=$here/rawsp.py

yaml "limits:" "  max_connections_per_peer: 20" "security:" "  socket_mode: \"0666\""
start_profd
hwm() { awk '/^VmHWM/ {print int($2 / 1024)}' "/proc/$daemon_pid/status"; }
before=$(hwm)

# 1. many oversized requests at once
for url in "$wk" "$ctl"; do
  cut=$(as_user nobody "$ngid" /usr/bin/python3 "$raw" big "$url" 100000000 6)
  [ "$cut" = 6 ] && ok "6 requests of 100 MB to $(basename "$url") at once: all 6 cut" ||
    bad "$(basename "$url"): $cut of 6 cut"
done
after=$(hwm)
[ "$after" -lt 300 ] && ok "the daemon's peak memory stayed at ${after} MB (${before} MB before)" ||
  bad "the daemon's peak memory grew to ${after} MB (${before} MB before) reading 12 x 100 MB"
expect "profctl status still answers" 0 "ranks" "$PROFD_PROFCTL" status

# 2. a little over the limit: ETOOBIG
{ printf '{"v":1,"type":"status"}'; head -c $((1048576 + 1000 - 23)) /dev/zero | tr '\0' ' '; } \
  >"$tmp/over.json"
expect "a request 1000 bytes over the limit gets ETOOBIG" 0 \
  "\"name\":\"ETOOBIG\",\"message\":\"message of 1049576 bytes exceeds the limit of 1048576\"" \
  nngcat --req --dial "$ctl" --recv-timeout 10 --format ascii --file "$tmp/over.json"

# 3. connections of one peer
read -r opened closed < <(as_user nobody "$ngid" /usr/bin/python3 "$raw" idle "$wk" 30 2)
[ "$opened" = 30 ] && [ "$closed" = 10 ] &&
  ok "nobody's 30 idle connections: the 10 past limits.max_connections_per_peer closed" ||
  bad "nobody's 30 idle connections: $opened opened, $closed closed (want 30, 10)"
expect "root still connects meanwhile" 0 '"type":"status_reply"' \
  nngcat --req --dial "$ctl" --recv-timeout 5 --format ascii --data '{"v":1,"type":"status"}'
stop_daemon
finish
