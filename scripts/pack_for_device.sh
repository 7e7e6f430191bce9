#!/usr/bin/env bash
# Packs what scripts/h200.sh needs into .out/ (git-ignored) to carry to the GPU machine:
# the klab CLI, the GPU test binary, and the shared libraries the device image lacks (Highway).
# The binaries travel gzipped (the device tool carries at most 64 MiB with the working tree, and
# the two binaries alone are ~60 MiB): .out/device.tgz, unpacked there into .out/.
# Usage: scripts/pack_for_device.sh [BUILD_DIR]
#   then on the device: scripts/h200.sh OUTDIR .out/build (which unpacks .out/device.tgz first)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rm -rf .out
mkdir -p .out/build/apps/klab .out/build/tests .out/lib
cp "$build/apps/klab/klab" .out/build/apps/klab/
cp "$build/tests/klab_gpu_tests" .out/build/tests/
for lib in libhwy.so.1; do
  path=$(ldd "$build/apps/klab/klab" | awk -v l="$lib" '$1 == l {print $3}')
  [ -n "$path" ] && cp -L "$path" .out/lib/
done
tar czf .out/device.tgz -C .out build lib
rm -rf .out/build .out/lib
du -sh .out
