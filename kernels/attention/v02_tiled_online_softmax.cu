// v02 tiled online softmax: FlashAttention 1's idea on CUDA cores. One block owns kBlockM = 32
// query rows of one (batch, query head) and walks the key/value rows of its KV head in tiles of
// kBlockN, staged through shared memory as fp32; the scores of one tile live in registers and in
// a small shared tile, never in device memory. Each row keeps a running maximum m and a running
// sum l of exp(s - m); a tile with a larger maximum rescales l and the output accumulator by
// exp(m_old - m_new) (the online softmax of Milakov & Gimelshein), so one pass over K and V
// gives O and lse. Scores are prescaled by scale * log2(e) and exponentiated with exp2f, as
// FlashAttention 2 does (one FFMA and one MUFU.EX2 per score).
// Adds over v01: no N^2 workspace (memory O(N D)); K and V read once per 32-row query tile
// instead of S written and read five times; causal key tiles above the diagonal are skipped
// (only the tiles that cross it are masked elementwise).
// Thread layout (128 threads, 8 row groups x 16 column lanes): a thread owns 4 query rows; in
// the score tile, keys tc + 16 c; in the output, columns 4 tc + 64 c .. + 3. The 16 lanes of a
// row group reduce a row's maximum and sum by shuffles. Q and K are read as float4 along D from
// rows padded by 4 floats (conflict-free), V as float4 along D, P from a padded shared tile.
// Expected bottleneck: the FFMA pipe fed from shared memory (no tensor cores): each 16 FFMA of
// Q K^T need 2 LDS.128, each 16 FFMA of P V 1-2 LDS.128 plus the broadcast P reads, so the issue
// slots shared by LDS and FFMA cap it near half of the fp32 FFMA peak at best.
// Prediction (written before it ran), causal D = 128 bf16 H = 32 N = 8k on an H200: 5-20
// TFLOP/s counted as FlashAttention counts (1-3% of cuDNN's ~600, 2-6% of PyTorch flash's
// ~337): the flop rate of a CUDA-core kernel, ten times v01 or more at N >= 4k where v01's
// workspace traffic dominates.
// Requirements: D in {64, 128, 256}; hq and b up to 65535 (grid y, z). 16-byte aligned Q/K/V/O
// take 16-byte loads; any other alignment (the harness's misalign) takes element loads.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>

#include "kernels/attention/family.hpp"
#include "kernels/attention/tiled_launch.cuh"
#include "klab/core/cuda_check.hpp"
#include "klab/device/dispatch.cuh"
#include "klab/device/launch.hpp"
#include "klab/device/vec.cuh"

namespace klab::attention {

namespace {

template <int kD>
struct V02Config {
  static constexpr int kBlockM = 32, kThreads = 128;
  static constexpr int kBlockN = kD == 256 ? 32 : 64;  // 256: half the keys, the same smem
  static constexpr int kRows = 4;                      // query rows per thread
  static constexpr int kKeys = kBlockN / 16;           // score columns per thread
  static constexpr int kCols = kD / 64;                // float4 output columns per thread
  static constexpr int kStrideQK = kD + 4;             // padded fp32 rows of Q and K
  static constexpr int kStrideP = kBlockN + 4;
  static constexpr int kSmemFloats =
      kBlockM * kStrideQK + kBlockN * kStrideQK + kBlockN * kD + kBlockM * kStrideP;
  static constexpr int kSmemBytes = 4 * kSmemFloats;
  static_assert(kThreads == 16 * (kBlockM / kRows) && kD % 64 == 0);
};

// (rows, kD) rows of a (.., heads, kD) tensor into fp32 shared rows of stride `stride`: the rows
// at or past `valid` become zeros. kVec: 16-byte loads (8 elements) along D.
template <class T, int kD, int kThreads, bool kVec>
__device__ __forceinline__ void load_rows(float* s, int stride, const T* g, int64_t ld, int rows,
                                          int64_t valid, int tid) {
  constexpr int kChunks = kD / 8;
  for (int c = tid; c < rows * kChunks; c += kThreads) {
    const int r = c / kChunks, d = (c % kChunks) * 8;
    float v[8];
    if (r < valid) {
      const T* src = g + r * ld + d;
      if constexpr (kVec) {
        const device::Vec16<T> x = device::load16(src);
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] = device::to_float(x.v[e]);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] = device::to_float(src[e]);
      }
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] = 0.f;
    }
    float4* dst = reinterpret_cast<float4*>(s + r * stride + d);
    dst[0] = make_float4(v[0], v[1], v[2], v[3]);
    dst[1] = make_float4(v[4], v[5], v[6], v[7]);
  }
}

// Block (x, y, z) = (query tile, query head, batch); causal grids run the longest tiles first.
template <class T, int kD, bool kVec>
__global__ void __launch_bounds__(V02Config<kD>::kThreads)
    v02_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
               T* __restrict__ o, float* __restrict__ lse, Geometry g) {
  using C = V02Config<kD>;
  extern __shared__ __align__(16) float smem[];
  float* sQ = smem;                            // (kBlockM, kD), stride kStrideQK
  float* sK = sQ + C::kBlockM * C::kStrideQK;  // (kBlockN, kD), stride kStrideQK
  float* sV = sK + C::kBlockN * C::kStrideQK;  // (kBlockN, kD)
  float* sP = sV + C::kBlockN * kD;            // (kBlockM, kBlockN), stride kStrideP

  const int64_t m_tiles = (g.nq + C::kBlockM - 1) / C::kBlockM;
  const int64_t m_tile = g.causal ? m_tiles - 1 - blockIdx.x : blockIdx.x;
  const int64_t n0 = m_tile * C::kBlockM, h = blockIdx.y, bi = blockIdx.z, hk = h / g.group;
  const int tid = threadIdx.x, tr = tid / 16, tc = tid % 16;

  const int64_t ld_q = g.hq * kD, ld_kv = g.hkv * kD;
  const T* gQ = q + ((bi * g.nq + n0) * g.hq + h) * kD;
  const T* gK = k + (bi * g.nkv * g.hkv + hk) * kD;
  const T* gV = v + (bi * g.nkv * g.hkv + hk) * kD;

  const int64_t keys = tile_keys(g, n0, C::kBlockM);
  const int64_t n_blocks = (keys + C::kBlockN - 1) / C::kBlockN;

  load_rows<T, kD, C::kThreads, kVec>(sQ, C::kStrideQK, gQ, ld_q, C::kBlockM, g.nq - n0, tid);

  float m[C::kRows], l[C::kRows], acc[C::kRows][C::kCols][4];
#pragma unroll
  for (int i = 0; i < C::kRows; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int c = 0; c < C::kCols; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][c][e] = 0.f;
  }

  for (int64_t jb = 0; jb < n_blocks; ++jb) {
    const int64_t j0 = jb * C::kBlockN;
    __syncthreads();  // the previous tile's P V reads are done (and sQ has landed)
    load_rows<T, kD, C::kThreads, kVec>(sK, C::kStrideQK, gK + j0 * ld_kv, ld_kv, C::kBlockN,
                                        g.nkv - j0, tid);
    load_rows<T, kD, C::kThreads, kVec>(sV, kD, gV + j0 * ld_kv, ld_kv, C::kBlockN, g.nkv - j0,
                                        tid);
    __syncthreads();

    // S = Q K^T for rows 4 tr + i, keys tc + 16 c.
    float s[C::kRows][C::kKeys];
#pragma unroll
    for (int i = 0; i < C::kRows; ++i)
#pragma unroll
      for (int c = 0; c < C::kKeys; ++c) s[i][c] = 0.f;
#pragma unroll 4
    for (int d = 0; d < kD; d += 4) {
      float4 qv[C::kRows], kv[C::kKeys];
#pragma unroll
      for (int i = 0; i < C::kRows; ++i)
        qv[i] = *reinterpret_cast<const float4*>(sQ + (4 * tr + i) * C::kStrideQK + d);
#pragma unroll
      for (int c = 0; c < C::kKeys; ++c)
        kv[c] = *reinterpret_cast<const float4*>(sK + (tc + 16 * c) * C::kStrideQK + d);
#pragma unroll
      for (int i = 0; i < C::kRows; ++i)
#pragma unroll
        for (int c = 0; c < C::kKeys; ++c)
          s[i][c] += qv[i].x * kv[c].x + qv[i].y * kv[c].y + qv[i].z * kv[c].z + qv[i].w * kv[c].w;
    }

    // Online softmax in log2 units: mask, tile maximum, rescale, p = exp2(s - m).
#pragma unroll
    for (int i = 0; i < C::kRows; ++i) {
      const int64_t n = n0 + 4 * tr + i;
      const int64_t limit = g.causal ? n + g.causal_offset : g.nkv - 1;  // last visible key
      float tile_max = -INFINITY;
#pragma unroll
      for (int c = 0; c < C::kKeys; ++c) {
        const int64_t j = j0 + tc + 16 * c;
        s[i][c] = j < g.nkv && j <= limit ? s[i][c] * g.scale_log2 : -INFINITY;
        tile_max = fmaxf(tile_max, s[i][c]);
      }
#pragma unroll
      for (int off = 8; off > 0; off /= 2)
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, off));
      const float m_new = fmaxf(m[i], tile_max);
      // A row with no visible key so far keeps m = -inf: subtract 0 instead (its p are 0).
      const float m_use = m_new == -INFINITY ? 0.f : m_new;
      const float alpha = exp2f(m[i] - m_use);
      m[i] = m_new;
      float sum = 0.f;
#pragma unroll
      for (int c = 0; c < C::kKeys; ++c) {
        const float p = exp2f(s[i][c] - m_use);
        sum += p;
        sP[(4 * tr + i) * C::kStrideP + tc + 16 * c] = p;
      }
      l[i] = l[i] * alpha + sum;  // this lane's keys only; the row's lanes add up at the end
#pragma unroll
      for (int c = 0; c < C::kCols; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][c][e] *= alpha;
    }
    __syncthreads();

    // O += P V for rows 4 tr + i, columns 4 tc + 64 c .. + 3.
#pragma unroll 4
    for (int j = 0; j < C::kBlockN; ++j) {
      float4 vv[C::kCols];
#pragma unroll
      for (int c = 0; c < C::kCols; ++c)
        vv[c] = *reinterpret_cast<const float4*>(sV + j * kD + 4 * tc + 64 * c);
#pragma unroll
      for (int i = 0; i < C::kRows; ++i) {
        const float p = sP[(4 * tr + i) * C::kStrideP + j];
#pragma unroll
        for (int c = 0; c < C::kCols; ++c) {
          acc[i][c][0] += p * vv[c].x;
          acc[i][c][1] += p * vv[c].y;
          acc[i][c][2] += p * vv[c].z;
          acc[i][c][3] += p * vv[c].w;
        }
      }
    }
  }

  // Epilogue: the row sums over the 16 lanes, O / l (0 for an empty row), lse = (m + log2 l) ln 2.
#pragma unroll
  for (int i = 0; i < C::kRows; ++i) {
    float sum = l[i];
#pragma unroll
    for (int off = 8; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    const int64_t n = n0 + 4 * tr + i;
    if (n >= g.nq) continue;
    const bool empty = sum == 0.f;
    const float inv = empty ? 0.f : 1.f / sum;
    T* row = o + ((bi * g.nq + n) * g.hq + h) * kD;
#pragma unroll
    for (int c = 0; c < C::kCols; ++c) {
      T* dst = row + 4 * tc + 64 * c;
      T out[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) out[e] = device::from_float<T>(acc[i][c][e] * inv);
      if constexpr (kVec) {
        *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(out);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) dst[e] = out[e];
      }
    }
    if (tc == 0) lse[(bi * g.hq + h) * g.nq + n] = empty ? -INFINITY : (m[i] + log2f(sum)) * kLn2;
  }
}

struct V02Rung {
  template <int kD>
  using Config = V02Config<kD>;
  template <class T, int kD, bool kVec>
  static constexpr auto kernel() {
    return v02_kernel<T, kD, kVec>;
  }
  static constexpr const char* kName = "attention.v02";
};

PreparedLaunch prepare(const Problem& p, Buffers& b) { return prepare_tiled<V02Rung>(p, b); }

}  // namespace

Variant gpu_v02_tiled_online_softmax() {
  Variant v = tiled_variant<prepare>(
      "attention.v02_tiled_online_softmax",
      "FA1 on CUDA cores: 32-row query tiles, K/V tiles in shared memory, online softmax", 80);
  v.can_implement = [](const Problem& p) {
    const Dims s = dims_of(p);
    if (Status st = tiled_limits("attention.v02", s); !st.ok()) return st;
    if (device::ceil_div(s.nq, V02Config<64>::kBlockM) > INT_MAX)
      return Status::no("attention.v02: more than 2^31 - 1 query tiles");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::attention
