// v01 naive: one thread per element of C, a 32 x 32 block of threads per 32 x 32 tile of C.
// Adds: nothing — the first correct kernel. Consecutive lanes take consecutive *rows* of C, so
// each lane walks its own row of A (stride k between lanes: 32 sectors per warp load) and the
// warp's C stores are strided by n; only B's loads (one element, broadcast) are cheap.
// Expected bottleneck: memory transactions — uncoalesced loads of A, ~2 loads per FMA, no reuse
// beyond what L1/L2 happen to catch. Well under 1% of FP32 peak.
// Requirements: none (any m, n, k; any 4-byte alignment).
#include "kernels/sgemm/rung.cuh"

namespace klab::sgemm {

namespace {

constexpr int kTile = 32;

__global__ void __launch_bounds__(kTile* kTile) sgemm_naive(GemmArgs g) {
  const int row = blockIdx.y * kTile + threadIdx.x;  // lanes of a warp: consecutive rows
  const int col = blockIdx.x * kTile + threadIdx.y;
  if (row >= g.m || col >= g.n) return;
  float acc = 0.f;
  for (int i = 0; i < g.k; ++i) acc = fmaf(g.a[row * g.k + i], g.b[i * g.n + col], acc);
  float* c = g.c + row * g.n + col;
  *c = epilogue(g.alpha, acc, g.beta, c);
}

}  // namespace

Variant gpu_v01_naive() {
  return gpu_variant(
      "v01_naive", "one thread per C element, lanes along rows (uncoalesced)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const GemmArgs g = gemm_args(p, b);
        const auto kernel = sgemm_naive;
        kernel<<<tile_grid(g, kTile, kTile), dim3(kTile, kTile), 0, stream_of(args)>>>(g);
        KLAB_CHECK_LAUNCH();
      },
      [](const Problem& p) { return grid_fits(p, kTile); });
}

}  // namespace klab::sgemm
