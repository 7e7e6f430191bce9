#pragma once
// The decode_attention family: attention of a few new query tokens per sequence (1 for decode,
// 2-8 for speculative decoding's verify step) against a paged KV cache, and its rung factories.
//
// Tensors (row-major):
//   q            (B, Qlen, Hq, D)          bf16
//   k_cache      (pages, Hkv, P, D)        KV dtype: the problem's dtype, bf16 or e4m3
//   v_cache      (pages, Hkv, P, D)        KV dtype
//   seq_lens     (B)                       i32: tokens in each sequence's cache, new ones included
//   block_table  (B, ceil(len / P))        i32: the pool page of each sequence's page; -1 unused
//   k_scale      (Hkv)                     fp32, e4m3 only: KV head h's keys are k_cache x k_scale[h]
//   v_scale      (Hkv)                     fp32, e4m3 only: its values are v_cache x v_scale[h]
//   o            (B, Qlen, Hq, D)          bf16
//   lse          (B, Qlen, Hq)             fp32, natural log of the scaled scores
// Token j of sequence b lives in page block_table[b][j / P], slot j % P (the HND page layout
// cuDNN's paged SDPA and FlashInfer's "HND" take: one head's P x D tokens contiguous in a page).
// Query head h reads KV head h / (Hq / Hkv). scale = 1 / sqrt(D). The Qlen new tokens are the
// sequence's last Qlen: query t sits at position L - Qlen + t and sees keys j <= L - Qlen + t
// (causal, aligned to the bottom right as the attention family's); a row that sees no key (an
// empty slot, L = 0, or t < Qlen - L) writes O = 0 and lse = -inf.
#include <cmath>
#include <cstdint>
#include <vector>

#include "klab/harness/family.hpp"
#include "klab/harness/reference_attention.hpp"

namespace klab::decode_attention {

/// A problem's dimensions, read once from its shape.
struct Dims {
  int64_t b = 0, qlen = 1, hq = 0, hkv = 0, d = 0;
  int64_t page = 16;    ///< P: tokens per page
  int64_t len = 0;      ///< the longest context; every non-empty slot's when min_len == len
  int64_t min_len = 0;  ///< the shortest non-empty context (a ragged batch spreads between)
  int64_t empty = 0;    ///< slots of length 0

  /// min_len 0 means len (a uniform batch).
  static Dims of(int64_t b, int64_t len, int64_t page, int64_t hq, int64_t hkv, int64_t d,
                 int64_t min_len = 0, int64_t empty = 0, int64_t qlen = 1) {
    return {b, qlen, hq, hkv, d, page, len, min_len > 0 ? min_len : len, empty};
  }

  int64_t group() const { return hq / hkv; }
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(d)); }
  /// Columns of the block table: pages of the longest sequence.
  int64_t max_pages() const { return (len + page - 1) / page; }
  /// Query rows in all: B * Qlen * Hq (o's rows of D, lse's elements).
  int64_t rows() const { return b * qlen * hq; }
  /// Keys query t of a sequence of length l sees: [0, visible_keys(l, t)).
  int64_t visible_keys(int64_t l, int64_t t) const {
    const int64_t n = l - qlen + t + 1;
    return n < 0 ? 0 : (n > l ? l : n);
  }
};

Dims dims_of(const Problem& p);
Problem problem(const Dims& s, DType kv = DType::bf16);

/// The batch's context lengths in ascending order, a function of the shape alone (so that the
/// counts are exact): b - empty lengths spread geometrically from min_len to len (both included;
/// all equal to len when min_len == len), then `empty` zeros. The build step places them in the
/// slots in a seeded order.
std::vector<int64_t> context_lengths(const Dims& s);
/// Pages of the pool: those the sequences need plus an eighth spare (pages no sequence owns).
int64_t pool_pages(const Dims& s);

/// The builders of seq_lens and block_table (TensorSpec::build), exposed for the tests: the
/// lengths of context_lengths() in a seeded order; each sequence's pages drawn from a seeded
/// permutation of the pool (no page shared), unused table entries -1.
void build_seq_lens(const Dims& s, Tensor& t, uint64_t seed);
void build_block_table(const Dims& s, const Tensor& seq_lens, Tensor& t, uint64_t seed);

/// The fp64 reference of query row (sequence bi, new token t, query head h) from the host
/// buffers, with each output element's derived error bound (family.cpp, tolerances).
struct RowReference {
  AttentionRowReference row;
  std::vector<double> o_bound;  ///< (D): o's error bound, the check's magnitude (mtol = 1)
  double lse_bound = 0;         ///< lse's row-dependent error bound (mtol = 1)
};
void reference_row(const Problem& p, const Buffers& b, int64_t bi, int64_t t, int64_t h,
                   RowReference& out, std::vector<double>& scratch);

/// The factor c of a row's o bound, |o' - o| <= u_bf16 |o| + c m_d (family.cpp, tolerances), for
/// n visible keys, the row's score bound A (AttentionRowReference::score_bound) and, in an e4m3
/// cache, the f16 subnormal q's absolute score error delta.
double o_bound_factor(int64_t d, int64_t n, double score_bound, bool e4m3 = false,
                      double delta = 0);

/// The v00 CPU rung refuses problems above this many flops (seconds per run on the host).
inline constexpr double kCpuRungMaxFlops = 2e9;
/// Above this many flops a sample of rows (every sequence's first and last rows among them)
/// judges instead of the whole fp64 reference.
inline constexpr double kCpuReferenceMaxFlops = 5e8;

Family make_decode_attention();

// One factory per rung, each in its own file (cpu.cpp, vNN_*.cu).
Variant cpu_v00();
Variant gpu_v01_block_per_head();
Variant gpu_v02_split_kv();
Variant gpu_v03_gqa_mma();
Variant gpu_v04_persistent_balanced();
Variant gpu_v05_staged_page_indices();
Variant gpu_v06_tma_pages();
Variant gpu_v07_tma_line();
Variant gpu_v08_fp8_kv();
Variant gpu_v09_fp8_swap_ab();
Variant gpu_v10_swap_ab();
Variant gpu_v11_cluster_merge();
Variant gpu_v12_fp8_cluster_merge();
Variant gpu_v13_cluster_push_merge();
Variant gpu_v14_fp8_cluster_push_merge();
Variant gpu_v15_fp8_stage_pairs();
Variant gpu_v16_global_tensor_maps();
Variant gpu_v17_fp8_three_ctas();
Variant gpu_v18_fp8_pairs_three_ctas();
Variant gpu_v19_fp8_stage_triples();
Variant gpu_v20_fp8_fine_splits();
Variant gpu_v21_fine_splits();
Variant gpu_v22_fp8_compact_grid();
Variant gpu_v23_early_issue();
Variant gpu_v24_one_cta_an_sm();
Variant gpu_v25_cluster_steal();
Variant gpu_v26_steal_one_cta_an_sm();
Variant gpu_v27_fp8_cluster_steal();
Variant gpu_v28_longest_first();
Variant gpu_v29_longest_first_chunks();
Variant gpu_v30_fp8_longest_first();
Variant gpu_v31_counter_steal();
Variant gpu_v32_counter_compact_tail();
Variant gpu_v36_dependent_merge();
Variant gpu_v37_fp8_dependent_merge();
Variant gpu_v38_fp8_table_window();
Variant gpu_v39_table_window();
Variant gpu_v40_fp8_longest_first_window();
Variant gpu_v41_fp8_dependent_window();
/// cuDNN's paged SDPA (baseline_cudnn_paged.cpp; CUDA builds with cuDNN's frontend only).
Variant gpu_baseline_cudnn_paged();

/// O = 0 and lse = -inf in every query row that sees no key (t < Qlen - seq_lens[b]), enqueued
/// on `stream` (baseline_cudnn_paged_rows.cu): the rows cuDNN's paged SDPA leaves undefined.
/// seq_lens, o and lse are device pointers; D a multiple of 8.
void write_keyless_rows(const Dims& s, const int32_t* seq_lens, void* o, float* lse, Stream stream);

}  // namespace klab::decode_attention
