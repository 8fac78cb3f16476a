#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The metrics port bounds its connections (issue 28, break 4). The daemon
# runs with 256 file descriptors, listen.metrics on loopback and
# limits.max_connections_per_peer 64; a local user opens 400 idle TCP
# connections to the metrics port:
#  1. the 336 past the limit are closed as they arrive, and profctl status
#     still answers while the 64 are held (the daemon has descriptors left);
#  2. the daemon does not spin meanwhile (under 1 s of CPU in 3 s);
#  3. the 64 are closed after the idle timeout (10 s), and a scrape works;
#     another path is 404, another method 405.
. "$(dirname "$0")/lib.sh"

needs_nobody "the peer runs as nobody with setpriv"
need curl curl
need prlimit util-linux
export PROFD_RUN_DIR=$tmp/run
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '%s\n' "listen:" "  metrics: http://127.0.0.1:$port" "limits:" \
  "  max_connections_per_peer: 64" >"$tmp/profd.yaml"
start_daemon "$tmp/profd.log" prlimit --nofile=256 "$PROFD_PROFD" --config "$tmp/profd.yaml" \
  --save-path "$tmp/out"
wait_started "$tmp/profd.log" || die "profd did not start: $(cat "$tmp/profd.log")"
curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" || die "no metrics: $(cat "$tmp/profd.log")"
cpu() { awk '{print $14 + $15}' "/proc/$daemon_pid/stat"; }

as_user nobody "$ngid" /usr/bin/python3 "$here/rawsp.py" tcpidle "127.0.0.1:$port" 400 14 \
  >"$tmp/idle.out" 2>&1 &
idler=$!
pids+=($idler)
sleep 3
c0=$(cpu)
expect "profctl status answers while 400 connections to the metrics port are open" 0 "ranks" \
  timeout 10 "$PROFD_PROFCTL" status
sleep 3
c1=$(cpu)
ticks=$(getconf CLK_TCK)
[ $((c1 - c0)) -lt "$ticks" ] && ok "the daemon used $((c1 - c0)) ticks of CPU in 3 s (no spinning)" ||
  bad "the daemon used $((c1 - c0)) ticks of CPU in 3 s (spinning)"
wait "$idler" || true
read -r opened closed <"$tmp/idle.out" || true
[ "$opened" = 400 ] && [ "$closed" = 400 ] &&
  ok "400 idle connections: all closed by the daemon (336 at once, 64 after the idle timeout)" ||
  bad "400 idle connections: $(cat "$tmp/idle.out") (want 400 400)"
expect "a scrape works again" 0 "profd_" curl -sf "http://127.0.0.1:$port/metrics"
expect "a path other than /metrics: 404" 0 "^404$" \
  curl -s -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:$port/other"
expect "a POST: 405" 0 "^405$" \
  curl -s -o /dev/null -w '%{http_code}\n' -d x "http://127.0.0.1:$port/metrics"
stop_daemon
finish
