#!/usr/bin/env bash
# Nsight Compute of attention v15, v16, v17 and v18 at causal 4k (D = 128, H = 32, B = 8): where v17 and v18 lose what v15 and v16 each gained.
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
C4="b=8,nq=4096,nkv=4096,hq=32,hkv=32,d=128,causal=1,amp=1"
timeout 300 "$klab" profile attention.v15_fa3_persistent_lazy attention.v16_fa3_tma_epilogue attention.v17_fa3_persistent_tma_epilogue attention.v18_fa3_persistent_q_halves --shape "$C4" --dtype bf16 --set all --json "$out/profiles_4k.json" > "$out/profile_4k.txt" 2>&1 || log "profile rc=$?"
tail -n 5 "$out/profile_4k.txt" | tee -a "$out/summary.txt"
rm -rf "$out"/cache
log done
cd "$OUT" && tar czf r.tgz r && rm -rf r
