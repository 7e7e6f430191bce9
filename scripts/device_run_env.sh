# Sourced by the scripts that run on a GPU machine (h200.sh, measure_hopper.sh,
# measure_weak_rungs.sh) after they set $build and $out: unpacks a build packed by
# scripts/pack_for_device.sh (built on one machine, run on another) where it is expected, puts the
# libraries packed beside it on the library path (the running machine may lack them) and
# PyTorch's libcudnn where the loader finds none, sets $klab, caches the measured ceilings in
# $out/cache unless the caller named a cache (an earlier run's cache skips measuring them again),
# sets $timing_opts, and defines log (a timestamped line, also in summary.txt),
# machine_and_ceilings, sanitize, bench_interleaved, paired, source_stalls and decode_read_at.
pack=$(dirname "$build")
if [ ! -x "$build/apps/klab/klab" ] && [ -f "$pack/device.txz" ]; then
  tar xJf "$pack/device.txz" -C "$pack" || exit 1
fi
klab="$build/apps/klab/klab"
[ -d "$build/../lib" ] && export LD_LIBRARY_PATH="$(cd "$build/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The cuDNN baselines (maxpool, softmax, attention) link libcudnn.so.9, too large to pack (its
# engine libraries are hundreds of MiB). Where the loader does not find it (a machine without the
# toolkit's copy), use the one PyTorch's wheels bring (nvidia-cudnn-cu13: nvidia/cudnn/lib, or
# nvidia/cu13/lib, under python3's site-packages), if there is one.
if [ -x "$klab" ] && ldd "$klab" 2>/dev/null | grep -q 'libcudnn.so.9 => not found'; then
  cudnn_lib=$(python3 -c "import glob, nvidia, os; print(next((os.path.dirname(f) for p in nvidia.__path__
    for f in sorted(glob.glob(os.path.join(p, '*', 'lib', 'libcudnn.so.9')))), ''))" 2>/dev/null || true)
  if [ -n "$cudnn_lib" ]; then
    export LD_LIBRARY_PATH="$cudnn_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  else
    echo "device_run_env: libcudnn.so.9 not found (no toolkit copy, no nvidia-cudnn wheel): klab will not start" >&2
  fi
fi
export KLAB_CACHE_DIR="${KLAB_CACHE_DIR:-$out/cache}"
# How the measuring scripts time the variants of a problem together (`klab bench`'s options):
# KLAB_INTERLEAVE=1 launch by launch with paired speed-ups over the baseline (--interleave),
# otherwise KLAB_ROUNDS interleaved rounds of whole benchmarks (default 3, --rounds).
if [ "${KLAB_INTERLEAVE:-0}" = 1 ]; then
  timing_opts="--interleave"
else
  timing_opts="--rounds ${KLAB_ROUNDS:-3}"
fi
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$out/summary.txt"; }
# machine_and_ceilings: the GPU's name, driver, clocks, temperature and power into
# $out/nvidia-smi.txt, then the measured ceilings (cached in $KLAB_CACHE_DIR) into
# $out/ceilings.json; returns non-zero when the ceilings fail.
machine_and_ceilings() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv > "$out/nvidia-smi.txt" 2>&1
  log "ceilings (cached in $KLAB_CACHE_DIR)"
  timeout 300 "$klab" ceilings --json "$out/ceilings.json" > "$out/ceilings.txt" 2>&1
}
# sanitize TOOL TESTS FILTER LIMIT WHAT: compute-sanitizer TOOL over the gtest binary TESTS
# (tests matching FILTER) at the small awkward shapes for memcheck, the tiny ones for the slower
# race and sync checks, within LIMIT seconds; the log in $out/TOOL.log, its verdict in
# summary.txt. Returns non-zero on a finding, a failed test or the limit.
sanitize() {
  local tool=$1 tests=$2 filter=$3 limit=$4 what=$5 shapes=small rc=0
  [ "$tool" != memcheck ] && shapes=tiny
  log "compute-sanitizer $tool over $what ($shapes awkward shapes)"
  KLAB_TEST_SHAPES=$shapes GTEST_FILTER="$filter" timeout "$limit" compute-sanitizer --tool "$tool" \
    --error-exitcode 9 --print-limit 20 "$tests" --gtest_brief=1 > "$out/$tool.log" 2>&1 || rc=1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/$tool.log" | tail -n 3 | tee -a "$out/summary.txt"
  return $rc
}
# bench_interleaved NAME DTYPE SHAPE VARIANT...: one `klab bench` launch by launch (--interleave)
# within 150 s, each KLAB_MAX_TIME seconds (default 0.3), into $out/bench_NAME.json and .txt;
# returns non-zero when it fails.
bench_interleaved() {
  local name=$1 dtype=$2 shape=$3
  shift 3
  log "klab bench $name ($dtype, $shape)"
  timeout 150 "$klab" bench "$@" --shape "$shape" --dtype "$dtype" --interleave --quiet \
    --max-time "${KLAB_MAX_TIME:-0.3}" --json "$out/bench_$name.json" > "$out/bench_$name.txt" 2>&1
}
# paired FILE: the paired speed-ups of a bench's text output (klab bench --interleave), into
# summary.txt.
paired() { grep -h "paired" -A8 "$1" | grep "^| [a-z_]*\." | cut -c1-170 | tee -a "$out/summary.txt"; }
# source_stalls DIR NAME KERNEL_REGEX CACHE VARIANT BENCH_ARGS...: three launches of the kernels
# matching KERNEL_REGEX under `klab bench VARIANT BENCH_ARGS` (the first five skipped: the check's
# and the warm-up's) through Nsight Compute's source counters, warp states, occupancy and
# scheduler sections, --cache-control CACHE (all: L2 flushed before each; none: with --hot, the
# data left in L2), the clocks left alone: DIR/NAME_details.txt (--page details) and
# DIR/NAME_source.csv.xz (the SASS source page that scripts/ncu_source_stalls.py tables). klab may
# refuse to time a launch that the profiler serialises; the profiled launches are in the report
# all the same, so only a missing report fails.
source_stalls() {
  local dir=$1 name=$2 kernels=$3 cache=$4
  shift 4
  mkdir -p "$dir"
  log "Nsight source counters: $name"
  timeout 150 ncu --clock-control none --cache-control "$cache" --kernel-name "regex:$kernels" \
    --launch-skip 5 --launch-count 3 --section SourceCounters --section WarpStateStats \
    --section LaunchStats --section Occupancy --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section SchedulerStats -o "$dir/$name" -f "$klab" bench "$@" --max-time 0.05 \
    > "$dir/${name}_ncu.txt" 2>&1
  [ -f "$dir/$name.ncu-rep" ] || { echo "source_stalls: no report for $name" | tee -a "$out/summary.txt"; return 1; }
  ncu -i "$dir/$name.ncu-rep" --page source --csv --print-source sass | xz -6 > "$dir/${name}_source.csv.xz"
  ncu -i "$dir/$name.ncu-rep" --page details > "$dir/${name}_details.txt"
  rm -f "$dir/$name.ncu-rep"
}
# decode_read_at DIR: `klab ceilings --read-at` over the KV bytes of Qwen3-8B's decode at B = 1
# with 4k, 32k and 128k keys (bf16: 16, 128 and 512 MiB; e4m3: 8, 64 and 256 MiB), what the read
# kernel itself sustains over exactly those bytes: DIR/read_at.json and .txt, its table into
# summary.txt; returns non-zero when the measurement fails.
decode_read_at() {
  local dir=$1 rc=0
  log "the read kernel over B = 1's KV bytes"
  timeout 120 "$klab" ceilings --read-at 8M,16M,64M,128M,256M,512M --json "$dir/read_at.json" \
    > "$dir/read_at.txt" 2>&1 || rc=1
  tail -n 7 "$dir/read_at.txt" | tee -a "$out/summary.txt"
  return $rc
}
