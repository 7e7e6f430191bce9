#!/usr/bin/env bash
# Regenerates every generated table and plot in the family READMEs and worklogs from the committed
# result JSONs (default results/h200). Nothing in those sections is typed by hand.
# Usage: scripts/update_docs.sh [RESULTS_DIR] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
res=${1:-results/h200}
klab=${2:-build}/apps/klab/klab
# Result folders are runs, named <date>_<commit>_<what> (results/h200/README.md lists them; each
# holds a MANIFEST.md). Every GPU family's tables come from 9023867's run (every GPU rung beside its
# baselines at the headline shapes, against fp64 samples for the GEMMs, ceilings per access mix);
# the CPU rungs of the elementwise, reduction and GEMM families from e605054's (reports keep the
# newest record of each variant and problem). softmax v05's 255-column rows in that run measured
# a span path that was reverted after it: the code v05 has now was measured by ef77bc6's run, in
# its own table (results-v05 below).
run=$res/2026-12-01_9023867_harness_run/run.json
source_of() {
  case $1 in
    transpose | hgemm | maxpool) echo "$run" ;;
    *) echo "$res/2026-11-30_e605054_first_run/run.json $run" ;;
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
report docs/worklogs/maxpool_grayscale.md docs/worklogs/maxpool_grayscale.png maxpool grayscale
# softmax v05 with the scalar path it keeps for rows that are not whole 16-byte vectors, beside v04
# and cuDNN at the short-row shapes (ef77bc6's run).
for readme in docs/worklogs/softmax.md kernels/reduction/README.md; do
  "$klab" report "$res"/2026-12-01_ef77bc6_harness_first/weak/bench_softmax_*.json --family softmax \
    --readme "$readme" --section results-v05
done
# sgemm v17 after its second sweep (the copies' first k-step tuned), measured by 42d9e48's run
# beside v09, v15, v16 and cuBLAS: its own table.
for readme in docs/worklogs/gemm.md kernels/sgemm/README.md; do
  "$klab" report "$res/2026-11-30_42d9e48_sgemm_v17_refill/run_sgemm_v17.json" --family sgemm --readme "$readme" --section results-v17
done
# The multistage sgemm rungs beside cuBLAS, each pair in its own run's table: v11 and v12 with every
# rung before them (fe9e36e's run), v13 and v14 with v09 (81f78b3's).
"$klab" report "$res/2026-11-30_fe9e36e_every_gpu_rung/run.json" --family sgemm --readme docs/worklogs/gemm.md \
  --section results-fe9e36e-multistage
"$klab" report "$res/2026-11-30_81f78b3_sgemm_v13_v14/run_sgemm_v13_v14.json" --family sgemm \
  --readme docs/worklogs/gemm.md --section results-81f78b3-v13-v14
# Profiler tables (klab profile --json records), where a run has produced them. This file gathers
# the records of the 5eb39f4, 8d2d5de and e1de696 runs.
if [ -f "$res/2026-11-30_e1de696_transpose_v07/profiles.json" ]; then
  "$klab" profile-report "$res/2026-11-30_e1de696_transpose_v07/profiles.json" --family transpose --readme docs/worklogs/transpose.md || true
  "$klab" profile-report "$res/2026-11-30_e1de696_sgemm_v16_tuned/profiles_transpose_16384.json" --readme docs/worklogs/transpose.md \
    --section profile-16384 || true
  "$klab" profile-report "$res/2026-11-30_e1de696_transpose_v07/profiles.json" --family softmax --family reduce_sum --readme docs/worklogs/softmax.md || true
  "$klab" profile-report "$res/2026-11-30_e1de696_transpose_v07/profiles.json" --family sgemm --family hgemm --readme docs/worklogs/gemm.md || true
fi
# 4f99922's profiles of the rungs changed since (the tables above are from the runs before).
if [ -f "$res/2026-11-30_4f99922_transpose_gemm_tables/profiles.json" ]; then
  "$klab" profile-report "$res/2026-11-30_4f99922_transpose_gemm_tables/profiles.json" --family transpose \
    --readme docs/worklogs/transpose.md --section profile-4f99922 || true
  "$klab" profile-report "$res/2026-11-30_4f99922_transpose_gemm_tables/profiles.json" --family sgemm --family hgemm \
    --readme docs/worklogs/gemm.md --section profile-4f99922 || true
  "$klab" profile-report "$res/2026-11-30_42d9e48_sgemm_v17_refill/profiles_sgemm_v17.json" --family sgemm \
    --readme docs/worklogs/gemm.md --section profile-v17 || true
fi
# c1a69fc's profiles of the two warp-specialised rungs beside the rungs and baselines they
# follow (sgemm v16 and cuBLAS, hgemm v05 and cuBLASLt), all from one run.
if [ -f "$res/2026-11-30_c1a69fc_gemm_tables/profiles.json" ]; then
  "$klab" profile-report "$res/2026-11-30_c1a69fc_gemm_tables/profiles.json" --family sgemm --family hgemm \
    --readme docs/worklogs/gemm.md --section profile-c1a69fc || true
fi
if [ -f "$res/2026-11-30_3355690_sgemm_v18_probe/profiles.json" ]; then  # v18's early-probe winner
  "$klab" profile-report "$res/2026-11-30_3355690_sgemm_v18_probe/profiles.json" --family sgemm \
    --readme docs/worklogs/gemm.md --section profile-3355690-v18-probe || true
fi
if [ -f "$res/2026-11-30_7ee3907_hgemm_v09_tuned/profiles.json" ]; then  # v09's tuned winner
  "$klab" profile-report "$res/2026-11-30_7ee3907_hgemm_v09_tuned/profiles.json" --family hgemm \
    --readme docs/worklogs/gemm.md --section profile-7ee3907-v09-tuned || true
fi
if [ -f "$res/2026-11-30_f9215ea_gemm_final/profiles.json" ]; then  # the final code's v18 and v09
  "$klab" profile-report "$res/2026-11-30_f9215ea_gemm_final/profiles.json" --family sgemm --family hgemm \
    --readme docs/worklogs/gemm.md --section profile-f9215ea-final || true
fi
# The repeat of c1a69fc's main comparison (a second bench of the same rungs, same run). That run
# took its bf16 ceiling from one GEMM at 8192^3 whose clock throttled: cuBLASLt reads above it,
# which the table marks and `klab report` reports as an error (exit 1); the worklog explains it,
# and the ceilings since 9023867's run are the best of several shapes and of the baselines.
"$klab" report "$res/2026-11-30_c1a69fc_gemm_tables/run_gemm_repeat_sgemm.json" "$res/2026-11-30_c1a69fc_gemm_tables/run_gemm_repeat_hgemm.json" \
  --family sgemm --family hgemm --readme docs/worklogs/gemm.md --section results-c1a69fc-repeat || true
# The Hopper ladder (hgemm v10 onward): Nsight Compute of v10-v13 at 4096^3 (cee5349's run).
"$klab" profile-report "$res/2026-12-02_cee5349_hopper_gemm/profiles.json" --family hgemm \
  --readme docs/worklogs/gemm.md --section profile-hopper-cee5349 || true
# v14 and the whole Hopper ladder beside cuBLASLt at seven shapes, one record file per shape
# (af25cfd's run), with its plot, and v14's Nsight Compute profile.
hop=$res/2026-12-02_af25cfd_hopper_v14
"$klab" report "$hop"/bench_hgemm_{4096x4096x4096,8192x8192x8192,6000x7000x5000,4096x6144x4096,4096x24576x4096,4096x4096x12288,16x24576x4096}.json \
  --family hgemm --readme docs/worklogs/gemm.md --section results-hopper-af25cfd --plot docs/worklogs/gemm_hopper.png
rm -f docs/worklogs/gemm_hopper.png.records.json
"$klab" report "$hop"/bench_hgemm_{4096x4096x4096,8192x8192x8192,6000x7000x5000,4096x6144x4096,4096x24576x4096,4096x4096x12288,16x24576x4096}.json \
  --family hgemm --readme kernels/hgemm/README.md --section results-hopper-af25cfd
"$klab" profile-report "$hop/profiles.json" --family hgemm --readme docs/worklogs/gemm.md \
  --section profile-hopper-af25cfd || true
# Issue 13's grid before v18 (9c2ca7a's run: v13-v16 and cuBLASLt), with its geometric means
# (klab report exits 1: four records above that run's cuBLASLt-only bf16_tc ceiling).
"$klab" report "$res"/2026-12-02_9c2ca7a_hopper_v15_v16/bench/grid_*.json --family hgemm \
  --readme docs/worklogs/gemm.md --section results-hopper-9c2ca7a-grid || true
# Issue 13's grid (Qwen3-8B's projections at M = 1..16384) with v18 on its tuned table, and
# 8192^3 and the ragged shape, beside cuBLASLt (ac8ef08's run), with its plot. klab report exits
# 1 there: cuBLASLt read 101.4% of that run's bf16_tc ceiling at 4096x4096x12288 (the worklog
# says so).
grid=$res/2026-12-02_ac8ef08_hopper_v17_v18/grid
"$klab" report "$grid"/grid_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-hopper-ac8ef08-grid --plot docs/worklogs/gemm_hopper_grid.png || true
rm -f docs/worklogs/gemm_hopper_grid.png.records.json
"$klab" report "$grid"/bench_m_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-hopper-ac8ef08-square
# Attention and decode attention: the first timed runs (de53735: v01-v03 and cuDNN; 6fda6f1: v03,
# v04 and cuDNN, with PyTorch's SDPA timed by scripts/torch_sdpa.py in the same run).
att0=$res/2026-12-02_de53735_attention_decode_first/bench
att1=$res/2026-12-02_6fda6f1_fa3_decode_v04
"$klab" report "$att1"/bench/bench_attention.json "$att1"/bench/torch_sdpa.json "$att1"/attn/bench_*.json \
  --family attention --readme docs/worklogs/attention.md --section results-6fda6f1
# 16e327f's run: v05 (FA3's two overlaps) beside v04 and cuDNN at nine headline shapes; the first
# timings of add_rmsnorm_quant (v01 against the unfused launches).
att2=$res/2026-12-02_16e327f_fa3_v05_fused_first
"$klab" report "$att2"/bench_attention.json --family attention --readme docs/worklogs/attention.md \
  --section results-16e327f
"$klab" report "$att2"/bench_add_rmsnorm_quant.json --family add_rmsnorm_quant \
  --readme docs/worklogs/fused.md --section results-16e327f
# 5f71ea9's run: attention v05 (K/V split release) and v06 beside cuDNN; decode v03 and v05 beside
# cuDNN's paged SDPA; both fused families against their unfused launches.
run3=$res/2026-12-02_5f71ea9_frontier_first
"$klab" report "$run3"/bench_attention.json --family attention --readme docs/worklogs/attention.md \
  --section results-5f71ea9
"$klab" report "$run3"/bench_decode_attention.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-5f71ea9
"$klab" report "$run3"/bench_add_rmsnorm_quant.json --family add_rmsnorm_quant \
  --readme docs/worklogs/fused.md --section results-5f71ea9-arq
"$klab" report "$run3"/bench_qk_norm_rope_cache.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-5f71ea9-qk
"$klab" report "$res"/2026-12-02_98f891c_add_rmsnorm_quant_two_forms/bench_add_rmsnorm_quant.json \
  --family add_rmsnorm_quant --readme docs/worklogs/fused.md --section results-98f891c
# 18aeb7d's run (issue 12's first-half run): softmax v06_vector_spans at the short-row shapes.
"$klab" report "$res"/2026-12-02_18aeb7d_issue12_first_half/weak/bench_softmax_*.json \
  --family softmax --readme docs/worklogs/softmax.md --section results-18aeb7d
# 2859f6d's run: qk_norm_rope_cache v02 (the token ring) beside v01 and the unfused launches.
"$klab" report "$res"/2026-12-02_2859f6d_qk_v02_gemm_profiles/bench_qk.json \
  --family qk_norm_rope_cache --readme docs/worklogs/fused.md --section results-2859f6d-qk
# 84b3a50's run: add_rmsnorm_quant with division-free scales, qk_norm_rope_cache with the v-head
# warps skipping the norm (both beside their unfused launches), in the worklog (the READMEs take
# the newest runs, below).
run6=$res/2026-12-02_84b3a50_fused_trims_v19_hot
"$klab" report "$run6"/bench_arq.json --family add_rmsnorm_quant --readme docs/worklogs/fused.md \
  --section results-84b3a50-arq
"$klab" report "$run6"/bench_qk.json --family qk_norm_rope_cache --readme docs/worklogs/fused.md \
  --section results-84b3a50-qk
# 789bfd3's run: hgemm v19 (swapped-operand weight streaming) and v18 tuned on it at the twelve
# M <= 64 shapes of issue 13's grid, beside cuBLASLt; its Nsight Compute profiles, and those of
# v16, v17 and cuBLASLt's kernels from 2859f6d's run.
"$klab" report "$res"/2026-12-02_789bfd3_v19_dispatch_qk_rows/grid_*.json --family hgemm \
  --readme docs/worklogs/gemm.md --section results-v19-789bfd3
"$klab" profile-report "$res"/2026-12-02_2859f6d_qk_v02_gemm_profiles/profiles_hgemm.json \
  "$res"/2026-12-02_12dc393_hgemm_v19_entries/profiles_v19.json \
  "$res"/2026-12-02_789bfd3_v19_dispatch_qk_rows/profiles_v19.json --family hgemm \
  --readme docs/worklogs/gemm.md --section profile-v19 || true
# b83dec2's run (issue 12's first-half run, ceilings measured in it): softmax v07 at the short-row
# shapes; the elementwise map rungs with v07 at their headline shapes.
"$klab" report "$res"/2026-12-02_b83dec2_issue12_run/weak/bench_softmax_*.json \
  --family softmax --readme docs/worklogs/softmax.md --section results-b83dec2
"$klab" report "$res"/2026-12-02_b83dec2_issue12_run/run/run_{relu,vector_add,saxpy}.json \
  --family relu --family vector_add --family saxpy --readme kernels/elementwise/README.md \
  --section results-b83dec2
# 2d327e5's run: decode_attention v06 (TMA page gathers, one launch) beside v03 and cuDNN's paged
# SDPA at the headline shapes, in the worklog and the family README; its Nsight Compute profiles.
run7=$res/2026-12-02_2d327e5_decode_v06_tma_pages
"$klab" report "$run7"/bench_decode_attention.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-2d327e5
"$klab" profile-report "$run7"/profiles.json --family decode_attention \
  --readme docs/worklogs/decode.md --section profile-2d327e5 || true
# 307aad9's run: decode_attention v07 (refuted) beside v03, v06 and cuDNN; v07's profiles.
run8=$res/2026-12-02_307aad9_decode_v07_line
"$klab" report "$run8"/bench_decode_attention.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-307aad9
"$klab" profile-report "$run8"/profiles.json --family decode_attention \
  --readme docs/worklogs/decode.md --section profile-307aad9 || true
# 0381983's run: decode_attention v06 under three L2 promotions of its pools' tensor maps (three
# builds: A 256 bytes, B 128, C none), one table each; the profiles of A and C.
run9=$res/2026-12-02_0381983_decode_l2_promotion
for arm in A B C; do
  "$klab" report "$run9"/bench_$arm.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-0381983-$arm
done
"$klab" profile-report "$run9"/profiles_A.json "$run9"/profiles_C.json --family decode_attention \
  --readme docs/worklogs/decode.md --section profile-0381983 || true
# 058529f's run: hgemm v19 with its weight promoted 256 bytes in L2 (arm A, beside cuBLASLt) or
# 128 (arm B) at nine M <= 64 shapes. The second table reads both arms' files: the newest v19
# record of each shape is B's, its baseline cuBLASLt's from A a few seconds before.
run10=$res/2026-12-02_058529f_v19_l2_promotion/json
"$klab" report "$run10"/A_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-058529f-A
"$klab" report "$run10"/A_*.json "$run10"/B_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-058529f-B
# 0b70bcb's run: the state after the L2 promotion: decode v06 beside cuDNN (the worklog and the
# family README), hgemm v19 and v18 beside cuBLASLt at the twelve M <= 64 shapes (the worklog
# and the hgemm README).
run11=$res/2026-12-02_0b70bcb_v06_v19_state
"$klab" report "$run11"/bench_decode_attention.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-0b70bcb
for readme in docs/worklogs/gemm.md kernels/hgemm/README.md; do
  "$klab" report "$run11"/grid_*.json --family hgemm --readme "$readme" \
    --section results-0b70bcb
done
# fe8859c's run: decode v06 on the ragged batch, its chunks uncapped (A, with cuDNN), capped at
# half (B) or a quarter (C) of a slot's mean work; one table per arm (each arm's newest records).
run12=$res/2026-12-02_fe8859c_decode_ragged_cap/json
for arm in A B C; do
  "$klab" report "$run12"/${arm}_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-fe8859c-$arm
done
# f402afe's run: decode v08 (e4m3 KV) beside v06 and cuDNN on bf16 (the dtype table: v08 over v06).
"$klab" report "$res"/2026-12-02_f402afe_decode_v08_fp8_first/bench_decode_attention.json \
  --family decode_attention --readme docs/worklogs/decode.md --section results-f402afe
# 25913b3's run: v08 with six stages (A), four stages and three CTAs an SM (B), and B with the
# online softmax's rescale threshold (C), v06 beside at three shapes; one table per arm.
run14=$res/2026-12-02_25913b3_decode_v08_stages_threshold/json
for arm in A B C; do
  "$klab" report "$run14"/${arm}_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-25913b3-$arm
done
# 722a047's run: v08 with the block table one stage (D) or four (E) ahead, v06 beside at one
# shape; one table per arm.
for arm in D E; do
  "$klab" report "$res"/2026-12-03_722a047_decode_v08_table_ahead/json/${arm}_*.json \
    --family decode_attention --readme docs/worklogs/decode.md --section results-722a047-$arm
done
# 77c007b's run: v09 (keys as M) beside v08, v06 and cuDNN; Nsight of v08 (722a047) and v09.
run15=$res/2026-12-03_77c007b_decode_v09_swap_ab
"$klab" report "$run15"/bench_decode_attention.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-77c007b
"$klab" profile-report "$res"/2026-12-03_722a047_decode_v08_table_ahead/profiles.json \
  "$run15"/profiles.json --family decode_attention --readme docs/worklogs/decode.md \
  --section profile-77c007b
# 9445930's run: v10 (the swap on bf16) beside v06, v09 and cuDNN.
"$klab" report "$res"/2026-12-03_9445930_decode_v10_swap_ab/bench_decode_attention.json \
  --family decode_attention --readme docs/worklogs/decode.md --section results-9445930
# 9445930's B = 1 sweep: v10, cuDNN and v09 over the context length, and the harness's floor.
sweep=$res/2026-12-03_9445930_decode_b1_sweep
"$klab" report "$sweep"/sweep_*.json --family decode_attention --readme docs/worklogs/decode.md \
  --section results-9445930-sweep
"$klab" report "$sweep"/floor_vector_add.json --family vector_add \
  --readme docs/worklogs/decode.md --section results-9445930-floor
# 698a305's run: the cluster merges v11 (bf16) and v12 (e4m3) beside v10, v09 and cuDNN.
run17=$res/2026-12-03_698a305_decode_v11_v12_first
"$klab" report "$run17"/bench_decode_attention.json "$run17"/bench_decode_attention_e4m3.json \
  --family decode_attention --readme docs/worklogs/decode.md --section results-698a305
"$klab" report "$res"/2026-12-03_698a305_decode_cluster_sweep/bf16_*.json \
  "$res"/2026-12-03_698a305_decode_cluster_sweep/e4m3_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-698a305-sweep
"$klab" profile-report "$res"/2026-12-03_698a305_decode_cluster_sweep/profiles.json \
  --family decode_attention --readme docs/worklogs/decode.md --section profile-698a305
# 2dc7a86's run: v11 and v12 with the cluster merge bounded, beside v10, v09 and cuDNN.
run18=$res/2026-12-03_2dc7a86_decode_cluster_bound
for readme in docs/worklogs/decode.md kernels/decode_attention/README.md; do
  "$klab" report "$run18"/bench_decode_attention.json "$run18"/bench_decode_attention_e4m3.json \
    --family decode_attention --readme "$readme" --section results-2dc7a86
done
"$klab" report "$run18"/small_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-2dc7a86-small
"$klab" report "$att0"/bench_attention.json "$att0"/torch_sdpa.json --family attention \
  --readme docs/worklogs/attention.md --section results-de53735
"$klab" report "$att1"/decode/bench_decode_attention.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-6fda6f1
"$klab" report "$att0"/bench_decode_attention.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-de53735
# Assignment 5's memory table (issue 14, item 4): `klab memory` of attention's rungs and cuDNN at
# causal N = 1k..64k (scripts/measure_attention.sh, step memory), from the newest run that holds
# one, on the H200 or the H100 (peak memory does not depend on the card's speed; the H100's 80 GB
# refuse v01 one size earlier, and the table says which card): the last by run folder name, date
# first.
mem=$( (find "$res" "$(dirname "$res")/h100" -name memory_attention.json 2>/dev/null || true) |
  awk -F/ '{ for (i = 1; i <= NF; i++) if ($i ~ /^20[0-9][0-9]-/) { print $i "\t" $0; break } }' |
  sort | tail -n 1 | cut -f2)
if [ -f "$mem" ]; then
  # Beside it, the rungs run apart: v02 (CUDA cores), v12 (FP8) on e4m3 inputs.
  "$klab" report "$mem" $(ls "$(dirname "$mem")"/memory_attention_v*.json 2>/dev/null) --memory \
    --family attention --readme docs/worklogs/attention.md --section memory-assignment5
fi
# 5fbc421's run: hgemm v19 at 128 tokens beside v18 (tuned) and cuBLASLt at M = 128; v18's
# tune at M = 128, N = K = 4096 and M = 512, N = 6144 (every entry); v20 beside v14 and
# cuBLASLt at four prefill shapes.
run19=$res/2026-12-03_5fbc421_hopper_m128_pingpong
"$klab" report "$run19"/grid_128x*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-5fbc421-m128
"$klab" report "$run19"/tune_128x4096x4096.json "$run19"/tune_512x6144x4096.json --family hgemm \
  --readme docs/worklogs/gemm.md --section results-5fbc421-tune
"$klab" report "$run19"/pingpong_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-5fbc421-pingpong
# 05fcd95's run: issue 13's grid as it stands (v18 on its re-tuned table beside cuBLASLt, all
# 32 shapes, two passes A and B), with its plot; 8192^3 and the ragged shape; the ladder v09-v20
# at 4096^3 and 8192^3, with its plot; Nsight Compute of v19 at M = 128 and of v14/v20 at 4096^3.
run20=$res/2026-12-03_05fcd95_hopper_grid
"$klab" report "$run20"/gridA/grid_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-05fcd95-gridA --plot docs/worklogs/gemm_hopper_grid_05fcd95.png
rm -f docs/worklogs/gemm_hopper_grid_05fcd95.png.records.json
"$klab" report "$run20"/gridB/grid_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-05fcd95-gridB
"$klab" report "$run20"/bench_m_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-05fcd95-square
"$klab" report "$run20"/ladder_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-05fcd95-ladder --plot docs/worklogs/gemm_hopper_ladder.png
"$klab" report "$run20"/ladder_*.json --family hgemm --steps --readme docs/worklogs/gemm.md \
  --section steps-05fcd95-ladder
rm -f docs/worklogs/gemm_hopper_ladder.png.records.json
"$klab" profile-report "$run20"/profiles.json --family hgemm --readme docs/worklogs/gemm.md \
  --section profile-05fcd95 || true
# 45c3663's run: v18 re-tuned with `klab tune --rounds 3`, and the grid on its winners (the
# worklog and the hgemm README).
run21=$res/2026-12-03_45c3663_hopper_tune_rounds
for readme in docs/worklogs/gemm.md kernels/hgemm/README.md; do
  "$klab" report "$run21"/gridA/grid_*.json --family hgemm --readme "$readme" \
    --section results-45c3663-grid
done
# 52cd004's run: attention's exp2 on one MUFU (v05, v06), v07 (FA4's lazy rescale) and v08 (its
# emulated exp2) beside cuDNN at the headline shapes; v03 beside cuDNN and PyTorch's SDPA.
run22=$res/2026-12-03_52cd004_attention_fa4_softmax
"$klab" report "$run22"/bench_attention.json --family attention --readme docs/worklogs/attention.md \
  --section results-52cd004 --fast-state
"$klab" report "$run22"/bench_attention.json --family attention --steps \
  --readme docs/worklogs/attention.md --section steps-52cd004
"$klab" report "$run22"/v03_nq_*.json --family attention --readme docs/worklogs/attention.md \
  --section results-52cd004-v03
# 4e010c8's run: v03 with two row tiles a warp (reverted after it) beside cuDNN and PyTorch; v05,
# v07 and cuDNN at the headline shapes in six rounds; Nsight of v05, v07, v08 and cuDNN.
run23=$res/2026-12-03_4e010c8_attention_v03_rows_profiles
"$klab" report "$run23"/bench_attention.json --family attention --readme docs/worklogs/attention.md \
  --section results-4e010c8 --fast-state
"$klab" report "$run23"/v03_nq_*.json --family attention --readme docs/worklogs/attention.md \
  --section results-4e010c8-v03
"$klab" profile-report "$run23"/profiles.json --family attention \
  --readme docs/worklogs/attention.md --section profile-4e010c8
# bcbcce5's run: attention v09 (three consumer warpgroups at D = 64) beside v07, v08 and cuDNN.
run24=$res/2026-12-03_bcbcce5_attention_v09
"$klab" report "$run24"/bench_d64_causal*.json --family attention \
  --readme docs/worklogs/attention.md --section results-bcbcce5 --fast-state
"$klab" profile-report "$run24"/profiles.json --family attention \
  --readme docs/worklogs/attention.md --section profile-bcbcce5
# e11578e's run: attention v10 (v09 with the polynomial exponential) beside v09 and cuDNN.
"$klab" report "$res"/2026-12-03_e11578e_attention_v10/bench_d64_causal*.json --family attention \
  --readme docs/worklogs/attention.md --section results-e11578e --fast-state
# a787076's run: the attention block (attention_block) fused, as a graph and unfused.
run25=$res/2026-12-03_a787076_attention_block
"$klab" report "$run25"/bench_*.json --family attention_block \
  --readme docs/worklogs/decode.md --section results-a787076-block --fast-state
# 67777d3's run: attention_block v03 (programmatic dependent launch); decode_attention's headline
# shapes beside cuDNN's paged SDPA and FlashInfer's paged decode (scripts/flashinfer_decode.py).
run26=$res/2026-12-03_67777d3_block_pdl_flashinfer
"$klab" report "$run26"/bench_block_*.json --family attention_block \
  --readme docs/worklogs/decode.md --section results-67777d3-block --fast-state
# 4e8807c's run: the graph rungs after review, v19's signal past its main loop; the FA2 rung's
# profile beside v05. 8821e21's run: attention_block as it stands.
run27=$res/2026-12-03_4e8807c_block_review_fa2_profile
"$klab" report "$run27"/bench_block_*.json --family attention_block \
  --readme docs/worklogs/decode.md --section results-4e8807c-block --fast-state
"$klab" profile-report "$run27"/profiles_fa2.json --family attention \
  --readme docs/worklogs/attention.md --section profile-4e8807c-fa2
run28=$res/2026-12-03_8821e21_block_final
"$klab" report "$run28"/bench_block_*.json --family attention_block \
  --readme docs/worklogs/decode.md --section results-8821e21-block --fast-state
"$klab" report "$run28"/bench_block_*.json --family attention_block \
  --readme kernels/attention_block/README.md --section results-latest --fast-state
"$klab" report "$run26"/bench_decode_attention.json "$run26"/flashinfer_decode.json \
  --family decode_attention --readme docs/worklogs/decode.md --section results-67777d3-flashinfer \
  --against decode_attention.flashinfer_paged --against decode_attention.flashinfer_paged_cuda_cores
"$klab" profile-report "$run25"/profiles.json --family attention_block \
  --readme docs/worklogs/decode.md --section profile-a787076-block
# qk_norm_rope_cache v03 (hoisted) in its forms beside v02 and the unfused launches, and
# add_rmsnorm_quant v01 with its scale paths compiled (20fb173, 74fb6d9, c7ff456, f12b286).
run29=$res/2026-12-03_20fb173_qk_v03_arq_group
"$klab" report "$run29"/bench_qk.json --family qk_norm_rope_cache --readme docs/worklogs/fused.md \
  --section results-20fb173-qk
"$klab" report "$run29"/bench_arq.json --family add_rmsnorm_quant --readme docs/worklogs/fused.md \
  --section results-20fb173-arq
run30=$res/2026-12-03_74fb6d9_qk_v03_forms
for form in a b; do
  "$klab" report "$run30"/$form/bench_qk.json --family qk_norm_rope_cache \
    --readme docs/worklogs/fused.md --section results-74fb6d9-qk-$form
done
run31=$res/2026-12-03_c7ff456_qk_v03_arq_final
"$klab" report "$run31"/bench_qk.json --family qk_norm_rope_cache --readme docs/worklogs/fused.md \
  --section results-c7ff456-qk
"$klab" profile-report "$run29"/profiles_qk.json "$run31"/profiles_qk.json \
  --family qk_norm_rope_cache --readme docs/worklogs/fused.md --section profile-c7ff456-qk
"$klab" report "$run31"/bench_arq.json --family add_rmsnorm_quant --readme docs/worklogs/fused.md \
  --section results-c7ff456-arq
"$klab" profile-report "$run29"/profiles_arq.json "$run31"/profiles_arq.json \
  --family add_rmsnorm_quant --readme docs/worklogs/fused.md --section profile-c7ff456-arq
"$klab" report "$run31"/bench_arq.json --family add_rmsnorm_quant \
  --readme kernels/add_rmsnorm_quant/README.md
run33=$res/2026-12-03_f12b286_qk_v03_final
"$klab" report "$run33"/bench_qk.json --family qk_norm_rope_cache --readme docs/worklogs/fused.md \
  --section results-f12b286-qk
run34=$res/2026-12-03_0a2a2ec_qk_v03_ring3
"$klab" report "$run34"/bench_qk.json "$run34"/bench_qk_64.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-0a2a2ec-qk
"$klab" report "$run34"/bench_arq_64_g*.json --family add_rmsnorm_quant \
  --readme docs/worklogs/fused.md --section results-0a2a2ec-arq
"$klab" profile-report "$run34"/profiles_qk.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section profile-0a2a2ec-qk
run35=$res/2026-12-03_3cec2d7_qk_v04_pairs
for form in a b; do
  "$klab" report "$run35"/$form/bench_qk.json --family qk_norm_rope_cache \
    --readme docs/worklogs/fused.md --section results-3cec2d7-qk-$form
done
"$klab" profile-report "$run35"/a/profiles_qk.json "$run35"/b/profiles_qk.json \
  --family qk_norm_rope_cache --readme docs/worklogs/fused.md --section profile-3cec2d7-qk
run36=$res/2026-12-03_48aa6e4_qk_v05_blocks
"$klab" report "$run36"/b/bench_qk.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-48aa6e4-qk-b
"$klab" profile-report "$run36"/a/profiles_qk.json "$run36"/b/profiles_qk.json \
  --family qk_norm_rope_cache --readme docs/worklogs/fused.md --section profile-48aa6e4-qk
run37=$res/2026-12-03_bd7108f_qk_v05_stages
"$klab" report "$run37"/a/bench_qk.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-bd7108f-qk-a
"$klab" profile-report "$run37"/a/profiles_qk.json "$run37"/b/profiles_qk.json \
  --family qk_norm_rope_cache --readme docs/worklogs/fused.md --section profile-bd7108f-qk
# The traffic-only probe: form b's checks fail by design (MANIFEST.md).
run38=$res/2026-12-03_bd7108f_qk_traffic
"$klab" report "$run38"/a/bench_qk_p*.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-bd7108f-pages
"$klab" report "$run38"/a/bench_relu_*.json --family relu \
  --readme docs/worklogs/fused.md --section results-bd7108f-relu
"$klab" report "$run38"/b/bench_qk_*.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-bd7108f-traffic-only
"$klab" profile-report "$run38"/a/profiles.json "$run38"/b/profiles.json \
  --readme docs/worklogs/fused.md --section profile-bd7108f-traffic
run39=$res/2026-12-03_a1263cb_qk_v06_bulk_stores
for form in a b; do
  "$klab" report "$run39"/$form/bench_qk.json --family qk_norm_rope_cache \
    --readme docs/worklogs/fused.md --section results-a1263cb-qk-$form
done
"$klab" profile-report "$run39"/a/profiles_qk.json "$run39"/b/profiles_qk.json \
  --family qk_norm_rope_cache --readme docs/worklogs/fused.md --section profile-a1263cb-qk
# v07's first build (68db206): its timings at Qwen3-8B are of the fixed code (no spare threads
# there); form b is traffic-only, its checks fail by design (MANIFEST.md).
run40=$res/2026-12-03_68db206_qk_v07_head_parts
"$klab" report "$run40"/a/bench_qk.json "$run40"/a/bench_qk_64.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-68db206-qk-a
"$klab" report "$run40"/b/bench_qk_*.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-68db206-traffic-only
"$klab" profile-report "$run40"/a/profiles_qk.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section profile-68db206-qk
run41=$res/2026-12-03_25baf7e_qk_v07_fixed
"$klab" report "$run41"/a/bench_qk.json "$run41"/a/bench_qk_64.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-25baf7e-qk-a
"$klab" report "$run41"/b/bench_qk.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-25baf7e-qk-b
# attention v11 (192-key blocks, P from shared memory) at D = 64 non-causal beside v09 and cuDNN;
# then 160 keys and three stages (a, 2a751b2) against 176 keys and two stages (b, the same commit
# with fa3_tile.hpp's kWideKeys = 176, kWideStages = 2), two interleaved calls each.
run42=$res/2026-12-03_d645a54_attention_v11_first
"$klab" report "$run42"/bench_d64_causal0.json --family attention \
  --readme docs/worklogs/attention.md --section results-d645a54 --fast-state
"$klab" profile-report "$run42"/profiles.json --family attention \
  --readme docs/worklogs/attention.md --section profile-d645a54
run43=$res/2026-12-03_2a751b2_attention_v11_keys
for x in a b; do
  "$klab" report "$run43"/$x/bench_d64_causal0_*.json --family attention \
    --readme docs/worklogs/attention.md --section results-2a751b2-$x --fast-state
done
"$klab" profile-report "$run43"/a/profiles.json "$run43"/b/profiles.json --family attention \
  --readme docs/worklogs/attention.md --section profile-2a751b2
# Issue 14's status: v03, v07, v09 and cuDNN at every headline shape in one call.
"$klab" report "$res"/2026-12-03_2a751b2_attention_status/bench_attention.json --family attention \
  --readme docs/worklogs/attention.md --section results-2a751b2-status --fast-state
# attention v12 (the FP8 forward) beside the bf16 rungs and cuDNN at the same shapes.
run44=$res/2026-12-03_495634d_attention_v12
"$klab" report "$run44"/bench_*.json --family attention \
  --readme docs/worklogs/attention.md --section results-495634d
"$klab" profile-report "$run44"/profiles.json --family attention \
  --readme docs/worklogs/attention.md --section profile-495634d
# The FA2 rung beside cuDNN and PyTorch's SDPA in one run.
"$klab" report "$res"/2026-12-03_495634d_attention_fa2_torch/*.json --family attention \
  --readme docs/worklogs/attention.md --section results-495634d-fa2
# attention v12 against v12 with the polynomial exponential (b), interleaved.
for x in a b; do
  "$klab" report "$res"/2026-12-03_16c6fef_attention_v12_poly/$x/bench_*.json --family attention \
    --readme docs/worklogs/attention.md --section results-16c6fef-poly-$x
done
# attention v13 (FA2's tile shape) beside v03, cuDNN and PyTorch's SDPA, two rounds of calls.
run45=$res/2026-12-03_262879f_attention_v13
for i in 1 2; do
  "$klab" report "$run45"/bench_attention_*_$i.json "$run45"/torch_sdpa_*_$i.json \
    --family attention --against attention.torch_sdpa_flash \
    --readme docs/worklogs/attention.md --section results-262879f-v13-$i
done
"$klab" profile-report "$run45"/profiles_fa2.json --family attention \
  --readme docs/worklogs/attention.md --section profile-262879f-fa2
"$klab" profile-report "$run45"/profiles_4k.json --family attention \
  --readme docs/worklogs/attention.md --section profile-262879f-4k
# attention v14 (the conditional rescale on the FA2 rung) and v15 (persistent, v07's softmax).
run46=$res/2026-12-03_2bc92d7_attention_v14_v15
for i in 1 2 3; do
  "$klab" report "$run46"/fa3/bench_attention_*_$i.json --family attention \
    --readme docs/worklogs/attention.md --section results-2bc92d7-v15-$i --fast-state
done
for i in 1 2; do
  "$klab" report "$run46"/fa2/bench_attention_*_$i.json "$run46"/fa2/torch_sdpa_*_$i.json \
    --family attention --against attention.torch_sdpa_flash \
    --readme docs/worklogs/attention.md --section results-2bc92d7-v14-$i
done
"$klab" profile-report "$run46"/checks/profiles_fa2.json --family attention \
  --readme docs/worklogs/attention.md --section profile-2bc92d7-fa2
# The FA2 kernel's k steps as a loop (b) against the unrolled form (a), interleaved; PyTorch's SDPA.
run47=$res/2026-12-03_683ee6d_attention_fa2_kstep_loop
"$klab" report "$run47"/a/bench_*.json "$run47"/b/torch_sdpa_*.json --family attention \
  --against attention.torch_sdpa_flash --readme docs/worklogs/attention.md \
  --section results-683ee6d-kloop-a
"$klab" report "$run47"/b/bench_*.json --family attention \
  --readme docs/worklogs/attention.md --section results-683ee6d-kloop-b
# attention v16 (v07 with the TMA epilogue) beside v07 and cuDNN.
run48=$res/2026-12-04_e08d823_attention_v16
for i in 1 2 3; do
  "$klab" report "$run48"/fa3/bench_attention_*_$i.json --family attention \
    --readme docs/worklogs/attention.md --section results-e08d823-v16-$i --fast-state
done
"$klab" profile-report "$run48"/fa3/profiles_4k.json --family attention \
  --readme docs/worklogs/attention.md --section profile-e08d823-4k
# klab bench --interleave: the paired speed-ups at the three issues' goal shapes.
run49=$res/2026-12-04_c6ccbfb_attention_interleaved
for i in 1 2 3; do
  "$klab" report "$run49"/il/bench_attention_*_$i.json --family attention \
    --readme docs/worklogs/attention.md --section results-c6ccbfb-interleaved-$i
done
run50=$res/2026-12-04_c6ccbfb_interleaved_grids
"$klab" report "$run50"/attention/bench_*.json --family attention \
  --readme docs/worklogs/attention.md --section results-c6ccbfb-4k-ablation
"$klab" report "$run50"/hgemm/bench_*.json --family hgemm \
  --readme docs/worklogs/gemm.md --section results-c6ccbfb-grid-interleaved
"$klab" report "$run50"/decode/bench_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-c6ccbfb-decode-interleaved
run51=$res/2026-12-04_888677c_interleaved_second_pass
"$klab" report "$run51"/attention/bench_*.json --family attention \
  --readme docs/worklogs/attention.md --section results-888677c-attention
"$klab" report "$run51"/hgemm/bench_*.json --family hgemm \
  --readme docs/worklogs/gemm.md --section results-888677c-grid
"$klab" report "$run51"/decode/bench_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-888677c-decode
# attention v17 (v15 persistent + v16's TMA epilogue), paired with cuDNN beside v15 and v16.
run52=$res/2026-12-04_0998a5a_attention_v17
for i in 1 2; do
  "$klab" report "$run52"/il/bench_attention_*_$i.json --family attention \
    --readme docs/worklogs/attention.md --section results-0998a5a-v17-$i
done
# attention v18 (v17 with Q by halves), paired with cuDNN beside v16 and v17.
run_v18=$res/2026-12-04_90f7f42_attention_v18
for i in 1 2; do
  "$klab" report "$run_v18"/il/bench_attention_*_$i.json --family attention \
    --readme docs/worklogs/attention.md --section results-90f7f42-v18-$i
done
"$klab" profile-report "$res"/2026-12-04_bb65605_attention_persistent_profiles/profiles_4k.json \
  --family attention --readme docs/worklogs/attention.md --section profile-bb65605-persistent
run_unspilled=$res/2026-12-04_85143d7_attention_v17_v18_unspilled
"$klab" report "$run_unspilled"/il/bench_attention_*_1.json --family attention \
  --readme docs/worklogs/attention.md --section results-85143d7-unspilled-1
"$klab" report "$run_unspilled"/il/bench_attention_*_2.json --family attention \
  --readme docs/worklogs/attention.md --section results-85143d7-unspilled-2
run_qpf=$res/2026-12-04_c3bc6ca_attention_v18_q_prefetch
"$klab" report "$run_qpf"/il/bench_attention_*_1.json --family attention \
  --readme docs/worklogs/attention.md --section results-c3bc6ca-v18-1
"$klab" report "$run_qpf"/il/bench_attention_*_2.json --family attention \
  --readme docs/worklogs/attention.md --section results-c3bc6ca-v18-2
"$klab" report "$res"/2026-12-04_a4dde65_attention_v18_early_prefetch/il/bench_attention_*.json \
  --family attention --readme docs/worklogs/attention.md --section results-a4dde65-early-prefetch
# attention v19 as first built (its wgmmas serialized); hgemm v21 and the ragged shape's
# neighbours, with cuBLASLt's kernels there.
run_72e=$res/2026-12-04_72e0ad3_attention_v19_serialized
"$klab" report "$run_72e"/bench_*.json --family attention --readme docs/worklogs/attention.md \
  --section results-72e0ad3-v19-serialized
run_v21=$res/2026-12-04_72e0ad3_hgemm_v21_ragged
"$klab" report "$run_v21"/bench_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-72e0ad3-v21
"$klab" report "$run_v21"/gemm_ragged/bench_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-72e0ad3-ragged
run_44c=$res/2026-12-04_44c7838_attention_v19_uniform
"$klab" report "$run_44c"/bench_*.json --family attention --readme docs/worklogs/attention.md \
  --section results-44c7838-v19-uniform
run_44h=$res/2026-12-04_44c7838_hgemm_v18_entries
"$klab" report "$run_44h"/ragged/bench_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-44c7838-ragged-regs
"$klab" report "$run_44h"/grid/bench_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-44c7838-grid
"$klab" report "$res"/2026-12-04_c64a56d_attention_v19_s_only/bench_*.json --family attention \
  --readme docs/worklogs/attention.md --section results-c64a56d-v19
"$klab" report "$res"/2026-12-04_c64a56d_hgemm_tune_rounds/grid/bench_*.json --family hgemm \
  --readme docs/worklogs/gemm.md --section results-c64a56d-grid
run_f6=$res/2026-12-04_f6b224a_tune_interleave
"$klab" report "$run_f6"/attn/bench_*.json --family attention --readme docs/worklogs/attention.md \
  --section results-f6b224a-v19
"$klab" report "$run_f6"/grid/bench_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-f6b224a-grid
run_d5=$res/2026-12-04_d53a4f9_v15_narrow_grid
for readme in docs/worklogs/gemm.md kernels/hgemm/README.md; do
  "$klab" report "$run_d5"/grid/bench_*.json --family hgemm --readme "$readme" \
    --section results-d53a4f9-grid
done
"$klab" profile-report "$run_d5"/profiles/profiles_stream_k.json "$run_d5"/profiles/profiles_ragged.json \
  --readme docs/worklogs/gemm.md --section profile-d53a4f9-memory
run_d5s=$res/2026-12-04_d53a4f9_tune_small_m
"$klab" report "$run_d5s"/grid/bench_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-d53a4f9-small-m
"$klab" profile-report "$run_d5s"/profiles/profiles_4096.json --readme docs/worklogs/gemm.md \
  --section profile-d53a4f9-4096
"$klab" report "$res"/2026-12-04_d51af29_attention_v20/attn/bench_*.json --family attention \
  --readme docs/worklogs/attention.md --section results-d51af29-v20
run_8d=$res/2026-12-04_8d45aad_attention_v21
"$klab" report "$run_8d"/attn/bench_*.json --family attention --readme docs/worklogs/attention.md \
  --section results-8d45aad-v21
"$klab" profile-report "$run_8d"/profiles/profiles_4k.json --readme docs/worklogs/attention.md \
  --section profile-8d45aad-4k
"$klab" report "$res"/2026-12-04_b345017_attention_v20_index32/attn/bench_*.json --family attention \
  --readme docs/worklogs/attention.md --section results-b345017-v20-index32
# attention v22 (FlashAttention 3's D = 64 non-causal tile without the intra-warpgroup overlap),
# then its loop on two consumers and 256-key blocks (form b: MANIFEST.md).
run_v22=$res/2026-12-04_aafb937_attention_v22
"$klab" report "$run_v22"/attn/bench_*.json --family attention --readme docs/worklogs/attention.md \
  --section results-aafb937-v22
"$klab" profile-report "$run_v22"/profiles/profiles_d64.json --readme docs/worklogs/attention.md \
  --section profile-aafb937-d64
run_v22=$res/2026-12-04_aafb937_attention_v22_two_consumers
"$klab" report "$run_v22"/attn/bench_*.json --family attention --readme docs/worklogs/attention.md \
  --section results-aafb937-v22-two
"$klab" profile-report "$run_v22"/profiles/profiles_d64_b.json --readme docs/worklogs/attention.md \
  --section profile-aafb937-d64-two
# `klab timeline` of decode v11 at B = 1 and (16, 8k), cold and hot; v13 (the push merge) beside v11:
# timelines, its stalls by SASS range (Nsight's source page) and paired with cuDNN.
tl=$res/2026-12-04_0e94719_decode_timeline
"$klab" timeline --from "$tl"/tl_1_16_4096_4096.json --readme docs/worklogs/decode.md --section timeline-0e94719-b1-4k
"$klab" timeline --from "$tl"/tl_16_16_8192_8192.json --readme docs/worklogs/decode.md --section timeline-0e94719-b16-8k
"$klab" timeline --from "$res"/2026-12-04_b4db8cd_decode_timeline_hot/tl_1_16_4096_4096_hot.json \
  --readme docs/worklogs/decode.md --section timeline-b4db8cd-b1-4k-hot
tl13=$res/2026-12-04_2b7f8cf_decode_v13_timeline
for x in v11_1_16_4096_cold:v11-4k v13_1_16_4096_cold:v13-4k v13_1_16_4096_hot:v13-4k-hot v13_1_16_1024_cold:v13-1k; do
  "$klab" timeline --from "$tl13/tl/tl_${x%%:*}.json" --readme docs/worklogs/decode.md --section "timeline-2b7f8cf-${x#*:}"
done
python3 scripts/ncu_source_stalls.py "$res"/2026-12-04_31f894a_decode_v13_relaxed/source/v13_cluster_push_merge.source.csv.xz \
  --min-share 0.015 --readme docs/worklogs/decode.md --section stalls-31f894a-v13
python3 scripts/ncu_source_stalls.py "$tl13"/prof/v13.source.csv.xz --min-share 0.015 \
  --readme docs/worklogs/decode.md --section stalls-2b7f8cf-v13
# decode v14 (e4m3) and v13 (bf16) at (64, 4k): stalls by SASS range (profiled in aafb937's run).
for v in v14 v13; do
  python3 scripts/ncu_source_stalls.py "$res"/2026-12-04_aafb937_attention_v22/src/decode_${v}_64_4k.source.csv.xz \
    --min-share 0.015 --readme docs/worklogs/decode.md --section stalls-aafb937-$v
done
"$klab" profile-report "$tl13"/prof/profile.json --readme docs/worklogs/decode.md --section profile-2b7f8cf-v13
# decode v15 (e4m3) under Nsight's source counters on an H100 (7940f11's run): from DRAM and hot.
st=$(dirname "$res")/h100/2026-12-07_7940f11_decode_e4m3_stalls
if [ -d "$st" ]; then
  for x in v15_e4m3_16x8k v15_e4m3_16x1k_hot; do
    python3 scripts/ncu_source_stalls.py "$st/src/${x}_source.csv.xz" --min-share 0.015 \
      --readme docs/worklogs/decode.md --section "stalls-7940f11-$x"
  done
fi
"$klab" report "$res"/2026-12-04_adae0fb_decode_v13/il/bench_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-adae0fb-v13
# v13_v11_timelines RUN SHA FILE SUFFIX: the timelines of decode v13 and v11 in RUN/tl
# (tl_<v>_FILE.json) into the decode worklog's sections timeline-SHA-<v>-SUFFIX.
v13_v11_timelines() {
  for v in v13 v11; do
    "$klab" timeline --from "$1/tl/tl_${v}_$3.json" --readme docs/worklogs/decode.md \
      --section "timeline-$2-$v-$4"
  done
}
long=$res/2026-12-04_54fa11d_decode_v13_long_chunks
"$klab" report "$long"/il/bench_*.json --family decode_attention --readme docs/worklogs/decode.md \
  --section results-54fa11d-v13-long
v13_v11_timelines "$long" 54fa11d 1_16_32768_cold 32k
"$klab" report "$res"/2026-12-04_52d79e9_decode_v13_final/il/bench_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-52d79e9-v13-final
# decode v13's long chunks clustered (6459d2f: wherever the splits match; c7b13f5: pairs only).
pairs=$res/2026-12-04_6459d2f_decode_v13_pairs
"$klab" report "$pairs"/il/bench_*.json --family decode_attention --readme docs/worklogs/decode.md \
  --section results-6459d2f-v13-pairs
v13_v11_timelines "$pairs" 6459d2f 16_16_8192 16-8k
"$klab" report "$res"/2026-12-04_c7b13f5_decode_v13_pairs_final/il/bench_*.json \
  --family decode_attention --readme docs/worklogs/decode.md --section results-c7b13f5-v13-pairs-final
# decode v14 (v13's push merge on e4m3): e4m3 v09 / v12 / v14 beside bf16 v10 / v13 / cuDNN.
"$klab" report "$res"/2026-12-04_bb65605_decode_v14_fp8/bf16/bench_*.json \
  "$res"/2026-12-04_bb65605_decode_v14_fp8/e4m3/bench_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-bb65605-v14
# decode v15-v18 (e4m3: stage pairs, three CTAs an SM, both) beside v14 and bf16 v13 / cuDNN; v16
# (the tensor maps in device memory) paired with v13 and cuDNN at B = 1, and both timelines.
run_fp8=$res/2026-12-05_382bde2_decode_v15_v18
"$klab" report "$run_fp8"/e4m3/bench_*.json "$run_fp8"/bf16/bench_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-382bde2-fp8
"$klab" report "$run_fp8"/b1/bench_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-382bde2-v16
for v in v13 v16; do
  "$klab" timeline --from "$run_fp8/tl/tl_${v}_1_16_4096_cold.json" --readme docs/worklogs/decode.md \
    --section "timeline-382bde2-$v-4k"
  "$klab" timeline --from "$run_fp8/tl/tl_${v}_1_16_4096_hot.json" --readme docs/worklogs/decode.md \
    --section "timeline-382bde2-$v-4k-hot"
done
# decode v19 (three stages at once) beside v14, v15 and v18 on e4m3, bf16 v13 and cuDNN paired;
# v13's timelines at B = 1 with the length and first-entry marks.
run_v19=$res/2026-12-05_bbf18de_decode_v19
"$klab" report "$run_v19"/e4m3/bench_*.json "$run_v19"/bf16/bench_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-bbf18de-v19
for m in 4096_cold 4096_hot 1024_cold; do
  "$klab" timeline --from "$run_v19/tl/tl_v13_1_16_$m.json" --readme docs/worklogs/decode.md \
    --section "timeline-bbf18de-v13-$m"
done
# v13's timelines at B = 1 with the armed and first_copy marks; Nsight Compute of e4m3 v15 at
# (16, 8k) and on the ragged batch and of bf16 v13 on it (the SMs' spread, from ncu's text output).
run_spread=$res/2026-12-05_103cab6_decode_spread
for m in 4096_cold 4096_hot 1024_cold; do
  "$klab" timeline --from "$run_spread/tl/tl_v13_1_16_$m.json" --readme docs/worklogs/decode.md \
    --section "timeline-103cab6-v13-$m"
done
python3 scripts/ncu_details_table.py \
  "v15 (e4m3, cluster pairs)|(16, 8k)=$run_spread/ncu/v15_16_8k.details.txt" \
  "v15 (e4m3, counter path)|ragged 64=$run_spread/ncu/v15_ragged.details.txt" \
  "v13 (bf16, counter path)|ragged 64=$run_spread/ncu/v13_ragged.details.txt" \
  --label-headers "kernel|shape" --column "duration (ncu)=Duration" --column "DRAM busy=DRAM Throughput" \
  --column "issue slots busy=Issue Slots Busy" \
  --column "ALU pipe=sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active" \
  --column "FMA pipe=sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active" \
  --column "SM active cycles: min / mean / max=sm__cycles_active.min+sm__cycles_active.avg+sm__cycles_active.max" \
  --readme docs/worklogs/decode.md --section ncu-103cab6-spread
# hgemm v23 (v19's CTA on a stream-K line over every SM) paired with v19 and cuBLASLt at M <= 64.
"$klab" report "$res"/2026-12-05_382bde2_hgemm_v23/small_*.json --family hgemm \
  --readme docs/worklogs/gemm.md --section results-382bde2-v23
run_v23b=$res/2026-12-05_382bde2_attention_v23_sanitizers
"$klab" report "$run_v23b"/v23/bench_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-382bde2-v23-aligned
"$klab" profile-report "$run_v23b"/v23/profiles_memory.json --readme docs/worklogs/gemm.md \
  --section profile-382bde2-v23-memory
# hgemm v22 (v21's line, each piece's segments in reverse) paired with v18, v21 and cuBLASLt;
# the DRAM bytes of v14, v21 and v22.
run_v22g=$res/2026-12-05_382bde2_hgemm_v22
"$klab" report "$run_v22g"/bench_*.json --family hgemm --readme docs/worklogs/gemm.md \
  --section results-382bde2-v22
"$klab" profile-report "$run_v22g"/profiles_stream_k.json --readme docs/worklogs/gemm.md \
  --section profile-382bde2-v22-memory
# attention v23 (two consumers on 256-key blocks, P through shared memory) paired with v09 and
# cuDNN at D = 64 non-causal; Nsight Compute of v09 and v23 at 8k.
"$klab" report "$run_v23b"/attn/bench_*.json --family attention --readme docs/worklogs/attention.md \
  --section results-382bde2-v23
"$klab" profile-report "$run_v23b"/profiles/profiles_d64.json --readme docs/worklogs/attention.md \
  --section profile-382bde2-d64
# qk v08 (a warp a part in registers): its first forms (bb979cc), then with the next unit's
# loads in flight (49915da; form c traffic-only, its checks fail by design: MANIFEST.md).
run_v08=$res/2026-12-04_bb979cc_qk_v08_first
"$klab" report "$run_v08"/a/bench_qk.json "$run_v08"/a/bench_qk_64.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-bb979cc-qk-a
"$klab" report "$run_v08"/b/bench_qk_*.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-bb979cc-qk-b
run_v08=$res/2026-12-04_49915da_qk_v08_prefetch
"$klab" report "$run_v08"/a/bench_qk.json "$run_v08"/a/bench_qk_64.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section results-49915da-qk-a
for form in b c; do
  "$klab" report "$run_v08"/$form/bench_qk_*.json --family qk_norm_rope_cache \
    --readme docs/worklogs/fused.md --section results-49915da-qk-$form
done
"$klab" profile-report "$run_v08"/a/profiles_qk.json --family qk_norm_rope_cache \
  --readme docs/worklogs/fused.md --section profile-49915da-qk
"$klab" report "$run_v08"/a/bench_qk.json --family qk_norm_rope_cache \
  --readme kernels/qk_norm_rope_cache/README.md --section results-latest
# The roofline (a teaching figure: the first half of the course's runs, readable as a plot) and the
# predictions table (every run: each record's newest measurement, each ceiling's highest).
runs=("$res/2026-11-30_fe9e36e_every_gpu_rung/ceilings.json" "$res/2026-11-30_e605054_first_run/run.json" "$res/2026-11-30_81bee71_memory_sweeps/run_memory.json" "$res/2026-11-30_fe9e36e_every_gpu_rung/run.json"
      "$res/2026-11-30_e1de696_transpose_v07_f32_tuned/run_transpose.json" "$res/2026-11-30_8d2d5de_sgemm_v16_hgemm_v08/run_gemm.json" "$res/2026-11-30_e1de696_sgemm_v16_tuned/run_sgemm_v16.json"
      "$res/2026-11-30_4f99922_transpose_gemm_tables/run_transpose.json" "$res/2026-11-30_4f99922_transpose_gemm_tables/run_gemm.json" "$res/2026-11-30_42d9e48_sgemm_v17_refill/run_sgemm_v17.json"
      "$res/2026-11-30_05d48bb_transpose_final/run_transpose.json" "$res/2026-11-30_c1a69fc_gemm_tables/run_gemm.json"
      "$res/2026-11-30_3355690_sgemm_v18_probe/run_sgemm.json" "$res/2026-11-30_7ee3907_hgemm_v09_tuned/run_gemm.json"
      "$res/2026-11-30_f9215ea_gemm_final/run_gemm.json"
      "$res/2026-12-01_9023867_harness_run/ceilings.json" "$res/2026-12-01_9023867_harness_run/run.json")
"$klab" predict "$res" --md docs/predictions.md
"$klab" roofline --device h200 --dtype bf16 --results "${runs[@]}" --md docs/roofline_h200.md \
  --plot docs/roofline_h200.png
# decode v20-v24 (finer splits on e4m3 and bf16, the compact grid, the early issue, one CTA an SM):
# e4m3 v15 / v20 / v22 and bf16 v13 / v21 / cuDNN launch by launch at the goal shapes; v13, v23,
# v24 and cuDNN at B = 1; the timelines of v13 (with the last phase by SM share) and v23.
run_v24=$res/2026-12-05_a6b47ce_decode_v20_v24
"$klab" report "$run_v24"/e4m3/bench_*.json "$run_v24"/bf16/bench_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-a6b47ce-v20
"$klab" report "$run_v24"/b1/bench_*.json --family decode_attention \
  --readme docs/worklogs/decode.md --section results-a6b47ce-b1
for x in v13_1_16_4096_cold v13_1_16_4096_hot v23_1_16_4096_cold; do
  "$klab" timeline --from "$run_v24/tl/tl_$x.json" --readme docs/worklogs/decode.md \
    --section "timeline-a6b47ce-$x"
done
# decode v25-v27 (a cluster's splits share their stages): bf16 v13 / v25 / v26 / cuDNN launch by
# launch at B = 1, e4m3 v14 / v15 / v27 there, bf16 v13 / v25 / cuDNN at (16, 8k); timelines of
# v25 and v13 at B = 1.
run_v25=$res/2026-12-05_964dca6_decode_v25_v27
if [ -d "$run_v25" ]; then
  "$klab" report "$run_v25"/b1/bench_*.json "$run_v25"/b16/bench_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-964dca6-bf16
  "$klab" report "$run_v25"/e4m3/bench_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-964dca6-e4m3
  for f in "$run_v25"/tl/tl_*.json; do
    x=$(basename "$f" .json); x=${x#tl_}
    "$klab" timeline --from "$f" --readme docs/worklogs/decode.md --section "timeline-964dca6-$x"
  done
fi
# decode v28-v30 (a ragged batch's CTAs longest first from a host-built work list), on an H100
# (results/h100): the ragged batch launch by launch, bf16 v13 / v21 / v28 / v29 / cuDNN and e4m3
# v15 / v22 / v30; (64, 4k) pages of 64; Nsight Compute's SM spread of v13 and v29.
run_v28=$(dirname "$res")/h100/2026-12-05_699d86f_decode_v28_v30
if [ -d "$run_v28" ]; then
  "$klab" report "$run_v28"/bf16/bench_*.json "$run_v28"/equal/bench_*.json \
    --family decode_attention --readme docs/worklogs/decode.md --section results-699d86f-bf16
  "$klab" report "$run_v28"/e4m3/bench_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-699d86f-e4m3
  python3 scripts/ncu_details_table.py \
    "v13 (slot order, chunks of 2368)|ragged 64, pages of 16=$run_v28/ncu/v13_ragged.details.txt" \
    "v29 (longest first, chunks of 3328)|ragged 64, pages of 16=$run_v28/ncu/v29_ragged.details.txt" \
    --label-headers "kernel|shape" --column "duration (ncu)=Duration" --column "DRAM busy=DRAM Throughput" \
    --column "SM active cycles: min / mean / max=sm__cycles_active.min+sm__cycles_active.avg+sm__cycles_active.max" \
    --column "elapsed cycles (max)=sm__cycles_elapsed.max" \
    --readme docs/worklogs/decode.md --section ncu-699d86f-spread
  "$klab" report "$run_v28"_second/bf16/bench_*.json "$run_v28"_second/e4m3/bench_*.json \
    "$run_v28"_second/equal/bench_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-699d86f-second
fi
run_v28c=$(dirname "$res")/h100/2026-12-05_667ed14_decode_v28_v30_third
if [ -d "$run_v28c" ]; then
  "$klab" report "$run_v28c"/bf16/bench_*.json "$run_v28c"/e4m3/bench_*.json \
    "$run_v28c"/equal/bench_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-667ed14-third
fi
# The first GPU run of qk's e4m3 cache write, decode's contiguous cuDNN baseline and v31, on an
# H100 (results/h100): qk v03 against the unfused launches in both pool dtypes; decode at B = 1
# and on the ragged batch launch by launch; v31's and v13's timelines at (1, 32k).
run_c1e=$(dirname "$res")/h100/2026-12-06_c1e6cdd_qk_e4m3_contig_v31
if [ -d "$run_c1e" ]; then
  "$klab" report "$run_c1e"/qk/bench_*.json --family qk_norm_rope_cache \
    --readme docs/worklogs/fused.md --section results-c1e6cdd-qk-e4m3
  "$klab" report "$run_c1e"/dec/bench_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-c1e6cdd-decode
  for v in v31 v13; do
    "$klab" timeline --from "$run_c1e/dec/tl_${v}_1_32k.json" --readme docs/worklogs/decode.md \
      --section "timeline-c1e6cdd-$v"
  done
fi
# A run on an H100 (results/h100): RUN's benches (GLOB under the run) of FAMILY into
# docs/worklogs/DOC's SECTION; nothing where the run is absent.
h100_report() {  # RUN GLOB FAMILY DOC SECTION
  local run=$(dirname "$res")/h100/$1
  [ -d "$run" ] || return 0
  "$klab" report "$run"/$2 --family "$3" --readme "docs/worklogs/$4" --section "$5"
}
# An H100 run's Nsight Compute records (FILE under RUN, a glob allowed) into DOC's SECTION.
h100_profile() {  # RUN FILE DOC SECTION
  local run=$(dirname "$res")/h100/$1
  [ -d "$run" ] || return 0
  "$klab" profile-report $run/$2 --readme "docs/worklogs/$3" --section "$4"
}
# H100 runs' interleaved records, process by process (`klab report --processes`), from the folders
# (under results/h100) named after DOC and SECTION, into DOC's SECTION.
h100_processes() {  # DOC SECTION FOLDER...
  local doc=$1 section=$2 dirs=() d
  shift 2
  for d in "$@"; do [ -d "$(dirname "$res")/h100/$d" ] && dirs+=("$(dirname "$res")/h100/$d"); done
  [ ${#dirs[@]} -gt 0 ] || return 0
  "$klab" report "${dirs[@]}" --processes --readme "docs/worklogs/$doc" --section "$section"
}
# An A/B run on an H100: each build's folder BUILDS/BUILD's benches into DOC's SECTION-BUILD
# (BUILDS: the run's folder of builds, <run>/ab in scripts/measure_ab.sh's layout).
h100_ab() {  # BUILDS FAMILY DOC SECTION BUILD...
  local builds=$1 family=$2 doc=$3 section=$4
  shift 4
  for x in "$@"; do h100_report "$builds" "$x/bench_*.json" "$family" "$doc" "$section-$x"; done
}
# A decode run on an H100 (results/h100): its benches' table into decode.md's
# results-<TAG>-decode, and each rung's `klab timeline` at (1, 32k) into timeline-<TAG>-<rung>
# (TAG: the build's sha, or the sha and a word where one build has several runs).
decode_h100_run() {  # RUN_NAME TAG RUNG...
  local run tag=$2
  run=$(dirname "$res")/h100/$1
  shift 2
  [ -d "$run" ] || return 0
  "$klab" report "$run"/dec/bench_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section "results-$tag-decode"
  for v in "$@"; do
    "$klab" timeline --from "$run/dec/tl/tl_${v}_1_32k.json" --readme docs/worklogs/decode.md \
      --section "timeline-$tag-$v"
  done
}
# decode v32's first GPU run: every goal shape of issue 15 launch by launch beside v13 and both
# cuDNN graphs (v31 and the ragged rungs where they apply); the timelines of v32, v31 and v13.
decode_h100_run 2026-12-06_826ba41_decode_v32 826ba41 v32 v31 v13
# decode v33's first GPU run (v33 since withdrawn: decode.md's "v33-v35 withdrawn"): v13, v32 and
# v33 at B = 1 and on the ragged batch; the timelines of v33 and v32.
decode_h100_run 2026-12-06_dfab43a_decode_v33 dfab43a v33 v32
# decode v36 and v37's first GPU run (the dependent merge): v36 beside v32, v13 and cuDNN at
# (1, 32k) and (1, 4k), v37 beside v15 at (1, 32k) e4m3; no timelines.
decode_h100_run 2026-12-07_4a5b44f_decode_v36_v37 4a5b44f
# v36 and v37 at every shape of their dtype, under the three sanitizers, beside v32, v13 and cuDNN
# at B = 1, (16, 8k) and the ragged batch; the timelines of v36's split kernel and of v32.
decode_h100_run 2026-12-07_4a5b44f_decode_tail 4a5b44f-tail v36 v32
# The e4m3 stage's conversion without a shift (0d5a90a) against the build before: each build's
# e4m3 rungs, and the new build's bf16 rungs beside them, at issue 15's batched shapes.
h100_report 2026-12-06_0d5a90a_decode_e4m3_convert 'dec/old/bench_*_e4m3.json' decode_attention \
  decode.md results-0d5a90a-e4m3-old
h100_report 2026-12-06_0d5a90a_decode_e4m3_convert 'dec/new/bench_*.json' decode_attention \
  decode.md results-0d5a90a-e4m3-new
# v19's entry 5 (the tokens halved over a pair): every entry tuned at M = 64 and 128 on Qwen3-8B's
# projections, then v18 paired with cuBLASLt there.
h100_report 2026-12-07_6c9f909_v19_token_halves 'tune/tune_v19_*.json' hgemm gemm.md \
  results-6c9f909-v19-tune
h100_report 2026-12-07_6c9f909_v19_token_halves 'tune/bench_*.json' hgemm gemm.md results-6c9f909-v18
# The near misses' diagnostics: the FA2 rungs beside cuDNN and PyTorch's SDPA at causal 4k;
# Nsight Compute (--set all) of attention v16, v18 and cuDNN there and of hgemm v18 and cuBLASLt
# at 512 x 4096 x 4096.
near=$res/2026-12-05_a6b47ce_near_miss_profiles
"$klab" report "$near"/fa2/bench_4k.json "$near"/fa2/torch_sdpa_4k.json --family attention \
  --against attention.torch_sdpa_flash --readme docs/worklogs/attention.md --section results-a6b47ce-fa2-4k
"$klab" profile-report "$near"/profiles/profiles_4k.json --readme docs/worklogs/attention.md \
  --section profile-a6b47ce-causal-4k
"$klab" profile-report "$near"/profiles/profiles_512.json --readme docs/worklogs/gemm.md \
  --section profile-a6b47ce-512
# The H200's runs of 02a2e5d: the measurements the H100 runs left open (decode's ragged batch and
# B = 1, qk on both pool dtypes), issue 13's grid and v18 re-tuned at its shapes under 1.00x,
# attention's near misses, the FA2 rungs beside PyTorch's SDPA, decode e4m3 against bf16 at
# (16, 8k).
r02=$res/2026-12-06_02a2e5d_pending_decode_qk_read_at
if [ -d "$r02" ]; then
  "$klab" report "$r02"/dec/bench_ragged_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-02a2e5d-ragged
  "$klab" report "$r02"/dec/bench_1x*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-02a2e5d-b1
  "$klab" report "$r02"/qk/bench_*.json --family qk_norm_rope_cache \
    --readme docs/worklogs/fused.md --section results-02a2e5d-qk
  "$klab" report "$res"/2026-12-06_02a2e5d_hgemm_grid_attention/grid/bench_*.json --family hgemm \
    --readme docs/worklogs/gemm.md --section results-02a2e5d-grid
  "$klab" report "$res"/2026-12-06_02a2e5d_hgemm_retune/grid/bench_*.json --family hgemm \
    --readme docs/worklogs/gemm.md --section results-02a2e5d-retune
  "$klab" report "$res"/2026-12-06_02a2e5d_hgemm_grid_attention/attn/bench_*.json --family attention \
    --readme docs/worklogs/attention.md --section results-02a2e5d-near
  f02=$res/2026-12-06_02a2e5d_fa2_torch_decode_16x8k
  "$klab" report "$f02"/fa2/bench_*.json "$f02"/fa2/torch_sdpa_*.json --family attention \
    --against attention.torch_sdpa_flash --readme docs/worklogs/attention.md --section results-02a2e5d-fa2
  "$klab" report "$f02"/dec/bench_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-02a2e5d-16x8k
fi
# The open goals measured again on the H200 (8f9b47a: v24, the votes, v19's TMA store):
# attention's FA3 near misses with v24 beside v09 at D = 64, the FA2 rungs beside PyTorch's SDPA,
# v18 at M = 64 and 128 after v19's tune, the M >= 512 near misses process by process, decode.
g8=$res/2026-12-07_8f9b47a_open_goals
if [ -d "$g8" ]; then
  "$klab" report "$g8"/fa3/bench_*.json --family attention \
    --readme docs/worklogs/attention.md --section results-8f9b47a-fa3
  "$klab" report "$g8"/fa2/bench_*.json "$g8"/fa2/torch_sdpa_*.json --family attention \
    --against attention.torch_sdpa_flash --readme docs/worklogs/attention.md --section results-8f9b47a-fa2
  "$klab" report "$g8"/tune/bench_*.json --family hgemm \
    --readme docs/worklogs/gemm.md --section results-8f9b47a-small-m
  "$klab" report "$g8"/g13 --processes --readme docs/worklogs/gemm.md --section results-8f9b47a-g13
  "$klab" report "$g8"/dec/bench_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-8f9b47a-dec
fi
# v25's 5% bisected on the H200 (four builds in turn, process by process), and the open goals
# measured again with the build of 4b3d578 (v24-v26's unseen rows in the sums' vote again): the
# FA3 rungs with cuDNN, decode, and v18 at M = 64, 128 and the M >= 512 near misses without its
# committed table (set aside from the goals: gemm.md says why).
bis=$res/2026-12-07_4b3d578_v25_bisect
[ -d "$bis" ] && "$klab" report "$bis"/ab --processes --readme docs/worklogs/attention.md \
  --section results-4b3d578-bisect
g4=$res/2026-12-07_4b3d578_open_goals
if [ -d "$g4" ]; then
  "$klab" report "$g4"/fa3/bench_*.json --family attention \
    --readme docs/worklogs/attention.md --section results-4b3d578-fa3
  "$klab" report "$g4"/tune/bench_*.json --family hgemm \
    --readme docs/worklogs/gemm.md --section results-4b3d578-small-m
  "$klab" report "$g4"/g13 --processes --readme docs/worklogs/gemm.md --section results-4b3d578-g13
  "$klab" report "$g4"/dec/bench_*.json --family decode_attention \
    --readme docs/worklogs/decode.md --section results-4b3d578-dec
fi
# v18 tuned on an H100 at issue 13's 34 shapes, each then paired with cuBLASLt.
h100_report 2026-12-06_4f69d98_hgemm_h100_tune 'grid/bench_*.json' hgemm gemm.md results-4f69d98-h100-tune
# v19 at M = 16, 17 and 64 (N = K = 4096) with cuBLASLt, Nsight of both and v19's PC samples.
h100_report 2026-12-06_4f69d98_hgemm_v19_m64 'bench/bench_*.json' hgemm gemm.md results-4f69d98-v19-m64
vm=$(dirname "$res")/h100/2026-12-06_4f69d98_hgemm_v19_m64
if [ -d "$vm" ]; then
  "$klab" profile-report "$vm"/prof/profiles.json --readme docs/worklogs/gemm.md \
    --section profile-4f69d98-v19-m64
  python3 scripts/ncu_source_stalls.py "$vm"/src/v19_m64_source.csv.xz --readme docs/worklogs/gemm.md \
    --section stalls-4f69d98-v19-m64
fi
# v19's A box and dealt-out split epilogue (8932e03) against 4f69d98, in turn twice; v18 after it.
h100_ab 2026-12-06_8932e03_hgemm_v19_ends/ab hgemm gemm.md results-8932e03-v19 old1 new1 old2 new2
h100_report 2026-12-06_8932e03_hgemm_v19_ends 'grid/bench_*.json' hgemm gemm.md results-8932e03-v18-small
# v19 tuned per shape class at M <= 128, v18 with cuBLASLt after each (4a65d1e).
h100_report 2026-12-06_4a65d1e_hgemm_v19_tuned 'grid/bench_*.json' hgemm gemm.md results-4a65d1e-v19-tuned
# v24 (B copied into whole 128-byte rows) beside v15, v14, v18 and cuBLASLt at the ragged shape, its
# neighbours and 4096^3; v18 after its tune at the ragged shape (5f7c367).
h100_report 2026-12-06_5f7c367_hgemm_v24 'b/bench_*.json' hgemm gemm.md results-5f7c367-v24
h100_report 2026-12-06_5f7c367_hgemm_v24 'b/tuned_*.json' hgemm gemm.md results-5f7c367-v24-tuned
# Nsight Compute of v24's two kernels, v15 and cuBLASLt at the ragged shape (7e4b294).
h100_profile 2026-12-06_7e4b294_hgemm_v24_profile prof/profiles.json gemm.md profile-7e4b294-v24
# v24 (at aligned shapes v18's 128x256_k1) on the split-tiles kernel (a, 7e4b294) and on v14's own
# kernel (b, c491392), beside v14 and cuBLASLt, in turn twice.
h100_ab 2026-12-06_c491392_hgemm_v14_own_kernel/ab hgemm gemm.md results-c491392-v14-own a1 b1 a2 b2
# v18's unsplit 128 x 128 and 128 x 192 entries on v14's own kernel, 6 stages at 128 (b, 29e7427),
# against the split-tiles kernel (a, 3923963), in turn twice at M = 512; build b's entries tuned.
h100_report 2026-12-06_29e7427_hgemm_v14_kernel_128 'tune/tune_*.json' hgemm gemm.md results-29e7427-v14-128-tune
# The same entry in three builds (a 3923963, b 29e7427, c d948a34: v14's kernel with 5 stages) and c
# alone at four shapes, process by process (klab report --processes); Nsight of each build.
h100_processes gemm.md results-d948a34-processes 2026-12-06_29e7427_hgemm_v14_kernel_128/ab \
  2026-12-06_d948a34_hgemm_v14_kernel_128_stages/run1/ab 2026-12-06_d948a34_hgemm_v14_kernel_128_stages/run2/ab \
  2026-12-06_d948a34_hgemm_v14_kernel_128_stages/procs/procs
h100_profile 2026-12-06_d948a34_hgemm_v14_kernel_128_stages 'run1/prof/profiles_*.json' gemm.md profile-d948a34-128
# One GEMM paired with itself and v18 with cuBLASLt, process by process, with the order rotated each
# round (6c9f909) and drawn at random (e98e963).
h100_processes gemm.md results-e98e963-order 2026-12-07_6c9f909_placement/procs \
  2026-12-07_e98e963_drawn_order/procs
# v18 with cuBLASLt at M = 64 and 128, two variants in drawn orders, after v19's tune (e98e963).
h100_report 2026-12-07_e98e963_v19_tune_drawn 'goals/tune/bench_*.json' hgemm gemm.md results-e98e963-v18
# v19's TMA-store epilogue, v14's prefetched maps and the lazy-rescale vote, the build before and
# after in turn (scripts/measure_ab.sh), process by process.
h100_processes gemm.md results-229707c-ab-gemm 2026-12-07_229707c_ab_store_vote/gemm_m64/ab \
  2026-12-07_229707c_ab_store_vote/gemm_512/ab
h100_processes attention.md results-229707c-ab-attn 2026-12-07_229707c_ab_store_vote/attn_d64/ab \
  2026-12-07_229707c_ab_store_vote/attn_c4k/ab
# v25 (v16 with v24's softmax) and v24 at causal D = 128 with cuDNN; decode's swapped softmax
# trims (6ae6bfa) against the build before, the e4m3 loop's rate with the cache in L2.
h100_report 2026-12-07_6ae6bfa_v25_swap_trims 'attn/bench_*.json' attention attention.md \
  results-6ae6bfa-v25
h100_ab 2026-12-07_6ae6bfa_v25_swap_trims/dec/ab decode_attention decode.md results-6ae6bfa-trims \
  old1 new1 old2 new2
# The e4m3 swapped stage's S^T as two chains (c881a73, branch decode-e4m3-split-chains) against
# the build before, in turn.
h100_ab 2026-12-07_c881a73_decode_e4m3_split_chains/dec_e4m3 decode_attention decode.md \
  results-c881a73-split old1 new1 old2 new2
# v26 (v25 in v20's line order) beside v16 and v25 at causal D = 128, v24 beside v09 at D = 64, paired
# with cuDNN (f42a9c8: v24's and v25's rare paths mended).
h100_report 2026-12-07_f42a9c8_v26_checks 'goals/fa3/bench_*.json' attention attention.md \
  results-f42a9c8-v26
# v25 in three builds in turn (6ae6bfa, before the mends; f42a9c8, after them; 3f7fec4, one
# softmax_block call), process by process; the last build's v25 and v26 at causal 8k and 16k.
h100_processes attention.md results-3f7fec4-abc 2026-12-07_3f7fec4_v25_one_softmax/abc/ab
h100_report 2026-12-07_3f7fec4_v25_one_softmax 'v26_fix_*.json' attention attention.md \
  results-3f7fec4-v26
# The unseen-row vote under the S product (399884e) beside 6ae6bfa, in turn, process by process.
h100_processes attention.md results-399884e-hoist 2026-12-07_399884e_v25_hoisted_vote/ab_hoist/ab
# An FA2 A/B run on an H100 (results/h100): each build's folder's benches of the FA2 rungs with
# PyTorch's SDPA of the same problems into attention.md's results-<SECTION>-<build>.
fa2_builds() {  # RUN_NAME SECTION BUILD...
  local run=$(dirname "$res")/h100/$1 section=$2
  shift 2
  [ -d "$run" ] || return 0
  for x in "$@"; do
    "$klab" report "$run/$x"/bench_*.json "$run/$x"/torch_sdpa_*.json --family attention \
      --against attention.torch_sdpa_flash --readme docs/worklogs/attention.md \
      --section "results-$section-$x"
  done
}
# The FA2 kernel's row indices recomputed (65966c4): each build's v13 and v14 beside cuDNN and
# PyTorch's SDPA at causal 4k; Nsight Compute of the two rungs and PyTorch's kernel's source
# counters.
fa2_builds 2026-12-06_65966c4_fa2_rows_torch 65966c4-fa2-rows a b
fr=$(dirname "$res")/h100/2026-12-06_65966c4_fa2_rows_torch
if [ -d "$fr" ]; then
  "$klab" profile-report "$fr"/prof/profiles_fa2_4k.json --readme docs/worklogs/attention.md \
    --section profile-65966c4-fa2
  python3 scripts/ncu_source_stalls.py "$fr"/src/torch_source.csv.xz --readme docs/worklogs/attention.md \
    --section stalls-65966c4-torch-flash
fi
# The FA2 kernel's K fragments in B's register order (231334b): the build before and the new one
# at causal 4k, the new one at 14.5's other shapes.
fa2_builds 2026-12-06_231334b_fa2_k_order 231334b-fa2 old new
# The FA2 rungs in rounds of their own (no cuDNN), PyTorch's SDPA after them (4f69d98).
fa2_builds 2026-12-06_4f69d98_fa2_alone 4f69d98-fa2 fa2
# The FA3 descriptors advanced and Q's from a uniform index (af85b52) against 4f69d98, in turn
# twice: each build's benches (the rungs with cuDNN).
h100_ab 2026-12-06_af85b52_attention_desc_advance/ab attention attention.md results-af85b52 \
  old1 new1 old2 new2
# The softmax's row max (every D) and row sum (D = 64) as trees (8c64945) against 2a27a5e's code,
# in turn twice: each build's benches (the rungs with cuDNN).
h100_ab 2026-12-06_8c64945_attention_row_trees/ab attention attention.md results-8c64945 x1 t1 x2 t2
# The row sum tree apart from the max tree (m), and Q's uniform index at D = 64 only (u), beside
# the tree build (t), at D = 64.
h100_ab 2026-12-06_dc038f9_attention_row_sum_apart/ab attention attention.md results-dc038f9 \
  t1 m1 u1 t2 m2
# Q's uniform index at D = 64 (u, as the code after 9527110 keeps it) against 9527110, in turn three
# times, at D = 64.
h100_ab 2026-12-06_9527110_attention_q_uniform_d64/ab attention attention.md results-9527110 \
  h1 u1 h2 u2 h3 u3
# Nsight Compute of v09 and cuDNN at D = 64 non-causal 8k, with the XU (MUFU) pipe (27a6ef4).
h100_profile 2026-12-06_27a6ef4_attention_d64_xu_profile prof/profiles_d64.json attention.md \
  profile-27a6ef4-d64
# v10 at every eighth term (h, 27a6ef4) and every sixteenth (p) beside v09 and cuDNN at D = 64, in
# turn twice; Nsight Compute of both v10 builds.
h100_ab 2026-12-06_27a6ef4_attention_v10_sixteenth/ab attention attention.md results-27a6ef4-v10 \
  h1 p1 h2 p2
for x in h p; do
  h100_profile 2026-12-06_27a6ef4_attention_v10_sixteenth "prof/profiles_v10_$x.json" \
    attention.md "profile-27a6ef4-v10-$x"
done
# Where the open issues' criteria stand, judged against every committed run (docs/goals.json).
"$klab" goals docs/goals.json "$res" --readme docs/goals.md --section goals
# Kernels' loops, read from the build's SASS (klab sass --table; a CUDA build, no GPU), into DOC's
# SECTION: the kernels whose names contain every FILTER. A CPU-only build holds no device code,
# and then the section is left as it is.
sass_section() {  # DOC SECTION FILTER...
  local doc=$1 section=$2 args=() n
  shift 2
  for k in "$@"; do args+=(--kernel "$k"); done
  n=$("$klab" sass "${args[@]}" --list 2>/dev/null | awk '/ kernels in /{print $1}')
  if [ "${n:-0}" -gt 0 ]; then
    "$klab" sass "${args[@]}" --readme "$doc" --section "$section" > /dev/null
  else
    echo "update_docs: $klab holds none of $doc's $section kernels (a CPU-only build?): the section is left as it is" >&2
  fi
}
# The wgmma rungs' loops.
sass_section docs/worklogs/gemm.md sass-hopper klab::hgemm wgmma_ __nv_bfloat16
# The three-consumer attention kernels at D = 64 (v09, v10; bf16): their rounds' length and MUFU.
sass_section docs/worklogs/attention.md sass-attention-d64 \
  "ThreeConsumerConfig, klab::attention::fa3::ThreeConsumerConfig>, klab::attention::fa3::Config<64" \
  "__nv_bfloat16, 64>"
