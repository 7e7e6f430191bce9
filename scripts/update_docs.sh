#!/usr/bin/env bash
# Regenerates every generated table and plot in the family READMEs and worklogs from the committed
# result JSONs (default results/h200). Nothing in those sections is typed by hand.
# Usage: scripts/update_docs.sh [RESULTS_DIR] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
res=${1:-results/h200}
klab=${2:-build}/apps/klab/klab
# The H200 run each family's tables come from (one device call each; see results/h200/README.md).
# Session 5's run measured transpose (run_session5_transpose_final.json, v07 with its
# column-order entries, after its tile walk became a constexpr helper); session 6's the GEMM
# ladders with the final sgemm v18 and hgemm v09 (run_gemm_session6_d.json, the session's last
# call, after the shared-pipeline tidy); elementwise comes from
# session 3's run, its CPU rungs from session 1's run.json (reports keep the newest record of each
# variant and problem).
source_of() {
  case $1 in
    transpose) echo "$res/run_session5_transpose_final.json" ;;
    sgemm | hgemm) echo "$res/run_gemm_session6_d.json" ;;
    reduce_sum | softmax) echo "$res/run_memory.json" ;;
    vector_add | saxpy | relu | grayscale) echo "$res/run.json $res/run_session3.json" ;;
    *) echo "$res/run.json" ;;
  esac
}
report() {  # report OUT_README PLOT FAMILY...
  local readme=$1 plot=$2
  shift 2
  local args=() srcs=()
  for f in "$@"; do
    args+=(--family "$f")
    for s in $(source_of "$f"); do
      [[ " ${srcs[*]} " == *" $s "* ]] || srcs+=("$s")
    done
  done
  "$klab" report "${srcs[@]}" "${args[@]}" --readme "$readme" --plot "$plot"
  rm -f "$plot.records.json"
}
# folder:families (a folder's README holds the tables of the families it implements)
for entry in elementwise:vector_add,saxpy,relu,grayscale maxpool:maxpool transpose:transpose \
             reduction:reduce_sum,softmax sgemm:sgemm hgemm:hgemm; do
  dir=${entry%%:*}
  fams=${entry#*:}
  [ -f "kernels/$dir/README.md" ] || continue
  report "kernels/$dir/README.md" "kernels/$dir/results.png" ${fams//,/ }
done
report docs/worklogs/transpose.md docs/worklogs/transpose.png transpose
report docs/worklogs/softmax.md docs/worklogs/softmax.png softmax reduce_sum
report docs/worklogs/gemm.md docs/worklogs/gemm.png sgemm hgemm
# sgemm v17 after its second sweep (the copies' first k-step tuned), measured in a later call of
# session 5 beside v09, v15, v16 and cuBLAS: its own table.
for readme in docs/worklogs/gemm.md kernels/sgemm/README.md; do
  "$klab" report "$res/run_sgemm_v17.json" --family sgemm --readme "$readme" --section results-v17
done
# Profiler tables (klab profile --json records), where a run has produced them.
if [ -f "$res/profiles.json" ]; then
  "$klab" profile-report "$res/profiles.json" --family transpose --readme docs/worklogs/transpose.md || true
  "$klab" profile-report "$res/profiles_transpose_16384.json" --readme docs/worklogs/transpose.md \
    --section profile-16384 || true
  "$klab" profile-report "$res/profiles.json" --family softmax --family reduce_sum --readme docs/worklogs/softmax.md || true
  "$klab" profile-report "$res/profiles.json" --family sgemm --family hgemm --readme docs/worklogs/gemm.md || true
fi
# Session 5's profiles of the rungs it changed (the tables above are session 4's).
if [ -f "$res/profiles_session5.json" ]; then
  "$klab" profile-report "$res/profiles_session5.json" --family transpose \
    --readme docs/worklogs/transpose.md --section profile-session5 || true
  "$klab" profile-report "$res/profiles_session5.json" --family sgemm --family hgemm \
    --readme docs/worklogs/gemm.md --section profile-session5 || true
  "$klab" profile-report "$res/profiles_session5_sgemm_v17.json" --family sgemm \
    --readme docs/worklogs/gemm.md --section profile-v17 || true
fi
# Session 6's profiles of the two warp-specialised rungs beside the rungs and baselines they
# follow (sgemm v16 and cuBLAS, hgemm v05 and cuBLASLt), all from one device call.
if [ -f "$res/profiles_session6.json" ]; then
  "$klab" profile-report "$res/profiles_session6.json" --family sgemm --family hgemm \
    --readme docs/worklogs/gemm.md --section profile-session6 || true
fi
if [ -f "$res/profiles_session6_b.json" ]; then  # v18's early-probe winner
  "$klab" profile-report "$res/profiles_session6_b.json" --family sgemm \
    --readme docs/worklogs/gemm.md --section profile-session6-probe || true
fi
if [ -f "$res/profiles_session6_c.json" ]; then  # v09's tuned winner
  "$klab" profile-report "$res/profiles_session6_c.json" --family hgemm \
    --readme docs/worklogs/gemm.md --section profile-session6-v09-tuned || true
fi
if [ -f "$res/profiles_session6_d.json" ]; then  # the final code's v18 and v09
  "$klab" profile-report "$res/profiles_session6_d.json" --family sgemm --family hgemm \
    --readme docs/worklogs/gemm.md --section profile-session6-final || true
fi
# The repeat of session 6's main comparison (a second bench of the same rungs, same call).
"$klab" report "$res/run_gemm_session6_repeat_sgemm.json" "$res/run_gemm_session6_repeat_hgemm.json" \
  --family sgemm --family hgemm --readme docs/worklogs/gemm.md --section results-session6-repeat
# The roofline and the predictions table, from the newest ceilings and runs (docs/).
runs=("$res/ceilings_session3.json" "$res/run.json" "$res/run_memory.json" "$res/run_session3.json"
      "$res/run_session4_transpose_v07.json" "$res/run_gemm_session4.json" "$res/run_sgemm_v16.json"
      "$res/run_session5_transpose.json" "$res/run_gemm_session5.json" "$res/run_sgemm_v17.json"
      "$res/run_session5_transpose_final.json" "$res/run_gemm_session6.json"
      "$res/run_sgemm_session6_b.json" "$res/run_gemm_session6_c.json"
      "$res/run_gemm_session6_d.json")
"$klab" predict "${runs[@]}" --md docs/predictions.md
"$klab" roofline --device h200 --dtype bf16 --results "${runs[@]}" --md docs/roofline_h200.md \
  --plot docs/roofline_h200.png
