#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Limits a hostile peer meets on both sockets (the daemon's side of them):
#  1. a request a little over limits.max_msg_bytes gets ETOOBIG; one far
#     over it (5x and 100x) is cut as its length arrives, before it is read
#     (no reply: the sender times out), on the control and the worker
#     socket alike, and the daemon keeps serving;
#  2. one peer cannot fill the registry: a uid holds at most
#     limits.max_clients_per_peer registrations (ELIMIT past them), and
#     another uid still registers.
. "$(dirname "$0")/lib.sh"

needs_nobody "a second uid registers with setpriv"
raw_sockets

yaml "limits:" "  max_msg_bytes: 64KiB" "  max_clients: 16" "  max_clients_per_peer: 4" \
  "security:" "  socket_mode: \"0666\""
start_profd

# 1. oversized requests
padded() { # FILE BYTES: a status request padded with spaces to BYTES
  { printf '{"v":1,"type":"status"}'; head -c "$(($2 - 23))" /dev/zero | tr '\0' ' '; } >"$1"
}
padded "$tmp/over.json" $((65536 + 1000))
padded "$tmp/5x.json" $((5 * 65536))
padded "$tmp/100x.json" $((100 * 65536))
for url in "$ctl" "$wk"; do
  expect "a request of 66536 bytes (1000 over the limit) to $(basename "$url")" 0 \
    "\"name\":\"ETOOBIG\",\"message\":\"message of 66536 bytes exceeds the limit of 65536\"" \
    timeout 20 nngcat --req --dial "$url" --recv-timeout 10 --format ascii --file "$tmp/over.json"
  for f in 5x 100x; do
    size=$(stat -c %s "$tmp/$f.json")
    rc=0
    timeout 20 nngcat --req --dial "$url" --recv-timeout 2 --format ascii --file "$tmp/$f.json" \
      >"$tmp/cut.out" 2>&1 || rc=$?
    [ "$rc" = 0 ] && [ ! -s "$tmp/cut.out" ] &&
      ok "a request of $size bytes ($f the limit) to $(basename "$url"): cut, no reply" ||
      bad "a request of $size bytes to $(basename "$url"): exit $rc, $(head -c 300 "$tmp/cut.out")"
  done
done
expect "the daemon still serves" 0 '"type":"status_reply"' \
  nngcat --req --dial "$ctl" --recv-timeout 5 --format ascii --data '{"v":1,"type":"status"}'

# 2. registrations per peer
hello() { # RANK
  echo "{\"v\":1,\"type\":\"hello\",\"job\":\"lim\",\"role\":\"actor\",\"rank\":$1,\"host\":\"h\",\"pid\":$((5000 + $1))}"
}
for r in 0 1 2 3; do
  expect "root registers rank $r" 0 '"type":"welcome"' \
    nngcat --req --dial "$wk" --recv-timeout 5 --format ascii --data "$(hello "$r")"
done
expect "root's fifth registration is refused" 0 \
  '"name":"ELIMIT","message":"uid 0 already holds 4 registrations \(limits.max_clients_per_peer\)"' \
  nngcat --req --dial "$wk" --recv-timeout 5 --format ascii --data "$(hello 4)"
expect "nobody still registers" 0 '"type":"welcome"' \
  as_user nobody "$ngid" nngcat --req --dial "$wk" --recv-timeout 5 --format ascii \
  --data '{"v":1,"type":"hello","job":"other","role":"actor","rank":0,"host":"h","pid":6000}'
grep -q "warn worker: refused a registration of rank 4 of job lim (pid 5004) from uid 0 pid [0-9]*: uid 0 already holds 4 registrations" \
  "$tmp/profd.log" && ok "the refusal is logged" || bad "no refusal in the log"
stop_daemon
finish
