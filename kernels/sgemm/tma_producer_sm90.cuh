#pragma once
// The warp-specialised SGEMM of v18 (sm_90a): v16's warp tiles and shared-memory layout, fed by a
// producer warpgroup instead of by the math warps themselves (hgemm v09's structure, on the
// pipeline of klab/device/pipeline_sm90.cuh).
// - Producer warpgroup (128 threads, registers cut to kProducerRegs by setmaxnreg): per k-tile,
//   waits for the stage's "empty" mbarrier; one thread sends B's (BK, BN) tile as one TMA box
//   (row-major, unswizzled: v16's B layout exactly); all 128 copy A transposed into (BK, BM + 4)
//   with 4-byte cp.async as v16 does (TMA cannot transpose), then cp.async.mbarrier.arrive.noinc
//   on the stage's "full" mbarrier (expected arrivals: 128 + the TMA thread's expect_tx).
// - Consumer warps (registers raised to kConsumerRegs): v16's fragment loads and FFMAs only; a
//   consumer waits for the next stage's full barrier once per k-tile and arrives on the stage's
//   empty barrier after its last FFMAs from it. No __syncthreads, no copies, no copy addresses.
#include <cuda.h>

#include <algorithm>

#include "kernels/sgemm/multistage.cuh"
#include "klab/device/cp_async.cuh"
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tensor_map.hpp"
#include "klab/device/tma_sm90.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::sgemm {

/// Probe (-1: none): the k-step at which a consumer tests, without waiting, whether the next
/// stage has landed; at the last k-step it then waits only if that test said no (see
/// mbarrier_test_wait), instead of waiting there unconditionally.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int Stages, int Probe = -1>
struct TmaProducerConfig : device::WarpSpecialized<(BM / WM) * (BN / WN)> {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kTM = TM, kTN = TN;
  static constexpr int kStages = Stages, kProbe = Probe;
  static constexpr int kLdA = BM + 4;  // A^T rows, as v16 (conflict-free transposing copies)
  static constexpr int kStageFloatsA = BK * kLdA, kStageFloatsB = BK * BN;
  // B stages first, from the 1024-aligned base (TMA boxes, unswizzled here, land on 128-byte
  // boundaries), then A's, then the barriers.
  static constexpr int kRingBytes = Stages * (kStageFloatsA + kStageFloatsB) * 4;
  static constexpr int kSmemBytes = 1024 + kRingBytes + 2 * Stages * 8;
  static_assert(Stages >= 2, "with one stage a consumer would wait for a refill it blocks");
  static_assert(BK % 8 == 0 && BK <= 32, "A copies by 8-k sectors");
  static_assert((kStageFloatsB * 4) % 128 == 0, "B boxes on 128-byte boundaries");
  static_assert(BN <= 256 && BK <= 256, "one TMA box per B tile");
};

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    sgemm_tma_producer(const __grid_constant__ CUtensorMap b_map, GemmArgs g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // setmaxnreg is sm_90a-only
  constexpr int kBM = C::kBM, kBN = C::kBN, kBK = C::kBK, kWM = C::kWM, kWN = C::kWN, kTM = C::kTM,
                kTN = C::kTN, kStages = C::kStages, kLdA = C::kLdA;
  constexpr int kLanesM = kWM / kTM, kLanesN = kWN / kTN;
  static_assert(kLanesM * kLanesN == 32 && kTM % 4 == 0 && kTN % 4 == 0);
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // TMA boxes
  float* sB = reinterpret_cast<float*>(smem);                  // kStages x (BK, BN)
  float* sA = sB + kStages * C::kStageFloatsB;  // kStages x (BK, BM + 4), A transposed
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + C::kRingBytes);
  uint64_t* empty = full + kStages;

  // full: the producers' cp.async arrivals and the TMA thread's expect_tx; empty: every consumer.
  device::init_ring<kStages>(full, empty, C::kProducers + 1, C::kConsumers);
  // Everything below is computed after setmaxnreg: values live across it go to local memory.

  if (threadIdx.x >= C::kConsumers) {  // the producer warpgroup
    device::setmaxnreg_dec<C::kProducerRegs>();
    const int tiles = (g.k + kBK - 1) / kBK;
    const int pt = threadIdx.x - C::kConsumers, pw = pt / 32, lane = pt % 32;
    const int block_row = blockIdx.y * kBM, block_col = blockIdx.x * kBN;
    // A: a warp copies 4 rows x 8 consecutive k (whole 32-byte sectors), written transposed to
    // banks (4 k + row) % 32, all distinct; kRowStep rows per round of 128 threads.
    constexpr int kRowStep = C::kProducers / kBK, kCopies = kBM / kRowStep;
    const int a_kk = (pw % (kBK / 8)) * 8 + lane % 8;
    const int a_r0 = (pw / (kBK / 8)) * 4 + lane / 8;
    const float* a_src = g.a + int64_t(block_row + a_r0) * g.k + a_kk;
    const uint32_t a_dst = device::smem_addr(sA + a_kk * kLdA + a_r0);
    device::produce_ring<kStages>(tiles, empty, [&](int kt, int s) {
      if (pt == 0) {
        device::mbarrier_arrive_expect_tx(&full[s], C::kStageFloatsB * 4);
        device::tma_load_2d(sB + s * C::kStageFloatsB, &b_map, block_col, kt * kBK, &full[s]);
      }
      const bool k_ok = kt * kBK + a_kk < g.k;
#pragma unroll
      for (int l = 0; l < kCopies; ++l) {
        const bool ok = k_ok && block_row + a_r0 + l * kRowStep < g.m;
        device::cp_async_4(a_dst + uint32_t(s * C::kStageFloatsA + l * kRowStep) * 4,
                           ok ? a_src + int64_t(l * kRowStep) * g.k : g.a, ok);
      }
      device::cp_async_mbarrier_arrive_noinc(&full[s]);
      a_src += kBK;
    });
    // Leave no copy (nor its delayed mbarrier arrival) in flight behind: wait_group counts only
    // committed groups, so commit them first.
    device::cp_async_commit();
    device::cp_async_wait<0>();
    return;
  }

  // The consumers: v16's k loop without the copies and the barrier.
  device::setmaxnreg_inc<C::kConsumerRegs>();
  constexpr int kWarpsN = kBN / kWN;
  const int tiles = (g.k + kBK - 1) / kBK;
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int block_row = blockIdx.y * kBM, block_col = blockIdx.x * kBN;
  const int warp_row = (warp / kWarpsN) * kWM, warp_col = (warp % kWarpsN) * kWN;
  const int lane_m = lane / kLanesN, lane_n = lane % kLanesN;
  __align__(16) float ra[2][kTM], rb[2][kTN];
  float acc[kTM][kTN] = {};
  device::consume_ring<kStages, kBK, C::kProbe>(
      tiles, full, empty,
      [&](int stage, int i, int buf) {  // k-step i's fragments, as v16's
        load_lane_frags<kTM, kTN, kLanesM, kLanesN>(
            ra[buf], rb[buf], sA + stage * C::kStageFloatsA + i * kLdA + warp_row,
            sB + stage * C::kStageFloatsB + i * kBN + warp_col, lane_m, lane_n);
      },
      [&](int buf) { ffma_outer(acc, ra[buf], rb[buf]); });
  store_warp_tile<true, kTM, kTN, kLanesM, kLanesN>(g, acc, block_row, block_col, warp_row,
                                                    warp_col, lane_m, lane_n);
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

/// Enqueues sgemm_tma_producer<C> (16-byte path only: the caller checked vec4_ok, so B's rows
/// are 16-byte pitched as TMA needs).
template <class C>
void launch_tma_producer(const GemmArgs& g, cudaStream_t stream) {
  constexpr auto kernel = sgemm_tma_producer<C>;
  static const bool configured = [] {
    KLAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
    return true;
  }();
  (void)configured;
  const CUtensorMap b_map =
      device::tensor_map_2d(g.b, device::tma_data_type<float>(), uint64_t(g.n), uint64_t(g.k),
                            uint64_t(g.n) * 4, C::kBN, C::kBK, CU_TENSOR_MAP_SWIZZLE_NONE);
  kernel<<<tile_grid(g, C::kBM, C::kBN), C::kThreads, C::kSmemBytes, stream>>>(b_map, g);
  KLAB_CHECK_LAUNCH();
}

}  // namespace klab::sgemm
