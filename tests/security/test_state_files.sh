#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The daemon's persistent files are untrusted input (issue 28, break 2):
#  1. a journal record naming a window folder outside save_path (written
#     into the journal, as a user who can write save_path would): the
#     folder is never removed, though it is older than retention.max_age;
#  2. a journal that is a symlink to /dev/zero, a fifo, another user's file
#     or writable by others: the daemon refuses to start at once with one
#     line naming the file and the fix (it neither hangs nor grows);
#  3. the coordinator's state file alike (a symlink, a fifo);
#  4. a save_path others may write to (mode 1777) is refused unless
#     security.writable_save_path says so.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (chowns the journal to nobody)"
: "${PROFD_SIM:?set by ctest}"
export PROFD_RUN_DIR=$tmp/run
ctl=$PROFD_PROFCTL
save=$tmp/out
journal=$save/.profd-$(hostname -s).journal

printf '%s\n' "limits:" "  client_timeout_ms: 120000" "retention:" "  max_age_hours: 24" \
  >"$tmp/profd.yaml"
daemon() {
  start_daemon "$tmp/profd.log" "$PROFD_PROFD" --config "$tmp/profd.yaml" --save-path "$save" \
    --log-level info
  wait_started "$tmp/profd.log" || die "profd did not start: $(cat "$tmp/profd.log")"
}

# 1. a forged folder in the journal
daemon
"$PROFD_SIM" --layout actor:1 --steps 1000000 --rate 20 --job f --trace-bytes 2000 \
  >"$tmp/sim.log" 2>&1 &
sim=$!
pids+=($sim)
s=$(newest_step)
id=$(start_sim_window f $((s + 20)))
"$ctl" wait "$id" --timeout 60 >/dev/null || die "window $id: $("$ctl" --json windows "$id")"
name=$(win "$id" name)
kill "$sim"
stop_daemon
[ -f "$journal" ] || die "no journal at $journal: $(ls -la "$save")"
# a folder outside save_path, its root as long as save_path's (the record's
# root_len stays right), old enough for retention
victim=$tmp/vic
mkdir -p "$victim/f/$name"
echo keep >"$victim/f/$name/precious"
find "$victim" -exec touch -h -d '3 days ago' {} +
sed -i "s#$save/f/$name#$victim/f/$name#g" "$journal"
grep -q "$victim/f/$name" "$journal" || die "the journal names no folder to forge: $(head -c 600 "$journal")"
daemon
sleep 3 # retention's first pass runs a second after the start
[ "$(win "$id" path)" = "$victim/f/$name" ] || bad "the forged record was not restored: $(win "$id" path)"
[ -f "$victim/f/$name/precious" ] && ok "a journal record naming $victim/f/$name: not removed" ||
  bad "the folder outside save_path was removed by retention: $(grep retention "$tmp/profd.log")"
stop_daemon

# 2. the journal not the daemon's own regular file
refused() { # WHAT PATTERN: the daemon exits 1 at once with that one line
  expect "$1" 1 "$2" timeout 10 "$PROFD_PROFD" --config "$tmp/profd.yaml" --save-path "$save"
}
mv "$journal" "$tmp/journal.good"
ln -s /dev/zero "$journal"
refused "a journal linked to /dev/zero" \
  "journal $journal is a symlink \\(not followed\\): remove the link"
rm "$journal"
mkfifo "$journal"
refused "a journal that is a fifo" "journal $journal is not a regular file \\(remove it"
rm "$journal"
cp "$tmp/journal.good" "$journal"
chown nobody "$journal"
refused "a journal of another user" \
  "journal $journal belongs to another user \\(uid $(id -u nobody), not the daemon's 0"
chown 0 "$journal"
chmod 0666 "$journal"
refused "a journal writable by others" \
  "journal $journal is writable by group or others \\(mode 0666: check who wrote it, then chmod go-w it\\)"
chmod 0600 "$journal"

# 3. the coordinator's journal, and the state file of a coordinator from
# before the journal (imported when there is no journal)
state=$tmp/c/save/.profd-coordinator.json
cjournal=$tmp/c/save/.profd-coordinator.journal
mkdir -p "$tmp/c/save"
coord_refused() { # WHAT PATTERN
  expect "$1" 1 "$2" timeout 10 "$PROFD_PROFD" --coordinator-listen "tcp://127.0.0.1:0" \
    --insecure-tcp-links --node coordinator --run-dir "$tmp/c/run" --save-path "$tmp/c/save"
}
ln -s /dev/zero "$state"
coord_refused "the coordinator's state linked to /dev/zero" \
  "coordinator state $state is a symlink \\(not followed\\)"
rm "$state"
mkfifo "$state"
coord_refused "the coordinator's state a fifo" "coordinator state $state is not a regular file"
rm "$state"
ln -s /dev/zero "$cjournal"
coord_refused "the coordinator's journal linked to /dev/zero" \
  "journal $cjournal is a symlink \\(not followed\\)"
rm "$cjournal"
mkfifo "$cjournal"
coord_refused "the coordinator's journal a fifo" "journal $cjournal is not a regular file"
rm "$cjournal"

# 4. a save_path writable by others
chmod 1777 "$save"
refused "a save_path of mode 1777" \
  "save_path $save is writable by others \\(mode 1777\\): another user could replace the daemon's journal there; chmod o-w it, or set security.writable_save_path: true"
printf '%s\n' "security:" "  writable_save_path: true" >>"$tmp/profd.yaml"
daemon
"$ctl" status >/dev/null && ok "with security.writable_save_path: true it starts" ||
  bad "no start with security.writable_save_path: $(tail -3 "$tmp/profd.log")"
stop_daemon
finish
