#!/usr/bin/env bash
# The short-row softmax, bf16 max-pool and grayscale rungs (softmax.v05_warp_rows,
# maxpool.v03_vector_rows, grayscale.v06_gray_bulk_sm90) on the GPU, in one short call (< 3 min):
#   1. `klab check` of the three new rungs at their family's headline + awkward shapes;
#   2. `klab bench` of each new rung beside the rung below it and the vendor baseline at the
#      shapes of its goal (softmax: 2^22 x 64, 2^21 x 128, 2^20 x 255, f32 and bf16; maxpool:
#      its bf16 headline shapes, 2x2/2 and 3x3/2/1 on 64 x 64 x 224^2; grayscale: its headline,
#      2^25 pixels), one JSON per klab call in OUTDIR (bench_*.json);
#   3. a short table: GB/s, % of the family's measured ceiling (named), speed-up over the baseline.
# Usage: scripts/measure_weak_rungs.sh BUILD_DIR OUTDIR
#   BUILD_DIR as for scripts/h200.sh (e.g. .out/build after scripts/pack_for_device.sh).
#   KLAB_CACHE_DIR: the ceilings cache (default OUTDIR/cache; an earlier run's cache, e.g. the
#   OUTDIR/cache of scripts/h200.sh, skips measuring them again: the < 3 minutes assume it).
#   KLAB_MAX_TIME: seconds per benchmark (default 0.5), split between KLAB_ROUNDS interleaved
#   rounds (default 3). KLAB_SOFTMAX_RUNGS: the softmax rungs at the short-row shapes (default
#   v04_registers v05_warp_rows v06_vector_spans; those not registered are left out).
set -uo pipefail
usage="usage: scripts/measure_weak_rungs.sh BUILD_DIR OUTDIR"
build=${1:?$usage}
out=${2:?$usage}
mkdir -p "$out"
source "$(dirname "$0")/device_run_env.sh"
max_time=${KLAB_MAX_TIME:-0.5}
status=0

# The registered ones among FAMILY's named rungs (a baseline is absent when its library was not
# found at build time).
pick() {
  local fam=$1 have v
  shift
  have=$("$klab" list "$fam" | awk '{print $1}')
  for v in "$@"; do grep -qx "$fam.$v" <<< "$have" && echo "$fam.$v"; done
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv > "$out/nvidia-smi.txt" 2>&1

# Measured once per device and cached; every bench below needs them (uncached, each would measure
# them again), so this step may take longer than the rest when the cache is cold.
log "ceilings (cached in $KLAB_CACHE_DIR)"
timeout 300 "$klab" ceilings --json "$out/ceilings.json" > "$out/ceilings.txt" 2>&1 || status=1

log "klab check: the new rungs at headline + awkward shapes"
timeout 150 "$klab" check $(pick softmax v05_warp_rows v06_vector_spans) maxpool.v03_vector_rows \
  grayscale.v06_gray_bulk_sm90 --quiet --json "$out/check.json" > "$out/check.txt" 2>&1 || status=1
python3 - "$out/check.json" <<'EOF' | tee -a "$out/summary.txt"
import json, sys
rs = json.load(open(sys.argv[1]))
bad = [r for r in rs if r["status"] == "error" or not r.get("check", {}).get("passed", True)]
skipped = [r for r in rs if r["status"] == "skipped"]
print(f"check: {len(rs)} records, {len(bad)} failed, {len(skipped)} skipped (can_implement refused)")
for r in bad:
    c = r.get("check", {})
    print("  FAILED", r["variant"], r["problem"], r["dtype"], "misalign", r.get("misalign", 0),
          r.get("reason", ""), {k: c.get(k) for k in ("max_abs", "max_rel", "nan", "unwritten", "bad")},
          c.get("first_mismatches", [])[:3])
EOF

# The short-row softmax rungs timed side by side (those registered), in interleaved rounds.
softmax_rungs=${KLAB_SOFTMAX_RUNGS:-v04_registers v05_warp_rows v06_vector_spans}
rounds=${KLAB_ROUNDS:-3}
bench() {  # NAME FAMILY "RUNG..." [klab options]: one klab bench, JSON to OUTDIR/bench_NAME.json
  local name=$1 fam=$2 rungs=$3
  shift 3
  log "klab bench $name: $rungs $*"
  timeout 120 "$klab" bench $(pick "$fam" $rungs) "$@" --quiet --max-time "$max_time" \
    --json "$out/bench_$name.json" > "$out/bench_$name.txt" 2>&1 || status=1
}
# Softmax at the short-row goal shapes only (v05 refuses the 4096-column headline).
for shape in rows=4194304,cols=64 rows=2097152,cols=128 rows=1048576,cols=255; do
  bench "softmax_${shape##*=}_f32" softmax "$softmax_rungs baseline_cudnn" \
    --shape "$shape" --dtype f32 --rounds "$rounds"
  # cuDNN's softmax baseline takes f32 only: no x-baseline column in bf16.
  bench "softmax_${shape##*=}_bf16" softmax "$softmax_rungs" --shape "$shape" --dtype bf16 \
    --rounds "$rounds"
done
bench maxpool_bf16 maxpool "v02_vertical_strip v03_vector_rows baseline_cudnn" --dtype bf16 \
  --rounds "$rounds"
bench grayscale grayscale "v03_vectorized v04_vectorized_ilp v06_gray_bulk_sm90 baseline_cub" \
  --rounds "$rounds"

log "table"
python3 - "$out"/bench_*.json <<'EOF' | tee -a "$out/summary.txt"
import json, os, sys
print(f"{'variant':34} {'problem':40} {'dtype':5} {'GB/s':>7} {'% ceil':>7} {'ceiling':13} {'x base':>7} check")
for path in sys.argv[1:]:
    if not os.path.exists(path):
        print("missing", path)
        continue
    for r in json.load(open(path)):
        if r["status"] != "ok":
            print(f"{r['variant']:34} {r['problem']:40} {r['dtype']:5} {r['status']}: {r.get('reason', '')[:60]}")
            continue
        pct = r.get("ceiling", {}).get("pct")
        ceil = r.get("ceiling", {}).get("name", "-")
        sp = r.get("baseline", {}).get("speedup")
        pct_s = "-" if pct is None else f"{pct:.1f}"
        sp_s = "-" if sp is None else f"{sp:.2f}x"
        ok = "pass" if r.get("check", {}).get("passed") else "FAIL"
        print(f"{r['variant']:34} {r['problem']:40} {r['dtype']:5} {r.get('gbps') or 0:7.0f} "
              f"{pct_s:>7} {ceil:13} {sp_s:>7} {ok}")
EOF
log "done (status $status)"
exit $status
