#pragma once
// The elementwise families (vector_add, saxpy, relu, grayscale) and their rung factories.
#include "klab/harness/family.hpp"

namespace klab::elementwise {

/// saxpy's scalar: exactly representable, so the reference and the kernels multiply by the same value.
inline constexpr float kSaxpyAlpha = 1.5f;

Family make_vector_add();
Family make_saxpy();
Family make_relu();
Family make_grayscale();

enum class Op { add, saxpy, relu, grayscale };

// One factory per rung, each defined in its own file (vNN_*.cu, baseline_cub.cu, cpu.cpp).
Variant cpu_v00(Op op);
Variant gpu_v01_naive(Op op);
Variant gpu_v02_grid_stride(Op op);
Variant gpu_v03_vectorized(Op op);
Variant gpu_v04_vectorized_ilp(Op op);
Variant gpu_v05_bulk_copy_sm90(Op op);   // map ops only
Variant gpu_v06_gray_bulk_sm90();        // grayscale only
Variant gpu_v07_bulk_tiles_sm90(Op op);  // map ops only
Variant gpu_baseline_cub(Op op);

/// "vector_add", "saxpy", ...
const char* op_family(Op op);

}  // namespace klab::elementwise
