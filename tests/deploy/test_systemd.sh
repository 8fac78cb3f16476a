#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The systemd unit: the unit configured by the build, with ExecStart pointed
# at the built daemon, must pass `systemd-analyze verify` with no message at
# all (it prints unknown keys and bad values but still exits 0, so any
# output fails), keep its security exposure at "OK", and keep the settings
# the deployment relies on. A unit broken on purpose must be rejected by the
# same check. Then the daemon is run as systemd would run it: it must send
# READY=1 to $NOTIFY_SOCKET, reload on SIGHUP, stop on SIGTERM.
. "$(dirname "$0")/lib.sh"

command -v systemd-analyze >/dev/null ||
  skip "systemd-analyze not found (Debian package systemd; deploy/deps.sh installs it)"

configured=$PROFD_BUILD_DIR/deploy/profd.service
[ -f "$configured" ] || die "$configured missing: configure the build first"

# The unit as installed, but runnable from the build tree; the man pages of
# Documentation= are looked up in the source tree.
unit=$tmp/profd.service
sed "s#^ExecStart=$PROFD_BINDIR/profd #ExecStart=$PROFD_PROFD #" "$configured" >"$unit"
grep -q "^ExecStart=$PROFD_PROFD --config " "$unit" ||
  die "ExecStart of $configured does not start $PROFD_BINDIR/profd --config"
mkdir -p "$tmp/man/man1" "$tmp/man/man8"
cp "$PROFD_SOURCE_DIR/docs/man/profd.8" "$tmp/man/man8/"
cp "$PROFD_SOURCE_DIR/docs/man/profctl.1" "$PROFD_SOURCE_DIR/docs/man/profd-sim.1" "$tmp/man/man1/"
export MANPATH=$tmp/man

verify() { # UNIT-FILE: silent success, or the messages on stdout
  local out rc=0
  out=$(cd "$(dirname "$1")" && systemd-analyze verify "./$(basename "$1")" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
    printf '%s\n' "$out"
    return 1
  fi
}

if msg=$(verify "$unit"); then
  ok "systemd-analyze verify: no message"
else
  bad "systemd-analyze verify:"$'\n'"$msg"
fi

# exposure in tenths: 30 is 3.0, the top of systemd's "OK" band
if (cd "$tmp" && systemd-analyze security --offline=yes --threshold=30 ./profd.service) \
  >"$tmp/security.txt" 2>&1; then
  ok "systemd-analyze security: $(grep -o 'Overall exposure level.*' "$tmp/security.txt")"
else
  cat "$tmp/security.txt" >&2
  bad "systemd-analyze security: exposure above 3.0"
fi

# The settings the deployment depends on, exactly.
required=(
  "Type=notify"
  "ExecReload=/bin/kill -HUP \$MAINPID"
  "Restart=on-failure"
  "RuntimeDirectory=profd"
  "RuntimeDirectoryMode=0755"
  "StateDirectory=profd"
  "WorkingDirectory=/var/lib/profd"
  "NoNewPrivileges=yes"
  "ProtectSystem=strict"
  "ProtectHome=yes"
  "PrivateTmp=yes"
  "ProtectKernelTunables=yes"
  "ProtectControlGroups=yes"
  "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6"
  "LimitNOFILE=65536"
  "MemoryMax=1G"
  "TasksMax=256"
  "WantedBy=multi-user.target"
)
for line in "${required[@]}"; do
  grep -qxF -- "$line" "$unit" || bad "unit lacks '$line'"
done
ok "${#required[@]} required settings present"

# The check itself: broken units must be caught.
rejected() { # WHAT UNIT-FILE
  if verify "$2" >/dev/null; then bad "$1: accepted"; else ok "$1: rejected"; fi
}
sed 's/^ProtectSystem=strict$/ProtectSytem=strict/' "$unit" >"$tmp/typo.service"
rejected "a misspelt key" "$tmp/typo.service"
sed "s#^ExecStart=$PROFD_PROFD #ExecStart=$tmp/no-such-profd #" "$unit" >"$tmp/nobin.service"
rejected "a missing ExecStart binary" "$tmp/nobin.service"
sed 's/^MemoryMax=1G$/MemoryMax=lots/' "$unit" >"$tmp/value.service"
rejected "a bad value" "$tmp/value.service"
sed 's#^Documentation=.*#Documentation=man:profd-missing(8)#' "$unit" >"$tmp/doc.service"
rejected "a missing man page in Documentation=" "$tmp/doc.service"

# The daemon as the unit runs it: readiness, reload, stop.
command -v python3 >/dev/null || skip "python3 not found"
export PROFD_RUN_DIR=$tmp/run
export NOTIFY_SOCKET=$tmp/notify INVOCATION_ID=0123456789abcdef
python3 - "$NOTIFY_SOCKET" >"$tmp/notify.txt" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
print(s.recv(4096).decode(), flush=True)
PY
listener=$!
for _ in $(seq 50); do [ -S "$NOTIFY_SOCKET" ] && break; sleep 0.1; done
# the profiling config it reloads: Megatron style, one window (step 1001:
# Megatron counts from 0)
cat >"$tmp/profile.yaml" <<'YAML'
profile: true
use_pytorch_profiler: true
profile_step_start: 1000
profile_step_end: 1001
YAML
"$PROFD_PROFD" --save-path "$tmp/profile" --profile-config "$tmp/profile.yaml" \
  2>"$tmp/profd.log" &
daemon=$!
pids+=("$daemon" "$listener")
if wait "$listener"; then
  check "READY=1 sent to \$NOTIFY_SOCKET" grep -qx 'READY=1' "$tmp/notify.txt"
else
  bad "no READY=1 on \$NOTIFY_SOCKET within 20 s"
fi
check "control socket answers once ready" quiet "$PROFD_PROFCTL" status
kill -HUP "$daemon"
for _ in $(seq 50); do grep -q 'reloading' "$tmp/profd.log" && break; sleep 0.1; done
check "SIGHUP (ExecReload) reloads the profiling config" \
  grep -q '^<6>daemon: SIGHUP: reloading the profiling config$' "$tmp/profd.log"
check "daemon still runs after SIGHUP" kill -0 "$daemon"
# windows: "<name> <state>" per line
windows() {
  "$PROFD_PROFCTL" --json windows | python3 -c '
import json, sys
for w in json.load(sys.stdin)["windows"]:
    print(w["name"], w["state"])'
}
# reload N: SIGHUP, until the log holds the Nth reload (5 s at most); the
# windows then, on one line, in $got
reload() {
  kill -HUP "$daemon"
  for _ in $(seq 50); do [ "$(grep -c reloading "$tmp/profd.log")" -ge "$1" ] && break; sleep 0.1; done
  sleep 0.2
  got=$(windows | tr '\n' ' ')
}
reload 2
# Megatron-LM's torch profiler records iterations start..end-1 (NVIDIA/Megatron-LM
# d98e8a64 megatron/training/training.py:4480-4508): [1000, 1001) is step 1000
check "the same file reloaded twice plans its window once (found: $got)" \
  test "$got" = "w1-step1000 pending "
sed -i 's/^profile_step_start: 1000$/profile_step_start: 2000/; s/^profile_step_end: 1001$/profile_step_end: 2001/' \
  "$tmp/profile.yaml"
reload 3
check "a changed file withdraws the window it no longer asks for (found: $got)" \
  test "$got" = "w1-step1000 cancelled w2-step2000 pending "
kill -TERM "$daemon"
rc=0
wait "$daemon" || rc=$?
check "SIGTERM stops the daemon with status 0 (found $rc)" test "$rc" -eq 0
[ "$failures" -eq 0 ] || cat "$tmp/profd.log" >&2

finish
