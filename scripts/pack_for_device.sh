#!/usr/bin/env bash
# For building on one machine and running on another (a GPU machine without the compilers):
# packs what scripts/h200.sh needs into .out/ (git-ignored): the klab CLI, the GPU test binary,
# the shared libraries the other machine may lack (Highway) and the commit they were built from
# (git_sha.txt, for the run's manifest), compressed with xz into .out/device.txz (~20 MiB; gzip
# left ~45 MiB of the three ~58 MiB binaries).
# A build configured with -DKLAB_CUDA_ARCHS=90a-real (SASS only) packs the klab CLI to ~6 MiB
# instead of ~10.
# Usage: scripts/pack_for_device.sh [BUILD_DIR [PACK_DIR]]   (PACK_DIR: .out by default; another
#   git-ignored folder such as .out-gemm lets two builds be packed side by side)
#   copy the checkout with PACK_DIR/ to the GPU machine, then: scripts/h200.sh OUTDIR PACK_DIR/build
#   (which unpacks PACK_DIR/device.txz first)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
pack=${2:-.out}
case "$pack" in .out*) ;; *) echo "pack_for_device: PACK_DIR must be a git-ignored .out* folder, got $pack" >&2; exit 2 ;; esac
rm -rf "$pack"
mkdir -p "$pack/build/apps/klab" "$pack/build/tests" "$pack/lib"
cp "$build/apps/klab/klab" "$pack"/build/apps/klab/
cp "$build/tests/klab_gpu_tests" "$build/tests/klab_doctor_gpu_tests" "$pack"/build/tests/
git describe --always --dirty --abbrev=12 > "$pack"/build/git_sha.txt 2>/dev/null || echo unknown > "$pack"/build/git_sha.txt
for lib in libhwy.so.1; do
  path=$(ldd "$build/apps/klab/klab" | awk -v l="$lib" '$1 == l {print $3}')
  [ -n "$path" ] && cp -L "$path" "$pack"/lib/
done
XZ_OPT="-T2 -6" tar cJf "$pack"/device.txz -C "$pack" build lib
rm -rf "$pack"/build "$pack"/lib
du -sh "$pack"
