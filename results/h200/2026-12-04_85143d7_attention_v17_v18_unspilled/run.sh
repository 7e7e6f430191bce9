#!/usr/bin/env bash
# attention v17 and v18 without the hoisted epilogue offsets: GPU tests, paired benches against cuDNN beside v15 and v16 (causal 4k twice, 8k, 16k, 32k, non-causal 8k), compute-sanitizer over v17 and v18.
set -uo pipefail
out=$OUT/r
mkdir -p "$out" "$out/il"
build=.out-a/build
source scripts/device_run_env.sh
mkdir -p "$KLAB_CACHE_DIR"
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1)
for bb in "$bus" "${bus:4}"; do
  key=$(echo "NVIDIA H200-$bb" | sed 's/[^A-Za-z0-9]/_/g')
  cp .out-run/ceilings.json "$KLAB_CACHE_DIR/ceilings-$key.json"
done
T=$build/tests/klab_gpu_tests
t0=$(date +%s)
log "a: $(cat $build/git_sha.txt)"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
KLAB_TEST_SHAPES=awkward GTEST_FILTER='*/attention_v17*:*/attention_v18*' timeout 90 "$T" --gtest_brief=1 > "$out/gpu_tests.log" 2>&1
tail -n 3 "$out/gpu_tests.log" | tee -a "$out/summary.txt"
grep -E "FAILED|Failure|worst|bad" "$out/gpu_tests.log" | head -10 | tee -a "$out/summary.txt"
if grep -q "FAILED" "$out/gpu_tests.log"; then log "v17 or v18 fails its tests: no benches"; else
bench() {  # bench TAG SHAPE VARIANTS...
  local tag=$1 S=$2; shift 2
  [ $(( $(date +%s) - t0 )) -gt 300 ] && { log "$tag not run (time)"; return; }
  timeout 60 "$klab" bench "$@" --shape "$S,amp=1" --dtype bf16 --max-time 0.4 --interleave --quiet --json "$out/il/bench_attention_$tag.json" > "$out/il_$tag.txt" 2>&1 || log "bench $tag rc=$?"
  grep -E "^\| attention\.v" "$out/il_$tag.txt" | awk -F'|' -v t=$tag '{print t, $2, $5, $6, $7, $8}' | tee -a "$out/summary.txt"
}
V="attention.v15_fa3_persistent_lazy attention.v16_fa3_tma_epilogue attention.v17_fa3_persistent_tma_epilogue attention.v18_fa3_persistent_q_halves attention.baseline_cudnn"
bench n4096_d128_c1_1 "b=8,nq=4096,nkv=4096,hq=32,hkv=32,d=128,causal=1" $V
bench n8192_d128_c1_1 "b=4,nq=8192,nkv=8192,hq=32,hkv=32,d=128,causal=1" $V
bench n4096_d128_c1_2 "b=8,nq=4096,nkv=4096,hq=32,hkv=32,d=128,causal=1" $V
bench n16384_d128_c1_1 "b=2,nq=16384,nkv=16384,hq=32,hkv=32,d=128,causal=1" $V
bench n8192_d128_c0_1 "b=4,nq=8192,nkv=8192,hq=32,hkv=32,d=128,causal=0" $V
bench n32768_d128_c1_1 "b=1,nq=32768,nkv=32768,hq=32,hkv=32,d=128,causal=1" $V
fi
mkdir -p "$out/san"
for tool in memcheck synccheck racecheck; do
  left=$(( 480 - ($(date +%s) - t0) ))
  [ $left -lt 30 ] && { log "$tool not run: $left s left"; continue; }
  sanitize $tool "$T" "*/attention_v17*:*/attention_v18*" $left "v17, v18"; mv "$out/$tool.log" "$out/san/" 2>/dev/null
done
rm -rf "$out"/cache
log "done after $(( $(date +%s) - t0 )) s"
cd "$OUT" && tar czf r.tgz r && rm -rf r
