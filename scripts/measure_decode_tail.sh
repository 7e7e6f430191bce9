#!/usr/bin/env bash
# A decode_attention rung that changes how a launch ends (its merge), measured on a GPU in about
# nine minutes with a warm ceilings cache:
#   1. launch by launch (--interleave, each variant checked against fp64 first) beside v32, v13
#      and cuDNN's paged SDPA, bf16, Qwen3-8B heads: (1, 32k) at pages of 16 and 64, (1, 128k),
#      (1, 4k), (16, 8k) and the ragged batch of 64 (100 to 16k keys) at pages of 16
#      (bench_<b>x<len>_p<page>.json, bench_ragged_p16.json); the e4m3 rungs beside v15 at
#      (1, 32k) and (1, 128k), pages of 16 (bench_<b>x<len>_p16_e4m3.json);
#   2. `klab check` of the rungs at the family's headline and awkward shapes, then their GPU tests
#      at the awkward shapes (the headline ones are the check's) at KLAB_TEST_SEEDS placements
#      (default 2: the merge's timing-dependent failures show at some placements and not others);
#   3. `klab timeline` of the rungs and v32 at (1, 32k), pages of 16 (tl/tl_<rung>_1_32k.json);
#   4. compute-sanitizer memcheck, racecheck and synccheck over the rungs' GPU tests.
# Usage: scripts/measure_decode_tail.sh BUILD_DIR OUTDIR
#   BUILD_DIR as for scripts/h200.sh; KLAB_DECODE_RUNGS the bf16 rungs under test (default
#   "v36_dependent_merge"), KLAB_DECODE_RUNGS_E4M3 the e4m3 ones (default
#   "v37_fp8_dependent_merge"); KLAB_CACHE_DIR the ceilings cache (default OUTDIR/cache);
#   KLAB_MAX_TIME seconds a benchmark (default 0.3).
set -uo pipefail
usage="usage: scripts/measure_decode_tail.sh BUILD_DIR OUTDIR"
build=${1:?$usage}
out=${2:?$usage}
mkdir -p "$out"
source "$(dirname "$0")/device_run_env.sh"
fam=decode_attention
heads="qlen=1,hq=32,hkv=8,d=128"
rungs=${KLAB_DECODE_RUNGS-v36_dependent_merge}
rungs8=${KLAB_DECODE_RUNGS_E4M3-v37_fp8_dependent_merge}
ids=() ids8=() filter=""
for r in $rungs; do ids+=("$fam.$r"); done
for r in $rungs8; do ids8+=("$fam.$r"); done
for r in $rungs $rungs8; do filter="$filter${filter:+:}*${r}_*"; done
status=0
machine_and_ceilings || status=1

others=("$fam.v32_counter_compact_tail" "$fam.v13_cluster_push_merge" "$fam.baseline_cudnn_paged")
for bl in 1x32768_p16 1x32768_p64 1x131072_p16 1x4096_p16 16x8192_p16; do
  b=${bl%%x*} len=${bl#*x} len=${len%_p*} page=${bl#*_p}
  bench_interleaved "$bl" bf16 "b=$b,$heads,page=$page,len=$len,min_len=$len,empty=0" \
    "${ids[@]}" "${others[@]}" || status=1
done
bench_interleaved ragged_p16 bf16 "b=64,$heads,page=16,len=16384,min_len=100,empty=0" \
  "${ids[@]}" "${others[@]}" || status=1
if [ -n "$rungs8" ]; then
  for len in 32768 131072; do
    bench_interleaved "1x${len}_p16_e4m3" e4m3 "b=1,$heads,page=16,len=$len,min_len=$len,empty=0" \
      "${ids8[@]}" "$fam.v15_fp8_stage_pairs" || status=1
  done
fi

log "klab check: $rungs $rungs8"
timeout 150 "$klab" check "${ids[@]}" "${ids8[@]}" --quiet --json "$out/check.json" > "$out/check.txt" 2>&1 ||
  status=1
tail -n 2 "$out/check.txt" | tee -a "$out/summary.txt"
log "GPU tests: $rungs $rungs8 at the awkward shapes, ${KLAB_TEST_SEEDS:=2} placements"
KLAB_TEST_SHAPES=awkward KLAB_TEST_SEEDS=$KLAB_TEST_SEEDS GTEST_FILTER="$filter" timeout 150 \
  "$build/tests/klab_gpu_tests" --gtest_brief=1 > "$out/gpu_tests.log" 2>&1 || status=1
tail -n 3 "$out/gpu_tests.log" | tee -a "$out/summary.txt"

mkdir -p "$out/tl"
for r in $rungs v32_counter_compact_tail; do
  log "klab timeline $r at (1, 32k)"
  timeout 90 "$klab" timeline "$fam.$r" --shape "b=1,$heads,page=16,len=32768,min_len=32768,empty=0" \
    --launches 30 --seed 1 --json "$out/tl/tl_${r%%_*}_1_32k.json" \
    > "$out/tl/tl_${r%%_*}_1_32k.txt" 2>&1 || status=1
done

mkdir -p "$out/san"
for tl in memcheck:90 racecheck:60 synccheck:45; do  # TOOL:LIMIT (seconds)
  (out="$out/san" && sanitize "${tl%:*}" "$build/tests/klab_gpu_tests" "$filter" "${tl#*:}" \
    "the GPU tests of $rungs $rungs8") || status=1
done
for f in "$out"/bench_*.txt; do  # the paired speed-ups, for the summary
  [ -f "$f" ] && paired "$f" > /dev/null
done
log "done (status $status)"
exit $status
