#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Who may do what over the ipc:// sockets, with real users (root needed:
# profctl runs as other users through setpriv). The sockets belong to
# security.socket_group with security.socket_mode; anyone who can connect
# reads status, windows and top; start, stop, apply, report, merge and
# watch need root, the daemon's user,
# security.allow_uids or security.allow_gids (the peer's gid, or a group its
# user is in by the group database); a user outside the group cannot
# connect. A worker's registration belongs to the uid that made it.
# The users and groups the checks need are made here (useradd, groupadd:
# names with this run's pid) and removed on exit, also when the test is
# killed; those of a run killed with SIGKILL go at the next run. A missing
# tool is installed, never skipped.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (makes users and groups, runs profctl as them with setpriv)"
: "${PROFD_SIM:?set by ctest}"
need setpriv util-linux
need useradd passwd
need nngcat nng-utils
getent passwd nobody >/dev/null || die "no user nobody"
ngid=$(id -g nobody)
ngroup=$(getent group "$ngid" | cut -d: -f1)
[ -n "$ngroup" ] || die "the group of nobody ($ngid) has no name"

# ---- users and groups of this run ----
mark="profd test_access"
id_of() { getent "$1" "$2" | cut -d: -f3; }
# retry: another useradd or groupadd may hold the lock on /etc/passwd
retry() {
  local i
  for i in $(seq 20); do "$@" 2>"$tmp/acct.err" && return 0; sleep 0.5; done
  die "$*: $(cat "$tmp/acct.err")"
}
accounts_remove() { # PID: the users and groups of that run
  local u g
  for u in $(getent passwd | awk -F: -v m="$mark $1" '$5 == m {print $1}'); do
    userdel "$u" 2>/dev/null || true
  done
  for g in pdacc"$1"g pdacc"$1"o pdacc"$1"p; do
    getent group "$g" >/dev/null && { groupdel "$g" 2>/dev/null || true; }
  done
}
# runs killed with SIGKILL left theirs
for old in $(getent passwd | sed -n "s/^[^:]*:[^:]*:[^:]*:[^:]*:$mark \([0-9]*\):.*/\1/p" | sort -u); do
  kill -0 "$old" 2>/dev/null || accounts_remove "$old"
done
lib_on_exit=accounts_done
accounts_done() { accounts_remove $$; }
ga=pdacc$$g # the group allow_gids names
go=pdacc$$o # another group
gp=pdacc$$p # the primary group of both users
ua=pdacc$$a # in ga (and go) by the group database
ub=pdacc$$b # in go only
for g in "$ga" "$go" "$gp"; do retry groupadd --system "$g"; done
retry useradd --system --no-create-home --no-user-group --gid "$gp" --groups "$ga,$go" \
  --shell /usr/sbin/nologin --comment "$mark $$" "$ua"
retry useradd --system --no-create-home --no-user-group --gid "$gp" --groups "$go" \
  --shell /usr/sbin/nologin --comment "$mark $$" "$ub"
ga_gid=$(id_of group "$ga")
gp_gid=$(id_of group "$gp")
ub_uid=$(id_of passwd "$ub")
[ "$(id -Gn "$ua" | tr ' ' '\n' | sort | tr '\n' ' ')" = "$(printf '%s\n' "$ga" "$go" "$gp" | sort | tr '\n' ' ')" ] ||
  die "$ua is in $(id -Gn "$ua"), not $gp $ga $go"

export PROFD_RUN_DIR=$tmp/run
ctl=$PROFD_PROFCTL

daemons=0
daemon_with() { # YAML-LINES...: a daemon with these security settings, a save_path of its own
  daemons=$((daemons + 1))      # (a daemon keeps its windows over a restart: its journal)
  printf 'save_path: %s\nsecurity:\n' "$tmp/out$daemons" >"$tmp/profd.yaml"
  for l in "$@"; do printf '  %s\n' "$l" >>"$tmp/profd.yaml"; done
  rm -f "$tmp/run/control.sock"
  start_daemon "$tmp/profd.log" "$PROFD_PROFD" --config "$tmp/profd.yaml"
  wait_started "$tmp/profd.log" || die "profd did not start: $(cat "$tmp/profd.log")"
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
# a config that asks for a window (one that asks for none is answered by
# profctl itself: "no window", nothing is sent)
printf 'global_profiler: {tool: npu, steps: [3]}\nactor_rollout_ref: {actor: {profiler: {enable: true}}}\n' \
  >"$tmp/apply.yaml"
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
"$PROFD_SIM" --layout actor:1 --steps 100000 --rate 5 --job acc >"$tmp/sim.log" 2>&1 &
pids+=($!)
status_until 'len(d["ranks"])' 1 || die "the worker did not register: $(cat "$tmp/sim.log")"
id=$("$ctl" --json status | json 'd["ranks"][0]["client"]')
expect "another user cannot speak for a worker of root" 0 \
  "\"name\":\"EPERM\",\"message\":\"client $id was registered by another user\"" \
  as_user nobody "$ngid" nngcat --req --dial "ipc://$tmp/run/worker.sock" --recv-timeout 5 \
  --format ascii --data "{\"v\":1,\"type\":\"result\",\"client\":$id,\"window\":1}"
kill "${pids[-1]}" 2>/dev/null || true
stop_daemon

# 3. allow_gids: the peer's own gid
daemon_with "socket_group: $ngroup" "allow_gids: [$ngid]"
expect "allow_gids [$ngid] lets nobody start a window" 0 "^started window 1 " \
  as_user nobody "$ngid" "$ctl" start --steps 5 --tool sim
# shellcheck disable=SC2059
expect "$ub (gid $gp), reaching the socket through $ngroup in its process, may not" 1 \
  "$(printf "$eperm" start "$ub_uid")" \
  as_user_in "$ub" "$gp_gid" "$ngid" "$ctl" start --steps 6 --tool sim
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
daemon_with 'socket_mode: "0666"' "allow_gids: [$ga_gid]"
expect "allow_gids [$ga_gid] lets $ua start: a member of $ga in the group database" 0 \
  "^started window 1 " as_user "$ua" "$gp_gid" "$ctl" start --steps 5 --tool sim
# shellcheck disable=SC2059
expect "but not $ub, a member of $go only" 1 "$(printf "$eperm" start "$ub_uid")" \
  as_user "$ub" "$gp_gid" "$ctl" start --steps 6 --tool sim
# shellcheck disable=SC2059
expect "nor $ub with $ga in its process's groups: not in the group database" 1 \
  "$(printf "$eperm" start "$ub_uid")" \
  as_user_in "$ub" "$gp_gid" "$ga_gid" "$ctl" start --steps 6 --tool sim
# shellcheck disable=SC2059
expect "nor nobody" 1 "$(printf "$eperm" start 65534)" \
  as_user nobody "$ngid" "$ctl" start --steps 6 --tool sim
expect "only $ua's window exists" 0 "^1 +w1-step5 " "$ctl" windows
stop_daemon

# 6. a group that does not exist stops the daemon at start
printf 'save_path: %s\nsecurity:\n  socket_group: no-such-group\n' "$tmp/out" >"$tmp/bad.yaml"
expect "an unknown socket_group is refused at start" 1 \
  "^profd: security.socket_group: no group named 'no-such-group'$" \
  "$PROFD_PROFD" --config "$tmp/bad.yaml"

finish
