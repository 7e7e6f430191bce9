#!/usr/bin/env bash
# qk_norm_rope_cache with e4m3 pools (the FP8 cache write: v00, baseline_unfused and v03 take
# them) on the GPU, in one short call (< 4 min with a warm ceilings cache):
#   1. `klab check` of the unfused baseline and v03 at every headline and awkward shape, both
#      pool dtypes;
#   2. the family's GPU tests under compute-sanitizer (memcheck, racecheck, synccheck);
#   3. `klab bench` of v03 beside the unfused launches at Qwen3-8B's 1, 16, 64, 4096 and 16384
#      tokens, bf16 and e4m3 pools in the same call, launch by launch (--interleave), one JSON per
#      shape and dtype in OUTDIR (bench_qk_<tokens>_<dtype>.json);
#   4. `klab profile` (Nsight Compute) of v03 at 16384 tokens, both pool dtypes.
# Usage: scripts/measure_qk_e4m3.sh BUILD_DIR OUTDIR
#   BUILD_DIR as for scripts/h200.sh (e.g. .out/build after scripts/pack_for_device.sh).
#   KLAB_CACHE_DIR: the ceilings cache (default OUTDIR/cache). KLAB_MAX_TIME: seconds a benchmark
#   (default 1).
set -uo pipefail
usage="usage: scripts/measure_qk_e4m3.sh BUILD_DIR OUTDIR"
build=${1:?$usage}
out=${2:?$usage}
mkdir -p "$out"
source "$(dirname "$0")/device_run_env.sh"
max_time=${KLAB_MAX_TIME:-1}
status=0
fam=qk_norm_rope_cache
rungs="$fam.baseline_unfused $fam.v03_hoisted"

machine_and_ceilings || status=1

for dtype in bf16 e4m3; do
  log "klab check $dtype: $rungs at the headline and awkward shapes"
  timeout 120 "$klab" check $rungs --dtype "$dtype" --quiet --json "$out/check_$dtype.json" \
    > "$out/check_$dtype.txt" 2>&1 || status=1
  tail -n 2 "$out/check_$dtype.txt" | tee -a "$out/summary.txt"
done

tests="$build/tests/klab_gpu_tests"
mkdir -p "$out/san"
for tool in memcheck racecheck synccheck; do
  (out="$out/san" && sanitize "$tool" "$tests" "*qk_norm_rope_cache*" 200 "$fam's GPU tests") ||
    status=1
done

for tokens in 1 16 64 4096 16384; do
  case $tokens in
    1) seqs=1 context=4096 ;;
    16 | 64) seqs=$tokens context=4096 ;;
    4096) seqs=4 context=8192 ;;
    16384) seqs=8 context=16384 ;;
  esac
  shape="tokens=$tokens,hq=32,hkv=8,d=128,page=16,seqs=$seqs,context=$context"
  for dtype in bf16 e4m3; do
    log "klab bench $shape $dtype"
    timeout 120 "$klab" bench $rungs --shape "$shape" --dtype "$dtype" --interleave --quiet \
      --max-time "$max_time" --json "$out/bench_qk_${tokens}_$dtype.json" \
      > "$out/bench_qk_${tokens}_$dtype.txt" 2>&1 || status=1
  done
done

shape="tokens=16384,hq=32,hkv=8,d=128,page=16,seqs=8,context=16384"
for dtype in bf16 e4m3; do
  log "klab profile $fam.v03_hoisted $shape $dtype"
  timeout 200 "$klab" profile "$fam.v03_hoisted" --shape "$shape" --dtype "$dtype" --set all \
    --json "$out/profiles_qk.json" > "$out/profile_$dtype.txt" 2>&1 || status=1
done
log "done (status $status)"
exit $status
