#!/usr/bin/env bash
# Sets up, builds everything (CUDA included) and runs every test. GPU tests report "skipped"
# (exit 77) on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
preset=$(scripts/build.sh | tail -1)
ctest --preset "$preset" --output-on-failure
