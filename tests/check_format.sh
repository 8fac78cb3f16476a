#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Every C source and header git tracks is formatted with the committed
# .clang-format (fix: clang-format -i FILE).
# Usage: check_format.sh SOURCE_DIR
set -euo pipefail
cd "$1"
if ! command -v clang-format >/dev/null 2>&1; then
  echo "SKIP: clang-format is not installed (deploy/deps.sh installs it)"
  exit 77
fi
bad=()
while IFS= read -r f; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
if [ "${#bad[@]}" -ne 0 ]; then
  echo "not formatted with .clang-format (clang-format -i FILE): ${bad[*]}" >&2
  exit 1
fi
echo "format: ${PWD##*/}: OK"
