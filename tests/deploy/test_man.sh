#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# The man pages: they format without a groff warning, carry this version,
# and agree with --help: every option a program's --help lists is in its
# page, and every option its page documents (OPTIONS and COMMANDS) is in
# --help.
. "$(dirname "$0")/lib.sh"

command -v groff >/dev/null || skip "groff not found (Debian package groff-base)"
man=$PROFD_SOURCE_DIR/docs/man

long_opts() { grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
# roff text -> plain: \- and \e become - and \, font escapes go
plain() { sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\f[BIRP]//g' "$@"; }
# the OPTIONS and COMMANDS sections only
documented() {
  awk '/^\.SH/ {on = ($2 == "OPTIONS" || $2 == "COMMANDS")} on' "$1" | plain
}

for entry in "profd.8:$PROFD_PROFD" "profctl.1:$PROFD_PROFCTL" "profd-sim.1:$PROFD_SIM"; do
  page=$man/${entry%%:*}
  bin=${entry#*:}
  name=$(basename "$page")
  if groff -man -Tutf8 -ww -z "$page" 2>"$tmp/groff.log" && [ ! -s "$tmp/groff.log" ]; then
    ok "$name formats without warnings"
  else
    bad "$name: groff: $(cat "$tmp/groff.log")"
  fi
  check "$name is for version $PROFD_VERSION" grep -q "^\.TH .* \"profd $PROFD_VERSION\"" "$page"
  for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" "SEE ALSO"; do
    grep -q "^\.SH \"\?$s\"\?$" "$page" || bad "$name has no $s section"
  done

  "$bin" --help >"$tmp/help.txt"
  # profctl: every command answers --help with its own options
  if [ "$name" = profctl.1 ]; then
    for cmd in $(awk '/^commands/ {on = 1; next} on && /^$/ {on = 0} on {print $1}' "$tmp/help.txt"); do
      "$bin" "$cmd" --help >>"$tmp/help.txt" || bad "profctl $cmd --help failed"
    done
  fi
  help=$(long_opts <"$tmp/help.txt")
  all=$(plain "$page" | long_opts)
  doc=$(documented "$page" | long_opts)
  missing=$(comm -23 <(echo "$help") <(echo "$all") | xargs)
  check "$name documents every option of --help${missing:+ (missing: $missing)}" test -z "$missing"
  extra=$(comm -13 <(echo "$help") <(echo "$doc") | xargs)
  check "$name documents no option --help lacks${extra:+ (extra: $extra)}" test -z "$extra"
  shorts=$( (grep -oE '^ +-[a-zA-Z],' "$tmp/help.txt" || true) | tr -d ' ,' | sort -u)
  # (into a file: grep -q leaving a pipe early would fail the pipeline)
  documented "$page" >"$tmp/documented.txt"
  for s in $shorts; do
    grep -qE -- "(^|[^-a-z])$s([^a-z-]|$)" "$tmp/documented.txt" || bad "$name lacks short option $s"
  done
  ok "$name has the short options of --help ($(echo $shorts))"
done

# The check itself: a page missing an option, and one with a stray option.
sed '/^\.BI \\-\\-spool " dir"$/,/^\.TP$/d' "$man/profd.8" >"$tmp/profd.8"
grep -q -- '--spool' <(documented "$tmp/profd.8") && die "could not remove --spool from a copy"
check "a page without --spool is caught" \
  test -n "$(comm -23 <("$PROFD_PROFD" --help | long_opts) <(plain "$tmp/profd.8" | long_opts))"

finish
