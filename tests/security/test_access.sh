#!/usr/bin/env bash
# Who may do what over the ipc:// sockets, with real users (root needed:
# profctl runs as nobody through setpriv). The sockets belong to
# security.socket_group with security.socket_mode; anyone who can connect
# reads status, windows and top; start, stop, apply, report, merge and
# watch need root, the daemon's user,
# security.allow_uids or security.allow_gids (the peer's gid, or a group its
# user is in by the group database); a user outside the group cannot
# connect. A worker's registration belongs to the uid that made it.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (runs profctl as another user with setpriv)"
command -v setpriv >/dev/null || skip "setpriv not found (util-linux)"
getent passwd nobody >/dev/null || skip "no user nobody"
ngid=$(id -g nobody)
ngroup=$(getent group "$ngid" | cut -d: -f1)
[ -n "$ngroup" ] || skip "the group of nobody ($ngid) has no name"
export PROFD_RUN_DIR=$tmp/run
ctl=$PROFD_PROFCTL

daemon_with() { # YAML-LINES...: a daemon with these security settings
  printf 'save_path: %s\nsecurity:\n' "$tmp/out" >"$tmp/profd.yaml"
  for l in "$@"; do printf '  %s\n' "$l" >>"$tmp/profd.yaml"; done
  rm -f "$tmp/run/control.sock"
  start_daemon "$tmp/profd.log" "$PROFD_PROFD" --config "$tmp/profd.yaml"
  wait_for "$tmp/run/control.sock" || die "profd did not start: $(cat "$tmp/profd.log")"
  for _ in $(seq 100); do "$ctl" status >/dev/null 2>&1 && return; sleep 0.05; done
}
eperm="^profctl: '%s' is not permitted for uid %s \\(see security.allow_uids and allow_gids\\) \\(EPERM\\)$"

# 1. group and mode of the sockets; nobody in the group reads, cannot change
daemon_with "socket_group: $ngroup" 'socket_mode: "0660"'
for s in control worker; do
  got=$(stat -c '%a %G' "$tmp/run/$s.sock")
  [ "$got" = "660 $ngroup" ] && ok "$s.sock is mode 660, group $ngroup" ||
    bad "$s.sock: mode and group $got"
done
expect "nobody (group $ngroup) reads status" 0 "^node .* ranks 0" \
  as_user nobody "$ngid" "$ctl" status
expect "nobody reads windows" 0 "^no window" as_user nobody "$ngid" "$ctl" windows
# shellcheck disable=SC2059
expect "nobody may not start a window" 1 "$(printf "$eperm" start 65534)" \
  as_user nobody "$ngid" "$ctl" start --next 1 --tool sim
# shellcheck disable=SC2059
expect "nobody may not stop windows" 1 "$(printf "$eperm" stop 65534)" \
  as_user nobody "$ngid" "$ctl" stop
echo 'global_profiler: {steps: [3]}' >"$tmp/apply.yaml"
chmod 644 "$tmp/apply.yaml"
# shellcheck disable=SC2059
expect "nobody may not apply a configuration" 1 "$(printf "$eperm" apply 65534)" \
  as_user nobody "$ngid" "$ctl" apply "$tmp/apply.yaml"
expect "nobody reads the step times (top)" 0 "^profd top: node " \
  as_user nobody "$ngid" "$ctl" top --once
# shellcheck disable=SC2059
expect "nobody may not write a report" 1 "$(printf "$eperm" report 65534)" \
  as_user nobody "$ngid" "$ctl" report 1
# shellcheck disable=SC2059
expect "nobody may not merge a window" 1 "$(printf "$eperm" merge 65534)" \
  as_user nobody "$ngid" "$ctl" merge 1
# shellcheck disable=SC2059
expect "nobody may not arm the straggler trigger" 1 "$(printf "$eperm" straggler 65534)" \
  as_user nobody "$ngid" "$ctl" watch --factor 3
expect "root may start a window" 0 "^started window 1 " "$ctl" start --steps 5 --tool sim
grep -q "warn control: refused 'start' from uid 65534 gid $ngid pid [0-9]*$" "$tmp/profd.log" &&
  ok "the refusal is logged with the peer's uid, gid and pid" || bad "no refusal in the log"
expect "a user outside the group cannot connect at all" 1 \
  "^profctl: cannot reach profd at ipc://$tmp/run/control.sock: Permission denied" \
  as_user nobody 65533 "$ctl" status

# 2. a worker's registration is bound to its uid
if [ -n "${PROFD_SIM:-}" ] && command -v nngcat >/dev/null; then
  "$PROFD_SIM" --layout actor:1 --steps 100000 --rate 5 --job acc >"$tmp/sim.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do
    n=$("$ctl" --json status | json 'len(d["ranks"])')
    [ "$n" = 1 ] && break
    sleep 0.05
  done
  id=$("$ctl" --json status | json 'd["ranks"][0]["client"]')
  expect "another user cannot speak for a worker of root" 0 \
    "\"name\":\"EPERM\",\"message\":\"client $id was registered by another user\"" \
    as_user nobody "$ngid" nngcat --req --dial "ipc://$tmp/run/worker.sock" --recv-timeout 5 \
    --format ascii --data "{\"v\":1,\"type\":\"result\",\"client\":$id,\"window\":1}"
  kill "${pids[-1]}" 2>/dev/null || true
else
  ok "skipped: the worker check needs profd-sim and nngcat"
fi
stop_daemon

# 3. allow_gids: the peer's own gid
daemon_with "socket_group: $ngroup" "allow_gids: [$ngid]"
expect "allow_gids [$ngid] lets nobody start a window" 0 "^started window 1 " \
  as_user nobody "$ngid" "$ctl" start --steps 5 --tool sim
stop_daemon

# 4. allow_uids, on a socket open to everyone
daemon_with 'socket_mode: "0666"' "allow_uids: [65534]"
expect "allow_uids [65534] lets nobody start a window, whatever its group" 0 \
  "^started window 1 " as_user nobody 65533 "$ctl" start --steps 5 --tool sim
# shellcheck disable=SC2059
expect "another uid still may not" 1 "$(printf "$eperm" start 65533)" \
  as_user 65533 65533 "$ctl" start --steps 6 --tool sim
stop_daemon

# 5. allow_gids: a group the peer's user belongs to in the group database
# (the kernel gives the daemon only the primary gid of an ipc:// peer)
member=
while IFS=: read -r gname _ gid members; do
  for u in ${members//,/ }; do
    if id -u "$u" >/dev/null 2>&1 && [ "$(id -g "$u")" != "$gid" ]; then
      member=$u sgid=$gid sname=$gname
      break 2
    fi
  done
done < <(getent group)
if [ -n "$member" ]; then
  daemon_with 'socket_mode: "0666"' "allow_gids: [$sgid]"
  expect "allow_gids [$sgid] lets $member start: a member of $sname in the group database" 0 \
    "^started window 1 " as_user "$member" "$(id -g "$member")" "$ctl" start --steps 5 --tool sim
  # shellcheck disable=SC2059
  expect "but not nobody" 1 "$(printf "$eperm" start 65534)" \
    as_user nobody "$ngid" "$ctl" start --steps 6 --tool sim
  stop_daemon
else
  ok "skipped: no user here has a supplementary group to check allow_gids with"
fi

# 6. a group that does not exist stops the daemon at start
printf 'save_path: %s\nsecurity:\n  socket_group: no-such-group\n' "$tmp/out" >"$tmp/bad.yaml"
expect "an unknown socket_group is refused at start" 1 \
  "^profd: security.socket_group: no group named 'no-such-group'$" \
  "$PROFD_PROFD" --config "$tmp/bad.yaml"

grep -q "AddressSanitizer\|runtime error" "$tmp/profd.log" && bad "sanitizer report in the daemon log"
finish
