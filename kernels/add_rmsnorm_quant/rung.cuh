#pragma once
// Shared plumbing of the add_rmsnorm_quant GPU rungs: typed pointers, the rungs' common
// requirements, 8-element bf16 and e4m3 packing, and the launch-shape choice.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/add_rmsnorm_quant/family.hpp"
#include "kernels/reduction/block_reduce.cuh"
#include "klab/core/cuda_check.hpp"
#include "klab/device/fp8_convert.cuh"
#include "klab/device/launch.hpp"
#include "klab/device/vec.cuh"

namespace klab::add_rmsnorm_quant {

using bf16 = __nv_bfloat16;

/// 8 bf16 elements: one 16-byte load or store.
inline constexpr int kVec = 8;

/// A problem's tensors and dimensions, as the kernels take them.
struct Args {
  const bf16* __restrict__ x;
  const bf16* __restrict__ residual;
  const bf16* __restrict__ weight;
  bf16* __restrict__ residual_out;
  uint8_t* __restrict__ q;  ///< e4m3 bytes
  float* __restrict__ scales;
  int64_t tokens;
  int hidden;
  int group;  ///< 0: a scale per token
  float eps;
  float inv_hidden;
};

inline Args args_of(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  return Args{b.ptr<const bf16>("x"),
              b.ptr<const bf16>("residual"),
              b.ptr<const bf16>("weight"),
              b.ptr<bf16>("residual_out"),
              b.ptr<uint8_t>("q"),
              b.ptr<float>("scales"),
              s.tokens,
              static_cast<int>(s.hidden),
              static_cast<int>(s.group),
              static_cast<float>(kEps),
              1.f / static_cast<float>(s.hidden)};
}

inline cudaStream_t stream_of(const LaunchArgs& a) {
  return reinterpret_cast<cudaStream_t>(a.stream);
}

/// The GPU rungs' shared requirements (and sm_89: the e4m3 conversions): rows of whole 16-byte vectors (H % 8 == 0) at aligned
/// bases, group slices of whole vectors across 1 to 32 lanes (group / 8 a power of two up to 32:
/// 8, 16, ..., 256), and one block per row.
inline Status gpu_rung_can_implement(const Problem& p, const std::string& id) {
  const Dims s = dims_of(p);
  if (s.hidden % kVec != 0)
    return Status::no(id + ": hidden must be a multiple of 8 (16-byte bf16 vectors)");
  if (p.misalign != 0) return Status::no(id + ": needs 16-byte aligned rows");
  if (s.group != 0) {
    const int64_t lanes = s.group / kVec;
    if (s.group % kVec != 0 || lanes > 32 || (lanes & (lanes - 1)) != 0)
      return Status::no(id + ": group must be 0 or 8 x a power of two up to 256");
  }
  if (s.tokens > 2147483647) return Status::no(id + ": more than 2^31 - 1 rows (a block each)");
  return Status::yes();
}

inline Variant rung_variant(
    const std::string& rung, const std::string& summary,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch) {
  const std::string id = "add_rmsnorm_quant." + rung;
  Variant v = gpu_variant_of(id, summary, 89, {DType::bf16}, std::move(launch));
  v.can_implement = [id](const Problem& p) { return gpu_rung_can_implement(p, id); };
  return v;
}

/// 8 bf16 as floats.
__device__ __forceinline__ void unpack8(const device::Vec16<bf16>& v, float (&f)[kVec]) {
#pragma unroll
  for (int i = 0; i < kVec; ++i) f[i] = __bfloat162float(v.v[i]);
}

/// 8 floats to e4m3 (klab/device/fp8_convert.cuh), for one 8-byte store.
using device::pack8_e4m3;

/// The scale of a slice whose max |y| is amax, and the factor that maps it onto [-448, 448]; an
/// all-zero slice gets scale 0 and factor 0 (q = 0, never 0 * inf). A product with the rounded
/// 1/448 and a correctly rounded reciprocal instead of two IEEE divisions (each a dozen
/// instructions and a slow-path branch, twice per 8 elements on the per-group path): the
/// family's tolerances count those roundings (family.cpp: "a product with a rounded 1/448", "the
/// reciprocal and the product").
struct SliceScale {
  float scale, factor;
};
__device__ __forceinline__ SliceScale slice_scale(float amax) {
  constexpr float kMax = static_cast<float>(kE4m3Max);
  constexpr float kInvMax = 1.f / kMax;
  return {amax * kInvMax, amax > 0.f ? kMax * __frcp_rn(amax) : 0.f};
}

/// Max |y| over each group's lanes (group / 8 consecutive lanes, aligned): every lane of a group
/// ends with its maximum. All 32 lanes call it.
__device__ __forceinline__ float group_max(float v, int group_lanes) {
  for (int offset = group_lanes / 2; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

}  // namespace klab::add_rmsnorm_quant
