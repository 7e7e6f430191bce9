#pragma once
// The swapped-operand weight-streaming CTA of hgemm v19 and v23 (sm_90a): its configuration (one
// consumer warpgroup on kBlocks m64 blocks of B's columns and kTok tokens, a producer warp, a
// ring of v19_stages), the wgmma of one stage and C's store. v19_wgmma_swap_ab.cu tells the
// design and its measurements.
#include "kernels/hgemm/swap_ab_stage.hpp"
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"

namespace klab::hgemm {

namespace swap_ab {

/// kTok: the tokens' width of the problem's class (16, 64 or 128); with kHalves = 2 each CTA of a
/// cluster pair holds half of them, so its stage is kTok / 2 tokens wide.
template <int kBlocks, int kTok, int kSplits, int kHalves = 1>
struct V19Config {
  using Stage = SwapAbStage<kBlocks, kTok / kHalves>;
  static constexpr int kSplitsK = kSplits, kTokenHalves = kHalves;
  static constexpr int kClusterSize = kSplits * kHalves;  // 1: no cluster
  static_assert(kHalves == 1 || (kHalves == 2 && kSplits == 1),
                "the tokens split in two over a pair, or K split: not both");
  /// Independent accumulator chains: a one-block slab alternates its k16 slices between two sets
  /// of accumulators (summed once at the end), so that consecutive wgmmas need not wait for each
  /// other's result; three blocks are three chains already.
  static constexpr int kChains = kBlocks == 1 ? 2 : 1;
  static constexpr int kConsumers = 128, kThreads = kConsumers + 32;  // + the producer warp
  static constexpr int kStages = v19_stages(int(Stage::kBytes));
  /// The ring (1024-byte aligned: up to 1023 bytes lost aligning the base), then the barriers.
  static constexpr int kSmemBytes = v19_smem_bytes(int(Stage::kBytes));
  static_assert(kStages >= 4 && kSmemBytes <= v19_max_smem_bytes() && kSmemBytes <= 227 * 1024);
  /// The partial a rank of a split hands to the others: its kBlocks x Stage::kTok / 2 floats a
  /// thread as float4s, [float4 q][thread], in the drained ring (each rank reads the quads it
  /// owns).
  static constexpr int kPartialQuads = kBlocks * Stage::kTok / 8;
  static_assert(kPartialQuads * 128 * 16 <= kStages * int(Stage::kBytes));
};

/// acc[kk % kChains][j] += B's columns 64 j .. 64 j + 63 (as wgmma's M) @ the tokens (as its N)
/// over k16 slice kk of one stage.
template <class Stage, class T, int kChains>
__device__ __forceinline__ void mma_swap_ab_stage(
    float (&acc)[kChains][Stage::kBlocks][Stage::kTok / 2], uint32_t stage) {
#pragma unroll
  for (int kk = 0; kk < Stage::kBlockK / 16; ++kk) {
    const uint64_t desc_a = Stage::desc_a(stage, kk);
#pragma unroll
    for (int j = 0; j < Stage::kBlocks; ++j)
      device::wgmma_ss<Stage::kTok, T, /*B's panel MN-major*/ 1, /*tokens K-major*/ 0>(
          acc[kk % kChains][j], Stage::desc_b(stage, j, kk), desc_a, true);
  }
}

/// A thread's accumulators as quads (four consecutive floats, float4 q of the partials a split
/// CTA hands on): quad q is acc[q / kQuadsPerBlock][4 (q % kQuadsPerBlock) ..].
template <class Stage>
inline constexpr int kQuadsPerBlock = Stage::kTok / 8;

/// Stores quads [q_begin, q_end) of the consumer warpgroup's accumulators, (column n0 + 64 j +
/// row, token col) of C^T, to C(token, column), rounding once; tokens >= m and columns >= n
/// skipped. The whole tile by default.
template <class Stage, class T>
__device__ __forceinline__ void store_swap_ab(const float (&acc)[Stage::kBlocks][Stage::kTok / 2],
                                              T* __restrict__ c, int m, int n, int n0,
                                              int q_begin = 0,
                                              int q_end = Stage::kBlocks * kQuadsPerBlock<Stage>) {
  const int t = int(threadIdx.x);
#pragma unroll
  for (int j = 0; j < Stage::kBlocks; ++j)
#pragma unroll
    for (int i = 0; i < Stage::kTok / 2; ++i) {
      const int q = j * kQuadsPerBlock<Stage> + i / 4;
      const device::WgmmaAccCoord at = device::wgmma_acc_coord(t, i);
      const int col = n0 + 64 * j + at.row, tok = at.col;
      if (q >= q_begin && q < q_end && tok < m && col < n)
        c[size_t(tok) * size_t(n) + col] = T(acc[j][i]);
    }
}

/// Stores the consumer warpgroup's accumulators (columns n0 .. n0 + 64 kBlocks - 1 of C by the
/// CTA's kTok tokens from tok0) through shared memory and the TMA: each m64 block rounded once,
/// transposed by stmatrix.trans into its SwapAbStoreBox at `boxes` (1024-byte aligned: the
/// drained ring, every wgmma done reading it), made visible to the async proxy, and stored by
/// thread 0 as one bulk group, which it waits to have read the boxes before the block can exit.
/// The TMA clips tokens >= m and columns >= n. Where store_swap_ab's 2-byte stores each fill a
/// quarter of four sectors (96 a thread at kTok = 64, three blocks), this writes whole lines.
template <class Stage, class T>
__device__ __forceinline__ void store_swap_ab_tma(
    const float (&acc)[Stage::kBlocks][Stage::kTok / 2], unsigned char* boxes,
    const CUtensorMap* c_map, int n0, int tok0) {
  using Box = SwapAbStoreBox<Stage::kTok>;
  const int t = int(threadIdx.x);
  const uint32_t base = device::smem_addr(boxes);
#pragma unroll
  for (int j = 0; j < Stage::kBlocks; ++j)
#pragma unroll
    for (int q = 0; q < Stage::kTok / 16; ++q) {
      const float* d = &acc[j][8 * q];  // wgmma_stmatrix_row's registers, stored transposed
      device::stmatrix_x4_trans(
          base + uint32_t(j) * Box::kBytes + Box::stmatrix_offset(t, q),
          as_u32(round_pair<T>(d[0], d[1])), as_u32(round_pair<T>(d[2], d[3])),
          as_u32(round_pair<T>(d[4], d[5])), as_u32(round_pair<T>(d[6], d[7])));
    }
  device::fence_proxy_async_shared();  // this thread's stmatrix, before the TMA reads the boxes
  device::named_barrier_sync(1, device::kWarpgroupThreads);
  if (t == 0) {
#pragma unroll
    for (int j = 0; j < Stage::kBlocks; ++j)
      device::tma_store_2d(c_map, n0 + 64 * j, tok0, boxes + j * Box::kBytes);
    device::bulk_commit_group();
    device::bulk_wait_group_read<0>();  // the shared memory outlives the stores' reads
  }
}

}  // namespace swap_ab

}  // namespace klab::hgemm
