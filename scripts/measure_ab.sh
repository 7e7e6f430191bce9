#!/usr/bin/env bash
# An A/B run on one GPU machine: two or more builds of klab, each packed by
# scripts/pack_for_device.sh into its own folder (BUILD .out-NAME), each differing from the others
# by one change. Their rungs are benched build after build, in turn, KLAB_AB_PASSES times, so that
# the machine's drift (clocks, temperature, power) falls on every build alike; each bench times
# the rungs launch by launch with their baseline (`klab bench --interleave`), so every speed-up is
# paired within its bench, and the builds compare through those ratios.
# Writes to OUTDIR: MANIFEST.md (the command, each build's commit, the machine, the start),
# summary.txt (each bench's paired speed-ups), nvidia-smi.txt, ceilings.json, and
# ab/<NAME><pass>/bench_<shape>.json and .txt, the layout scripts/update_docs.sh's h100_ab reads.
# Usage: scripts/measure_ab.sh OUTDIR NAME=PACK_DIR [NAME=PACK_DIR ...] -- VARIANT [VARIANT ...]
#   KLAB_AB_SHAPES: the problems, separated by spaces (required), e.g. two of hgemm's:
#     "m=512,n=4096,k=4096 m=2048,n=4096,k=4096"
#   KLAB_AB_DTYPE (default bf16), KLAB_AB_PASSES (default 2), KLAB_MAX_TIME (seconds a bench,
#   default 0.3), KLAB_AB_LIMIT (seconds before a bench is stopped, default 60), KLAB_CACHE_DIR
#   (the measured ceilings' cache: an earlier run's cache on the same machine skips measuring
#   them; default OUTDIR/cache).
set -uo pipefail
usage="usage: scripts/measure_ab.sh OUTDIR NAME=PACK_DIR [NAME=PACK_DIR ...] -- VARIANT..."
out=${1:-}
[ -n "$out" ] && shift
names=() packs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case "$1" in
    [A-Za-z0-9]*=?*) names+=("${1%%=*}") packs+=("${1#*=}") ;;
    *) echo "measure_ab: not NAME=PACK_DIR: '$1' ($usage)" >&2; exit 2 ;;
  esac
  shift
done
[ $# -gt 0 ] && shift  # the --
variants=("$@")
shapes=${KLAB_AB_SHAPES:-}
if [ -z "$out" ] || [ ${#names[@]} -lt 2 ] || [ ${#variants[@]} -eq 0 ]; then
  echo "measure_ab: an output folder, two builds or more and the variants are needed ($usage)" >&2
  exit 2
fi
[ -z "$shapes" ] && { echo "measure_ab: KLAB_AB_SHAPES names no problem" >&2; exit 2; }
for i in "${!names[@]}"; do
  name=${names[$i]} pack=${packs[$i]}
  if [[ ! "$name" =~ ^[A-Za-z0-9]+$ ]]; then
    echo "measure_ab: a build's name is letters and digits: '$name'" >&2
    exit 2
  fi
  if [ ! -x "$pack/build/apps/klab/klab" ] && [ ! -f "$pack/device.txz" ]; then
    echo "measure_ab: $pack holds no packed build (scripts/pack_for_device.sh BUILD $pack)" >&2
    exit 2
  fi
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The first build sets up the machine's environment (libraries, cuDNN, the ceilings' cache, log).
build=${packs[0]}/build
source "$(dirname "$0")/device_run_env.sh"
for pack in "${packs[@]}"; do
  [ -x "$pack/build/apps/klab/klab" ] || tar xJf "$pack/device.txz" -C "$pack" || exit 1
done
{
  echo "# $(basename "$out")"
  echo
  builds=$(for i in "${!names[@]}"; do printf '%s=%s ' "${names[$i]}" "${packs[$i]}"; done)
  echo "- **Command**: \`KLAB_AB_SHAPES=\"$shapes\" scripts/measure_ab.sh OUTDIR $builds--" \
    "${variants[*]}\`"
  echo "- **Builds**:"
  for i in "${!names[@]}"; do
    echo "  - \`${names[$i]}\`: $(cat "${packs[$i]}/build/git_sha.txt" 2>/dev/null || echo unknown)"
  done
  echo "- **Timing**: \`klab bench --interleave --max-time ${KLAB_MAX_TIME:-0.3}" \
    "--dtype ${KLAB_AB_DTYPE:-bf16}\`, the builds in turn, ${KLAB_AB_PASSES:-2} passes"
  echo "- **Started**: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- **Machine**: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm \
    --format=csv,noheader 2>/dev/null)"
} > "$out/MANIFEST.md"
status=0
machine_and_ceilings || status=1
for pass in $(seq 1 "${KLAB_AB_PASSES:-2}"); do
  for i in "${!names[@]}"; do
    dir="$out/ab/${names[$i]}$pass"
    mkdir -p "$dir"
    for shape in $shapes; do
      tag=$(tr -d '=' <<< "$shape" | tr ',' '_')
      timeout "${KLAB_AB_LIMIT:-60}" "${packs[$i]}/build/apps/klab/klab" bench "${variants[@]}" \
        --shape "$shape" --dtype "${KLAB_AB_DTYPE:-bf16}" --max-time "${KLAB_MAX_TIME:-0.3}" \
        --interleave --quiet --json "$dir/bench_$tag.json" > "$dir/bench_$tag.txt" 2>&1 || status=1
      # The paired speed-ups over the baseline, one line a bench.
      log "${names[$i]}$pass $shape: $(grep -E '^\| [^ ]+ \| [^|]+ \| [^|]+ \| [0-9.]+x' \
        "$dir/bench_$tag.txt" | awk -F'|' '{printf "%s%s  ", $2, $6}')"
    done
  done
done
echo "- **Finished**: $(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$out/MANIFEST.md"
exit $status
