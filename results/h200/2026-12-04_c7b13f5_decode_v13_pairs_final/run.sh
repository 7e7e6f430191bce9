#!/usr/bin/env bash
# decode v13 with long chunks clustered in pairs only: v10's and v13's GPU tests at the awkward shapes, paired benches with v10 and cuDNN at issue 15's goal shapes and where the plan changed.
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
KLAB_TEST_SHAPES=awkward GTEST_FILTER='*/decode_attention_v10*:*/decode_attention_v13*' timeout 200 "$T" --gtest_brief=1 > "$out/gpu_tests.log" 2>&1
tail -n 3 "$out/gpu_tests.log" | tee -a "$out/summary.txt"
grep -E "FAILED|Failure" "$out/gpu_tests.log" | head -10 | tee -a "$out/summary.txt"
s() { echo "b=$1,qlen=1,hq=32,hkv=8,d=128,page=$2,len=$3,min_len=$4,empty=0"; }
mkdir -p "$out/il"
for spec in "16 16 8192 8192" "16 64 8192 8192" "16 16 4096 4096" "8 16 8192 8192" "1 16 4096 4096" "1 16 32768 32768" "1 16 131072 131072" "64 16 4096 4096" "256 16 2048 2048" "64 16 16384 100"; do
  set -- $spec
  name=bench_$(echo $spec | tr ' ' _)
  timeout 120 "$klab" bench decode_attention.v10_swap_ab decode_attention.v13_cluster_push_merge decode_attention.baseline_cudnn_paged --shape "$(s $@)" --interleave --quiet --json "$out/il/$name.json" > "$out/il/$name.txt" 2>&1 || log "bench $name rc=$?"
  log "$name"; grep -A5 "paired: median" "$out/il/$name.txt" | grep "^| decode" | awk -F'|' '{print $2, $6, $7}' | tee -a "$out/summary.txt"
  grep -E "^decode_attention" "$out/il/$name.txt" | awk '{print $1, $3, $4, $9, $NF}' | tee -a "$out/summary.txt"
done
rm -rf "$out"/cache
log done
cd "$OUT" && tar czf r.tgz r && rm -rf r
