// v03 shared-memory tiles: the block stages a 32 x 32 tile of A and of B in shared memory per
// step along k; each thread still computes one element of C.
// Adds over v02: every element loaded from global memory is reused by 32 threads from shared
// memory, so global (L1/L2) traffic drops 32x; loads are coalesced on both A and B.
// Expected bottleneck: shared-memory bandwidth and instruction issue — each FMA needs two shared
// loads (one broadcast), plus two barriers per 32-deep step; roughly 10% of FP32 peak.
// Requirements: none (any m, n, k: out-of-range elements of a tile are loaded as zeros).
#include "kernels/sgemm/rung.cuh"

namespace klab::sgemm {

namespace {

constexpr int kTile = 32;

__global__ void __launch_bounds__(kTile* kTile) sgemm_smem_tiles(GemmArgs g) {
  __shared__ float sA[kTile][kTile];  // (BM, BK)
  __shared__ float sB[kTile][kTile];  // (BK, BN)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < g.k; k0 += kTile) {
    sA[ty][tx] = (row < g.m && k0 + tx < g.k) ? g.a[row * g.k + k0 + tx] : 0.f;
    sB[ty][tx] = (k0 + ty < g.k && col < g.n) ? g.b[(k0 + ty) * g.n + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTile; ++i) acc = fmaf(sA[ty][i], sB[i][tx], acc);
    __syncthreads();  // the next step overwrites the tiles
  }
  if (row < g.m && col < g.n) {
    float* c = g.c + row * g.n + col;
    *c = epilogue(g.alpha, acc, g.beta, c);
  }
}

}  // namespace

Variant gpu_v03_smem_tiles() {
  return gpu_variant(
      "v03_smem_tiles", "32x32 tiles of A and B staged in shared memory",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const GemmArgs g = gemm_args(p, b);
        const auto kernel = sgemm_smem_tiles;
        kernel<<<tile_grid(g, kTile, kTile), dim3(kTile, kTile), 0, stream_of(args)>>>(g);
        KLAB_CHECK_LAUNCH();
      },
      [](const Problem& p) { return grid_fits(p, kTile); });
}

}  // namespace klab::sgemm
