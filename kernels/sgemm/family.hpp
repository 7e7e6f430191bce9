#pragma once
// The sgemm family (FP32 C = alpha * A @ B + beta * C, row-major) and its rung factories.
#include "klab/harness/family.hpp"

namespace klab::sgemm {

/// The GEMM scalars: exactly representable, so the reference and the kernels scale by the same
/// values, and beta != 0 makes C an in-place operand every rung must read.
inline constexpr float kAlpha = 1.5f;
inline constexpr float kBeta = 0.5f;

Family make_sgemm();

// One factory per rung, each defined in its own file (cpu.cpp, vNN_*.cu, baseline_cublas.cu).
Variant cpu_v00();
Variant gpu_v01_naive();
Variant gpu_v02_coalesced();
Variant gpu_v03_smem_tiles();
Variant gpu_v04_1d_blocktile();
Variant gpu_v05_2d_blocktile();
Variant gpu_v06_vectorized();
Variant gpu_v07_bank_conflict_free();
Variant gpu_v08_double_buffer();
Variant gpu_v09_warptile();
Variant gpu_v10_autotuned();
Variant gpu_v11_multistage();
Variant gpu_v12_multistage_256x128();
Variant gpu_v13_multistage_at();
Variant gpu_v14_multistage_at_256x128();
Variant gpu_v15_hoisted_copies();
Variant gpu_v16_autotuned_multistage();
Variant gpu_v17_spread_copies();
Variant gpu_v18_tma_producer();
Variant gpu_baseline_cublas();

}  // namespace klab::sgemm
