#!/usr/bin/env bash
# qk v08 with the next unit's loads in flight: four rounds, four blocks an SM (a, HEAD), two rounds, five blocks (b), a's traffic only (c), each beside v03 and the unfused launches; a's tests, sanitizers and profile.
set -uo pipefail
out=$OUT/r
mkdir -p "$out"
S64='tokens=64,hq=32,hkv=8,d=128,page=16,seqs=64,context=4096,skip=0,zero_rows=0,amp=1'
S4k='tokens=4096,hq=32,hkv=8,d=128,page=16,seqs=4,context=8192,skip=0,zero_rows=0,amp=1'
S16k='tokens=16384,hq=32,hkv=8,d=128,page=16,seqs=8,context=16384,skip=0,zero_rows=0,amp=1'
R="qk_norm_rope_cache.v03_hoisted qk_norm_rope_cache.v08_warp_parts qk_norm_rope_cache.baseline_unfused"
for x in a b c; do
  build=.out-$x/build
  source scripts/device_run_env.sh
  mkdir -p "$KLAB_CACHE_DIR"
  bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1)
  for bb in "$bus" "${bus:4}"; do
    key=$(echo "NVIDIA H200-$bb" | sed 's/[^A-Za-z0-9]/_/g')
    cp .out-run/ceilings.json "$KLAB_CACHE_DIR/ceilings-$key.json"
  done
  mkdir -p "$out/$x"
  log "$x: $(cat $build/git_sha.txt)"
  nvidia-smi > "$out/nvidia-smi.txt" 2>&1
  if [ $x = a ]; then
    T=$build/tests/klab_gpu_tests
    KLAB_TEST_SHAPES=awkward GTEST_FILTER='*qk_norm_rope_cache_v08*' timeout 100 "$T" --gtest_brief=1 > "$out/$x/gpu_tests.log" 2>&1
    tail -n 3 "$out/$x/gpu_tests.log" | tee -a "$out/summary.txt"
    grep -E "FAILED|Failure" "$out/$x/gpu_tests.log" | head -10 | tee -a "$out/summary.txt"
    timeout 150 "$klab" bench $R --dtype bf16 --max-time 0.3 --rounds 5 --quiet --json "$out/$x/bench_qk.json" > "$out/$x/bench_qk.txt" 2>&1 || log "bench rc=$?"
    grep -E "v0|baseline" "$out/$x/bench_qk.txt" | awk '{print $1, $2, $7, $8, $9, $10}' | tee -a "$out/summary.txt"
    timeout 60 "$klab" bench $R --shape "$S64" --dtype bf16 --max-time 0.3 --rounds 5 --quiet --json "$out/$x/bench_qk_64.json" > "$out/$x/bench_qk_64.txt" 2>&1 || log "bench64 rc=$?"
    grep -E "v0|baseline" "$out/$x/bench_qk_64.txt" | awk '{print $1, $7, $8, $9, $10}' | tee -a "$out/summary.txt"
    log "profile v08 v03 at 16384 tokens"
    for v in v08_warp_parts v03_hoisted; do
      timeout 90 "$klab" profile qk_norm_rope_cache.$v --dtype bf16 --shape "$S16k" --set all \
        --json "$out/$x/profiles_qk.json" >> "$out/$x/profile_qk.txt" 2>&1 || log "profile $v rc=$?"
    done
  else
    for sh in "$S4k" "$S16k"; do
      n=$(echo "$sh" | sed 's/tokens=\([0-9]*\).*/\1/')
      timeout 60 "$klab" bench $R --shape "$sh" --dtype bf16 --max-time 0.3 --rounds 5 --quiet --json "$out/$x/bench_qk_$n.json" > "$out/$x/bench_qk_$n.txt" 2>&1 || log "bench $n rc=$?"
      grep -E "v0|baseline" "$out/$x/bench_qk_$n.txt" | awk '{print $1, $7, $8, $9, $10}' | tee -a "$out/summary.txt"
    done
  fi
done
build=.out-a/build
source scripts/device_run_env.sh
T=$build/tests/klab_gpu_tests
mkdir -p "$out/a/san"
for tl in memcheck:90 synccheck:45 racecheck:45; do
  tool=${tl%%:*}; sanitize $tool "$T" "*qk_norm_rope_cache_v08*" ${tl#*:} "a: qk v08"; mv "$out/$tool.log" "$out/a/san/" 2>/dev/null
done
rm -rf "$out"/cache
log done
cd "$OUT" && tar czf r.tgz r && rm -rf r
