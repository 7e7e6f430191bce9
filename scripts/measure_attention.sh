#!/usr/bin/env bash
# The attention and decode_attention ladders on an H100/H200, in steps that each fit a few
# minutes:
#   check     the GPU tests of both families at every awkward shape (three input distributions)
#             and `klab check` of the GPU rungs at each headline shape, one call per shape;
#   sanitize  compute-sanitizer memcheck (small awkward shapes), racecheck and synccheck (tiny)
#             over both families' GPU tests;
#   bench     the GPU rungs (baselines included where registered) at each family's headline
#             shapes, in interleaved rounds: one `klab bench --rounds` call and one record file
#             per family (bench_<family>.json, rewritten after every shape);
#   torch     PyTorch's SDPA (flash and cuDNN back ends) at the problems of bench_attention.json,
#             timed by scripts/torch_sdpa.py the same way (cold L2), into torch_sdpa.json: klab
#             records, so `klab report` shows them beside the rungs (needs python3 with torch);
#             and, where FlashInfer is installed (flashinfer-python 0.6.18), its paged decode at
#             the problems of bench_decode_attention.json by scripts/flashinfer_decode.py, into
#             flashinfer_decode.json (`klab report --against decode_attention.flashinfer_paged`
#             tables the rungs against it);
#   memory    assignment 5's table: `klab memory` of every GPU rung of attention and cuDNN at
#             causal B = 1, Hq = Hkv = 32, D = 128, bf16, N = 1k to 64k (one allocation, prepare
#             and synchronised run each, no timing; v01 is refused where its scores do not fit;
#             v02, on CUDA cores, apart: 28 TFLOP/s, ~1.3 s a causal launch at 64k), into
#             memory_attention.json and memory_attention_v02.json. Not a default step: ~25 s on
#             an H100 for every rung but v02 (2026-12-07_7940f11_attention_close_out)
#             (KLAB_ATTN_MEMORY_LIMIT: seconds, default 400; KLAB_ATTN_MEMORY_RUNGS: an extended
#             regex of the rungs, default every GPU rung).
# Usage: scripts/measure_attention.sh BUILD_DIR OUTDIR   (steps run in the order above)
#   BUILD_DIR as for scripts/h200.sh (e.g. .out/build after scripts/pack_for_device.sh).
#   KLAB_ATTN_STEPS="check sanitize bench torch" selects steps (default: those four; add memory
#   for the memory table). KLAB_ATTN_RUNGS: the
#   rungs to bench, separated by spaces or lines (default: every GPU rung of both families but
#   attention's v01, which needs B*H*N^2*4 bytes, and v02 on CUDA cores, 39-78 ms a launch at the
#   first two headline shapes in 2026-12-02_de53735's run, seconds at N = 32k). KLAB_MAX_TIME:
#   seconds per benchmark (default 0.3), split between KLAB_ROUNDS interleaved rounds (default
#   3), or, with KLAB_INTERLEAVE=1, the variants timed launch by launch with paired speed-ups
#   (`klab bench --interleave`; device_run_env.sh); KLAB_ATTN_BENCH_LIMIT: seconds per family's bench call (default 420); a headline problem
#   of attention takes ~50 s of host time for three rungs (6fda6f1's run). KLAB_CACHE_DIR: the
#   ceilings cache.
set -uo pipefail
usage="usage: scripts/measure_attention.sh BUILD_DIR OUTDIR"
build=${1:?$usage}
out=${2:?$usage}
mkdir -p "$out"
source "$(dirname "$0")/device_run_env.sh"
tests="$build/tests/klab_gpu_tests"
steps=${KLAB_ATTN_STEPS:-check sanitize bench torch}
max_time=${KLAB_MAX_TIME:-0.3}
status=0
has() { [[ " $steps " == *" $1 "* ]]; }

# The GPU rungs (and baselines) of a family, as klab lists them.
gpu_rungs() { "$klab" list "$1" | awk '$2 == "gpu" {print $1}'; }
# One rung a line (KLAB_ATTN_RUNGS may separate them by spaces).
rungs=$(tr ' ' '\n' <<< "${KLAB_ATTN_RUNGS:-$( (gpu_rungs attention; gpu_rungs decode_attention) |
  grep -vE '^attention\.(v01_materialised|v02_tiled_online_softmax)$')}" | grep -v '^$')
{
  echo "# $(basename "$out")"
  echo
  echo "- **Command**: \`scripts/measure_attention.sh $build OUTDIR\` with steps: $steps"
  echo "- **Code**: $(cat "$build/git_sha.txt" 2>/dev/null || git rev-parse --short=12 HEAD)"
  echo "- **Started**: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- **Machine**: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null)"
} > "$out/MANIFEST.md"

log "ceilings (cached in $KLAB_CACHE_DIR)"
timeout 200 "$klab" ceilings --json "$out/ceilings.json" > "$out/ceilings.txt" 2>&1 || status=1

if has check; then
  log "GPU tests of attention and decode_attention at every awkward shape"
  KLAB_TEST_SHAPES=awkward GTEST_FILTER='*attention_*' timeout 300 "$tests" --gtest_brief=1 \
    > "$out/gpu_tests.log" 2>&1 || status=1
  tail -n 3 "$out/gpu_tests.log" | tee -a "$out/summary.txt"
fi

if has sanitize; then
  for tool in memcheck racecheck synccheck; do
    sanitize $tool "$tests" '*attention_*' 400 "both families' GPU tests" || status=1
  done
fi

if has bench; then
  for family in attention decode_attention; do
    mine=$(grep "^$family\." <<< "$rungs" | tr '\n' ' ')
    [ -z "$mine" ] && continue
    # One call over the family's headline shapes (a rung that cannot run one is recorded as
    # skipped there); klab rewrites the record file after every shape, so a call stopped by its
    # time limit keeps each shape it finished.
    log "bench: $family ($mine) at its headline shapes ($timing_opts)"
    timeout "${KLAB_ATTN_BENCH_LIMIT:-420}" "$klab" bench $mine --quiet --max-time "$max_time" \
      $timing_opts --json "$out/bench_$family.json" > "$out/bench_$family.txt" 2>&1 || status=1
    tail -n 40 "$out/bench_$family.txt" | tee -a "$out/summary.txt"
  done
fi
if has torch && [ -f "$out/bench_attention.json" ]; then
  log "PyTorch SDPA at bench_attention.json's problems"
  timeout "${KLAB_ATTN_BENCH_LIMIT:-420}" python3 "$(dirname "$0")/torch_sdpa.py" "$out/bench_attention.json" \
    "$out/torch_sdpa.json" --max-time "$max_time" > "$out/torch_sdpa.txt" 2>&1 || status=1
  tail -n 30 "$out/torch_sdpa.txt" | tee -a "$out/summary.txt"
fi
if has torch && [ -f "$out/bench_decode_attention.json" ] && python3 -c "import flashinfer" 2>/dev/null; then
  log "FlashInfer's paged decode at bench_decode_attention.json's problems"
  timeout "${KLAB_ATTN_BENCH_LIMIT:-420}" python3 "$(dirname "$0")/flashinfer_decode.py" \
    "$out/bench_decode_attention.json" "$out/flashinfer_decode.json" --max-time "$max_time" \
    > "$out/flashinfer_decode.txt" 2>&1 || status=1
  tail -n 30 "$out/flashinfer_decode.txt" | tee -a "$out/summary.txt"
fi
if has memory; then
  # The rungs as klab lists them (cuDNN's only where it was built), one --shape per N.
  mem_re=${KLAB_ATTN_MEMORY_RUNGS:-'^attention\.'}
  selected=$(gpu_rungs attention | grep -E "$mem_re")
  mem_rungs=$(grep -v '^attention\.v02_' <<< "$selected" | tr '\n' ' ')
  v02=$(grep '^attention\.v02_' <<< "$selected")
  shapes=()
  for n in 1024 2048 4096 8192 16384 32768 65536; do
    shapes+=(--shape "b=1,nq=$n,nkv=$n,hq=32,hkv=32,d=128,causal=1")
  done
  if [ -n "${mem_rungs// /}" ]; then
    log "memory: $mem_rungs at causal N = 1k..64k"
    timeout "${KLAB_ATTN_MEMORY_LIMIT:-400}" "$klab" memory $mem_rungs "${shapes[@]}" --dtype bf16 \
      --quiet --json "$out/memory_attention.json" > "$out/memory_attention.txt" 2>&1 || status=1
    tail -n 50 "$out/memory_attention.txt" | tee -a "$out/summary.txt"
  fi
  if [ -n "$v02" ]; then
    log "memory: $v02 (CUDA cores) at causal N = 1k..64k"
    timeout 200 "$klab" memory "$v02" "${shapes[@]}" \
      --dtype bf16 --quiet --json "$out/memory_attention_v02.json" \
      > "$out/memory_attention_v02.txt" 2>&1 || status=1
    tail -n 10 "$out/memory_attention_v02.txt" | tee -a "$out/summary.txt"
  fi
fi
log "done (status $status)"
echo "- **Finished**: $(date -u +%Y-%m-%dT%H:%M:%SZ), exit status $status" >> "$out/MANIFEST.md"
exit $status
