// v01 wmma: the tensor cores through the C++ WMMA API (nvcuda::wmma, 16x16x16 bf16/f16 tiles,
// fp32 accumulators) on shared-memory tiles.
// Adds over v00: the GPU, and tensor-core math: one warp-wide mma_sync does 16x16x16 multiply-adds
// (HMMA on the tensor pipe) where an FFMA does one per thread.
// Tiles: block 128x128x32, 8 warps (4x2) of 32x64 = 2x4 wmma accumulators each; A and B tiles
// staged in row-padded shared memory (row stride 40 / 136 elements: keeps load_matrix_sync's
// 32-byte alignment and spreads rows over banks); load -> barrier -> mma -> barrier per K tile.
// The epilogue goes through a per-warp 16x16 fp32 scratch tile, because WMMA's accumulator layout
// is opaque, then writes 16-byte rows of 8 outputs when it can.
// Expected bottleneck: latency and shared-memory traffic: synchronous global loads with nothing in
// flight during the mma, and WMMA's fragment loads, which compile to plain LDS.128 here, not
// ldmatrix (16 LDS.128 per 32 HMMA.16816 per warp and 32-deep tile; v02 needs 16 LDSM per 64).
// Requirements: sm_80+ (bf16 WMMA). Any m, n, k: 16-byte chunk copies with zero-filled edges when
// k % 8 == 0, n % 8 == 0 and the pointers are 16-byte aligned; element-wise copies otherwise.
#include <mma.h>

#include "kernels/hgemm/rung.cuh"
#include "kernels/hgemm/tile_sm80.cuh"

namespace klab::hgemm {

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32;
constexpr int kWarpM = 32, kWarpN = 64;
constexpr int kWarpsN = kBlockN / kWarpN;
constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;
constexpr int kFragsM = kWarpM / 16, kFragsN = kWarpN / 16;
constexpr int kPad = 8;

using LayoutA = PaddedLayout<kBlockM, kBlockK, kPad>;  // (BM, BK) of A
using LayoutB = PaddedLayout<kBlockK, kBlockN, kPad>;  // (BK, BN) of B

template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads)
    hgemm_v01_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m,
                     int n, int k) {
  __shared__ alignas(128) T sA[LayoutA::kElems];
  __shared__ alignas(128) T sB[LayoutB::kElems];
  __shared__ alignas(128) float sC[kThreads / 32][16 * 16];  // per-warp epilogue scratch
  constexpr Copy kCopy = kVec ? Copy::sync16 : Copy::scalar;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int m0 = blockIdx.y * kBlockM, n0 = blockIdx.x * kBlockN;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;

  TileCopier<T, kBlockM, kBlockK, kThreads, LayoutA, false> gA(a, m, k, k, m0, 0, tid);
  TileCopier<T, kBlockK, kBlockN, kThreads, LayoutB, true> gB(b, k, n, n, 0, n0, tid);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragsM][kFragsN];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  const int k_tiles = (k - 1) / kBlockK + 1;
  for (int kt = 0; kt < k_tiles; ++kt) {
    gA.template copy<kCopy>(sA);
    gB.template copy<kCopy>(sB);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBlockK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa[kFragsM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb[kFragsN];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
        wmma::load_matrix_sync(fa[i], sA + (warp_m * kWarpM + 16 * i) * LayoutA::kStride + kk,
                               LayoutA::kStride);
#pragma unroll
      for (int j = 0; j < kFragsN; ++j)
        wmma::load_matrix_sync(fb[j], sB + kk * LayoutB::kStride + warp_n * kWarpN + 16 * j,
                               LayoutB::kStride);
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
    gA.advance();
    gB.advance();
  }

  // Epilogue: each accumulator through the warp's scratch; lane l writes row l/2, columns 8(l%2)..+7.
  float* scratch = sC[warp];
  const int r_in = lane / 2, c_in = (lane % 2) * 8;
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int row = m0 + warp_m * kWarpM + 16 * i + r_in;
      const int col = n0 + warp_n * kWarpN + 16 * j + c_in;
      const float* v = scratch + r_in * 16 + c_in;
      if (row < m) {
        T* dst = c + static_cast<int64_t>(row) * n + col;
        if (kVec && col < n) {  // n % 8 == 0: the 8 columns are all in or all out
          uint4 w;
          w.x = device::pack2<T>(v[0], v[1]);
          w.y = device::pack2<T>(v[2], v[3]);
          w.z = device::pack2<T>(v[4], v[5]);
          w.w = device::pack2<T>(v[6], v[7]);
          *reinterpret_cast<uint4*>(dst) = w;
        } else if (!kVec) {
#pragma unroll
          for (int e = 0; e < 8; ++e)
            if (col + e < n) dst[e] = device::from_float<T>(v[e]);
        }
      }
      __syncwarp();
    }
}

template <class T>
void launch(const GemmArgs<T>& g, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(device::ceil_div(g.n, kBlockN)),
                  static_cast<unsigned>(device::ceil_div(g.m, kBlockM)));
  if (g.vec16())
    hgemm_v01_kernel<T, true><<<grid, kThreads, 0, stream>>>(g.a, g.b, g.c, g.m, g.n, g.k);
  else
    hgemm_v01_kernel<T, false><<<grid, kThreads, 0, stream>>>(g.a, g.b, g.c, g.m, g.n, g.k);
  KLAB_CHECK_LAUNCH();
}

}  // namespace

Variant gpu_v01_wmma() {
  Variant v = gpu_variant("v01_wmma", "nvcuda::wmma 16x16x16 on padded smem tiles, 32x64 warp tile",
                          [](const Problem& p, Buffers& b, const LaunchArgs& args) {
                            with_gemm_args(
                                p, b, [&]<class T>(GemmArgs<T> g) { launch(g, stream_of(args)); });
                          });
  v.can_implement = [](const Problem& p) { return fits_grid_y(p, kBlockM); };
  return v;
}

}  // namespace klab::hgemm
