#!/usr/bin/env bash
# Regenerates every generated table and plot in the family READMEs and worklogs from the committed
# result JSONs (default results/h200). Nothing in those sections is typed by hand.
# Usage: scripts/update_docs.sh [RESULTS_DIR] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
res=${1:-results/h200}
klab=${2:-build}/apps/klab/klab
# folder:families (a folder's README holds the tables of the families it implements)
for entry in elementwise:vector_add,saxpy,relu,grayscale maxpool:maxpool transpose:transpose \
             reduction:reduce_sum,softmax sgemm:sgemm hgemm:hgemm; do
  dir=${entry%%:*}
  fams=${entry#*:}
  readme=kernels/$dir/README.md
  [ -f "$readme" ] || continue
  args=()
  for f in ${fams//,/ }; do args+=(--family "$f"); done
  "$klab" report "$res/run.json" "${args[@]}" --readme "$readme" --plot "kernels/$dir/results.png" || true
done
for wl in docs/worklogs/*.md; do
  name=$(basename "$wl" .md)
  case $name in
    transpose) fams=(--family transpose) ;;
    softmax) fams=(--family softmax --family reduce_sum) ;;
    gemm) fams=(--family sgemm --family hgemm) ;;
    *) continue ;;
  esac
  "$klab" report "$res/run.json" "${fams[@]}" --readme "$wl" --plot "docs/worklogs/$name.png" || true
done
