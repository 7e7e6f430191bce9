#pragma once
// The attention family (forward): O = softmax(Q K^T * scale, optional causal mask) V and the
// log-sum-exp of every query row, bf16/f16 in and out, fp32 log-sum-exp; or FP8 (e4m3) Q, K
// and V with per-tensor fp32 scales and bf16 out (FlashAttention 3's FP8 forward); and its rung
// factories.
//
// Tensors (row-major):
//   q   (B, Nq,  Hq,  D)   k, v (B, Nkv, Hkv, D)   o (B, Nq, Hq, D)   lse (B, Hq, Nq) fp32
// An e4m3 problem adds q_scale, k_scale and v_scale (fp32, one each, after lse): the inputs'
// values are the e4m3 elements times their tensor's scale (the descale factors FlashAttention 3
// and cuDNN take); o is bf16.
// Query head h reads key/value head h / (Hq / Hkv) (grouped-query attention: any Hq that is a
// multiple of Hkv). scale = 1 / sqrt(D). lse = log(sum_j exp(s_j)) in natural-log units of the
// scaled scores s_j = scale * q . k_j, as FlashAttention returns it (its softmax_lse).
#include <cmath>
#include <cstdint>
#include <vector>

#include "klab/harness/family.hpp"

namespace klab::attention {

/// A problem's dimensions, read once from its shape.
struct Dims {
  int64_t b = 0, nq = 0, nkv = 0, hq = 0, hkv = 0, d = 0;
  bool causal = false;
  int64_t amp = 1;  ///< Q and K are the run's distribution times amp (see family.cpp)

  static Dims of(int64_t b, int64_t nq, int64_t nkv, int64_t hq, int64_t hkv, int64_t d,
                 bool causal, int64_t amp = 1) {
    return {b, nq, nkv, hq, hkv, d, causal, amp};
  }

  int64_t group() const { return hq / hkv; }
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(d)); }
  /// Keys query row n attends to: [0, visible_keys(n)). Causal masks are aligned to the bottom
  /// right, as FlashAttention's: row n sees keys j <= n + (nkv - nq), so the last query row sees
  /// every key, and when nq > nkv the first nq - nkv rows see none (empty rows).
  int64_t visible_keys(int64_t n) const {
    if (!causal) return nkv;
    const int64_t last = n + nkv - nq;  // the last key row n may see
    return last < 0 ? 0 : (last >= nkv ? nkv : last + 1);
  }
  /// Query rows in all: B * Nq * Hq.
  int64_t rows() const { return b * nq * hq; }
};

Dims dims_of(const Problem& p);
/// The type of o (and of P in a tensor-core rung's P V): the problem's, bf16 for e4m3 inputs.
inline DType output_dtype(DType t) { return t == DType::e4m3 ? DType::bf16 : t; }
Problem problem(const Dims& s, DType t, int64_t misalign = 0);

/// Unmasked (query, key) pairs of one (batch, head), as the continuous area FlashAttention's
/// FLOP count uses (see family.cpp): nq * nkv, or under the causal mask the area of the visible
/// trapezoid (nq <= nkv) or triangle (nq > nkv: the empty rows do no work).
double visible_pairs(const Dims& s);

/// The fp64 reference of one query row (batch bi, query position n, query head h), from the
/// inputs as fp32 arrays (bf16 and f16 values are exact in fp32).
struct RowReference {
  std::vector<double> o;          ///< (D): the output row; all 0 for an empty row
  std::vector<double> magnitude;  ///< (D): each element's error scale (family.cpp, tolerance)
  double lse = 0;                 ///< -inf for an empty row
  double lse_magnitude = 0;       ///< the row's largest score bound, max_j scale sum_i |q_i k_ji|
};
void reference_row(const Problem& p, const float* q, const float* k, const float* v, int64_t bi,
                   int64_t n, int64_t h, RowReference& out);

/// The whole fp64 reference (every row of o and lse, with magnitudes), as Family::reference.
void reference_all(const Problem& p, const Buffers& b, Reference& ref);

/// The v00 CPU rung refuses problems above this many flops (seconds per run on the host).
inline constexpr double kCpuRungMaxFlops = 1e10;
/// Above this many flops the whole fp64 reference is too slow: a sample of rows judges.
inline constexpr double kCpuReferenceMaxFlops = 1e10;

Family make_attention();

// One factory per rung, each in its own file (cpu.cpp, vNN_*.cu, baseline_cudnn.cpp).
Variant cpu_v00();
Variant gpu_v01_materialised();
Variant gpu_v02_tiled_online_softmax();
Variant gpu_v03_fa2_mma();
Variant gpu_v04_fa3_wgmma();
Variant gpu_v05_fa3_overlap();
Variant gpu_v06_fa3_persistent();
Variant gpu_v07_fa4_lazy_rescale();
Variant gpu_v08_fa4_poly_exp2();
Variant gpu_v09_fa3_three_consumers();
Variant gpu_v10_fa4_poly_three_consumers();
Variant gpu_v11_fa3_wide_keys();
Variant gpu_v12_fa3_fp8();
Variant gpu_v13_fa2_two_row_tiles();
Variant gpu_v14_fa2_lazy_rescale();
Variant gpu_v15_fa3_persistent_lazy();
Variant gpu_v16_fa3_tma_epilogue();
Variant gpu_v17_fa3_persistent_tma_epilogue();
Variant gpu_v18_fa3_persistent_q_halves();
Variant gpu_v19_fa3_trimmed_diagonal();
Variant gpu_v20_fa3_line_order();
Variant gpu_v21_fa3_line_small_sections();
Variant gpu_v22_fa3_serial_wide_keys();
Variant gpu_v23_fa3_two_consumer_wide_keys();
Variant gpu_v24_fa3_max_free();
Variant gpu_v25_fa3_max_free_tma_epilogue();
Variant gpu_v26_fa3_max_free_line_order();
/// cuDNN's SDPA (baseline_cudnn.cpp): built only with cuDNN and its frontend (KLAB_HAS_CUDNN_FRONTEND).
Variant gpu_baseline_cudnn();

}  // namespace klab::attention
