#pragma once
// The warp-tiled SGEMM kernel template behind v09 (one configuration) and v10 (a table of them):
// every tile size is a template parameter, so `klab tune` can sweep the instantiations in
// tune.hpp's kTuneSpace. See v09_warptile.cu for what it adds and why.
#include <utility>

#include "kernels/sgemm/rung.cuh"
#include "kernels/sgemm/tune.hpp"

namespace klab::sgemm {

/// Blocks per SM the register budget allows: 128 registers per thread for up to 64
/// accumulators, 255 above (65536 registers per SM).
constexpr int warptile_min_blocks(int threads, int thread_elems) {
  const int n = 65536 / (threads * (thread_elems > 64 ? 256 : 128));
  return n > 0 ? n : 1;
}

/// One k-step's operands of a lane's (kTM, kTN) tile, from shared rows laid out k-major: kTM
/// values of A from the k-step's A^T row (`a`: the warp's first column) and kTN of B from its B row
/// (`b`: likewise), as float4 chunks kLanesM (kLanesN) chunks apart. Lanes with equal lane_m
/// (lane_n) read the same float4 (broadcast); a quarter-warp's distinct float4s are consecutive:
/// no bank conflicts.
template <int kTM, int kTN, int kLanesM, int kLanesN>
__device__ __forceinline__ void load_lane_frags(float (&ra)[kTM], float (&rb)[kTN], const float* a,
                                                const float* b, int lane_m, int lane_n) {
#pragma unroll
  for (int cm = 0; cm < kTM / 4; ++cm)
    *reinterpret_cast<float4*>(&ra[cm * 4]) =
        *reinterpret_cast<const float4*>(a + (cm * kLanesM + lane_m) * 4);
#pragma unroll
  for (int cn = 0; cn < kTN / 4; ++cn)
    *reinterpret_cast<float4*>(&rb[cn * 4]) =
        *reinterpret_cast<const float4*>(b + (cn * kLanesN + lane_n) * 4);
}

/// acc += ra rb^T: a lane's kTM x kTN FFMAs of one k-step.
template <int kTM, int kTN>
__device__ __forceinline__ void ffma_outer(float (&acc)[kTM][kTN], const float (&ra)[kTM],
                                           const float (&rb)[kTN]) {
#pragma unroll
  for (int r = 0; r < kTM; ++r)
#pragma unroll
    for (int c = 0; c < kTN; ++c) acc[r][c] = fmaf(ra[r], rb[c], acc[r][c]);
}

template <int kBlockM, int kBlockN, int kBlockK, int kWarpM, int kWarpN, int kThreadM, int kThreadN,
          int kThreads, bool kVec>
__global__ void __launch_bounds__(kThreads, warptile_min_blocks(kThreads, kThreadM* kThreadN))
    sgemm_warptile(GemmArgs g) {
  constexpr SgemmConfig kConfig{kBlockM, kBlockN,  kBlockK,  kWarpM,
                                kWarpN,  kThreadM, kThreadN, kThreads};
  static_assert(kConfig.valid(), "invalid warp-tile configuration (see SgemmConfig::valid)");
  constexpr int kLanesM = kWarpM / kThreadM, kLanesN = kWarpN / kThreadN;  // lanes_m x lanes_n = 32
  constexpr int kWarpsN = kBlockN / kWarpN;
  constexpr int kPadA = 4;  // sA row stride = 4 (mod 32) banks: conflict-free transposing stores
  constexpr int kLoadsA = kBlockM * kBlockK / 4 / kThreads;  // float4 per thread per tile
  constexpr int kLoadsB = kBlockK * kBlockN / 4 / kThreads;

  __shared__ __align__(16) float sA[2][kBlockK][kBlockM + kPadA];  // (stage, BK, BM + pad): A^T
  __shared__ __align__(16) float sB[2][kBlockK][kBlockN];          // (stage, BK, BN)

  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int block_row = blockIdx.y * kBlockM, block_col = blockIdx.x * kBlockN;
  const int warp_row = (warp / kWarpsN) * kWarpM, warp_col = (warp % kWarpsN) * kWarpN;
  const int lane_m = lane / kLanesN, lane_n = lane % kLanesN;

  // Global -> register staging. A: float4 number idx covers row (idx / 2) % BM, columns
  // 8 * (idx / 2BM) + 4 * (idx % 2): a warp takes 16 rows x 8 columns (full 32-byte sectors), and
  // its transposing stores hit bank (4 * column + row) % 32 — 32 distinct. B: row-major float4s.
  float4 stage_a[kLoadsA], stage_b[kLoadsB];
  auto a_row = [&](int l) { return ((t + l * kThreads) / 2) % kBlockM; };
  auto a_col = [&](int l) {
    return ((t + l * kThreads) / (2 * kBlockM)) * 8 + ((t + l * kThreads) % 2) * 4;
  };
  auto b_row = [&](int l) { return (t + l * kThreads) / (kBlockN / 4); };
  auto b_col = [&](int l) { return ((t + l * kThreads) % (kBlockN / 4)) * 4; };
  auto load_tile = [&](int k0) {
#pragma unroll
    for (int l = 0; l < kLoadsA; ++l)
      stage_a[l] = load4<kVec>(g.a, g.m, g.k, block_row + a_row(l), k0 + a_col(l));
#pragma unroll
    for (int l = 0; l < kLoadsB; ++l)
      stage_b[l] = load4<kVec>(g.b, g.k, g.n, k0 + b_row(l), block_col + b_col(l));
  };
  auto store_tile = [&](int s) {
#pragma unroll
    for (int l = 0; l < kLoadsA; ++l) {
      const int r = a_row(l), c = a_col(l);
      sA[s][c + 0][r] = stage_a[l].x;
      sA[s][c + 1][r] = stage_a[l].y;
      sA[s][c + 2][r] = stage_a[l].z;
      sA[s][c + 3][r] = stage_a[l].w;
    }
#pragma unroll
    for (int l = 0; l < kLoadsB; ++l)
      *reinterpret_cast<float4*>(&sB[s][b_row(l)][b_col(l)]) = stage_b[l];
  };

  float acc[kThreadM][kThreadN] = {};  // (chunk_m * 4 + i, chunk_n * 4 + j)
  const int tiles = (g.k + kBlockK - 1) / kBlockK;
  load_tile(0);
  store_tile(0);
  __syncthreads();
  for (int tile = 0; tile < tiles; ++tile) {
    const int s = tile & 1;
    const bool has_next = tile + 1 < tiles;
    if (has_next) load_tile((tile + 1) * kBlockK);  // in flight during the math
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      __align__(16) float rA[kThreadM];  // 16-byte aligned: filled by float4 copies
      __align__(16) float rB[kThreadN];
      load_lane_frags<kThreadM, kThreadN, kLanesM, kLanesN>(rA, rB, &sA[s][i][warp_row],
                                                            &sB[s][i][warp_col], lane_m, lane_n);
      ffma_outer(acc, rA, rB);
    }
    // Stage s ^ 1 was last read in iteration tile - 1, before the barrier that ended it.
    if (has_next) store_tile(s ^ 1);
    __syncthreads();
  }

  store_warp_tile<kVec, kThreadM, kThreadN, kLanesM, kLanesN>(g, acc, block_row, block_col,
                                                              warp_row, warp_col, lane_m, lane_n);
}

/// Enqueues kTuneSpace[kIndex]: the 16-byte instantiation when rows are 16-byte aligned, else
/// the scalar-load one.
template <int kIndex>
void launch_warptile(const GemmArgs& g, cudaStream_t stream) {
  constexpr SgemmConfig c = kTuneSpace[kIndex];
  const auto kernel = vec4_ok(g)
                          ? sgemm_warptile<c.block_m, c.block_n, c.block_k, c.warp_m, c.warp_n,
                                           c.thread_m, c.thread_n, c.threads, true>
                          : sgemm_warptile<c.block_m, c.block_n, c.block_k, c.warp_m, c.warp_n,
                                           c.thread_m, c.thread_n, c.threads, false>;
  kernel<<<tile_grid(g, c.block_m, c.block_n), c.threads, 0, stream>>>(g);
  KLAB_CHECK_LAUNCH();
}

}  // namespace klab::sgemm
