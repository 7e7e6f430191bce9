#!/usr/bin/env bash
# For building on one machine and running on another (a GPU machine without the compilers):
# packs what scripts/h200.sh needs into .out/ (git-ignored): the klab CLI, the GPU test binary,
# the shared libraries the other machine may lack (Highway) and the commit they were built from
# (git_sha.txt, for the run's manifest), gzipped into .out/device.tgz (~60 MiB of binaries).
# Usage: scripts/pack_for_device.sh [BUILD_DIR]
#   copy the checkout with .out/ to the GPU machine, then: scripts/h200.sh OUTDIR .out/build
#   (which unpacks .out/device.tgz first)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rm -rf .out
mkdir -p .out/build/apps/klab .out/build/tests .out/lib
cp "$build/apps/klab/klab" .out/build/apps/klab/
cp "$build/tests/klab_gpu_tests" "$build/tests/klab_doctor_gpu_tests" .out/build/tests/
git describe --always --dirty --abbrev=12 > .out/build/git_sha.txt 2>/dev/null || echo unknown > .out/build/git_sha.txt
for lib in libhwy.so.1; do
  path=$(ldd "$build/apps/klab/klab" | awk -v l="$lib" '$1 == l {print $3}')
  [ -n "$path" ] && cp -L "$path" .out/lib/
done
tar czf .out/device.tgz -C .out build lib
rm -rf .out/build .out/lib
du -sh .out
