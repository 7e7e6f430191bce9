#pragma once
// Shared plumbing of the transpose rungs: typed arguments, dtype dispatch, tile grids.
#include <cuda_bf16.h>

#include <algorithm>
#include <string>

#include "kernels/transpose/family.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/dispatch.cuh"
#include "klab/device/launch.hpp"

namespace klab::transpose {

/// in: (rows, cols) row-major; out: (cols, rows) row-major.
template <class T>
struct Args {
  const T* __restrict__ in;
  T* __restrict__ out;
  int64_t rows, cols;
};

/// Calls fn(Args<T>) with T = float or __nv_bfloat16, the problem's dtype.
template <class Fn>
void with_args(const Problem& p, Buffers& b, Fn&& fn) {
  device::dispatch_among<float, __nv_bfloat16>(p.dtype, "transpose", [&]<class T>() {
    fn(Args<T>{b.ptr<T>("in"), b.ptr<T>("out"), p.dim("rows"), p.dim("cols")});
  });
}

inline cudaStream_t stream_of(const LaunchArgs& a) {
  return reinterpret_cast<cudaStream_t>(a.stream);
}

/// The most blocks gridDim.y may hold; kernels walk further tile rows with a stride of gridDim.y.
inline constexpr int64_t kMaxGridY = 65535;
/// The most blocks gridDim.x may hold (1-D grids stride over further tiles).
inline constexpr int64_t kMaxGridX = 2147483647;

/// x: one block per column tile; y: one per row tile, capped at kMaxGridY (kernels loop).
inline dim3 tile_grid(int64_t rows, int64_t cols, int64_t tile_rows, int64_t tile_cols) {
  return dim3(static_cast<unsigned>(device::ceil_div(cols, tile_cols)),
              static_cast<unsigned>(std::min(device::ceil_div(rows, tile_rows), kMaxGridY)));
}

inline Variant gpu_variant(
    const std::string& rung, const std::string& summary,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch) {
  return gpu_variant_of("transpose." + rung, summary, 70, {DType::f32, DType::bf16},
                        std::move(launch));
}

/// v04's launcher: v05 falls back to it when sizes or alignment forbid 16-byte vectors.
void launch_swizzled(const Problem& p, Buffers& b, const LaunchArgs& args);

}  // namespace klab::transpose
