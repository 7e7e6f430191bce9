#!/usr/bin/env bash
# decode v13 clustering long chunks with the counter plan's splits ((16, 8k)): GPU tests, sanitizers, paired benches with v10 and cuDNN where the plan changed, timelines of v13 and v10 at (16, 8k).
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
KLAB_TEST_SHAPES=awkward GTEST_FILTER='*/decode_attention_v1[03]*' timeout 150 "$T" --gtest_brief=1 > "$out/gpu_tests.log" 2>&1
tail -n 3 "$out/gpu_tests.log" | tee -a "$out/summary.txt"
grep -E "FAILED|Failure" "$out/gpu_tests.log" | head -10 | tee -a "$out/summary.txt"
s() { echo "b=$1,qlen=1,hq=32,hkv=8,d=128,page=$2,len=$3,min_len=$4,empty=0"; }
mkdir -p "$out/il" "$out/tl"
for spec in "16 16 8192 8192" "16 64 8192 8192" "16 16 8192 8192" "16 64 8192 8192" "8 16 8192 8192" "16 16 4096 4096" "4 16 16384 16384"; do
  set -- $spec
  name=bench_$(echo $spec | tr ' ' _)
  [ -f "$out/il/$name.json" ] && name=${name}_second
  timeout 120 "$klab" bench decode_attention.v10_swap_ab decode_attention.v13_cluster_push_merge decode_attention.baseline_cudnn_paged --shape "$(s $@)" --interleave --quiet --json "$out/il/$name.json" > "$out/il/$name.txt" 2>&1 || log "bench $name rc=$?"
  log "$name"; grep -A5 "paired: median" "$out/il/$name.txt" | grep "^| decode" | awk -F'|' '{print $2, $6, $7}' | tee -a "$out/summary.txt"
  grep -E "^decode_attention" "$out/il/$name.txt" | awk '{print $1, $3, $4, $9, $NF}' | tee -a "$out/summary.txt"
done
for v in v13_cluster_push_merge v11_cluster_merge; do
  name=tl_${v%%_*}_16_16_8192
  timeout 60 "$klab" timeline decode_attention.$v --shape "$(s 16 16 8192 8192)" --launches 30 --json "$out/tl/$name.json" > "$out/tl/$name.md" 2>"$out/tl/$name.err" || log "$name rc=$?"
  log "$name"; tail -n 16 "$out/tl/$name.md" | head -14 | tee -a "$out/summary.txt"
done
mkdir -p "$out/san"
for tl in memcheck:120 synccheck:90 racecheck:120; do
  tool=${tl%%:*}; sanitize $tool "$T" "*/decode_attention_v13*" ${tl#*:} "v13"; mv "$out/$tool.log" "$out/san/" 2>/dev/null
done
rm -rf "$out"/cache
log done
cd "$OUT" && tar czf r.tgz r && rm -rf r
