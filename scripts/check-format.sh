#!/usr/bin/env bash
# Checks that every C++ and CUDA source follows .clang-format (CI runs it first: scripts/test.sh).
#   scripts/check-format.sh          lists the files that differ; exits 1 when any does
#   scripts/check-format.sh --fix    formats them in place
set -uo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format || command -v clang-format-14) ||
  { echo "check-format: clang-format is not installed (scripts/install-deps.sh)"; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
if [[ "${1:-}" == "--fix" ]]; then
  "$format" -i "${files[@]}"
  exit 0
fi
differ=$("$format" --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: .*/\1/p' | sort -u)
if [[ -n "$differ" ]]; then
  echo "check-format: these files differ from .clang-format (scripts/check-format.sh --fix):"
  echo "$differ" | sed 's/^/  /'
  exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format"
