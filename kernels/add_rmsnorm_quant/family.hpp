#pragma once
// The add_rmsnorm_quant family: a decoder layer's residual add, RMSNorm and FP8 quantisation of
// the normalised activations, fused (issue 15, item 4(b)), and its rung factories.
//
// Tensors (row-major, one row per token):
//   x             (T, H)                  bf16: the block's output (attention or MLP)
//   residual      (T, H)                  bf16: the residual stream
//   weight        (H)                     bf16: RMSNorm's gain
//   residual_out  (T, H)                  bf16: h = bf16(x + residual), the new residual stream
//   q             (T, H)                  e4m3: y / scale, saturated to +-448
//   scales        (T) or (T, H / group)   fp32: one per token (group = 0) or per 1 x group slice
// with y = h / sqrt(mean(h^2) + eps) * weight (mean over the row's H elements, eps = 1e-6) and
// scale = max |y| / 448 over the token (group = 0) or over each `group` consecutive elements
// (DeepSeek's 1 x 128 activation blocks: the next FP8 GEMM's A operand and its scales). The norm
// reads the stored h (bf16), as the unfused sequence does. An all-zero slice (h = 0 there: its y
// is 0) has scale 0 and q = 0: dequantisation q * scale gives 0, never 0 * inf.
#include <cstdint>
#include <vector>

#include "klab/harness/family.hpp"

namespace klab::add_rmsnorm_quant {

inline constexpr double kEps = 1e-6;
/// The largest finite e4m3 value: a slice's max |y| maps to it.
inline constexpr double kE4m3Max = 448.0;

/// A problem's dimensions, read once from its shape.
struct Dims {
  int64_t tokens = 0;     ///< T
  int64_t hidden = 0;     ///< H
  int64_t group = 0;      ///< elements per scale along a row; 0: one scale per token
  int64_t zero_rows = 0;  ///< rows whose residual is -x (h = 0: the zero-scale path)
  int64_t outlier = 0;    ///< when > 0, one channel per row has a residual of +-outlier

  /// Elements each scale covers.
  int64_t span() const { return group == 0 ? hidden : group; }
  /// Scales per row.
  int64_t groups() const { return hidden / span(); }
};

Dims dims_of(const Problem& p);
Problem problem(const Dims& s);

/// The fp64 reference of one row: h (the bf16-rounded sum), y, the scales and y / scale (q's
/// reference: see family.cpp, tolerances), from the host inputs.
struct RowReference {
  std::vector<double> h, y, q;
  std::vector<double> scales;
};
void reference_row(const Dims& s, const Buffers& b, int64_t row, RowReference& out);

/// The residual's builder (TensorSpec::build) when zero_rows or outlier is set, exposed for the
/// tests: N(0, 1) draws, then `zero_rows` seeded rows set to -x and, in every other row, one
/// seeded channel set to +-outlier.
void build_residual(const Dims& s, const Tensor& x, Tensor& residual, uint64_t seed);

/// Relative error bound of the rungs' y against the reference's (family.cpp, tolerances).
double y_error_bound(int64_t hidden);

/// The v00 CPU rung refuses problems above this many flops (seconds per run on the host).
inline constexpr double kCpuRungMaxFlops = 2e9;
/// Above this many flops a sample of rows judges instead of the whole fp64 reference.
inline constexpr double kCpuReferenceMaxFlops = 1e8;

Family make_add_rmsnorm_quant();

// One factory per rung, each in its own file (cpu.cpp, baseline_unfused.cu, vNN_*.cu).
Variant cpu_v00();
Variant gpu_baseline_unfused();
Variant gpu_v01_fused_row();

}  // namespace klab::add_rmsnorm_quant
