#pragma once
// Shared plumbing of the qk_norm_rope_cache GPU rungs: typed pointers, the rungs' requirements,
// the token's cos/sin table in shared memory, and the per-head steps (a head's halves in a
// lane group, the group's sum of squares, the norm, the rotation) that the fused rung and the
// unfused baseline's kernels both run.
//
// A head's lane group: D / 16 consecutive lanes (8 at D = 128: four heads a warp); lane l holds
// elements [8 l, 8 l + 8) of the first half ("lo") and the same of the second half ("hi"), so
// each rotate-half pair (i, i + D / 2) sits in one thread, and the group's two 16-byte loads
// cover the head's two halves contiguously.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/qk_norm_rope_cache/family.hpp"
#include "kernels/qk_norm_rope_cache/rope.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/fp8_convert.cuh"
#include "klab/device/launch.hpp"
#include "klab/device/vec.cuh"

namespace klab::qk_norm_rope_cache {

using bf16 = __nv_bfloat16;
using device::Vec16;

/// 8 bf16 elements: one 16-byte load or store.
inline constexpr int kVec = 8;

/// A problem's tensors and dimensions, as the kernels take them.
struct Args {
  const bf16* __restrict__ qkv;
  const bf16* __restrict__ q_weight;
  const bf16* __restrict__ k_weight;
  const int32_t* __restrict__ positions;
  const int64_t* __restrict__ slots;
  bf16* __restrict__ q_out;
  bf16* __restrict__ k_cache;  // bf16 pools; null with e4m3 ones
  bf16* __restrict__ v_cache;
  int64_t tokens;
  int hq, hkv, d, page;
  float eps;
  float inv_d;
  // e4m3 pools (the problem's dtype e4m3; null with bf16 ones) and their heads' scales.
  uint8_t* __restrict__ k_cache8;
  uint8_t* __restrict__ v_cache8;
  const float* __restrict__ k_scale;
  const float* __restrict__ v_scale;

  __host__ __device__ int heads() const { return hq + 2 * hkv; }
  /// Lanes of a head's group.
  __host__ __device__ int lanes() const { return d / (2 * kVec); }
};

inline Args args_of(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  const bool e4m3 = p.dtype == DType::e4m3;
  Args a{b.ptr<const bf16>("qkv"),
         b.ptr<const bf16>("q_weight"),
         b.ptr<const bf16>("k_weight"),
         b.ptr<const int32_t>("positions"),
         b.ptr<const int64_t>("slot_mapping"),
         b.ptr<bf16>("q_out"),
         e4m3 ? nullptr : b.ptr<bf16>("k_cache"),
         e4m3 ? nullptr : b.ptr<bf16>("v_cache"),
         s.tokens,
         static_cast<int>(s.hq),
         static_cast<int>(s.hkv),
         static_cast<int>(s.d),
         static_cast<int>(s.page),
         static_cast<float>(kEps),
         1.f / static_cast<float>(s.d)};
  if (e4m3) {
    a.k_cache8 = b.ptr<uint8_t>("k_cache");
    a.v_cache8 = b.ptr<uint8_t>("v_cache");
    a.k_scale = b.ptr<const float>("k_scale");
    a.v_scale = b.ptr<const float>("v_scale");
  }
  return a;
}

inline cudaStream_t stream_of(const LaunchArgs& a) {
  return reinterpret_cast<cudaStream_t>(a.stream);
}

/// The GPU rungs' shared requirements: D / 16 lanes a power of two up to 32 (D = 16, 32, ...,
/// 512: each half of whole 16-byte vectors, a head's group inside one warp), aligned rows, and
/// one block per token.
inline Status gpu_rung_can_implement(const Problem& p, const std::string& id) {
  const Dims s = dims_of(p);
  const int64_t lanes = s.d / (2 * kVec);
  if (s.d % (2 * kVec) != 0 || lanes > 32 || (lanes & (lanes - 1)) != 0)
    return Status::no(id +
                      ": d must be 16, 32, 64, 128, 256 or 512 (halves of whole 16-byte vectors "
                      "across a power-of-two lane group)");
  if (p.misalign != 0) return Status::no(id + ": needs 16-byte aligned rows");
  if (s.tokens > 2147483647) return Status::no(id + ": more than 2^31 - 1 tokens (a block each)");
  return Status::yes();
}

/// can_implement's refusal of a pool of 2^31 slots or more (pool_base divides in 32 bits).
inline Status slots_fit_32_bits(const Dims& d, const std::string& id) {
  if (d.pool_pages() * d.page > 2147483647)
    return Status::no(id + ": a pool of 2^31 slots or more (slots divided in 32 bits)");
  return Status::yes();
}

/// A GPU rung of the pools' dtypes `dtypes` (bf16 unless it also writes e4m3 pools).
inline Variant rung_variant(const std::string& rung, const std::string& summary,
                            std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch,
                            std::vector<DType> dtypes = {DType::bf16}) {
  const std::string id = "qk_norm_rope_cache." + rung;
  Variant v = gpu_variant_of(id, summary, 80, std::move(dtypes), std::move(launch));
  v.can_implement = [id](const Problem& p) { return gpu_rung_can_implement(p, id); };
  return v;
}

/// pool_offset(slot, 0, ...) (the slot's KV head 0 in a pool), or -1: no slot. In 32 bits
/// (can_implement: fewer than 2^31 slots): a 64-bit division is a called routine whose register
/// convention spilled v03's kernel.
__device__ __forceinline__ int64_t pool_base(const Args& a, int64_t slot) {
  if (slot < 0) return int64_t(-1);
  const uint32_t s = uint32_t(slot), page = uint32_t(a.page);
  return (int64_t(s / page) * a.hkv * page + s % page) * a.d;
}

/// Threads of a block that holds every head of a token in one pass, up to max_threads (more
/// heads loop), a multiple of 32 (the shuffles use the full-warp mask).
inline constexpr int kMaxThreads = 512;
inline int token_block_threads(const Args& a, int heads, int max_threads = kMaxThreads) {
  const int threads = heads * a.lanes();
  return std::min(max_threads, (threads + 31) / 32 * 32);
}

/// Shared memory of the token's table: D / 2 cos, then D / 2 sin (fp32).
inline size_t rope_table_bytes(const Args& a) { return static_cast<size_t>(a.d) * sizeof(float); }

/// Pair i's cos and sin, from its reduced angle (rope.hpp), into the token's table sRope (cos in
/// [0, D/2), sin in [D/2, D), each at rope_slot).
__device__ __forceinline__ void store_rope_pair(float* sRope, double half_turns, int i, int half) {
  float s, c;
  sincospif(static_cast<float>(half_turns), &s, &c);
  sRope[rope_slot(i, half)] = c;
  sRope[half + rope_slot(i, half)] = s;
}
/// The token's cos and sin for its D / 2 pairs into sRope, by the block's threads in turn; the
/// caller synchronises before reading it.
__device__ __forceinline__ void fill_rope_table(float* sRope, int32_t pos, int d) {
  const int half = d / 2;
  for (int i = threadIdx.x; i < half; i += blockDim.x)
    store_rope_pair(sRope, rope_half_turns(pos, i, d), i, half);
}

/// A head's 16 elements in one thread: [0, 8) from the first half, [8, 16) from the second.
struct HalfPair {
  float lo[kVec], hi[kVec];
};

__device__ __forceinline__ void unpack(const Vec16<bf16>& v, float (&f)[kVec]) {
#pragma unroll
  for (int i = 0; i < kVec; ++i) f[i] = __bfloat162float(v.v[i]);
}

__device__ __forceinline__ Vec16<bf16> pack(const float (&f)[kVec]) {
  Vec16<bf16> v;
#pragma unroll
  for (int i = 0; i < kVec; ++i) v.v[i] = __float2bfloat16_rn(f[i]);
  return v;
}

/// The group's head (at `row`, lane `lane`): its two 16-byte vectors.
struct HeadVectors {
  Vec16<bf16> lo, hi;
};
__device__ __forceinline__ HeadVectors load_head(const bf16* row, int lane, int half) {
  return {device::load16(row + lane * kVec), device::load16(row + half + lane * kVec)};
}
__device__ __forceinline__ void store_head(bf16* row, int lane, int half, const HeadVectors& x) {
  device::store16(row + lane * kVec, x.lo);
  device::store16(row + half + lane * kVec, x.hi);
}
__device__ __forceinline__ void store_head(bf16* row, int lane, int half, const HalfPair& x) {
  store_head(row, lane, half, HeadVectors{pack(x.lo), pack(x.hi)});
}

/// The group's head into an e4m3 pool row: its 16 elements times the head's 1 / scale, rounded
/// to nearest and saturated, as two 8-byte stores (this lane's 8 elements of each half).
__device__ __forceinline__ void store_head_e4m3(uint8_t* row, int lane, int half, const HalfPair& x,
                                                float inv_scale) {
  *reinterpret_cast<uint2*>(row + lane * kVec) = device::pack8_e4m3_scaled(x.lo, inv_scale);
  *reinterpret_cast<uint2*>(row + half + lane * kVec) = device::pack8_e4m3_scaled(x.hi, inv_scale);
}
/// Sum over the `lanes` consecutive lanes of a group (aligned, a power of two): every lane ends
/// with it. Every lane of the warp calls it.
__device__ __forceinline__ float group_sum(float v, int lanes) {
  for (int offset = lanes / 2; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// rsqrt(mean(x^2) + eps) over the head's group, x its 16 elements in this lane. Every lane of
/// the warp calls it (the group's sum shuffles).
__device__ __forceinline__ float inv_rms_of(const HalfPair& x, const Args& a) {
  float sum_sq = 0.f;
#pragma unroll
  for (int i = 0; i < kVec; ++i) sum_sq += x.lo[i] * x.lo[i] + x.hi[i] * x.hi[i];
  return rsqrtf(group_sum(sum_sq, a.lanes()) * a.inv_d + a.eps);
}
/// x times inv_rms_of(x) times the weight's same elements, in place (every lane of the warp).
/// The weight unpacked here, as before v03's fp32 form beside it: unpacked into a HalfPair and
/// passed on, v02's kernel spilled at its 40 registers (measured in 4caec5b's and f12b286's runs).
__device__ __forceinline__ void rms_normalise(HalfPair& x, const HeadVectors& w, const Args& a) {
  const float inv_rms = inv_rms_of(x, a);
  float wl[kVec], wh[kVec];
  unpack(w.lo, wl);
  unpack(w.hi, wh);
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    x.lo[i] = x.lo[i] * inv_rms * wl[i];
    x.hi[i] = x.hi[i] * inv_rms * wh[i];
  }
}
/// The same with the weight's 16 elements already in fp32 (v03: from shared memory).
__device__ __forceinline__ void rms_normalise(HalfPair& x, const HalfPair& w, const Args& a) {
  const float inv_rms = inv_rms_of(x, a);
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    x.lo[i] = x.lo[i] * inv_rms * w.lo[i];
    x.hi[i] = x.hi[i] * inv_rms * w.hi[i];
  }
}

/// Rotate-half in place: pair (8 lane + j, D/2 + 8 lane + j) by the table's angle of that pair,
/// four pairs (one float4 of cos, one of sin, at rope_slot) at a time.
__device__ __forceinline__ void rotate(HalfPair& y, const float* sRope, int lane, int half) {
  const int lanes = half / kVec;
  const float4* c4 = reinterpret_cast<const float4*>(sRope + rope_slot(lane * kVec, half));
  const float4* s4 = reinterpret_cast<const float4*>(sRope + half + rope_slot(lane * kVec, half));
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    const float4 cq = c4[q * lanes], sq = s4[q * lanes];  // quarter q: rope_slot(8 lane + 4 q)
    const float c[4] = {cq.x, cq.y, cq.z, cq.w}, s[4] = {sq.x, sq.y, sq.z, sq.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float lo = y.lo[4 * q + j], hi = y.hi[4 * q + j];
      y.lo[4 * q + j] = fmaf(lo, c[j], -hi * s[j]);
      y.hi[4 * q + j] = fmaf(hi, c[j], lo * s[j]);
    }
  }
}

/// Head h of token t, its elements in y (zeros where !on: not read): a v head to the v pool
/// unchanged (bf16 -> fp32 -> bf16 is exact); a q or k head normalised, rotated by the token's
/// table and stored to q_out or the k pool (kv_base: the token's slot's head 0 in the pools).
/// The group's sum shuffles across the whole warp, so a warp normalises in every lane (v heads
/// and idle groups too) unless none of its groups holds a q or k head to write: then it skips
/// the norm together (Qwen3-8B: the two warps of v heads). The norm's weight is read by every
/// block (L1/L2).
__device__ __forceinline__ void finish_head(const Args& a, HalfPair& y, int h, bool on, int64_t t,
                                            int64_t kv_base, const float* sRope, int lane) {
  const int half = a.d / 2;
  const int64_t kv_stride = int64_t(a.page) * a.d;  // KV head h: h pages' head strides on
  const bool v_head = h >= a.hq + a.hkv;
  if (on && v_head) store_head(a.v_cache + kv_base + (h - a.hq - a.hkv) * kv_stride, lane, half, y);
  if (__all_sync(0xffffffffu, !on || v_head)) return;
  rms_normalise(y, load_head(h < a.hq ? a.q_weight : a.k_weight, lane, half), a);
  if (!on || v_head) return;
  rotate(y, sRope, lane, half);
  store_head(
      h < a.hq ? a.q_out + (t * a.hq + h) * a.d : a.k_cache + kv_base + (h - a.hq) * kv_stride,
      lane, half, y);
}

}  // namespace klab::qk_norm_rope_cache
