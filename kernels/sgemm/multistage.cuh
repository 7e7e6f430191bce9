#pragma once
// The multistage SGEMM kernels behind v11-v15: warp tiles as v09 (block / warp / thread tiles of
// 4 x 4 chunks), fed by a kStages-deep cp.async pipeline.
// - sgemm_multistage (v11, v12; MultistageConfig): A row-major in shared memory, copied 16 bytes
//   at a time, its rows padded by 4 floats; a lane reads kKGroup k-steps of one A row per LDS.
// - sgemm_multistage_at (v13-v15; MultistageAtConfig): A transposed on its way into shared
//   memory by 4-byte cp.async, so a k-step's A fragment is 2 LDS.128 as in v09; fragments
//   double-buffered in registers across the whole k loop (barriers included). Hoisted (v15):
//   the copies' addresses and predicates computed once per thread, not per k-tile.
// See v11_multistage.cu, v13_multistage_at.cu and v15_hoisted_copies.cu for what each adds.
#include <array>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/sgemm/rung.cuh"
#include "kernels/sgemm/tune_multistage.hpp"
#include "kernels/sgemm/warptile.cuh"
#include "klab/device/cp_async.cuh"
#include "klab/device/smem.cuh"

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
  static constexpr bool kATransposed = false;
};

/// As MultistageConfig, for sgemm_multistage_at: A^T (BK x (BM + 4)) then B (BK x BN) per stage.
/// Hoisted (v15): the copies' addresses, destinations and edge predicates are computed once per
/// thread; a k-tile only moves them along k, and blocks inside C copy full k-tiles unpredicated.
/// SpreadFrom (v17, needs Hoisted; -1: off): a k-tile's copies are issued in slices over k-steps
/// SpreadFrom .. BK-2, between the FFMAs, instead of in one burst after the barrier; they are
/// predicated (no branch, no compiler barrier), and the stage indices rotate instead of being
/// computed modulo Stages.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int Threads, int Stages,
          int MinBlocks, bool Hoisted = false, int SpreadFrom = -1>
struct MultistageAtConfig {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kTM = TM, kTN = TN;
  static constexpr int kThreads = Threads, kStages = Stages, kMinBlocks = MinBlocks;
  static constexpr bool kHoisted = Hoisted, kSpread = SpreadFrom >= 0;
  static constexpr int kSpreadFrom = SpreadFrom;
  static_assert(!kSpread || (Hoisted && SpreadFrom <= BK - 2),
                "the spread schedule slices the hoisted copies over k-steps SpreadFrom .. BK-2");
  // A^T rows of BM + 4 floats: the 4-byte copies of a warp (4 rows x 8 k) land in banks
  // (4 k + row) % 32, all distinct; rows stay 16-byte aligned for LDS.128.
  static constexpr int kLdA = BM + 4;
  static constexpr int kStageFloats = BK * kLdA + BK * BN;
  static constexpr int kSmemBytes = Stages * kStageFloats * 4;
  static constexpr bool kATransposed = true;
};

/// One k-tile of B (kBK x kBN, rows k0 ..) into shared memory `b` (row-major, kBN floats per
/// row) by 16-byte cp.async, zero-filled past k and n: float4 number t + l * kThreads of the tile
/// for thread t.
template <int kBK, int kBN, int kThreads>
__device__ __forceinline__ void copy_b_rows(const GemmArgs& g, float* b, int t, int k0,
                                            int block_col) {
#pragma unroll
  for (int l = 0; l < kBK * kBN / 4 / kThreads; ++l) {
    const int idx = t + l * kThreads, r = idx / (kBN / 4), c = (idx % (kBN / 4)) * 4;
    const bool ok = k0 + r < g.k && block_col + c < g.n;
    device::cp_async_16(device::smem_addr(b + r * kBN + c),
                        ok ? g.b + (k0 + r) * g.n + block_col + c : g.b, ok);
  }
}

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
    copy_b_rows<kBK, kBN, kThreads>(g, b, t, k0, block_col);
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

  store_warp_tile<true, kTM, kTN, kLanesM, kLanesN>(g, acc, block_row, block_col, warp_row,
                                                    warp_col, lane_m, lane_n);
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks) sgemm_multistage_at(GemmArgs g) {
  constexpr int kBM = C::kBM, kBN = C::kBN, kBK = C::kBK, kWM = C::kWM, kWN = C::kWN, kTM = C::kTM,
                kTN = C::kTN;
  constexpr int kThreads = C::kThreads, kStages = C::kStages, kLdA = C::kLdA;
  constexpr int kStageFloats = C::kStageFloats;
  constexpr int kLanesM = kWM / kTM, kLanesN = kWN / kTN;
  constexpr int kWarpsN = kBN / kWN;
  constexpr int kCopiesA = kBM * kBK / kThreads, kCopiesB = kBK * kBN / 4 / kThreads;
  static_assert(kLanesM * kLanesN == 32 && kCopiesA * kThreads == kBM * kBK &&
                    kCopiesB * kThreads * 4 == kBK * kBN && kThreads % kBK == 0 && kStages >= 2 &&
                    kBK % 2 == 0 &&  // the fragment double buffer's parity at i = kBK - 1
                    kTM % 4 == 0 && kTN % 4 == 0 && kWM % kTM == 0 && kWN % kTN == 0,
                "tile shapes must divide evenly");
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);

  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int block_row = blockIdx.y * kBM, block_col = blockIdx.x * kBN;
  const int warp_row = (warp / kWarpsN) * kWM, warp_col = (warp % kWarpsN) * kWN;
  const int lane_m = lane / kLanesN, lane_n = lane % kLanesN;

  // One k-tile into stage s. A: copy idx is row idx / BK, k idx % BK: a warp reads 32 / BK rows
  // of BK consecutive floats (whole 32-byte sectors when BK = 8) and writes them transposed.
  // B: float4s of whole rows, as v11.
  // Hoisted: copy l of A is row a_r0 + l * kRowStepA, k a_kk; of B row b_r0 + l * kRowStepB,
  // columns b_c .. + 3. The sources advance by one k-tile per call (tiles are loaded in order).
  // A's copies go by warp chunks of 4 rows x 8 k (whole 32-byte sectors; shared banks
  // (4 k + row) % 32 all distinct for any BK), chunk w of a copy round at k (w % (BK / 8)) * 8.
  constexpr int kRowStepA = kThreads / kBK, kRowStepB = kThreads / (kBN / 4);
  static_assert(!C::kHoisted || (kBK % 8 == 0 && (kThreads / 32) % (kBK / 8) == 0 &&
                                 kCopiesA <= 32 && kThreads % (kBN / 4) == 0),
                "the hoisted copies' mapping needs these");
  const int a_kk = ((t / 32) % (kBK / 8 > 0 ? kBK / 8 : 1)) * 8 + t % 8;
  const int a_r0 = ((t / 32) / (kBK / 8 > 0 ? kBK / 8 : 1)) * 4 + (t % 32) / 8;
  const int b_r0 = t / (kBN / 4), b_c = (t % (kBN / 4)) * 4;
  // 64-bit offsets: an edge block's rows past m, times k, can pass 2^31.
  const float* a_src = g.a + int64_t(block_row + a_r0) * g.k + a_kk;
  const float* b_src = g.b + b_r0 * g.n + block_col + b_c;
  const uint32_t a_dst = device::smem_addr(smem + a_kk * kLdA + a_r0);
  const uint32_t b_dst = device::smem_addr(smem + kBK * kLdA + b_r0 * kBN + b_c);
  uint32_t a_rows_ok = 0;  // bit l: copy l's row is inside A
#pragma unroll
  for (int l = 0; l < kCopiesA; ++l)
    a_rows_ok |= uint32_t(block_row + a_r0 + l * kRowStepA < g.m) << l;
  const bool b_cols_ok = block_col + b_c < g.n;
  // Blocks wholly inside C (all but the edge blocks) copy every full k-tile unpredicated.
  const bool interior = block_row + kBM <= g.m && block_col + kBN <= g.n;
  constexpr int kCopies = kCopiesA + kCopiesB;  // A's first, then B's (v17 numbers them so)
  auto advance_sources = [&] {                  // to the next k-tile (tiles are loaded in order)
    a_src += kBK;
    b_src += kBK * g.n;
  };
  auto load_stage_hoisted = [&](int s, int k0) {
    const uint32_t stage = uint32_t(s * kStageFloats * 4);
    if (interior && k0 + kBK <= g.k) {
#pragma unroll
      for (int l = 0; l < kCopiesA; ++l)
        device::cp_async_4(a_dst + stage + l * kRowStepA * 4, a_src + int64_t(l * kRowStepA) * g.k,
                           true);
#pragma unroll
      for (int l = 0; l < kCopiesB; ++l)
        device::cp_async_16(b_dst + stage + l * kRowStepB * kBN * 4, b_src + l * kRowStepB * g.n,
                            true);
    } else {  // an edge block, or the last, partial k-tile
#pragma unroll
      for (int l = 0; l < kCopiesA; ++l) {
        const bool ok = ((a_rows_ok >> l) & 1) && k0 + a_kk < g.k;
        device::cp_async_4(a_dst + stage + l * kRowStepA * 4,
                           ok ? a_src + int64_t(l * kRowStepA) * g.k : g.a, ok);
      }
#pragma unroll
      for (int l = 0; l < kCopiesB; ++l) {
        const bool ok = b_cols_ok && k0 + b_r0 + l * kRowStepB < g.k;
        device::cp_async_16(b_dst + stage + l * kRowStepB * kBN * 4,
                            ok ? b_src + l * kRowStepB * g.n : g.b, ok);
      }
    }
    advance_sources();
  };
  auto load_stage = [&](int s, int k0) {
    if constexpr (C::kHoisted) {
      load_stage_hoisted(s, k0);
    } else {
      float* a = smem + s * kStageFloats;
      float* b = a + kBK * kLdA;
#pragma unroll
      for (int l = 0; l < kCopiesA; ++l) {
        const int idx = t + l * kThreads, r = idx / kBK, kk = idx % kBK;
        const bool ok = block_row + r < g.m && k0 + kk < g.k;
        device::cp_async_4(device::smem_addr(a + kk * kLdA + r),
                           ok ? g.a + (block_row + r) * g.k + k0 + kk : g.a, ok);
      }
      copy_b_rows<kBK, kBN, kThreads>(g, b, t, k0, block_col);
    }
  };

  // Fragments of k-step i of stage s into buffer f, as v09's.
  __align__(16) float ra[2][kTM], rb[2][kTN];
  auto load_frags = [&](int s, int i, int f) {
    load_lane_frags<kTM, kTN, kLanesM, kLanesN>(
        ra[f], rb[f], smem + s * kStageFloats + i * kLdA + warp_row,
        smem + s * kStageFloats + kBK * kLdA + i * kBN + warp_col, lane_m, lane_n);
  };

  const int tiles = (g.k + kBK - 1) / kBK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles) load_stage(s, s * kBK);
    device::cp_async_commit();  // empty groups keep the count uniform
  }
  device::cp_async_wait<kStages - 2>();
  __syncthreads();
  load_frags(0, 0, 0);

  float acc[kTM][kTN] = {};
  auto ffma_step = [&](int f) { ffma_outer(acc, ra[f], rb[f]); };
  // The start of k-step i of `tile` (stage s; s_next holds tile + 1): at the last step wait for
  // tile + 1 and barrier, then load the next step's fragments into the other buffer.
  auto k_step_head = [&](int i, int tile, int s, int s_next) {
    if (i == kBK - 1) {  // tile + 1 must have landed, for everyone, before its first fragments
      device::cp_async_wait<kStages - 2>();
      __syncthreads();
    }
    if (i + 1 < kBK)
      load_frags(s, i + 1, (i + 1) & 1);
    else if (tile + 1 < tiles)
      load_frags(s_next, 0, (i + 1) & 1);
  };
  if constexpr (C::kSpread) {
    // Copy j of the refill goes out at k-step kFrom + j * kSteps / kCopies (kSteps = kBK - 1 -
    // kFrom steps), after that step's fragment loads, with no branch and no compiler barrier in
    // between (cp_async_*_if): whether the refill happens is a predicate and which copies are
    // inside A and B a mask, both computed arithmetically once per k-tile. The group is
    // committed at step kBK - 2, before the wait of step kBK - 1, so the group count at each wait
    // is the burst schedule's.
    static_assert(kCopies <= 32, "one bit per copy of a k-tile");
    constexpr int kFrom = C::kSpreadFrom, kSteps = kBK - 1 - kFrom;
    auto valid_mask = [&](int k0) {  // bit j: copy j of the k-tile at k0 is inside A or B
      uint32_t m = k0 + a_kk < g.k ? a_rows_ok : 0u;
#pragma unroll
      for (int l = 0; l < kCopiesB; ++l)
        m |= uint32_t(b_cols_ok && k0 + b_r0 + l * kRowStepB < g.k) << (kCopiesA + l);
      return m;
    };
    int read = 0, write = kStages - 1;  // the stages of `tile` and of tile + kStages - 1
    for (int tile = 0; tile < tiles; ++tile) {
      const int next = tile + kStages - 1, read_next = read == kStages - 1 ? 0 : read + 1;
      const bool refill = next < tiles;
      const uint32_t valid = valid_mask(next * kBK);
      const uint32_t write_bytes = uint32_t(write * kStageFloats * 4);
#pragma unroll
      for (int i = 0; i < kBK; ++i) {
        k_step_head(i, tile, read, read_next);
        if (i >= kFrom && i < kBK - 1) {
#pragma unroll
          for (int j = (i - kFrom) * kCopies / kSteps; j < (i - kFrom + 1) * kCopies / kSteps;
               ++j) {
            const bool ok = (valid >> j) & 1;
            if (j < kCopiesA)
              device::cp_async_4_if(refill, a_dst + write_bytes + j * kRowStepA * 4,
                                    ok ? a_src + int64_t(j * kRowStepA) * g.k : g.a, ok);
            else
              device::cp_async_16_if(refill,
                                     b_dst + write_bytes + (j - kCopiesA) * kRowStepB * kBN * 4,
                                     ok ? b_src + (j - kCopiesA) * kRowStepB * g.n : g.b, ok);
          }
          if (i == kBK - 2) {
            if (refill) advance_sources();
            device::cp_async_commit</*compiler barrier*/ false>();
          }
        }
        ffma_step(i & 1);
      }
      read = read_next;
      write = write == kStages - 1 ? 0 : write + 1;
    }
  } else {
    for (int tile = 0; tile < tiles; ++tile) {
      const int s = tile % kStages;
      // Refill the stage tile - 1 used: every warp finished reading it before the last barrier.
      if (const int next = tile + kStages - 1; next < tiles) load_stage(next % kStages, next * kBK);
      device::cp_async_commit();
#pragma unroll
      for (int i = 0; i < kBK; ++i) {
        k_step_head(i, tile, s, (tile + 1) % kStages);
        ffma_step(i & 1);
      }
    }
  }
  device::cp_async_wait<0>();

  store_warp_tile<true, kTM, kTN, kLanesM, kLanesN>(g, acc, block_row, block_col, warp_row,
                                                    warp_col, lane_m, lane_n);
}

/// The MultistageAtConfig of entry kIndex of kMultistageSpace: hoisted copies (v16), spread
/// over k-steps kSpreadFrom .. BK-2 too (v17; -1: not spread).
template <int kIndex, int kSpreadFrom>
using MultistageEntry =
    MultistageAtConfig<kMultistageSpace[kIndex].block_m, kMultistageSpace[kIndex].block_n,
                       kMultistageSpace[kIndex].block_k, kMultistageSpace[kIndex].warp_m,
                       kMultistageSpace[kIndex].warp_n, kMultistageSpace[kIndex].thread_m,
                       kMultistageSpace[kIndex].thread_n, kMultistageSpace[kIndex].threads,
                       kMultistageSpace[kIndex].stages, kMultistageSpace[kIndex].min_blocks,
                       /*hoisted*/ true, kSpreadFrom>;

template <size_t... I>
consteval bool multistage_entries_agree(std::index_sequence<I...>) {
  return (
      (MultistageEntry<static_cast<int>(I), -1>::kSmemBytes == kMultistageSpace[I].smem_bytes()) &&
      ...);
}
static_assert(multistage_entries_agree(std::make_index_sequence<kMultistageSpaceSize>()),
              "the table's smem_bytes() and the kernel agree");

/// Enqueues the kernel (16-byte path only: the caller checked vec4_ok).
template <class C>
void launch_multistage(const GemmArgs& g, cudaStream_t stream) {
  constexpr auto kernel = [] {
    if constexpr (C::kATransposed)
      return sgemm_multistage_at<C>;
    else
      return sgemm_multistage<C>;
  }();
  static const bool configured = [] {
    KLAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
    return true;
  }();
  (void)configured;
  kernel<<<tile_grid(g, C::kBM, C::kBN), C::kThreads, C::kSmemBytes, stream>>>(g);
  KLAB_CHECK_LAUNCH();
}

/// grid_fits for a rung whose launch runs v09's kernel (kTuneSpace[0]'s 128-row tiles) when the
/// 16-byte path is not possible: both grids must fit, whichever path the launch takes (a 256-row
/// rung alone would pass twice v09's m).
inline Status grid_fits_with_fallback(const Problem& p, int block_m) {
  if (Status s = grid_fits(p, block_m); !s.ok()) return s;
  return grid_fits(p, kTuneSpace[0].block_m);
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
      [](const Problem& p) { return grid_fits_with_fallback(p, C::kBM); });
  v.info.min_sm = 80;  // cp.async
  return v;
}

using MultistageLauncher = void (*)(const GemmArgs&, cudaStream_t);

/// Enqueues entry `index` of a table-driven rung's launchers (v16, v17) on the 16-byte path, and
/// v09's scalar kernel where that path is not possible.
template <size_t N>
void launch_table_entry(const std::array<MultistageLauncher, N>& launchers, int index,
                        const Problem& p, Buffers& b, const LaunchArgs& args) {
  KLAB_CHECK(index >= 0 && index < static_cast<int>(N), "sgemm tune-space index out of range");
  const GemmArgs g = gemm_args(p, b);
  if (!vec4_ok(g)) return launch_warptile<0>(g, stream_of(args));  // v09, scalar loads
  launchers[static_cast<size_t>(index)](g, stream_of(args));
}

/// A table-driven multistage rung (v16, v17): `config` picks the entry for a problem, `launch`
/// runs an entry, `can_implement` says whether an entry can run a problem.
inline Variant tuned_multistage_variant(const std::string& rung, const std::string& summary,
                                        int (*config)(const Problem&),
                                        void (*launch)(int, const Problem&, Buffers&,
                                                       const LaunchArgs&),
                                        Status (*can_implement)(int, const Problem&)) {
  Variant v = gpu_variant(
      rung, summary,
      [config, launch](const Problem& p, Buffers& b, const LaunchArgs& args) {
        launch(config(p), p, b, args);
      },
      [config, can_implement](const Problem& p) { return can_implement(config(p), p); });
  v.info.min_sm = 80;  // cp.async
  return v;
}

}  // namespace klab::sgemm
