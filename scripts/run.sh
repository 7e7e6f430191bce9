#!/usr/bin/env bash
# Sets up, builds, and runs klab's main job: check and benchmark every family at its headline
# shapes, one side-by-side table per family. Without a GPU it says so and runs the CPU rungs.
set -euo pipefail
source "$(dirname "$0")/path.sh"
cd "$(dirname "$0")/.."
scripts/setup.sh
preset=$(scripts/build.sh | tail -1)
dir=build; [ "$preset" = cpu-only ] && dir=build-cpu
exec "$dir/apps/klab/klab" run "$@"
