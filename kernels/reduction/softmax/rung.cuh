#pragma once
// Shared plumbing of the softmax rungs.
#include <cuda_bf16.h>

#include <string>

#include "kernels/reduction/common.cuh"

namespace klab::reduction {

/// x, y: (rows, cols) row-major; softmax along each row.
template <class T>
struct SoftmaxArgs {
  const T* __restrict__ x;
  T* __restrict__ y;
  int64_t rows, cols;
};

/// Calls fn(SoftmaxArgs<T>) with T = float or __nv_bfloat16, the problem's dtype.
template <class Fn>
void with_softmax_args(const Problem& p, Buffers& b, Fn&& fn) {
  device::dispatch_among<float, __nv_bfloat16>(p.dtype, "softmax", [&]<class T>() {
    fn(SoftmaxArgs<T>{b.ptr<T>("x"), b.ptr<T>("y"), p.dim("rows"), p.dim("cols")});
  });
}

/// exp(t) for t = x - max <= 0: ex2.approx via __expf (error budget in family.cpp's tolerance).
__device__ __forceinline__ float exp_shifted(float t) { return __expf(t); }

inline Variant softmax_variant(
    const std::string& rung, const std::string& summary,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch) {
  return gpu_variant_of("softmax." + rung, summary, 70, {DType::f32, DType::bf16},
                        std::move(launch));
}

/// v05's kernels (v05_warp_rows.cu), which v06 runs wherever its vector spans do not apply: rows of
/// up to kSoftmaxWarpRowsMaxCols columns (warp_rows_fit says why longer ones are refused).
constexpr int kSoftmaxWarpRowsMaxCols = 1024;
template <class T>
void launch_warp_rows(SoftmaxArgs<T> a, cudaStream_t st);
Status warp_rows_fit(const Problem& p);

/// v06's launch (v06_vector_spans.cu), which v07 runs wherever its staged rows do not apply: the
/// vector spans where they apply, v05's kernels elsewhere.
template <class T>
void launch_vector_spans(SoftmaxArgs<T> a, cudaStream_t st);

/// One block per row: gridDim.x holds at most 2^31 - 1 rows.
inline Status one_block_per_row(const Problem& p) {
  if (p.dim("rows") > 2147483647) return Status::no("more than 2^31 - 1 rows (one block per row)");
  return Status::yes();
}

}  // namespace klab::reduction
