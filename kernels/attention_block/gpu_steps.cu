// The GPU rungs' own step, the norm (add, RMSNorm, bf16 out: the QKV GEMM's A operand), fused
// into one launch or as the two launches a framework runs without the fusion, and their shared
// recipe: hgemm.v18_wgmma_dispatch for both projections, decode_attention.v11_cluster_merge for
// attention.
// The norm, per token: h = bf16(fp32(x + residual)) to residual_out; y = bf16(h * rsqrt(mean(h^2)
// + eps) * w), the sum of squares of the bf16 h in fp32 (add_rmsnorm_quant's arithmetic, whose
// y_error_bound the family's reference uses). One block a token, 16-byte vectors.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/attention_block/compose.hpp"
#include "kernels/attention_block/gpu_steps.hpp"
#include "kernels/decode_attention/family.hpp"
#include "kernels/hgemm/family.hpp"
#include "kernels/qk_norm_rope_cache/family.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/launch.hpp"
#include "klab/device/pdl.cuh"
#include "klab/device/vec.cuh"

namespace klab::attention_block {

namespace {

using bf16 = __nv_bfloat16;
constexpr int kVec = 8;  // bf16 a 16-byte vector
constexpr int kMaxThreads = 1024;

/// Threads of a token's block: a vector each where H allows (H = 4096: 512), whole warps.
int norm_threads(int64_t hidden) {
  const int64_t vectors = hidden / kVec;
  return static_cast<int>(std::min<int64_t>(kMaxThreads, (vectors + 31) / 32 * 32));
}

__device__ float block_sum(float v, float* shared) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (threadIdx.x % 32 == 0) shared[warp] = v;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < warps; ++w) total += shared[w];  // every thread, the same order
  return total;
}

/// h = bf16(fp32(x + residual)) of the 8 elements at x and residual.
__device__ __forceinline__ device::Vec16<bf16> residual_sum(const bf16* x, const bf16* residual) {
  const auto a = device::load16(x), r = device::load16(residual);
  device::Vec16<bf16> h;
#pragma unroll
  for (int i = 0; i < kVec; ++i)
    h.v[i] = __float2bfloat16_rn(__bfloat162float(a.v[i]) + __bfloat162float(r.v[i]));
  return h;
}

/// kAdd: h = x + residual, stored to residual_out; otherwise h is residual_out's (the unfused
/// second launch). Each thread rereads only the vectors it wrote.
template <bool kAdd>
__global__ void __launch_bounds__(kMaxThreads) norm_kernel(NormArgs a) {
  __shared__ float partial[kMaxThreads / 32];
  device::allow_dependent_launch();  // the QKV GEMM may start its weights' stream (pdl.cuh)
  const int64_t row = int64_t(blockIdx.x) * a.hidden;
  auto* h_out = static_cast<bf16*>(a.residual_out) + row;
  const int vectors = static_cast<int>(a.hidden / kVec);
  float sum_sq = 0;
  for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
    device::Vec16<bf16> h;
    if constexpr (kAdd) {
      h = residual_sum(static_cast<const bf16*>(a.x) + row + v * kVec,
                       static_cast<const bf16*>(a.residual) + row + v * kVec);
      device::store16(h_out + v * kVec, h);
    } else {
      h = device::load16(h_out + v * kVec);
    }
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const float f = __bfloat162float(h.v[i]);
      sum_sq = fmaf(f, f, sum_sq);
    }
  }
  const float inv_rms =
      rsqrtf(block_sum(sum_sq, partial) * (1.f / static_cast<float>(a.hidden)) + float(kEps));
  auto* y = static_cast<bf16*>(a.y) + row;
  for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
    const auto h = device::load16(h_out + v * kVec);
    const auto w = device::load16(static_cast<const bf16*>(a.weight) + v * kVec);
    device::Vec16<bf16> out;
#pragma unroll
    for (int i = 0; i < kVec; ++i)
      out.v[i] = __float2bfloat16_rn(__bfloat162float(h.v[i]) * inv_rms * __bfloat162float(w.v[i]));
    device::store16(y + v * kVec, out);
  }
}

__global__ void add_kernel(NormArgs a) {
  const int64_t vectors = a.tokens * a.hidden / kVec;
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < vectors;
       v += int64_t(gridDim.x) * blockDim.x) {
    device::store16(static_cast<bf16*>(a.residual_out) + v * kVec,
                    residual_sum(static_cast<const bf16*>(a.x) + v * kVec,
                                 static_cast<const bf16*>(a.residual) + v * kVec));
  }
}

__global__ void stale_slots_kernel(Dims s, const int64_t* __restrict__ slots, uint16_t* k,
                                   uint16_t* v) {
  const int64_t token = blockIdx.x, slot = slots[token];
  for (int64_t e = threadIdx.x; e < s.hkv * s.d; e += blockDim.x) {
    const int64_t at = qk_norm_rope_cache::pool_offset(slot, e / s.d, s.hkv, s.page, s.d) + e % s.d;
    k[at] = v[at] = kStaleBits;
  }
}

}  // namespace

void write_stale_slots(const Dims& s, const int64_t* slots, void* k_cache, void* v_cache,
                       Stream stream) {
  if (s.b == 0) return;
  stale_slots_kernel<<<static_cast<unsigned>(s.b), 256, 0,
                       reinterpret_cast<cudaStream_t>(stream)>>>(
      s, slots, static_cast<uint16_t*>(k_cache), static_cast<uint16_t*>(v_cache));
  KLAB_CHECK_LAUNCH();
}

void norm_fused(const NormArgs& a, Stream stream) {
  if (a.tokens == 0) return;
  norm_kernel<true><<<static_cast<unsigned>(a.tokens), norm_threads(a.hidden), 0,
                      reinterpret_cast<cudaStream_t>(stream)>>>(a);
  KLAB_CHECK_LAUNCH();
}

void norm_unfused(const NormArgs& a, Stream stream) {
  if (a.tokens == 0) return;
  const auto st = reinterpret_cast<cudaStream_t>(stream);
  constexpr int kAddThreads = 256;
  add_kernel<<<device::grid_1d(a.tokens * a.hidden / kVec, kAddThreads), kAddThreads, 0, st>>>(a);
  KLAB_CHECK_LAUNCH();
  norm_kernel<false><<<static_cast<unsigned>(a.tokens), norm_threads(a.hidden), 0, st>>>(a);
  KLAB_CHECK_LAUNCH();
}

Recipe fused_recipe() { return gpu_recipe(norm_fused, qk_norm_rope_cache::gpu_v02_token_ring); }

Recipe gpu_recipe(NormLaunch norm, std::function<Variant()> qk) {
  Recipe r;
  r.norm = std::move(norm);
  r.gemm = hgemm::gpu_v18_wgmma_dispatch;
  r.qk = std::move(qk);
  r.attention = decode_attention::gpu_v11_cluster_merge;
  return r;
}

}  // namespace klab::attention_block
