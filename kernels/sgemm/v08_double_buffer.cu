// v08 double buffer: v07 with two shared-memory stages. The global loads of tile t+1 are issued
// into registers before the math on tile t, and stored into the other stage after it, so the
// load latency hides behind 8 x 64 FMAs per thread; one barrier per tile instead of two.
// Adds over v07: overlap of global memory with math inside one block (v07 only overlapped
// across the 2 resident blocks), and half the barriers.
// Expected bottleneck: instruction issue in the inner loop (64 FFMA + 4 LDS.128 per k-step is
// close to the limit where LDS latency shows) and the barrier per 8-deep tile; ~65-75% of FP32
// peak.
// Requirements: as v06 (16-byte paths when k % 4 == 0, n % 4 == 0 and A, B, C are 16-byte
// aligned; scalar bounds-checked loads and stores otherwise).
#include "kernels/sgemm/rung.cuh"

namespace klab::sgemm {

namespace {

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8, kThreadM = 8, kThreadN = 8;
constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);  // 256
constexpr int kPadA = 4;
static_assert(kBlockM * kBlockK / 4 == kThreads && kBlockK * kBlockN / 4 == kThreads,
              "one float4 of A and of B per thread");

template <bool kVec>
__global__ void __launch_bounds__(kThreads, 2) sgemm_double_buffer(GemmArgs g) {
  __shared__ __align__(16) float sA[2][kBlockK][kBlockM + kPadA];  // (stage, BK, BM + pad)
  __shared__ __align__(16) float sB[2][kBlockK][kBlockN];          // (stage, BK, BN)
  const int t = threadIdx.x;
  const int block_row = blockIdx.y * kBlockM, block_col = blockIdx.x * kBlockN;
  const int t_row = t / 16, t_col = t % 16;
  const int a_r = t / (kBlockK / 4), a_c = (t % (kBlockK / 4)) * 4;
  const int b_r = t / (kBlockN / 4), b_c = (t % (kBlockN / 4)) * 4;

  auto store_tile = [&](int stage, float4 va, float4 vb) {
    sA[stage][a_c + 0][a_r] = va.x;
    sA[stage][a_c + 1][a_r] = va.y;
    sA[stage][a_c + 2][a_r] = va.z;
    sA[stage][a_c + 3][a_r] = va.w;
    *reinterpret_cast<float4*>(&sB[stage][b_r][b_c]) = vb;
  };

  float acc[kThreadM][kThreadN] = {};
  const int tiles = (g.k + kBlockK - 1) / kBlockK;
  store_tile(0, load4<kVec>(g.a, g.m, g.k, block_row + a_r, a_c),
             load4<kVec>(g.b, g.k, g.n, b_r, block_col + b_c));
  __syncthreads();
  for (int tile = 0; tile < tiles; ++tile) {
    const int stage = tile & 1;
    const bool has_next = tile + 1 < tiles;
    float4 va, vb;  // tile + 1, in flight during the math below
    if (has_next) {
      const int k0 = (tile + 1) * kBlockK;
      va = load4<kVec>(g.a, g.m, g.k, block_row + a_r, k0 + a_c);
      vb = load4<kVec>(g.b, g.k, g.n, k0 + b_r, block_col + b_c);
    }
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      __align__(16) float rA[kThreadM];  // 16-byte aligned: filled by float4 copies
      __align__(16) float rB[kThreadN];
      *reinterpret_cast<float4*>(&rA[0]) =
          *reinterpret_cast<const float4*>(&sA[stage][i][t_row * 4]);
      *reinterpret_cast<float4*>(&rA[4]) =
          *reinterpret_cast<const float4*>(&sA[stage][i][64 + t_row * 4]);
      *reinterpret_cast<float4*>(&rB[0]) =
          *reinterpret_cast<const float4*>(&sB[stage][i][t_col * 4]);
      *reinterpret_cast<float4*>(&rB[4]) =
          *reinterpret_cast<const float4*>(&sB[stage][i][64 + t_col * 4]);
#pragma unroll
      for (int r = 0; r < kThreadM; ++r)
#pragma unroll
        for (int c = 0; c < kThreadN; ++c) acc[r][c] = fmaf(rA[r], rB[c], acc[r][c]);
    }
    // The other stage was last read in iteration tile - 1, before the barrier that ended it.
    if (has_next) store_tile(stage ^ 1, va, vb);
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < kThreadM; ++r) {
    const int row = block_row + (r / 4) * 64 + t_row * 4 + r % 4;
#pragma unroll
    for (int c = 0; c < kThreadN; c += 4)
      store_c4<kVec>(g, row, block_col + (c / 4) * 64 + t_col * 4,
                     make_float4(acc[r][c], acc[r][c + 1], acc[r][c + 2], acc[r][c + 3]));
  }
}

}  // namespace

Variant gpu_v08_double_buffer() {
  return gpu_variant(
      "v08_double_buffer", "two shared stages, next tile's loads in flight during the math",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const GemmArgs g = gemm_args(p, b);
        const auto kernel = vec4_ok(g) ? sgemm_double_buffer<true> : sgemm_double_buffer<false>;
        kernel<<<tile_grid(g, kBlockM, kBlockN), kThreads, 0, stream_of(args)>>>(g);
        KLAB_CHECK_LAUNCH();
      },
      [](const Problem& p) { return grid_fits(p, kBlockM); });
}

}  // namespace klab::sgemm
