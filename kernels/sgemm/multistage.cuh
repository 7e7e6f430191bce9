#pragma once
// The multistage SGEMM kernel behind v11 and v12: warp tiles as v09 (block / warp / thread tiles
// of 4 x 4 chunks), fed by a kStages-deep cp.async pipeline. A stays row-major in shared memory
// (cp.async cannot transpose), its rows padded by 4 floats; a lane reads kKGroup k-steps of one A
// row per LDS (64- or 128-bit). See v11_multistage.cu for what it adds and why.
#include <string>
#include <type_traits>

#include "kernels/sgemm/rung.cuh"
#include "kernels/sgemm/warptile.cuh"
#include "klab/device/mma_sm80.cuh"

namespace klab::sgemm {

/// Tile shape, pipeline depth and register budget of one instantiation.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int Threads, int Stages,
          int MinBlocks, int KGroup>
struct MultistageConfig {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kTM = TM, kTN = TN;
  static constexpr int kThreads = Threads, kStages = Stages, kMinBlocks = MinBlocks,
                       kKGroup = KGroup;
  // A rows padded by 4 floats (16-byte aligned for cp.async): rows 4 apart, which a half-warp's
  // (LDS.64) or quarter-warp's (LDS.128) A reads fetch together, fall 16 banks apart.
  static constexpr int kLdA = BK + 4;
  static constexpr int kStageFloats = BM * kLdA + BK * BN;  // A (BM x kLdA) then B (BK x BN)
  static constexpr int kSmemBytes = Stages * kStageFloats * 4;
};

template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks) sgemm_multistage(GemmArgs g) {
  constexpr int kBM = C::kBM, kBN = C::kBN, kBK = C::kBK, kWM = C::kWM, kWN = C::kWN, kTM = C::kTM,
                kTN = C::kTN;
  constexpr int kThreads = C::kThreads, kStages = C::kStages, kKGroup = C::kKGroup, kLdA = C::kLdA;
  constexpr int kStageFloats = C::kStageFloats;
  using VecA = std::conditional_t<kKGroup == 4, float4, float2>;  // one A read: kKGroup k-steps
  constexpr int kLanesM = kWM / kTM, kLanesN = kWN / kTN;
  constexpr int kChunksM = kTM / 4, kChunksN = kTN / 4;
  constexpr int kWarpsN = kBN / kWN;
  constexpr int kCopiesA = kBM * kBK / 4 / kThreads, kCopiesB = kBK * kBN / 4 / kThreads;
  static_assert(kLanesM * kLanesN == 32 && kCopiesA * kThreads * 4 == kBM * kBK &&
                    kCopiesB * kThreads * 4 == kBK * kBN && kBK % 4 == 0 &&
                    (kKGroup == 2 || kKGroup == 4) && kBK % kKGroup == 0,
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
      device::cp_async_16(device::smem_addr(a + r * kLdA + c),
                          ok ? g.a + (block_row + r) * g.k + k0 + c : g.a, ok);
    }
#pragma unroll
    for (int l = 0; l < kCopiesB; ++l) {
      const int idx = t + l * kThreads, r = idx / (kBN / 4), c = (idx % (kBN / 4)) * 4;
      const bool ok = k0 + r < g.k && block_col + c < g.n;
      device::cp_async_16(device::smem_addr(b + r * kBN + c),
                          ok ? g.b + (k0 + r) * g.n + block_col + c : g.b, ok);
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
    __syncthreads();                       // everyone's have; and stage (tile - 1) is free
    if (const int next = tile + kStages - 1; next < tiles) load_stage(next % kStages, next * kBK);
    device::cp_async_commit();

    const float* a = smem + (tile % kStages) * kStageFloats;
    const float* b = a + kBM * kLdA;
#pragma unroll 1  // unrolled, ptxas spills under 128 registers (v11)
    for (int kk = 0; kk < kBK; kk += kKGroup) {
      __align__(16) float ra[kTM][kKGroup];  // A[row][kk .. kk + kKGroup - 1] of this lane's rows
#pragma unroll
      for (int cm = 0; cm < kChunksM; ++cm)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int row = warp_row + (cm * kLanesM + lane_m) * 4 + i;
          *reinterpret_cast<VecA*>(ra[cm * 4 + i]) =
              *reinterpret_cast<const VecA*>(a + row * kLdA + kk);
        }
#pragma unroll
      for (int q = 0; q < kKGroup; ++q) {
        __align__(16) float rb[kTN];
#pragma unroll
        for (int cn = 0; cn < kChunksN; ++cn)
          *reinterpret_cast<float4*>(&rb[cn * 4]) = *reinterpret_cast<const float4*>(
              b + (kk + q) * kBN + warp_col + (cn * kLanesN + lane_n) * 4);
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

/// Enqueues the kernel (16-byte path only: the caller checked vec4_ok).
template <class C>
void launch_multistage(const GemmArgs& g, cudaStream_t stream) {
  static const bool configured = [] {
    KLAB_CUDA_CHECK(cudaFuncSetAttribute(
        sgemm_multistage<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
    return true;
  }();
  (void)configured;
  sgemm_multistage<C><<<tile_grid(g, C::kBM, C::kBN), C::kThreads, C::kSmemBytes, stream>>>(g);
  KLAB_CHECK_LAUNCH();
}

/// A rung running MultistageConfig C on the 16-byte path and v09's scalar path otherwise.
template <class C>
Variant multistage_variant(const std::string& rung, const std::string& summary) {
  Variant v = gpu_variant(
      rung, summary,
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const GemmArgs g = gemm_args(p, b);
        if (!vec4_ok(g)) return launch_warptile<0>(g, stream_of(args));  // v09, scalar loads
        launch_multistage<C>(g, stream_of(args));
      },
      [](const Problem& p) { return grid_fits(p, C::kBM); });
  v.info.min_sm = 80;  // cp.async
  return v;
}

}  // namespace klab::sgemm
