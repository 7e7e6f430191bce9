// v06 vectorized: v05 with 16-byte memory instructions everywhere — LDG.128 of A (along k) and
// B (along n), A stored *transposed* in shared memory (sA is BK x BM) so a thread's 8 values of
// A are contiguous, LDS.128 for both operands, and STG.128 / LDG.128 for C.
// Adds over v05: 4 LDS.128 instead of 16 LDS.32 per 64 FMAs, a quarter of the global load and
// store instructions, and fewer address computations.
// Expected bottleneck: shared-memory bank conflicts — the transposing stores into sA conflict
// 2-way, and the LDS.128 reads of B by lanes 8 floats apart conflict 2-way; plus the load ->
// barrier -> compute serialisation (no overlap of global loads with math). ~50-60% of FP32 peak.
// Requirements: the 16-byte paths need k % 4 == 0, n % 4 == 0 and 16-byte aligned A, B, C;
// otherwise the same kernel runs with scalar, bounds-checked global loads and stores (correct
// for any m, n, k and alignment, slower).
#include "kernels/sgemm/rung.cuh"

namespace klab::sgemm {

namespace {

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8, kThreadM = 8, kThreadN = 8;
constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);  // 256
static_assert(kBlockM * kBlockK / 4 == kThreads && kBlockK * kBlockN / 4 == kThreads,
              "one float4 of A and of B per thread");

template <bool kVec>
__global__ void __launch_bounds__(kThreads, 2) sgemm_vectorized(GemmArgs g) {
  __shared__ __align__(16) float sA[kBlockK][kBlockM];  // (BK, BM): A transposed
  __shared__ __align__(16) float sB[kBlockK][kBlockN];  // (BK, BN)
  const int t = threadIdx.x;
  const int block_row = blockIdx.y * kBlockM, block_col = blockIdx.x * kBlockN;
  const int t_row = t / (kBlockN / kThreadN), t_col = t % (kBlockN / kThreadN);
  // One float4 per thread per tile: A's row a_r, columns a_c .. a_c+3; B's row b_r, columns b_c ..
  const int a_r = t / (kBlockK / 4), a_c = (t % (kBlockK / 4)) * 4;
  const int b_r = t / (kBlockN / 4), b_c = (t % (kBlockN / 4)) * 4;
  float acc[kThreadM][kThreadN] = {};
  for (int k0 = 0; k0 < g.k; k0 += kBlockK) {
    const float4 va = load4<kVec>(g.a, g.m, g.k, block_row + a_r, k0 + a_c);
    sA[a_c + 0][a_r] = va.x;
    sA[a_c + 1][a_r] = va.y;
    sA[a_c + 2][a_r] = va.z;
    sA[a_c + 3][a_r] = va.w;
    *reinterpret_cast<float4*>(&sB[b_r][b_c]) =
        load4<kVec>(g.b, g.k, g.n, k0 + b_r, block_col + b_c);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      __align__(16) float rA[kThreadM];  // 16-byte aligned: filled by float4 copies
      __align__(16) float rB[kThreadN];
      *reinterpret_cast<float4*>(&rA[0]) =
          *reinterpret_cast<const float4*>(&sA[i][t_row * kThreadM]);
      *reinterpret_cast<float4*>(&rA[4]) =
          *reinterpret_cast<const float4*>(&sA[i][t_row * kThreadM + 4]);
      *reinterpret_cast<float4*>(&rB[0]) =
          *reinterpret_cast<const float4*>(&sB[i][t_col * kThreadN]);
      *reinterpret_cast<float4*>(&rB[4]) =
          *reinterpret_cast<const float4*>(&sB[i][t_col * kThreadN + 4]);
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
#pragma unroll
    for (int c = 0; c < kThreadN; c += 4)
      store_c4<kVec>(g, row, block_col + t_col * kThreadN + c,
                     make_float4(acc[r][c], acc[r][c + 1], acc[r][c + 2], acc[r][c + 3]));
  }
}

}  // namespace

Variant gpu_v06_vectorized() {
  return gpu_variant(
      "v06_vectorized", "16-byte global and shared loads, A transposed in shared memory",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const GemmArgs g = gemm_args(p, b);
        const auto kernel = vec4_ok(g) ? sgemm_vectorized<true> : sgemm_vectorized<false>;
        kernel<<<tile_grid(g, kBlockM, kBlockN), kThreads, 0, stream_of(args)>>>(g);
        KLAB_CHECK_LAUNCH();
      },
      [](const Problem& p) { return grid_fits(p, kBlockM); });
}

}  // namespace klab::sgemm
