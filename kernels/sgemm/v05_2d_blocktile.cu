// v05 2-D block tiling: a 128 x 128 tile of C per block of 256 threads, each thread computing an
// 8 x 8 sub-tile as an outer product of 8 values of A and 8 of B held in registers.
// Adds over v04: reuse in both directions — per step along k a thread loads 16 values from
// shared memory for 64 FMAs (0.25 LDS per FMA, from ~1.1), and a bigger block tile halves the
// global traffic per FLOP again.
// Expected bottleneck: shared-memory loads are still scalar (16 LDS.32 per 64 FMA) and the reads
// of B conflict 4-way (lanes 8 floats apart); global loads are scalar too. Roughly 40-50% of
// FP32 peak.
// Requirements: none (any m, n, k: tiles are zero-filled outside the matrices).
#include "kernels/sgemm/rung.cuh"

namespace klab::sgemm {

namespace {

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8, kThreadM = 8, kThreadN = 8;
constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);  // 256
constexpr int kLoadsA = kBlockM * kBlockK / kThreads;                  // 4 elements per thread
constexpr int kLoadsB = kBlockK * kBlockN / kThreads;                  // 4

__global__ void __launch_bounds__(kThreads, 2) sgemm_2d_blocktile(GemmArgs g) {
  __shared__ float sA[kBlockM][kBlockK];  // (BM, BK)
  __shared__ float sB[kBlockK][kBlockN];  // (BK, BN)
  const int t = threadIdx.x;
  const int block_row = blockIdx.y * kBlockM, block_col = blockIdx.x * kBlockN;
  const int t_row = t / (kBlockN / kThreadN), t_col = t % (kBlockN / kThreadN);
  float acc[kThreadM][kThreadN] = {};
  float rA[kThreadM], rB[kThreadN];
  for (int k0 = 0; k0 < g.k; k0 += kBlockK) {
#pragma unroll
    for (int l = 0; l < kLoadsA; ++l) {
      const int idx = t + l * kThreads, r = idx / kBlockK, c = idx % kBlockK;
      const int gr = block_row + r, gc = k0 + c;
      sA[r][c] = (gr < g.m && gc < g.k) ? g.a[gr * g.k + gc] : 0.f;
    }
#pragma unroll
    for (int l = 0; l < kLoadsB; ++l) {
      const int idx = t + l * kThreads, r = idx / kBlockN, c = idx % kBlockN;
      const int gr = k0 + r, gc = block_col + c;
      sB[r][c] = (gr < g.k && gc < g.n) ? g.b[gr * g.n + gc] : 0.f;
    }
    __syncthreads();
    // Unrolled by 2, not 8: a full unroll hoists the shared loads of several steps and needs
    // ~150 registers (spilling under the 128 that 2 blocks per SM allow).
#pragma unroll 2
    for (int i = 0; i < kBlockK; ++i) {
#pragma unroll
      for (int r = 0; r < kThreadM; ++r) rA[r] = sA[t_row * kThreadM + r][i];
#pragma unroll
      for (int c = 0; c < kThreadN; ++c) rB[c] = sB[i][t_col * kThreadN + c];
#pragma unroll
      for (int r = 0; r < kThreadM; ++r)
#pragma unroll
        for (int c = 0; c < kThreadN; ++c) acc[r][c] = fmaf(rA[r], rB[c], acc[r][c]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < kThreadM; ++r) {
    const int row = block_row + t_row * kThreadM + r;
    if (row >= g.m) continue;
#pragma unroll
    for (int c = 0; c < kThreadN; ++c) {
      const int col = block_col + t_col * kThreadN + c;
      if (col < g.n) {
        float* p = g.c + row * g.n + col;
        *p = epilogue(g.alpha, acc[r][c], g.beta, p);
      }
    }
  }
}

}  // namespace

Variant gpu_v05_2d_blocktile() {
  return gpu_variant(
      "v05_2d_blocktile", "128x128 block tile, 8x8 outer product per thread",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const GemmArgs g = gemm_args(p, b);
        const auto kernel = sgemm_2d_blocktile;
        kernel<<<tile_grid(g, kBlockM, kBlockN), kThreads, 0, stream_of(args)>>>(g);
        KLAB_CHECK_LAUNCH();
      },
      [](const Problem& p) { return grid_fits(p, kBlockM); });
}

}  // namespace klab::sgemm
