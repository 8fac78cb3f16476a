#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, the after-window hook (hooks.after_window.*):
#  1. rclone copies each window to a local remote (configured through
#     RCLONE_CONFIG_* in the daemon's environment), as the unprivileged user
#     `nobody` when the test runs as root: the files are at the remote, the
#     window says "exit 0" with the end of the hook's output; kept over a
#     restart (the journal);
#  2. a failing hook: its status (exit 3) and what it printed are recorded;
#  3. a hook past its timeout is killed and recorded as timed out;
#  4. bad settings stop the daemon at start with one line naming the key.
# Usage: test_hook.sh BUILD_DIR
lib_name=hook
. "$(dirname "$0")/lib.sh"
command -v rclone >/dev/null || { echo "SKIP: no rclone (deploy/deps.sh rclone)"; exit 77; }
export PROFD_RUN_DIR=$tmp/run
save=$tmp/save
remote=$tmp/remote
chmod 755 "$tmp" # the hook's user reads the windows below it
mkdir -m 777 "$remote"
ctl() { "$profctl_bin" "$@"; }
user=
if [ "$(id -u)" = 0 ]; then user=nobody; fi
export RCLONE_CONFIG_BACKUP_TYPE=local
hook_yaml() { # FILE COMMAND [TIMEOUT_MS]
  printf 'limits:\n  client_timeout_ms: 120000\nhooks:\n  after_window:\n    command: %s\n    user: "%s"\n    timeout_ms: %s\n' \
    "$2" "$user" "${3:-60000}" >"$1"
}
wait_ranks() { # both ranks registered and stepping
  for _ in $(seq 200); do
    [ "$(ctl --json status | json 'sum(1 for r in d["ranks"] if r["step_ms"] > 0 and r["state"] != "lost")')" = 2 ] && return 0
    sleep 0.05
  done
  fail "the ranks did not register: $(ctl status)"
}
restart_profd() { # CONFIG
  kill -TERM "$profd_pid"
  wait "$profd_pid" 2>/dev/null || true
  start_profd "$1"
  wait_ranks
}
win() { ctl --json windows "$1" | json "d['windows'][0].get('$2')"; }
step() { ctl --json status | json 'max([r["step"] for r in d["ranks"]] or [0])'; }
take() { # one window of one step; waits for it and for its hook; prints its id
  local s id
  s=$(($(step) + 40)) # 2 s ahead: a loaded machine reaches every rank in time
  id=$(ctl start --job up --steps "$s" --tool sim | sed -n 's/^started window \([0-9]*\) .*/\1/p')
  ctl wait "$id" --timeout 60 >/dev/null || fail "window $id: $(ctl --json windows "$id")"
  for _ in $(seq 600); do
    case "$(win "$id" hook)" in None | running | "waiting for the report's last write") sleep 0.1 ;; *) break ;; esac
  done
  echo "$id"
}

# ---- 1. rclone uploads each window ------------------------------------------------
hook_yaml "$tmp/up.yaml" "'rclone copy \"\$PROFD_WINDOW_PATH\" \"backup:$remote/\$PROFD_JOB/\$PROFD_WINDOW_NAME\" && echo uploaded window \$PROFD_WINDOW_ID as \$(id -un)'"
start_profd "$tmp/up.yaml"
"$sim" --layout actor:2 --steps 100000 --rate 20 --job up --trace-bytes 100000 >"$tmp/sim.log" 2>&1 &
pids+=($!)
wait_ranks
w1=$(take)
d1=$(win "$w1" path)
n1=$(win "$w1" name)
[ "$(win "$w1" hook)" = "exit 0" ] || fail "hook: $(ctl --json windows "$w1")"
[ "$(win "$w1" hook_exit)" = 0 ] || fail "hook_exit: $(win "$w1" hook_exit)"
who=${user:-$(id -un)}
out=$(win "$w1" hook_output) # (not piped into grep -q: it may close the pipe early)
grep -qx "uploaded window $w1 as $who" <<<"$out" || fail "output: $out"
[ -f "$remote/up/$n1/manifest.json" ] || fail "nothing at the remote: $(find "$remote")"
diff -r "$d1" "$remote/up/$n1" >"$tmp/diff.txt" || fail "the remote differs: $(cat "$tmp/diff.txt")"
# the hook ran after the report's last write: what it uploaded holds the 8
# steps after the window (the window's record complete; the first write at
# the window's end may not have them yet)
last1=$(win "$w1" last_step)
up_hi=$(json 'd["steps"][1]' <"$remote/up/$n1/steps.json")
[ "$up_hi" = $((last1 + 8)) ] || fail "uploaded steps.json ends at step $up_hi, not $((last1 + 8))"
[ "$(find "$remote/up/$n1" -type f | wc -l)" -ge 3 ] || fail "too few files: $(find "$remote")"
ctl windows "$w1" >"$tmp/detail.txt"
grep -qx "$w1 $n1: hook: exit 0" "$tmp/detail.txt" && grep -qx "uploaded window $w1 as $who" "$tmp/detail.txt" ||
  fail "profctl windows $w1: $(cat "$tmp/detail.txt")"
echo "ok: rclone uploaded window $w1 as $who, exit 0 recorded"

# ---- 2. a failing hook ------------------------------------------------------------
hook_yaml "$tmp/fail.yaml" "'echo copying; echo \"bucket \$PROFD_JOB not found\" >&2; exit 3'"
restart_profd "$tmp/fail.yaml"
[ "$(win "$w1" hook)" = "exit 0" ] || fail "w1 after the restart: $(win "$w1" hook)"
w2=$(take)
[ "$(win "$w2" hook)" = "exit 3" ] && [ "$(win "$w2" hook_exit)" = 3 ] ||
  fail "failing hook: $(ctl --json windows "$w2")"
[ "$(win "$w2" hook_output)" = "$(printf 'copying\nbucket up not found')" ] ||
  fail "failing hook output: $(win "$w2" hook_output)"
grep -q "warn hook: window $(win "$w2" name): after-window hook: exit 3" "$tmp/profd.log" ||
  fail "no warning logged"
echo "ok: a failing hook's status and output recorded"

# ---- 3. past its timeout -----------------------------------------------------------
hook_yaml "$tmp/slow.yaml" "'echo started; sleep 60.4321'" 1000
restart_profd "$tmp/slow.yaml"
w3=$(take)
[ "$(win "$w3" hook)" = "timed out after 1s (killed)" ] && [ "$(win "$w3" hook_exit)" = None ] &&
  [ "$(win "$w3" hook_output)" = started ] || fail "slow hook: $(ctl --json windows "$w3")"
for _ in $(seq 50); do pgrep -f 'sleep 60.4321' >/dev/null || break; sleep 0.1; done
pgrep -f 'sleep 60.4321' >/dev/null && fail "the hook's sleep survived: $(pgrep -af 'sleep 60.4321')"
echo "ok: a hook past its timeout killed"

# ---- 3b. retention spares a window whose hook runs ---------------------------------
# Guards: retention pruning a window while its after-window hook runs (the
# upload would read a folder being removed). Window A's hook waits for a
# file; A and B (its hook done) are made two days old; C's end starts a
# retention pass (max_age_hours 24): B is pruned, A is kept while its hook
# runs. Waited for by state: B pruned is the pass having run.
hook_yaml "$tmp/held.yaml" "'while [ ! -e $tmp/release-\$PROFD_WINDOW_ID ]; do sleep 0.05; done; echo released'" 120000
printf 'retention:\n  max_age_hours: 24\n  max_bytes: 0\n  max_fraction: 0\n' >>"$tmp/held.yaml"
restart_profd "$tmp/held.yaml"
take_held() { # one window of one step, waited for; its hook may still run
  local s id
  s=$(($(step) + 40))
  id=$(ctl start --job up --steps "$s" --tool sim | sed -n 's/^started window \([0-9]*\) .*/\1/p')
  ctl wait "$id" --timeout 60 >/dev/null || fail "window $id: $(ctl --json windows "$id")"
  echo "$id"
}
hook_is() { [ "$(win "$1" hook)" = "$2" ]; }
wa=$(take_held)
wait_until "window $wa's hook to run" 60 hook_is "$wa" running
wb=$(take_held)
touch "$tmp/release-$wb"
wait_until "window $wb's hook to end" 60 hook_is "$wb" "exit 0"
# each window's report is written once more when every rank is 8 steps past
# it (its record complete): backdated after that, not before
behind=$(($(win "$wb" last_step) + 20))
all_past() { [ "$(ctl --json status | json 'min(r["step"] for r in d["ranks"])')" -ge "$behind" ]; }
wait_until "every rank at step $behind (window $wb's record complete)" 60 all_past
da=$(win "$wa" path)
find "$da" "$(win "$wb" path)" -exec touch -h -d '2 days ago' {} +
touch "$tmp/release-$((wb + 1))" "$tmp/release-$((wb + 2))"
wc=$(take_held)
pruned() { [ "$(win "$1" pruned)" != None ]; }
wait_until "window $wb (two days old) to be pruned" 60 pruned "$wb"
[ "$(win "$wa" pruned)" = None ] && [ -d "$da" ] && hook_is "$wa" running ||
  fail "window $wa pruned while its hook ran: $(ctl --json windows "$wa")"
[ "$(win "$wc" pruned)" = None ] || fail "window $wc (new) pruned: $(ctl --json windows "$wc")"
touch "$tmp/release-$wa"
wait_until "window $wa's hook to end once released" 60 hook_is "$wa" "exit 0"
echo "ok: retention spares a window while its hook runs"

# ---- 4. bad settings ----------------------------------------------------------------
bad() { # YAML EXPECTED
  printf '%b' "$1" >"$tmp/bad.yaml"
  local rc=0
  "$profd" --config "$tmp/bad.yaml" --run-dir "$tmp/bad/run" --save-path "$tmp/bad/save" \
    2>"$tmp/bad.err" || rc=$?
  [ "$rc" = 1 ] && [ "$(cat "$tmp/bad.err")" = "profd: $2" ] || fail "exit $rc: $(cat "$tmp/bad.err")"
}
bad 'hooks:\n  after_window:\n    command: "true"\n    user: no-such-user-x\n' \
  "hooks.after_window.user: no user 'no-such-user-x'"
if [ "$(id -u)" = 0 ]; then
  bad 'hooks:\n  after_window:\n    command: "true"\n' \
    "hooks.after_window.user: must name an unprivileged user when profd runs as root (the hook never runs as root)"
  bad 'hooks:\n  after_window:\n    command: "true"\n    user: root\n' \
    "hooks.after_window.user: 'root' is root, not an unprivileged user"
fi
echo "ok: bad hook settings refused"
check_logs
echo "PASS"
