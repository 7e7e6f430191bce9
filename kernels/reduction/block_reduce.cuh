#pragma once
// Warp- and block-wide reductions shared by the reduction rungs. Blocks must be a multiple of 32
// threads (the shuffles use the full-warp mask).
#include <cuda_runtime.h>

#include <cmath>

#include "klab/device/online_softmax.cuh"

namespace klab::reduction {

struct SumOp {
  static constexpr float kIdentity = 0.f;
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  static constexpr float kIdentity = -INFINITY;
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/// Butterfly reduction: every lane ends with the reduction of the warp's 32 values (5 levels).
template <class Op>
__device__ __forceinline__ float warp_all_reduce(float v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Every thread of the block gets the reduction of the block's values. `smem` holds 32 floats.
/// Warps reduce by shuffles, lane 0 of each warp posts its value, then every warp reduces the
/// posted values itself (no second broadcast barrier). Ends with a barrier so `smem` may be reused.
template <class Op>
__device__ __forceinline__ float block_all_reduce(float v, Op op, float* smem) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_all_reduce(v, op);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = warp_all_reduce(lane < warps ? smem[lane] : Op::kIdentity, op);
  __syncthreads();
  return v;
}

/// Two block_all_reduce at the price of one: `a` by OpA and `b` by OpB over the block, every thread
/// gets both (one pair of barriers). `smem` holds 64 floats.
template <class OpA, class OpB>
__device__ __forceinline__ void block_all_reduce2(float& a, OpA op_a, float& b, OpB op_b,
                                                  float* smem) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  a = warp_all_reduce(a, op_a);
  b = warp_all_reduce(b, op_b);
  if (lane == 0) {
    smem[warp] = a;
    smem[32 + warp] = b;
  }
  __syncthreads();
  a = warp_all_reduce(lane < warps ? smem[lane] : OpA::kIdentity, op_a);
  b = warp_all_reduce(lane < warps ? smem[32 + lane] : OpB::kIdentity, op_b);
  __syncthreads();
}

/// A partial softmax normaliser (max, sum): the online-softmax state of klab/device.
using device::MaxSum;

/// Every lane gets the merge of the warp's 32 partials (device::online_merge, 5 levels).
__device__ __forceinline__ MaxSum warp_all_merge(MaxSum v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = device::online_merge(v, MaxSum{__shfl_xor_sync(0xffffffffu, v.max, offset),
                                       __shfl_xor_sync(0xffffffffu, v.sum, offset)});
  return v;
}

/// block_all_reduce for MaxSum partials; `smem` holds 64 floats.
__device__ __forceinline__ MaxSum block_all_merge(MaxSum v, float* smem) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_all_merge(v);
  if (lane == 0) {
    smem[warp] = v.max;
    smem[32 + warp] = v.sum;
  }
  __syncthreads();
  v = warp_all_merge(lane < warps ? MaxSum{smem[lane], smem[32 + lane]} : MaxSum{});
  __syncthreads();
  return v;
}

}  // namespace klab::reduction
