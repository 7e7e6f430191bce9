// v11 multistage: v09's block, warp and thread tiles (128 x 128 x 16, 32 x 64, 8 x 8), fed by a
// kStages-deep cp.async pipeline instead of v09's register staging.
// Adds over v09/v10:
//  - Global -> shared copies are cp.async (16 bytes each, zero-filled past the edges): no
//    staging registers (v09 holds 4 float4 per thread across the k loop) and no shared stores
//    issued by the threads, so the k loop issues only LDS.128 and FFMA.
//  - kStages = 3 tiles in flight: tile t + 2 is loading while tile t is computed, so a k-tile's
//    global latency has two tiles' worth of math to hide behind, and one barrier per k-tile.
//  - A stays row-major in shared memory (cp.async cannot transpose). A lane reads 2 k-steps of
//    one A row with one LDS.64 (8 rows: 4 loads per k-step where v09's transposed layout needs
//    2 LDS.128); 8 lanes share each row (broadcast) and A rows are padded so the two rows of a
//    half-warp fall in different banks; B reads are 8 consecutive float4s per quarter-warp: no
//    bank conflicts on the read side.
// Why: Nsight Compute showed v10 (= v09 at 4096^3) issuing on 73.9% of cycles against cuBLAS's
// 88.9%, with barrier, long-scoreboard and dispatch stalls on top of the 4-warp interleave
// (results/h200/profile_transpose_gemm.txt). cuBLAS's FFMA kernel uses 3 stages.
// Expected: 44-47 TFLOP/s at 4096^3 (87-93% of cuBLAS's 50.8), if the stalls were the pipeline's.
// NOT YET MEASURED: written after session 2's device time ran out; its first H200 run checks it.
// Requirements: the 16-byte path (k % 4 == 0, n % 4 == 0, 16-byte-aligned A, B, C); any other
// problem runs v09's scalar path.
#include "kernels/sgemm/warptile.cuh"
#include "klab/device/mma_sm80.cuh"

namespace klab::sgemm {

namespace {

constexpr int kBM = 128, kBN = 128, kBK = 16;  // block tile
constexpr int kWM = 32, kWN = 64;              // warp tile
constexpr int kTM = 8, kTN = 8;                // thread tile, as 2 x 2 chunks of 4 x 4
constexpr int kThreads = 256, kStages = 3;
// k-steps per A read: 2 (one LDS.64 per row; ra is float2 below). 4 (LDS.128) would halve the A
// reads but spills under the 128 registers two blocks per SM allow, as does unrolling the kk
// loop (ptxas: 12-40 bytes of spills); kKGroup = 2 with the kk loop rolled fits in 127.
constexpr int kKGroup = 2;
// A rows padded by 4 floats (80 bytes apart, 16-byte aligned for cp.async): the two A rows a
// half-warp's 8-byte reads fetch (4 rows apart) then sit in different banks, not 256 bytes apart.
constexpr int kLdA = kBK + 4;
constexpr int kStageFloats = kBM * kLdA + kBK * kBN;  // A (kBM x kLdA) then B (kBK x kBN)
constexpr int kSmemBytes = kStages * kStageFloats * 4;

__global__ void __launch_bounds__(kThreads, 2) sgemm_multistage(GemmArgs g) {
  constexpr int kLanesM = kWM / kTM, kLanesN = kWN / kTN;  // 4 x 8 lanes
  constexpr int kChunksM = kTM / 4, kChunksN = kTN / 4;
  constexpr int kWarpsN = kBN / kWN;
  constexpr int kCopiesA = kBM * kBK / 4 / kThreads, kCopiesB = kBK * kBN / 4 / kThreads;
  static_assert(kLanesM * kLanesN == 32 && kCopiesA * kThreads * 4 == kBM * kBK &&
                    kCopiesB * kThreads * 4 == kBK * kBN && kBK % 4 == 0,
                "tile shapes must divide evenly");
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);

  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int block_row = blockIdx.y * kBM, block_col = blockIdx.x * kBN;
  const int warp_row = (warp / kWarpsN) * kWM, warp_col = (warp % kWarpsN) * kWN;
  const int lane_m = lane / kLanesN, lane_n = lane % kLanesN;

  // One k-tile into stage s: chunk idx of A is row idx / (kBK/4), columns 4 (idx % (kBK/4)) ..,
  // so four consecutive threads copy one 64-byte row segment (into an 80-byte padded shared
  // row); B likewise by rows of kBN, contiguous in shared memory.
  auto load_stage = [&](int s, int k0) {
    float* a = smem + s * kStageFloats;
    float* b = a + kBM * kLdA;
#pragma unroll
    for (int l = 0; l < kCopiesA; ++l) {
      const int idx = t + l * kThreads, r = idx / (kBK / 4), c = (idx % (kBK / 4)) * 4;
      const bool ok = block_row + r < g.m && k0 + c < g.k;
      device::cp_async_16(device::smem_addr(a + r * kLdA + c), ok ? g.a + (block_row + r) * g.k + k0 + c : g.a, ok);
    }
#pragma unroll
    for (int l = 0; l < kCopiesB; ++l) {
      const int idx = t + l * kThreads, r = idx / (kBN / 4), c = (idx % (kBN / 4)) * 4;
      const bool ok = k0 + r < g.k && block_col + c < g.n;
      device::cp_async_16(device::smem_addr(b + r * kBN + c), ok ? g.b + (k0 + r) * g.n + block_col + c : g.b, ok);
    }
  };

  const int tiles = (g.k + kBK - 1) / kBK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles) load_stage(s, s * kBK);
    device::cp_async_commit();  // empty groups keep the count uniform
  }

  float acc[kTM][kTN] = {};  // (chunk_m * 4 + i, chunk_n * 4 + j), as v09
  for (int tile = 0; tile < tiles; ++tile) {
    device::cp_async_wait<kStages - 2>();  // this thread's copies of `tile` have landed
    __syncthreads();                        // everyone's have; and stage (tile - 1) is free
    if (const int next = tile + kStages - 1; next < tiles) load_stage(next % kStages, next * kBK);
    device::cp_async_commit();

    const float* a = smem + (tile % kStages) * kStageFloats;
    const float* b = a + kBM * kLdA;
#pragma unroll 1  // see kKGroup
    for (int kk = 0; kk < kBK; kk += kKGroup) {
      __align__(8) float ra[kTM][kKGroup];  // A[row][kk .. kk + kKGroup - 1] of this lane's 8 rows
#pragma unroll
      for (int cm = 0; cm < kChunksM; ++cm)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int row = warp_row + (cm * kLanesM + lane_m) * 4 + i;
          *reinterpret_cast<float2*>(ra[cm * 4 + i]) = *reinterpret_cast<const float2*>(a + row * kLdA + kk);
        }
#pragma unroll
      for (int q = 0; q < kKGroup; ++q) {
        __align__(16) float rb[kTN];
#pragma unroll
        for (int cn = 0; cn < kChunksN; ++cn)
          *reinterpret_cast<float4*>(&rb[cn * 4]) =
              *reinterpret_cast<const float4*>(b + (kk + q) * kBN + warp_col + (cn * kLanesN + lane_n) * 4);
#pragma unroll
        for (int r = 0; r < kTM; ++r)
#pragma unroll
          for (int c = 0; c < kTN; ++c) acc[r][c] = fmaf(ra[r][q], rb[c], acc[r][c]);
      }
    }
  }
  device::cp_async_wait<0>();

#pragma unroll
  for (int cm = 0; cm < kChunksM; ++cm)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = block_row + warp_row + (cm * kLanesM + lane_m) * 4 + i;
#pragma unroll
      for (int cn = 0; cn < kChunksN; ++cn) {
        const int r = cm * 4 + i, c = cn * 4;
        store_c4<true>(g, row, block_col + warp_col + (cn * kLanesN + lane_n) * 4,
                       make_float4(acc[r][c], acc[r][c + 1], acc[r][c + 2], acc[r][c + 3]));
      }
    }
}

void launch(const GemmArgs& g, cudaStream_t stream) {
  if (!vec4_ok(g)) return launch_warptile<0>(g, stream);  // v09, scalar loads
  static const bool configured = [] {
    KLAB_CUDA_CHECK(cudaFuncSetAttribute(sgemm_multistage, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    return true;
  }();
  (void)configured;
  sgemm_multistage<<<tile_grid(g, kBM, kBN), kThreads, kSmemBytes, stream>>>(g);
  KLAB_CHECK_LAUNCH();
}

}  // namespace

Variant gpu_v11_multistage() {
  Variant v = gpu_variant(
      "v11_multistage", "v09's tiles fed by a 3-stage cp.async pipeline (no register staging)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) { launch(gemm_args(p, b), stream_of(args)); },
      [](const Problem& p) { return grid_fits(p, kBM); });
  v.info.min_sm = 80;  // cp.async
  return v;
}

}  // namespace klab::sgemm
