#!/usr/bin/env bash
# Formats every C++/CUDA source in place with the repository's .clang-format (docs/design.md, Conventions).
# Usage: scripts/format.sh [--check]   (--check: list files that would change, exit 1 if any)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "format.sh: clang-format is not installed (apt install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    clang-format --style=file "$f" | cmp -s - "$f" || { echo "$f"; bad=1; }
  done
  exit $bad
fi
clang-format --style=file -i "${files[@]}"
