#!/usr/bin/env bash
# decode_attention on a GPU (< 8 min with a warm ceilings cache):
#   1. `klab check` of baseline_cudnn_contiguous, v28-v30 and v32 at the family's headline and
#      awkward shapes (their dtypes); v32's GPU tests (three distributions a shape, one workspace);
#   2. the ragged batch of 64 (100 to 16k keys) at pages of 16 and 64, launch by launch
#      (--interleave): bf16 v13, v21, v28, v29, v31, v32, both cuDNN baselines; e4m3 v15 and v30
#      (bench_ragged_<dtype>_p<page>.json);
#   3. the other goal shapes of issue 15 ((1, 4k), (1, 32k), (1, 128k), (16, 8k), (64, 4k),
#      (256, 2k)) at pages of 16 and 64: bf16 v13, v32 (and v31 at B = 1 from 32k) beside both
#      cuDNN baselines (bench_<b>x<len>_p<page>.json);
#   4. `klab timeline` of v32, v31 and v13 at (1, 32k), pages of 16 (tl_<rung>_1_32k.json);
#   5. compute-sanitizer memcheck over the cuDNN baselines' and v32's GPU tests.
# Usage: scripts/measure_decode_ragged_and_contiguous.sh BUILD_DIR OUTDIR
#   BUILD_DIR as for scripts/h200.sh. KLAB_CACHE_DIR: the ceilings cache (default OUTDIR/cache).
#   KLAB_MAX_TIME: seconds a benchmark (default 0.3).
set -uo pipefail
usage="usage: scripts/measure_decode_ragged_and_contiguous.sh BUILD_DIR OUTDIR"
build=${1:?$usage}
out=${2:?$usage}
mkdir -p "$out"
source "$(dirname "$0")/device_run_env.sh"
status=0
fam=decode_attention
heads="qlen=1,hq=32,hkv=8,d=128"

machine_and_ceilings || status=1

log "klab check: the contiguous cuDNN baseline, v28-v30, v32"
timeout 240 "$klab" check $fam.baseline_cudnn_contiguous $fam.v28_longest_first \
  $fam.v29_longest_first_chunks $fam.v30_fp8_longest_first $fam.v32_counter_compact_tail \
  --quiet --json "$out/check.json" > "$out/check.txt" 2>&1 || status=1
tail -n 2 "$out/check.txt" | tee -a "$out/summary.txt"
log "GPU tests: v32 at the awkward shapes"
GTEST_FILTER='*v32_counter_compact_tail*' timeout 180 "$build/tests/klab_gpu_tests" --gtest_brief=1 \
  > "$out/gpu_tests_v32.log" 2>&1 || status=1
tail -n 3 "$out/gpu_tests_v32.log" | tee -a "$out/summary.txt"

bench() { bench_interleaved "$@" || status=1; }  # NAME DTYPE SHAPE VARIANT...
for page in 16 64; do
  ragged="b=64,$heads,page=$page,len=16384,min_len=100,empty=0"
  bench "ragged_bf16_p$page" bf16 "$ragged" $fam.v13_cluster_push_merge $fam.v21_fine_splits \
    $fam.v28_longest_first $fam.v29_longest_first_chunks $fam.v31_counter_steal \
    $fam.v32_counter_compact_tail $fam.baseline_cudnn_paged $fam.baseline_cudnn_contiguous
  bench "ragged_e4m3_p$page" e4m3 "$ragged" $fam.v15_fp8_stage_pairs $fam.v30_fp8_longest_first
done
for page in 16 64; do
  for bl in 1x4096 1x32768 1x131072 16x8192 64x4096 256x2048; do
    bench "${bl}_p$page" bf16 "b=${bl%x*},$heads,page=$page,len=${bl#*x},min_len=${bl#*x},empty=0" \
      $fam.v13_cluster_push_merge $fam.v32_counter_compact_tail \
      $([ "${bl%x*}" = 1 ] && [ "${bl#*x}" -ge 32768 ] && echo $fam.v31_counter_steal) \
      $fam.baseline_cudnn_paged $fam.baseline_cudnn_contiguous
  done
done
mkdir -p "$out/tl"
for rung in v32_counter_compact_tail v31_counter_steal v13_cluster_push_merge; do
  log "klab timeline $rung at (1, 32k)"
  timeout 90 "$klab" timeline $fam.$rung --shape "b=1,$heads,page=16,len=32768,min_len=32768,empty=0" \
    --launches 30 --seed 1 --json "$out/tl/tl_${rung%%_*}_1_32k.json" \
    > "$out/tl/tl_${rung%%_*}_1_32k.txt" 2>&1 || status=1
done

mkdir -p "$out/san"
(out="$out/san" && sanitize memcheck "$build/tests/klab_gpu_tests" \
  "*decode_attention_baseline*:*v32_counter_compact_tail*" 300 "the cuDNN baselines' and v32's GPU tests") ||
  status=1
log "done (status $status)"
exit $status
