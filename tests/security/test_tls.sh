#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The remote control endpoint over tls+tcp:// with certificates made here by
# openssl: a CA, a server certificate for DNS localhost, a client
# certificate from the CA, another CA and a client certificate from it.
# The good client may read and start; a client without a certificate, with
# one from the other CA, or not trusting the server, cannot connect. Plain
# tcp:// control is refused at start unless security.insecure_tcp_control.
. "$(dirname "$0")/lib.sh"

need openssl openssl
"$here/make_certs.sh" "$tmp/certs"
c=$tmp/certs
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
p1=$(port)
export PROFD_RUN_DIR=$tmp/run
url=tls+tcp://localhost:$p1
re_url=${url//+/\\+} # for grep -E

cat >"$tmp/tls.yaml" <<YAML
save_path: $tmp/out
listen:
  control_remote: $url
tls:
  ca_file: $c/ca.pem
  cert_file: $c/server.pem
  key_file: $c/server.key
YAML
start_daemon "$tmp/profd.log" "$PROFD_PROFD" --config "$tmp/tls.yaml"
wait_started "$tmp/profd.log" || die "profd did not start: $(cat "$tmp/profd.log")"
for _ in $(seq 100); do
  "$PROFD_PROFCTL" --url "$url" --tls-ca "$c/ca.pem" --tls-cert "$c/client.pem" \
    --tls-key "$c/client.key" status >/dev/null 2>&1 && break
  sleep 0.05
done

good=(--url "$url" --tls-ca "$c/ca.pem" --tls-cert "$c/client.pem" --tls-key "$c/client.key")
expect "a client with a certificate from the CA reads status" 0 "^node .* ranks 0" \
  "$PROFD_PROFCTL" "${good[@]}" status
expect "and may start a window" 0 "^started window 1 w1-step" \
  "$PROFD_PROFCTL" "${good[@]}" start --steps 7 --tool sim
expect "and stop it" 0 "^stopping window 1 " "$PROFD_PROFCTL" "${good[@]}" stop 1
expect "the PROFD_TLS_* variables do the same" 0 "^node " \
  env PROFD_TLS_CA="$c/ca.pem" PROFD_TLS_CERT="$c/client.pem" PROFD_TLS_KEY="$c/client.key" \
  PROFD_TLS_SERVER_NAME=localhost "$PROFD_PROFCTL" --url "$url" status
expect "a client without a certificate cannot connect" 1 \
  "^profctl: cannot reach profd at $re_url: .*\(TLS: " \
  "$PROFD_PROFCTL" --timeout 3 --url "$url" --tls-ca "$c/ca.pem" status
expect "a client with a certificate from another CA cannot connect" 1 \
  "^profctl: cannot reach profd at $re_url: .*\(TLS: " \
  "$PROFD_PROFCTL" --timeout 3 --url "$url" --tls-ca "$c/ca.pem" --tls-cert "$c/rogue.pem" \
  --tls-key "$c/rogue.key" start --steps 9 --tool sim
expect "a client that does not trust the server's CA does not talk to it" 1 \
  "^profctl: cannot reach profd at $re_url: .*\(TLS: " \
  "$PROFD_PROFCTL" --timeout 3 --url "$url" --tls-ca "$c/other-ca.pem" \
  --tls-cert "$c/client.pem" --tls-key "$c/client.key" status
expect "nor to a server whose certificate names another host" 1 \
  "^profctl: cannot reach profd at $re_url: " \
  "$PROFD_PROFCTL" --timeout 3 "${good[@]}" --tls-server-name other.example status
expect "a tls+tcp:// URL needs a CA" 1 \
  "^profctl: $re_url: TLS: a CA file is needed to verify the peer's certificate" \
  "$PROFD_PROFCTL" --url "$url" status
expect "only the good client's window exists" 0 "^1 +w1-step7 " "$PROFD_PROFCTL" windows
stop_daemon

# plain tcp:// control
p2=$(port)
export PROFD_RUN_DIR=$tmp/run2
expect "--control-url tcp:// is refused at start" 1 \
  "^profd: control endpoint tcp://127.0.0.1:$p2: plain tcp:// lets anyone who can connect control the daemon: use tls\+tcp:// .* or set security.insecure_tcp_control: true$" \
  "$PROFD_PROFD" --save-path "$tmp/out2" --control-url "tcp://127.0.0.1:$p2"
expect "--control-remote-url tcp:// is refused at start" 1 \
  "^profd: remote control endpoint tcp://127.0.0.1:$p2: plain tcp:// lets anyone" \
  "$PROFD_PROFD" --save-path "$tmp/out2" --control-remote-url "tcp://127.0.0.1:$p2"
printf 'listen:\n  control_remote: tcp://127.0.0.1:%s\n' "$p2" >"$tmp/plain.yaml"
expect "listen.control_remote: tcp:// in the file is refused, naming the key" 1 \
  "^profd: $tmp/plain.yaml:2:19: key 'listen.control_remote': plain tcp:// lets anyone" \
  "$PROFD_PROFD" --config "$tmp/plain.yaml" --check-config
expect "--control-remote-url ipc:// is refused" 1 \
  "remote control endpoint ipc://$tmp/x.sock: expected a tls\+tcp:// URL" \
  "$PROFD_PROFD" --save-path "$tmp/out2" --control-remote-url "ipc://$tmp/x.sock"
expect "tls+tcp:// without the tls files is refused" 1 \
  "^profd: tls\+tcp://localhost:$p2 needs tls.ca_file, tls.cert_file and tls.key_file" \
  "$PROFD_PROFD" --save-path "$tmp/out2" --control-remote-url "tls+tcp://localhost:$p2"

printf 'save_path: %s\nlisten:\n  control_remote: tcp://127.0.0.1:%s\nsecurity:\n  insecure_tcp_control: true\n' \
  "$tmp/out2" "$p2" >"$tmp/insecure.yaml"
start_daemon "$tmp/profd2.log" "$PROFD_PROFD" --config "$tmp/insecure.yaml"
wait_started "$tmp/profd2.log" || die "profd did not start: $(cat "$tmp/profd2.log")"
for _ in $(seq 100); do
  "$PROFD_PROFCTL" --url "tcp://127.0.0.1:$p2" status >/dev/null 2>&1 && break
  sleep 0.05
done
expect "with security.insecure_tcp_control a tcp:// client may start a window" 0 \
  "^started window 1 " "$PROFD_PROFCTL" --url "tcp://127.0.0.1:$p2" start --steps 3 --tool sim
if grep -q "warn control: tcp://127.0.0.1:$p2 is plain tcp:// (security.insecure_tcp_control): anyone who can connect to it controls this daemon" "$tmp/profd2.log"; then
  ok "the insecure endpoint is logged as a warning at start"
else
  bad "no warning in the log: $(cat "$tmp/profd2.log")"
fi
stop_daemon
finish
