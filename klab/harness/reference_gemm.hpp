#pragma once
// fp64 C = A @ B at chosen output elements: the sampled reference of the GEMM families.
#include <cstdint>
#include <vector>

#include "klab/harness/buffers.hpp"

namespace klab {

/// For row-major A (m x k) and B (k x n) held as host tensors of any float dtype: value[s] =
/// sum_k a_ik b_kj and magnitude[s] = sum_k |a_ik b_kj| for each flat index s = i * n + j of
/// `index`. Products of two inputs of at most 24 significant bits are exact in fp64, so only the
/// fp64 summation rounds (relative 2^-53 k, far below every tolerance).
void gemm_at(const Tensor& a, const Tensor& b, int64_t m, int64_t n, int64_t k,
             const std::vector<int64_t>& index, std::vector<double>& value,
             std::vector<double>& magnitude);

}  // namespace klab
