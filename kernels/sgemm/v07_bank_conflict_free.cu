// v07 bank-conflict free: v06 with (1) sA's rows padded from 128 to 132 floats, so the
// transposing stores of a warp (16 rows x 2 column groups) land in 32 different banks, and (2)
// each thread's 8 x 8 sub-tile split into 4 x 4 quadrants 64 rows / 64 columns apart, so the 8
// lanes of a quarter-warp read 8 *consecutive* float4 of B (one conflict-free 128-byte
// wavefront) instead of float4s 32 bytes apart. A warp's reads of A are broadcasts either way.
// Adds over v06: no shared-memory bank conflicts, and the warp's C stores become runs of 256
// contiguous bytes.
// Expected bottleneck: latency — a tile's global loads, the barrier and the math still run one
// after another (the 2 blocks per SM overlap a little of it); ~60-65% of FP32 peak.
// Requirements: as v06 (16-byte paths when k % 4 == 0, n % 4 == 0 and A, B, C are 16-byte
// aligned; scalar bounds-checked loads and stores otherwise).
#include "kernels/sgemm/rung.cuh"

namespace klab::sgemm {

namespace {

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8, kThreadM = 8, kThreadN = 8;
constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);  // 256
constexpr int kPadA = 4;  // keeps sA's rows 16-byte aligned; bank of sA[k][r] = (4k + r) % 32
static_assert(kBlockM * kBlockK / 4 == kThreads && kBlockK * kBlockN / 4 == kThreads,
              "one float4 of A and of B per thread");

template <bool kVec>
__global__ void __launch_bounds__(kThreads, 2) sgemm_bank_conflict_free(GemmArgs g) {
  __shared__ __align__(16) float sA[kBlockK][kBlockM + kPadA];  // (BK, BM + pad): A transposed
  __shared__ __align__(16) float sB[kBlockK][kBlockN];          // (BK, BN)
  const int t = threadIdx.x;
  const int block_row = blockIdx.y * kBlockM, block_col = blockIdx.x * kBlockN;
  // The thread's rows: t_row*4 + {0..3} and 64 + t_row*4 + {0..3}; columns likewise.
  const int t_row = t / 16, t_col = t % 16;
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
      *reinterpret_cast<float4*>(&rA[0]) = *reinterpret_cast<const float4*>(&sA[i][t_row * 4]);
      *reinterpret_cast<float4*>(&rA[4]) = *reinterpret_cast<const float4*>(&sA[i][64 + t_row * 4]);
      *reinterpret_cast<float4*>(&rB[0]) = *reinterpret_cast<const float4*>(&sB[i][t_col * 4]);
      *reinterpret_cast<float4*>(&rB[4]) = *reinterpret_cast<const float4*>(&sB[i][64 + t_col * 4]);
#pragma unroll
      for (int r = 0; r < kThreadM; ++r)
#pragma unroll
        for (int c = 0; c < kThreadN; ++c) acc[r][c] = fmaf(rA[r], rB[c], acc[r][c]);
    }
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

Variant gpu_v07_bank_conflict_free() {
  return gpu_variant(
      "v07_bank_conflict_free", "padded transposed A, 4x4 quadrants per thread: no bank conflicts",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const GemmArgs g = gemm_args(p, b);
        const auto kernel =
            vec4_ok(g) ? sgemm_bank_conflict_free<true> : sgemm_bank_conflict_free<false>;
        kernel<<<tile_grid(g, kBlockM, kBlockN), kThreads, 0, stream_of(args)>>>(g);
        KLAB_CHECK_LAUNCH();
      },
      [](const Problem& p) { return grid_fits(p, kBlockM); });
}

}  // namespace klab::sgemm
