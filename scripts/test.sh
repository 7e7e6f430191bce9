#!/usr/bin/env bash
# Sets up, builds everything (CUDA included) and runs every test. GPU tests report "skipped"
# (exit 77) on a machine without a GPU.
set -euo pipefail
source "$(dirname "$0")/path.sh"
cd "$(dirname "$0")/.."
scripts/setup.sh
# Format first (docs/design.md: .clang-format, 100 columns): a file that is not formatted fails here.
scripts/format.sh --check || { echo "test.sh: run scripts/format.sh (files above are not formatted)" >&2; exit 1; }
preset=$(scripts/build.sh | tail -1)
ctest --preset "$preset" --output-on-failure
