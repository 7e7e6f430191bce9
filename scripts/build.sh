#!/usr/bin/env bash
# Configures and builds klab (preset "default": CUDA, sm_90a; "cpu-only" without CUDA).
set -euo pipefail
source "$(dirname "$0")/path.sh"
cd "$(dirname "$0")/.."
preset=${KLAB_PRESET:-default}
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
if [ "$preset" = default ] && ! command -v nvcc >/dev/null; then
  echo "build: nvcc not found, building the cpu-only preset" >&2
  preset=cpu-only
fi
cmake --preset "$preset" >&2
cmake --build --preset "$preset" >&2
echo "$preset"  # the last line of stdout: the preset built
