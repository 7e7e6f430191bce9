# Sourced by the scripts that run on a GPU machine (h200.sh, measure_hopper.sh,
# measure_weak_rungs.sh) after they set $build and $out: unpacks a build packed by
# scripts/pack_for_device.sh (built on one machine, run on another) where it is expected, puts the
# libraries packed beside it on the library path (the running machine may lack them), sets $klab,
# caches the measured ceilings in $out/cache unless the caller named a cache (an earlier run's
# cache skips measuring them again), and defines log (a timestamped line, also in summary.txt).
pack=$(dirname "$build")
if [ ! -x "$build/apps/klab/klab" ] && [ -f "$pack/device.tgz" ]; then
  tar xzf "$pack/device.tgz" -C "$pack" || exit 1
fi
klab="$build/apps/klab/klab"
[ -d "$build/../lib" ] && export LD_LIBRARY_PATH="$(cd "$build/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KLAB_CACHE_DIR="${KLAB_CACHE_DIR:-$out/cache}"
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$out/summary.txt"; }
