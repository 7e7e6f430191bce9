// v04 1-D block tiling: a 64 x 64 tile of C per block of 512 threads, each thread computing a
// column of kThreadM = 8 elements; tiles of A (64 x 8) and B (8 x 64) in shared memory.
// Adds over v03: register reuse along M — each value of B read from shared memory feeds 8 FMAs
// (kept in a register across the thread's 8 rows), so shared loads per FMA drop from 2 to
// about 1.1, and the 8 independent accumulators give the scheduler ILP.
// Expected bottleneck: shared-memory loads and instruction issue (still ~1 LDS per FMA; the
// loads of A are warp-wide broadcasts); roughly 20-25% of FP32 peak.
// Requirements: none (any m, n, k: tiles are zero-filled outside the matrices).
#include "kernels/sgemm/rung.cuh"

namespace klab::sgemm {

namespace {

constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 8, kThreadM = 8;
constexpr int kThreads = kBlockM * kBlockN / kThreadM;  // 512
static_assert(kThreads == kBlockM * kBlockK && kThreads == kBlockK * kBlockN,
              "one A and one B element per thread");

__global__ void __launch_bounds__(kThreads) sgemm_1d_blocktile(GemmArgs g) {
  __shared__ float sA[kBlockM][kBlockK];  // (BM, BK)
  __shared__ float sB[kBlockK][kBlockN];  // (BK, BN)
  const int t = threadIdx.x;
  const int block_row = blockIdx.y * kBlockM, block_col = blockIdx.x * kBlockN;
  const int t_col = t % kBlockN;  // the thread's column of C within the tile
  const int t_row = t / kBlockN;  // its rows: t_row * kThreadM .. + kThreadM - 1 (same in a warp)
  // Load coordinates: A's tile row-major over (BM, BK), B's over (BK, BN), both coalesced.
  const int a_r = t / kBlockK, a_c = t % kBlockK;
  const int b_r = t / kBlockN, b_c = t % kBlockN;
  float acc[kThreadM] = {};
  for (int k0 = 0; k0 < g.k; k0 += kBlockK) {
    const int ar = block_row + a_r, ac = k0 + a_c, br = k0 + b_r, bc = block_col + b_c;
    sA[a_r][a_c] = (ar < g.m && ac < g.k) ? g.a[ar * g.k + ac] : 0.f;
    sB[b_r][b_c] = (br < g.k && bc < g.n) ? g.b[br * g.n + bc] : 0.f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      const float b = sB[i][t_col];
#pragma unroll
      for (int r = 0; r < kThreadM; ++r) acc[r] = fmaf(sA[t_row * kThreadM + r][i], b, acc[r]);
    }
    __syncthreads();
  }
  const int col = block_col + t_col;
#pragma unroll
  for (int r = 0; r < kThreadM; ++r) {
    const int row = block_row + t_row * kThreadM + r;
    if (row < g.m && col < g.n) {
      float* c = g.c + row * g.n + col;
      *c = epilogue(g.alpha, acc[r], g.beta, c);
    }
  }
}

}  // namespace

Variant gpu_v04_1d_blocktile() {
  return gpu_variant(
      "v04_1d_blocktile", "64x64 block tile, 8 C elements per thread along M",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const GemmArgs g = gemm_args(p, b);
        const auto kernel = sgemm_1d_blocktile;
        kernel<<<tile_grid(g, kBlockM, kBlockN), kThreads, 0, stream_of(args)>>>(g);
        KLAB_CHECK_LAUNCH();
      },
      [](const Problem& p) { return grid_fits(p, kBlockM); });
}

}  // namespace klab::sgemm
