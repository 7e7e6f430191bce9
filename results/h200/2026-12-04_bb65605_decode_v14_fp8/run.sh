#!/usr/bin/env bash
# decode v14 (v13's push merge on e4m3): GPU tests at the awkward shapes, sanitizers, e4m3 benches of v09, v12, v14 beside bf16 benches of v10, v13 and cuDNN at issue 15's goal shapes.
set -uo pipefail
out=$OUT/r
mkdir -p "$out"
build=.out-a/build
source scripts/device_run_env.sh
mkdir -p "$KLAB_CACHE_DIR"
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1)
for bb in "$bus" "${bus:4}"; do
  key=$(echo "NVIDIA H200-$bb" | sed 's/[^A-Za-z0-9]/_/g')
  cp .out-run/ceilings.json "$KLAB_CACHE_DIR/ceilings-$key.json"
done
log "a: $(cat $build/git_sha.txt)"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
T=$build/tests/klab_gpu_tests
KLAB_TEST_SHAPES=awkward GTEST_FILTER='*/decode_attention_v14*' timeout 150 "$T" --gtest_brief=1 > "$out/gpu_tests.log" 2>&1
tail -n 3 "$out/gpu_tests.log" | tee -a "$out/summary.txt"
grep -E "FAILED|Failure" "$out/gpu_tests.log" | head -10 | tee -a "$out/summary.txt"
s() { echo "b=$1,qlen=1,hq=32,hkv=8,d=128,page=$2,len=$3,min_len=$4,empty=0"; }
mkdir -p "$out/bf16" "$out/e4m3"
if ! grep -q FAILED "$out/gpu_tests.log"; then
for spec in "1 16 4096 4096" "1 16 16384 16384" "16 16 8192 8192" "16 64 8192 8192" "1 16 32768 32768" "1 16 131072 131072" "64 16 4096 4096" "256 16 2048 2048" "64 16 16384 100"; do
  set -- $spec
  name=bench_$(echo $spec | tr ' ' _)
  timeout 100 "$klab" bench decode_attention.v09_fp8_swap_ab decode_attention.v12_fp8_cluster_merge decode_attention.v14_fp8_cluster_push_merge --shape "$(s $@)" --dtype e4m3 --rounds 3 --max-time 0.3 --quiet --json "$out/e4m3/$name.json" > "$out/e4m3/$name.txt" 2>&1 || log "e4m3 $name rc=$?"
  timeout 100 "$klab" bench decode_attention.v10_swap_ab decode_attention.v13_cluster_push_merge decode_attention.baseline_cudnn_paged --shape "$(s $@)" --interleave --quiet --json "$out/bf16/$name.json" > "$out/bf16/$name.txt" 2>&1 || log "bf16 $name rc=$?"
  log "$name"
  grep -E "^decode_attention" "$out/e4m3/$name.txt" | awk '{print $1, $3, $4, $NF}' | tee -a "$out/summary.txt"
  grep -E "^decode_attention" "$out/bf16/$name.txt" | awk '{print $1, $3, $4, $NF}' | tee -a "$out/summary.txt"
done
fi
mkdir -p "$out/san"
for tl in memcheck:120 synccheck:60 racecheck:90; do
  tool=${tl%%:*}; sanitize $tool "$T" "*/decode_attention_v14*" ${tl#*:} "v14"; mv "$out/$tool.log" "$out/san/" 2>/dev/null
done
rm -rf "$out"/cache
log done
cd "$OUT" && tar czf r.tgz r && rm -rf r
