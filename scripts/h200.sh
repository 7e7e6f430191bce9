#!/usr/bin/env bash
# The GPU side, in one run on an H100/H200: GPU tests, compute-sanitizer (memcheck, racecheck),
# ceilings, tuning, benchmarks (twice, to measure run-to-run agreement), sweeps, occupancy/SASS/
# Nsight Compute summaries and the CPU scaling study. Writes one run folder: OUTDIR/MANIFEST.md
# (the command, its selections, the commit, the date, the GPU), summary.txt (the console summary)
# and the logs and result JSONs of each step. Usage: scripts/h200.sh OUTDIR [BUILD_DIR]
#   Name OUTDIR by date, commit and purpose, as results/h200/ does:
#   scripts/h200.sh results/h200/$(date -u +%F)_$(git rev-parse --short=7 HEAD)_gemm build
#   KLAB_H200_STEPS="tests sanitize doctor ceilings tune bench repeat sweep inspect scaling" selects steps (default: all).
#   KLAB_FAMILIES="transpose softmax" limits `bench` to these families (default: every family).
#   KLAB_RUN_DEVICE=gpu leaves the CPU rungs out of `bench` (they take minutes at headline shapes).
#   KLAB_TEST_GROUPS="*transpose* *sgemm*" limits `tests` to these gtest filters.
#   KLAB_TUNE="sgemm.v10_autotuned transpose.v06_tma_pipeline@bf16" selects what `tune` tunes.
#   KLAB_STEP_TIMEOUT (seconds, default 420) bounds bench and tune, so their JSON survives.
#   KLAB_CACHE_DIR: where the measured ceilings are cached (default OUTDIR/cache).
#   KLAB_INSPECT="sgemm.v09_warptile@f32 ..." (or "all": every GPU rung of KLAB_FAMILIES) selects
#   what `inspect` profiles; KLAB_PROFILE_TIMEOUT (default 60) bounds each profile.
#   Both the Nsight Compute and the SASS records go to profiles.json (`klab profile-report`).
set -uo pipefail
out=${1:?usage: scripts/h200.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
steps=${KLAB_H200_STEPS:-tests sanitize doctor ceilings tune bench repeat sweep inspect scaling}
mkdir -p "$out"
source "$(dirname "$0")/device_run_env.sh"
gpu_tests="$build/tests/klab_gpu_tests"
has() { [[ " $steps " == *" $1 "* ]]; }
status=0

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$out/nvidia-smi.txt" 2>&1

# The manifest: what ran, from which code, when, on what. The commit is the one
# scripts/pack_for_device.sh recorded with a packed build, else the source checkout's (`-dirty`:
# uncommitted changes);
# the result records carry the sha the binaries were built from as well.
repo=$(cd "$(dirname "$0")/.." && pwd)
# A packed build names its own commit (recorded when it was packed): the checkout beside it may
# carry older git metadata than its files.
sha=$(cat "$build/git_sha.txt" 2>/dev/null || git -C "$repo" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
{
  echo "# $(basename "$out")"
  echo
  printf -- '- **Command**: `%s`' "scripts/h200.sh $*"
  sel=$(env | grep -E '^(KLAB_|GTEST_FILTER=)' | grep -v '^KLAB_CACHE_DIR=' | sort | sed 's/^/`/; s/$/`/' | paste -sd ' ' -)
  echo "${sel:+ with $sel}"
  echo "- **Steps**: $steps"
  echo "- **Code**: $sha"
  echo "- **Started**: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- **Machine**: $(hostname 2>/dev/null); nvidia-smi (name, driver, SM clock, max SM clock, temperature, power): \`$(sed -n 2p "$out/nvidia-smi.txt")\`"
  echo "- **Files**: \`summary.txt\` (the console summary, step by step) and each step's logs and JSONs"
} > "$out/MANIFEST.md"

if has tests; then
  # One family group per call of the test binary, each with its own time limit, so that one slow
  # or hung group cannot take the rest of the run with it.
  set -f  # the groups are gtest patterns, not file globs
  # The tunable rungs' configurations (TunableConfig, ~2400 cases) are a group of their own: the
  # family groups leave them out.
  for group in ${KLAB_TEST_GROUPS:-*vector_add*:*saxpy*:*relu*:*grayscale* *maxpool* *transpose* *reduce_sum*:*softmax* *sgemm* *hgemm* */attention_v*:*/attention_baseline* */decode_attention_* *add_rmsnorm_quant*:*qk_norm_rope_cache* *attention_block* SampledReference.*:MainPath.* *TunableConfig*}; do
    filter=$group
    case "$group" in
      *TunableConfig*) ;;
      *-*) filter="$group:*TunableConfig*" ;;  # a negative part already: one more pattern in it
      *) filter="$group-*TunableConfig*" ;;
    esac
    log "GPU tests $filter (headline: normal inputs; awkward: three distributions)"
    GTEST_FILTER="$filter" timeout ${KLAB_TEST_TIMEOUT:-300} "$gpu_tests" --gtest_brief=1 >> "$out/gpu_tests.log" 2>&1 || status=1
    tail -n 3 "$out/gpu_tests.log" | tee -a "$out/summary.txt"
  done
  set +f
fi

if has sanitize; then
  # KLAB_SANITIZE_FILTER: a gtest filter (default: every test but the tunable rungs' configurations)
  for tool in memcheck racecheck; do
    shapes=small; [ $tool = racecheck ] && shapes=tiny
    log "compute-sanitizer $tool over the GPU tests (KLAB_TEST_SHAPES=$shapes awkward shapes)"
    KLAB_TEST_SHAPES=$shapes timeout ${KLAB_SANITIZE_TIMEOUT:-240} compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 \
      "$gpu_tests" --gtest_brief=1 --gtest_filter="${KLAB_SANITIZE_FILTER:--*TunableConfig*}" \
      > "$out/sanitizer_$tool.log" 2>&1 || status=1
    grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/sanitizer_$tool.log" | tail -n 3 | tee -a "$out/summary.txt"
  done
fi

if has doctor; then
  # klab doctor on every sabotaged rung (each names its planted fault), then the tests that say so.
  for v in $("$klab" list sabotage 2>/dev/null | grep -o 'sabotage\.v[0-9][0-9]_[a-z0-9_]*' | sort -u); do
    log "klab doctor $v"
    timeout ${KLAB_DOCTOR_TIMEOUT:-180} "$klab" doctor "$v" > "$out/doctor_$v.txt" 2>&1
    echo "exit $?" >> "$out/doctor_$v.txt"
    grep -E "^(race|misaligned|nan|slow|uninit|sync|error|diagnosis)" "$out/doctor_$v.txt" | head -n 5 | tee -a "$out/summary.txt"
  done
  log "GPU tests of the diagnosis"
  timeout ${KLAB_TEST_TIMEOUT:-300} "$build/tests/klab_doctor_gpu_tests" --gtest_brief=1 > "$out/doctor_tests.log" 2>&1 || status=1
  tail -n 3 "$out/doctor_tests.log" | tee -a "$out/summary.txt"
fi

if has ceilings; then
  log "ceilings"
  # cuBLASLt's own error log says why an algorithm it offered refused to run (the fp8 probe).
  CUBLASLT_LOG_LEVEL=1 CUBLASLT_LOG_FILE="$out/cublaslt_errors.log" \
    "$klab" ceilings --remeasure --json "$out/ceilings.json" 2>&1 | tee -a "$out/summary.txt"
fi

if has tune; then
  # KLAB_TUNE: tunable variants, each optionally @dtype and @shape (default: the family's first
  # headline shape). Winners go to the tune cache (used by the bench below) and to
  # tuned_<variant>.json in OUTDIR (a committable table).
  for spec in ${KLAB_TUNE:-sgemm.v10_autotuned}; do
    IFS=@ read -r v dt shp <<< "$spec"
    log "klab tune $v ${dt:+--dtype $dt} ${shp:+--shape $shp}"
    timeout ${KLAB_STEP_TIMEOUT:-420} "$klab" tune "$v" ${dt:+--dtype "$dt"} ${shp:+--shape "$shp"} --quiet --max-time 0.5 \
      --commit-to "$out/tuned_$v.json" >> "$out/tune.txt" 2>&1 || status=1
    grep -E "^ +[0-9]+ |winner" "$out/tune.txt" | tail -n 20 | tee -a "$out/summary.txt"
  done
fi

if has bench; then
  log "klab run (every family, headline shapes)"
  timeout ${KLAB_STEP_TIMEOUT:-420} "$klab" run ${KLAB_FAMILIES:-} --device ${KLAB_RUN_DEVICE:-all} --quiet --max-time ${KLAB_MAX_TIME:-1} --json "$out/run.json" > "$out/run.txt" 2>&1 || status=1
  cat "$out/run.txt" >> "$out/summary.txt"
fi

if has repeat; then
  log "repeat: vector_add and saxpy benchmarked again; medians compared with the first run"
  "$klab" bench vector_add saxpy --quiet --max-time ${KLAB_MAX_TIME:-1} --json "$out/run_repeat.json" > "$out/run_repeat.txt" 2>&1 || status=1
  "$klab" report "$out/run.json" --compare "$out/run_repeat.json" --max-delta 2 2>&1 | tail -n 30 | tee -a "$out/summary.txt" || status=1
fi

if has sweep; then
  log "block-size sweeps"
  for v in vector_add.v02_grid_stride vector_add.v03_vectorized; do
    "$klab" sweep "$v" --quiet --json "$out/sweep_$v.json" 2>&1 | tee -a "$out/summary.txt" || status=1
  done
fi

if has inspect; then
  # KLAB_INSPECT: variants, each optionally @dtype and @shape (default: the family's first
  # headline shape). Occupancy and SASS to inspect.txt, Nsight Compute summaries to profile.txt
  # and their records to profiles.json (for `klab profile-report`, scripts/update_docs.sh).
  log "occupancy, SASS and Nsight Compute summaries of selected rungs"
  specs=${KLAB_INSPECT:-vector_add.v03_vectorized transpose.v06_tma_pipeline softmax.v04_registers sgemm.v10_autotuned hgemm.v05_mma_tuned}
  if [ "$specs" = all ]; then  # every GPU rung and baseline of KLAB_FAMILIES (default: the worklogs')
    specs=""
    for f in ${KLAB_FAMILIES:-transpose softmax reduce_sum sgemm hgemm}; do
      specs+=" $("$klab" list "$f" 2>/dev/null | awk '$2 == "gpu" {print $1}' | tr '\n' ' ')"
    done
  fi
  for spec in $specs; do
    IFS=@ read -r v dt shp <<< "$spec"
    sel=(${dt:+--dtype "$dt"} ${shp:+--shape "$shp"})
    { echo "### $spec"; "$klab" occupancy "$v" "${sel[@]}"
      "$klab" sass "$v" "${sel[@]}" --json "$out/profiles.json"; } >> "$out/inspect.txt" 2>&1 || true
    { echo "### $spec"; timeout ${KLAB_PROFILE_TIMEOUT:-60} "$klab" profile "$v" "${sel[@]}" --set all \
        --json "$out/profiles.json"; } >> "$out/profile.txt" 2>&1 || true
  done
fi

if has scaling; then
  # The CPU ladder's threads+SIMD rungs at 1..N threads on this host.
  log "CPU scaling study"
  for spec in vector_add.cpu05_threads_simd reduce_sum.cpu05_threads_simd sgemm.cpu05_threads_simd@m=2048,n=2048,k=2048; do
    IFS=@ read -r v shp <<< "$spec"
    timeout 120 "$klab" scaling "$v" ${shp:+--shape "$shp"} --quiet --max-time 2 --json "$out/scaling_$v.json" \
      >> "$out/scaling.txt" 2>&1 || status=1
  done
  tail -n 20 "$out/scaling.txt" | tee -a "$out/summary.txt"
fi

log "done (status $status)"
echo "- **Finished**: $(date -u +%Y-%m-%dT%H:%M:%SZ), exit status $status" >> "$out/MANIFEST.md"
exit $status
