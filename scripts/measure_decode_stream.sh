#!/usr/bin/env bash
# decode_attention rungs that change how a split streams its keys (the producer or the math
# warps), e4m3 ones beside v15, v22, v30 and v37 and bf16 ones beside v36, v13, v29 and cuDNN's
# paged SDPA, measured on a GPU in 15-20 minutes with a warm ceilings cache (KLAB_DECODE_STEPS and
# KLAB_AB_PASSES split it into shorter runs). Steps (KLAB_DECODE_STEPS, default all, in order):
#   readat   the read kernel over the KV bytes of B = 1 at 4k, 32k and 128k (decode_read_at of
#            device_run_env.sh: read_at.txt), the bound of a B = 1 rung's share of the ceiling;
#   tests    the rungs' GPU tests at the awkward shapes (KLAB_TEST_SHAPES=small: every page size,
#            the short and empty contexts, the ragged batches), then `klab check` at the family's
#            headline and awkward shapes;
#   e4m3     passes (KLAB_AB_PASSES, their numbers: default "1 2") of `klab bench E4M3_RUNGS v15
#            v22 v30 v37 --dtype e4m3 --rounds 3` (whole benchmarks interleaved, the L2 flushed
#            before every launch: from DRAM), Qwen3-8B heads, at (16, 8k) and (64, 4k) with pages
#            of 16 and 64, the ragged batch of 64 (100 to 16k keys) and (1, 32k) at pages of 16,
#            (1, 128k) at pages of 16 and 64: dec/e4m3_<N>/bench_*.json;
#   bf16     the same passes of the bf16 rungs beside v36, v13, v29 and cuDNN's paged SDPA at the
#            same problems (dec/bf16_<N>/): with the e4m3 passes, issue 15.5's FP8 / bf16 ratio
#            on this GPU;
#   stalls   Nsight's source counters of the first e4m3 rung's kernels and v15's at (16, 8k),
#            pages of 16, from DRAM (stalls/: source_stalls of device_run_env.sh);
#   sanitize compute-sanitizer memcheck, racecheck and synccheck over the rungs' GPU tests.
# Usage: scripts/measure_decode_stream.sh BUILD_DIR OUTDIR
#   BUILD_DIR as for scripts/h200.sh; KLAB_DECODE_RUNGS_E4M3 the e4m3 rungs under test (default
#   "v38_fp8_table_window v40_fp8_longest_first_window v41_fp8_dependent_window"),
#   KLAB_DECODE_RUNGS the bf16 ones (default "v39_table_window");
#   KLAB_CACHE_DIR the ceilings cache (default OUTDIR/cache); KLAB_MAX_TIME seconds a benchmark
#   (default 0.3); KLAB_SANITIZE_LIMIT seconds a sanitizer (default 150).
set -uo pipefail
usage="usage: scripts/measure_decode_stream.sh BUILD_DIR OUTDIR"
build=${1:?$usage}
out=${2:?$usage}
steps=${KLAB_DECODE_STEPS:-readat tests e4m3 bf16 stalls sanitize}
for s in $steps; do
  case "$s" in
    readat | tests | e4m3 | bf16 | stalls | sanitize) ;;
    *) echo "measure_decode_stream: unknown step '$s' (readat tests e4m3 bf16 stalls sanitize)" >&2
      exit 2 ;;
  esac
done
mkdir -p "$out/dec"
source "$(dirname "$0")/device_run_env.sh"
has() { [[ " $steps " == *" $1 "* ]]; }
fam=decode_attention
heads="qlen=1,hq=32,hkv=8,d=128"
rungs8=${KLAB_DECODE_RUNGS_E4M3-v38_fp8_table_window v40_fp8_longest_first_window v41_fp8_dependent_window}
rungs=${KLAB_DECODE_RUNGS-v39_table_window}
ids8=() ids=() filter=""
for r in $rungs8; do ids8+=("$fam.$r"); done
for r in $rungs; do ids+=("$fam.$r"); done
for r in $rungs8 $rungs; do filter="$filter${filter:+:}*${fam}_${r}_*"; done
[ -n "$filter" ] || { echo "measure_decode_stream: no rung named" >&2; exit 2; }
max_time=${KLAB_MAX_TIME:-0.3}
passes=${KLAB_AB_PASSES:-1 2}
status=0
machine_and_ceilings || status=1

# NAME=SHAPE of every timed problem.
shapes=()
for bl in 16x8192 64x4096; do
  for page in 16 64; do
    b=${bl%%x*} len=${bl#*x}
    shapes+=("${bl}_p$page=b=$b,$heads,page=$page,len=$len,min_len=$len,empty=0")
  done
done
shapes+=("ragged_p16=b=64,$heads,page=16,len=16384,min_len=100,empty=0")
shapes+=("1x32768_p16=b=1,$heads,page=16,len=32768,min_len=32768,empty=0")
for page in 16 64; do
  shapes+=("1x131072_p$page=b=1,$heads,page=$page,len=131072,min_len=131072,empty=0")
done
# bench_rounds DIR DTYPE NAME=SHAPE... -- VARIANT...: each problem, rounds of whole benchmarks.
bench_rounds() {
  local dir=$1 dtype=$2 item name shape
  shift 2
  local problems=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do problems+=("$1") && shift; done
  shift
  mkdir -p "$dir"
  for item in "${problems[@]}"; do
    name=${item%%=*} shape=${item#*=}
    timeout 150 "$klab" bench "$@" --shape "$shape" --dtype "$dtype" --rounds 3 --quiet \
      --max-time "$max_time" --json "$dir/bench_$name.json" > "$dir/bench_$name.txt" 2>&1 || status=1
    grep -h "^| $fam\." "$dir/bench_$name.txt" | cut -c1-150 | sed "s/^/$name /" >> "$out/summary.txt"
  done
}

if has readat; then
  decode_read_at "$out" || status=1
fi
if has tests; then
  log "GPU tests of $rungs8 $rungs at the small awkward shapes"
  KLAB_TEST_SHAPES=small GTEST_FILTER="$filter" timeout 240 "$build/tests/klab_gpu_tests" \
    > "$out/tests.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran" "$out/tests.log" | tail -n 4 | tee -a "$out/summary.txt"
  log "klab check ${ids8[*]} ${ids[*]}"
  timeout 120 "$klab" check "${ids8[@]}" "${ids[@]}" --quiet --json "$out/check.json" \
    > "$out/check.txt" 2>&1 || status=1
  tail -n 3 "$out/check.txt" | tee -a "$out/summary.txt"
fi
for pass in $passes; do
  if has e4m3 && [ ${#ids8[@]} -gt 0 ]; then
    log "pass $pass: ${ids8[*]} beside v15, v22, v30 and v37, e4m3, from DRAM"
    bench_rounds "$out/dec/e4m3_$pass" e4m3 "${shapes[@]}" -- "${ids8[@]}" \
      "$fam.v15_fp8_stage_pairs" "$fam.v22_fp8_compact_grid" "$fam.v30_fp8_longest_first" \
      "$fam.v37_fp8_dependent_merge"
  fi
  if has bf16 && [ ${#ids[@]} -gt 0 ]; then
    log "pass $pass: ${ids[*]} beside v36, v13, v29 and cuDNN's paged SDPA, bf16, from DRAM"
    bench_rounds "$out/dec/bf16_$pass" bf16 "${shapes[@]}" -- "${ids[@]}" \
      "$fam.v36_dependent_merge" "$fam.v13_cluster_push_merge" "$fam.v29_longest_first_chunks" \
      "$fam.baseline_cudnn_paged"
  fi
done
if has stalls && [ ${#ids8[@]} -gt 0 ]; then
  shape="b=16,$heads,page=16,len=8192,min_len=8192,empty=0"
  source_stalls "$out/stalls" "${rungs8%% *}_16x8192_p16" tma_pages_kernel all "${ids8[0]}" \
    --shape "$shape" --dtype e4m3 || status=1
  source_stalls "$out/stalls" v15_16x8192_p16 tma_pages_kernel all "$fam.v15_fp8_stage_pairs" \
    --shape "$shape" --dtype e4m3 || status=1
fi
if has sanitize; then
  limit=${KLAB_SANITIZE_LIMIT:-150}
  for tool in memcheck racecheck synccheck; do
    sanitize "$tool" "$build/tests/klab_gpu_tests" "$filter" "$limit" "$rungs8 $rungs" || status=1
  done
fi
log "done (status $status)"
exit "$status"
