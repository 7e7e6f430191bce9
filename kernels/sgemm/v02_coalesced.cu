// v02 coalesced: the same one-thread-per-element kernel with the lanes of a warp along a *row*
// of C (threadIdx.x -> column).
// Adds over v01: a warp's loads of B and its stores of C cover 32 consecutive floats (4 sectors,
// one 128-byte line) instead of 32 lines; its loads of A become one broadcast element.
// Expected bottleneck: L1/L2 load bandwidth — still two loads per FMA and no data reuse in
// registers or shared memory; a few % of FP32 peak.
// Requirements: none (any m, n, k; any 4-byte alignment).
#include "kernels/sgemm/rung.cuh"

namespace klab::sgemm {

namespace {

constexpr int kTile = 32;

__global__ void __launch_bounds__(kTile* kTile) sgemm_coalesced(GemmArgs g) {
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;  // lanes of a warp: consecutive columns
  if (row >= g.m || col >= g.n) return;
  float acc = 0.f;
  for (int i = 0; i < g.k; ++i) acc = fmaf(g.a[row * g.k + i], g.b[i * g.n + col], acc);
  float* c = g.c + row * g.n + col;
  *c = epilogue(g.alpha, acc, g.beta, c);
}

}  // namespace

Variant gpu_v02_coalesced() {
  return gpu_variant(
      "v02_coalesced", "one thread per C element, lanes along columns (coalesced B and C)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const GemmArgs g = gemm_args(p, b);
        const auto kernel = sgemm_coalesced;
        kernel<<<tile_grid(g, kTile, kTile), dim3(kTile, kTile), 0, stream_of(args)>>>(g);
        KLAB_CHECK_LAUNCH();
      },
      [](const Problem& p) { return grid_fits(p, kTile); });
}

}  // namespace klab::sgemm
