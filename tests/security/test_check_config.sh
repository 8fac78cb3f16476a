#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# profd --check-config refuses what a start refuses (issue 28, item 8): for
# each configuration the start refuses (a hook user that does not exist,
# root as the hook's user, security.job_certificates where nng cannot read
# a certificate's name, a socket group that does not exist), --check-config
# exits 1 with the same one-line reason; one the start accepts, it accepts.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (the hook's user checks differ for other users)"
export PROFD_RUN_DIR=$tmp/run

same() { # WHAT CONFIG-LINES...: start and --check-config agree
  local what=$1 rc_start=0 rc_check=0
  shift
  printf '%s\n' "$@" >"$tmp/c.yaml"
  timeout 5 "$PROFD_PROFD" --config "$tmp/c.yaml" --save-path "$tmp/out" >"$tmp/start.out" 2>&1 ||
    rc_start=$?
  "$PROFD_PROFD" --config "$tmp/c.yaml" --save-path "$tmp/out" --check-config >"$tmp/check.out" 2>&1 ||
    rc_check=$?
  local why
  why=$(grep '^profd: ' "$tmp/start.out" | tail -1 || true)
  if [ "$rc_start" = 124 ]; then # the start accepted it (and ran until killed)
    [ "$rc_check" = 0 ] && ok "$what: accepted by both" ||
      bad "$what: the start accepts it, --check-config exits $rc_check: $(cat "$tmp/check.out")"
  elif [ "$rc_check" = 1 ] && [ -n "$why" ] && grep -qxF -- "$why" "$tmp/check.out"; then
    ok "$what: both refuse it ($why)"
  else
    bad "$what: the start exits $rc_start ($why), --check-config $rc_check: $(tail -2 "$tmp/check.out")"
  fi
}
same "a hook user that does not exist" "hooks:" "  after_window:" \
  "    command: \"true\"" "    user: no-such-user-28"
same "root as the hook's user" "hooks:" "  after_window:" "    command: \"true\"" "    user: root"
same "security.job_certificates" "security:" "  job_certificates: true"
same "a socket group that does not exist" "security:" "  socket_group: no-such-group-28"
same "a plain configuration" "limits:" "  max_windows: 8"
finish
