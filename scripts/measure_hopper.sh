#!/usr/bin/env bash
# The Hopper GEMM ladder (hgemm v09 onward) on an H100/H200, in steps that each fit a few minutes:
#   check     `klab check` of the wgmma rungs at hgemm's headline and awkward shapes, and of each
#             rung at shapes that reach its own main path (tile-aligned but not tile multiples,
#             K = 8, 16, 72, M = 1, N not a multiple of 64); the GPU tests of hgemm, the sampled
#             reference and the main path;
#   sanitize  compute-sanitizer memcheck (small awkward shapes), racecheck and synccheck (tiny)
#             over the hgemm GPU tests;
#   tune      `klab tune --interleave` of v19 (the weight-streaming rung v18 dispatches to at
#             M <= 128: its slab width and K split) at the grid's shapes of M <= 128, then of v18
#             (the dispatch) at every shape of the grid, 8192^3 and 6000x7000x5000: every entry
#             timed launch by launch (a one-pass tune misranked entries 1-5% apart by the power
#             state: docs/worklogs/gemm.md), the winner per shape class kept in the tune cache and
#             in OUTDIR/tuned.json (kernels/hgemm/tuned.json with the new winners; copy it back to
#             commit it), the records in tune_<m>x<n>x<k>.json (v19's: tune_v19_...); bench and
#             grid after it run v18 on those winners;
#   bench     the top rungs beside cuBLASLt at 4096^3, 8192^3, 6000x7000x5000 and Qwen3-8B's
#             projections at M = 4096 (one record file per shape: bench_<m>x<n>x<k>.json);
#   grid      Qwen3-8B's four projections (qkv 4096->6144, o 4096->4096, gate_up 4096->24576,
#             down 12288->4096) at M = 1, 16, 64, 128, 512, 2048, 4096, 16384: the prefill rungs
#             at M >= 128, the weight-streaming rungs at M <= 64, cuBLASLt at all (issue 13's
#             shape set; grid_<m>x<n>x<k>.json);
#   profile   Nsight Compute (--set all) of the top rungs at 4096^3, and at M = 16 for the
#             weight-streaming rung;
#   readat    `klab ceilings --read-at` the four projections' weight sizes (32, 48, 96 and 192
#             MiB): the read bandwidth each sustains, the bound of the weight-streaming shapes
#             (read_at.json, read_at.txt).
# Usage: scripts/measure_hopper.sh BUILD_DIR OUTDIR   (steps run in the order above)
#   BUILD_DIR as for scripts/h200.sh (e.g. .out/build after scripts/pack_for_device.sh).
#   KLAB_HOPPER_STEPS="check sanitize tune bench grid profile readat" selects steps (default: all).
#   KLAB_HOPPER_RUNGS="v17_wgmma_stream_k ..." the wgmma rungs that check and sanitize run
#   (default: v10 onward); KLAB_HOPPER_TOP="v14_wgmma_tma_store ..." the prefill rungs
#   compared in bench/grid (default below); KLAB_HOPPER_SMALL_M the weight-streaming ones.
#   KLAB_CACHE_DIR: the ceilings cache (default OUTDIR/cache). KLAB_MAX_TIME: seconds per
#   benchmark (default 0.3), split between KLAB_ROUNDS interleaved rounds (default 3: `klab bench
#   --rounds`; one pass each put power drifts between the rungs of one shape, up to 13% in
#   2026-12-02_ac8ef08's run), or, with KLAB_INTERLEAVE=1, launch by launch with paired speed-ups
#   (`klab bench --interleave`; device_run_env.sh).
set -uo pipefail
usage="usage: scripts/measure_hopper.sh BUILD_DIR OUTDIR"
build=${1:?$usage}
out=${2:?$usage}
mkdir -p "$out"
source "$(dirname "$0")/device_run_env.sh"
tests="$build/tests/klab_gpu_tests"
steps=${KLAB_HOPPER_STEPS:-check sanitize tune bench grid profile readat}
max_time=${KLAB_MAX_TIME:-0.3}
status=0
has() { [[ " $steps " == *" $1 "* ]]; }

# The registered ones among hgemm's named rungs (a rung not in the ladder, or a baseline whose
# library was not found at build time, is left out).
pick() {
  local have v
  have=$("$klab" list hgemm | awk '{print $1}')
  for v in "$@"; do grep -qx "hgemm.$v" <<< "$have" && echo "hgemm.$v"; done
}
wgmma=$(pick ${KLAB_HOPPER_RUNGS:-v10_wgmma_tma v11_wgmma_warp_specialized v12_wgmma_persistent \
  v13_wgmma_cluster_multicast v14_wgmma_tma_store v15_wgmma_cluster_tma_store v16_wgmma_split_k \
  v17_wgmma_stream_k v18_wgmma_dispatch})
# The GPU tests of those rungs (gtest names: the variant id with '_' for '.').
rung_tests=$(for v in $wgmma; do printf '*%s_*:' "${v/./_}"; done)
# v16 and v17 keep M <= 64: they refuse the shapes with more rows (klab exits 1 on a refusal).
streaming=$(pick v16_wgmma_split_k v17_wgmma_stream_k)
prefill=$(for v in $wgmma; do [[ " $streaming " != *" $v "* ]] && echo "$v"; done)
top=$(pick ${KLAB_HOPPER_TOP:-v14_wgmma_tma_store v15_wgmma_cluster_tma_store v18_wgmma_dispatch})
small=$(pick ${KLAB_HOPPER_SMALL_M:-v14_wgmma_tma_store v16_wgmma_split_k v17_wgmma_stream_k v18_wgmma_dispatch})
dispatch=$(pick v18_wgmma_dispatch)
base=$(pick baseline_cublaslt)

{
  echo "# $(basename "$out")"
  echo
  echo "- **Command**: \`scripts/measure_hopper.sh $build OUTDIR\` with steps: $steps"
  echo "- **Code**: $(cat "$build/git_sha.txt" 2>/dev/null || git rev-parse --short=12 HEAD)"
  echo "- **Started**: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- **Machine**: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null)"
} > "$out/MANIFEST.md"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv > "$out/nvidia-smi.txt" 2>&1

log "ceilings (cached in $KLAB_CACHE_DIR)"
timeout 200 "$klab" ceilings --json "$out/ceilings.json" > "$out/ceilings.txt" 2>&1 || status=1

if has check; then
  log "klab check: the wgmma rungs at hgemm's headline and awkward shapes"
  timeout 240 "$klab" check $prefill --quiet --json "$out/check.json" > "$out/check.txt" 2>&1 || status=1
  grep -ciE " fail" "$out/check.txt" | sed 's/^/failed records: /' | tee -a "$out/summary.txt"
  # Each rung's own path at shapes that are tile-aligned but not tile multiples, K = 8/16/72,
  # M = 1, N off 64; the weight-streaming rung at its split counts (1, 2, 5, 8) and ragged M/N/K.
  log "klab check: main-path shapes"
  for s in m=300,n=264,k=72 m=136,n=200,k=16 m=257,n=136,k=1032 m=128,n=8,k=4096; do
    timeout 60 "$klab" check $prefill --shape "$s" --dtype bf16 --quiet >> "$out/check_main_path.txt" 2>&1 || status=1
  done
  timeout 60 "$klab" check $wgmma --shape m=1,n=72,k=8 --dtype bf16 --quiet >> "$out/check_main_path.txt" 2>&1 || status=1
  for s in m=16,n=24576,k=4096 m=16,n=4096,k=4096 m=64,n=6144,k=4096 m=33,n=136,k=1032 m=1,n=4096,k=12288; do
    timeout 60 "$klab" check $streaming $(pick v18_wgmma_dispatch) --shape "$s" --dtype bf16 --quiet \
      >> "$out/check_main_path.txt" 2>&1 || status=1
  done
  grep -ciE " fail" "$out/check_main_path.txt" | sed 's/^/failed main-path records: /' | tee -a "$out/summary.txt"
  log "GPU tests: the rungs' own, sampled reference, main path"
  GTEST_FILTER="${rung_tests}SampledReference.*:MainPath.*" timeout 400 "$tests" --gtest_brief=1 \
    > "$out/gpu_tests.log" 2>&1 || status=1
  tail -n 3 "$out/gpu_tests.log" | tee -a "$out/summary.txt"
fi

if has sanitize; then
  for tool in memcheck racecheck synccheck; do
    sanitize $tool "$tests" "$rung_tests" 240 "the rungs' GPU tests" || status=1
  done
fi

bench() {  # PREFIX M N K RUNG...: one klab bench, records to OUTDIR/PREFIX_MxNxK.json
  local prefix=$1 m=$2 n=$3 k=$4
  shift 4
  timeout 90 "$klab" bench "$@" $base --shape "m=$m,n=$n,k=$k" --dtype bf16 --quiet \
    --max-time "$max_time" $timing_opts --json "$out/${prefix}_${m}x${n}x${k}.json" >> "$out/$prefix.txt" 2>&1 || status=1
}

grid_shapes() {  # Qwen3-8B's projections (N,K) x M, as "m n k" lines
  local proj m
  for proj in 6144,4096 4096,4096 24576,4096 4096,12288; do
    for m in 1 16 64 128 512 2048 4096 16384; do echo "$m ${proj/,/ }"; done
  done
}

if has tune && [ -n "$dispatch" ]; then
  log "tune: every entry of v18 at every grid shape, 8192^3 and the ragged shape, launch by launch; winners into tuned.json"
  cp "$(dirname "$0")/../kernels/hgemm/tuned.json" "$out/tuned.json"
  swap_ab=$(pick v19_wgmma_swap_ab)
  while read -r m n k; do  # v19 first: v18's entry "v19" runs v19's tuned entry
    [ -n "$swap_ab" ] && [ "$m" -le 128 ] || continue
    timeout 90 "$klab" tune $swap_ab --shape "m=$m,n=$n,k=$k" --dtype bf16 --quiet --interleave \
      --max-time "$max_time" --commit-to "$out/tuned.json" --json "$out/tune_v19_${m}x${n}x${k}.json" \
      >> "$out/tune.txt" 2>&1 || status=1
  done < <(grid_shapes)
  while read -r m n k; do
    timeout 90 "$klab" tune $dispatch --shape "m=$m,n=$n,k=$k" --dtype bf16 --quiet --interleave \
      --max-time "$max_time" --commit-to "$out/tuned.json" --json "$out/tune_${m}x${n}x${k}.json" \
      >> "$out/tune.txt" 2>&1 || status=1
  done < <(grid_shapes; echo "8192 8192 8192"; echo "6000 7000 5000")
fi

if has bench; then
  log "bench: v09 and the wgmma rungs beside cuBLASLt at seven shapes"
  for s in 4096,4096,4096 8192,8192,8192 6000,7000,5000 4096,6144,4096 4096,24576,4096 \
           4096,4096,12288 16,24576,4096; do
    IFS=, read -r m n k <<< "$s"
    if [ "$m" -le 64 ]; then ladder="$(pick v09_mma_tma_producer) $wgmma"
    else ladder="$(pick v09_mma_tma_producer) $prefill"; fi
    bench bench "$m" "$n" "$k" $ladder
  done
fi

if has grid; then
  log "grid: Qwen3-8B's projections at M = 1 .. 16384"
  while read -r m n k; do
    if [ "$m" -le 64 ]; then bench grid "$m" "$n" "$k" $small; else bench grid "$m" "$n" "$k" $top; fi
  done < <(grid_shapes)
fi

if has profile; then
  log "Nsight Compute of the top rungs (4096^3) and the weight-streaming rung (M = 16)"
  for v in $top; do
    timeout 90 "$klab" profile "$v" --dtype bf16 --shape m=4096,n=4096,k=4096 --set all \
      --json "$out/profiles.json" >> "$out/profile.txt" 2>&1 || true
  done
  for v in $(pick v16_wgmma_split_k v17_wgmma_stream_k); do
    timeout 90 "$klab" profile "$v" --dtype bf16 --shape m=16,n=24576,k=4096 --set all \
      --json "$out/profiles.json" >> "$out/profile.txt" 2>&1 || true
  done
fi

log "table: TFLOP/s, GB/s and the ratio to cuBLASLt of every bench and grid record"
python3 - "$out" <<'EOF' | tee -a "$out/summary.txt"
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*_*x*x*.json"))):
    for r in json.load(open(path)):
        if r["status"] != "ok":
            print(f"{r['variant']:40} {r['problem']:28} {r['status']}: {r.get('reason', '')[:60]}")
            continue
        sp = r.get("baseline", {}).get("speedup")
        ok = "pass" if r.get("check", {}).get("passed") else "FAIL"
        print(f"{r['variant']:40} {r['problem']:28} {r.get('tflops') or 0:8.1f} TFLOP/s "
              f"{r.get('gbps') or 0:6.0f} GB/s {'-' if sp is None else f'{sp:.2f}x':>6} {ok}")
EOF
if has readat; then
  log "read bandwidth at the projections' weight sizes"
  timeout 300 "$klab" ceilings --read-at 32M,48M,96M,192M --json "$out/read_at.json" \
    > "$out/read_at.txt" 2>&1 || status=1
  tail -n 6 "$out/read_at.txt" | tee -a "$out/summary.txt"
fi
log "done (status $status)"
echo "- **Finished**: $(date -u +%Y-%m-%dT%H:%M:%SZ), exit status $status" >> "$out/MANIFEST.md"
exit $status
