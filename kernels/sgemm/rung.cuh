#pragma once
// Shared plumbing of the SGEMM rungs: kernel arguments, the epilogue, bounds-checked 4-wide
// loads and stores, and the Variant boilerplate. Each rung's own technique stays in its file.
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>

#include "kernels/sgemm/family.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/launch.hpp"
#include "klab/device/vec.cuh"

namespace klab::sgemm {

/// Row-major C (m x n) = alpha * A (m x k) @ B (k x n) + beta * C, leading dimensions k, n, n.
/// Family::validate keeps every matrix below 2^31 - 2^20 elements, so offsets fit in int.
struct GemmArgs {
  int m, n, k;
  float alpha, beta;
  const float* a;
  const float* b;
  float* c;
};

inline GemmArgs gemm_args(const Problem& p, Buffers& b) {
  return GemmArgs{static_cast<int>(p.dim("m")),
                  static_cast<int>(p.dim("n")),
                  static_cast<int>(p.dim("k")),
                  kAlpha,
                  kBeta,
                  b.ptr<float>("a"),
                  b.ptr<float>("b"),
                  b.ptr<float>("c")};
}

inline cudaStream_t stream_of(const LaunchArgs& a) {
  return reinterpret_cast<cudaStream_t>(a.stream);
}

/// The 16-byte paths need every row of A, B and C to start on a 16-byte boundary.
inline bool vec4_ok(const GemmArgs& g) {
  return g.k % 4 == 0 && g.n % 4 == 0 && device::aligned16(g.a) && device::aligned16(g.b) &&
         device::aligned16(g.c);
}

/// Rows of C tiles go to gridDim.y (at most 65535); columns to gridDim.x (2^31 - 1).
inline Status grid_fits(const Problem& p, int block_m) {
  if (device::ceil_div(p.dim("m"), block_m) > 65535)
    return Status::no("m > 65535 * " + std::to_string(block_m) + " (gridDim.y limit)");
  return Status::yes();
}

inline dim3 tile_grid(const GemmArgs& g, int block_m, int block_n) {
  return dim3(static_cast<unsigned>(device::ceil_div(g.n, block_n)),
              static_cast<unsigned>(device::ceil_div(g.m, block_m)));
}

/// alpha * acc + beta * c_old, the product alpha * acc exact inside the FMA. C is not read
/// when beta == 0 (BLAS semantics: C may hold garbage then).
__device__ __forceinline__ float epilogue(float alpha, float acc, float beta, const float* c) {
  return beta == 0.f ? alpha * acc : fmaf(alpha, acc, beta * *c);
}

/// C[r][col .. col+3] from four accumulators. kVec: one 16-byte load and store (needs n % 4 == 0
/// and col % 4 == 0, so the four are in bounds together); else four bounds-checked scalars.
template <bool kVec>
__device__ __forceinline__ void store_c4(const GemmArgs& g, int r, int col, float4 acc) {
  if (r >= g.m) return;
  float* p = g.c + r * g.n + col;
  if constexpr (kVec) {
    if (col >= g.n) return;
    float4 out = make_float4(g.alpha * acc.x, g.alpha * acc.y, g.alpha * acc.z, g.alpha * acc.w);
    if (g.beta != 0.f) {
      const float4 old = *reinterpret_cast<const float4*>(p);
      out = make_float4(fmaf(g.alpha, acc.x, g.beta * old.x), fmaf(g.alpha, acc.y, g.beta * old.y),
                        fmaf(g.alpha, acc.z, g.beta * old.z), fmaf(g.alpha, acc.w, g.beta * old.w));
    }
    *reinterpret_cast<float4*>(p) = out;
  } else {
    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (col + j < g.n) p[j] = epilogue(g.alpha, v[j], g.beta, p + j);
  }
}

/// The epilogue of a lane's kTM x kTN warp-tile accumulators (v09-v15): 4 x 4 chunks, chunk
/// (cm, cn) at rows warp_row + (cm * lanes_m + lane_m) * 4 .. + 3 and columns
/// warp_col + (cn * lanes_n + lane_n) * 4 .. + 3 of the block's tile at (block_row, block_col).
template <bool kVec, int kTM, int kTN, int kLanesM, int kLanesN>
__device__ __forceinline__ void store_warp_tile(const GemmArgs& g, const float (&acc)[kTM][kTN],
                                                int block_row, int block_col, int warp_row,
                                                int warp_col, int lane_m, int lane_n) {
#pragma unroll
  for (int cm = 0; cm < kTM / 4; ++cm)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = block_row + warp_row + (cm * kLanesM + lane_m) * 4 + i;
#pragma unroll
      for (int cn = 0; cn < kTN / 4; ++cn) {
        const int r = cm * 4 + i, c = cn * 4;
        store_c4<kVec>(g, row, block_col + warp_col + (cn * kLanesN + lane_n) * 4,
                       make_float4(acc[r][c], acc[r][c + 1], acc[r][c + 2], acc[r][c + 3]));
      }
    }
}

/// Four consecutive elements [r][col .. col+3] of a rows x cols row-major matrix, zeros outside.
/// kVec: one 16-byte load (cols % 4 == 0 and col % 4 == 0: all four in or all out).
template <bool kVec>
__device__ __forceinline__ float4 load4(const float* p, int rows, int cols, int r, int col) {
  if constexpr (kVec) {
    if (r < rows && col < cols) return *reinterpret_cast<const float4*>(p + r * cols + col);
    return make_float4(0.f, 0.f, 0.f, 0.f);
  } else {
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = (r < rows && col + j < cols) ? p[r * cols + col + j] : 0.f;
    return make_float4(v[0], v[1], v[2], v[3]);
  }
}

/// A GPU rung of the sgemm family (f32 only; tile sizes fixed, so not block-size sweepable).
inline Variant gpu_variant(const std::string& rung, const std::string& summary,
                           std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch,
                           std::function<Status(const Problem&)> can_implement) {
  Variant v = gpu_variant_of("sgemm." + rung, summary, 70, {DType::f32}, std::move(launch));
  v.can_implement = std::move(can_implement);
  return v;
}

}  // namespace klab::sgemm
