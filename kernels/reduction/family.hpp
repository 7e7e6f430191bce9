#pragma once
// The reduction families — reduce_sum (a whole tensor to one fp32 scalar) and softmax (row-wise)
// — and their rung factories. Each family's ladder lives in its own subfolder.
#include "klab/harness/family.hpp"

namespace klab::reduction {

Family make_reduce_sum();
Family make_softmax();

// reduce_sum rungs (reduce_sum/*.cpp, reduce_sum/*.cu)
Variant sum_v00_cpu();
Variant sum_v01_smem_tree();
Variant sum_v02_warp_shuffle();
Variant sum_v03_vectorized();
Variant sum_baseline_cub();

// softmax rungs (softmax/*.cpp, softmax/*.cu)
Variant softmax_v00_cpu();
Variant softmax_v01_naive();
Variant softmax_v02_block_row();
Variant softmax_v03_online();
Variant softmax_v04_registers();
Variant softmax_v05_warp_rows();
Variant softmax_v06_vector_spans();
Variant softmax_v07_staged_rows();
Variant softmax_baseline_cudnn();

/// Largest row v04 keeps in registers: 1024 threads x 32 fp32 values.
inline constexpr int64_t kSoftmaxMaxRegisterCols = 32768;

}  // namespace klab::reduction
