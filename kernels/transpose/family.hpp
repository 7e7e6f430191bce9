#pragma once
// The transpose family (row-major rows x cols in, cols x rows out: out[c][r] = in[r][c]) and
// its rung factories.
#include "klab/harness/family.hpp"

namespace klab::transpose {

Family make_transpose();

// One factory per rung, each defined in its own file (cpu.cpp, vNN_*.cu, baseline_cublas.cu).
Variant cpu_v00();
Variant gpu_v01_naive();
Variant gpu_v02_smem_tile();
Variant gpu_v03_padded();
Variant gpu_v04_swizzled();
Variant gpu_v05_vectorized();
Variant gpu_v06_tma_pipeline();
Variant gpu_v07_high_occupancy();
Variant gpu_baseline_cublas();

}  // namespace klab::transpose
