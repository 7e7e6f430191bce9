#pragma once
// v13's end of a CTA whose row group's splits form one cluster (rank = split): the merge by push.
// v11's pull merge (tma_pages_kernel.cuh's cluster_merge) costs ~4.8 us of (1, 4k)'s ~11.3 at
// B = 1 (klab timeline, 2026-12-04_0e94719_decode_timeline): the warps' rows merged one element
// a thread with its exponentials and division (~1.5 us), a cluster barrier, the owners' passes of
// dependent ld.shared::cluster round trips (~2.2 us), a second barrier. Here each CTA merges its
// warps' partials a float4 a thread with weights computed once a row, and stores each normalised
// float4 straight into its row's owner (st.async: no round trip, no barrier; the stores complete
// on the owner's mbarrier, which expects their bytes); an owner waits for that barrier only, then
// merges from its own shared memory. A CTA that owns no row exits after its stores.
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/decode_attention/cta_rows.cuh"
#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/rung_plans.hpp"
#include "kernels/decode_attention/split_kv.cuh"
#include "kernels/decode_attention/tma_pages_phases.hpp"
#include "klab/device/cluster_sm90.cuh"
#include "klab/device/lse_merge.hpp"
#include "klab/device/mbarrier_sm90.cuh"

namespace klab::decode_attention {

/// An owner's receive region (PushMergeConfig, at `base`, 16-byte aligned): slot rr * splits + i
/// holds split i's row `rank + rr * splits` (O: kD floats at o, its lse at lse), and the mbarrier
/// their stores complete on.
template <int kD>
struct PushRecv {
  float* o;
  float* lse;
  uint64_t* bar;
  __device__ explicit PushRecv(unsigned char* base)
      : o(reinterpret_cast<float*>(base)),
        lse(o + PushMergeConfig::kRecvRows * kD),
        bar(reinterpret_cast<uint64_t*>(base + PushMergeConfig::recv_bytes(kD) - 16)) {}

  /// The rows this CTA owns of a row group of `rows` over `splits` (CTA-uniform).
  static __device__ int owned(int rows, int splits, int rank) {
    return rows > rank ? (rows - rank + splits - 1) / splits : 0;
  }
  /// Thread 0, with the kernel's other barriers: the barrier expects every owned row of every
  /// split (their O and lse) in its first phase. A cluster barrier must follow before any peer
  /// stores here.
  __device__ void init(int rows, int splits, int rank) const {
    device::mbarrier_init(bar, 1);
    const int mine = owned(rows, splits, rank);
    if (mine > 0) device::mbarrier_arrive_expect_tx(bar, uint32_t(mine * splits * (kD + 1) * 4));
  }
};

/// The owner's merge of its `mine` rows (row r: the group's rank + r * splits) over the splits'
/// rows in its receive region, a warp a row: lane i turns split i's lse into its normalised
/// weight (splits <= 32; written over the lse), then each lane sums a float4 of the row over the
/// splits in split order and store(r, c4, o, lse) writes it. Compact code: it runs once a launch,
/// fetched from L2 as it goes (merge_partials' unrolled loops, as the counter path has them for its
/// L2 loads, left ~77% of the owners' merge samples stalled for instructions: ncu at (1, 4k)); the
/// sum four splits a step, so their loads overlap.
template <int kD, int kThreads, class Store>
__device__ __forceinline__ void merge_received(const PushRecv<kD>& recv, int mine, int splits,
                                               Store&& store) {
  static_assert(kMaxClusterSplits <= 32, "a lane a split");
  constexpr int kWarps = kThreads / 32, kVec = kD / 4;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
#pragma unroll 1
  for (int r = warp; r < mine; r += kWarps) {
    const uint32_t w_at = device::smem_addr(recv.lse + r * splits);
    const float l = lane < splits ? device::ld_shared_f32(w_at + lane * 4) : -INFINITY;
    float m = l;
#pragma unroll
    for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    const float w = device::lse_merge_scale(l, m);
    float s = w;
#pragma unroll
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane < splits)
      device::st_shared_u32(w_at + lane * 4, __float_as_uint(s > 0.f ? w / s : 0.f));
    const float lse = s > 0.f ? m + logf(s) : -INFINITY;
    __syncwarp();
    const uint32_t row_o = device::smem_addr(recv.o + r * splits * kD);
#pragma unroll 1
    for (int c4 = lane; c4 < kVec; c4 += 32) {
      float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 4
      for (int i = 0; i < splits; ++i) {
        const float wi = device::ld_shared_f32(w_at + i * 4);
        const float4 v = device::ld_shared_f32x4(row_o + (i * kD + 4 * c4) * 4);
        x.x += wi * v.x;
        x.y += wi * v.y;
        x.z += wi * v.z;
        x.w += wi * v.w;
      }
      store(r, c4, x, lse);
    }
  }
}

/// After each math warp left its partial (s_o: (kWarps, kRows, stride) fp32; s_max, s_sum: each
/// warp's rows' running max in log2 units and sum): one thread a row turns the warps' (max, sum)
/// into the weights of the CTA's normalised row (into s_max[w][r]) and its natural-log lse (into
/// s_sum[0][r]); then each thread merges a float4 of a row over the warps and stores it into the
/// row's owner (rank r % splits, slot (r / splits) * splits + rank). mark(phase) as the kernel's.
/// `waited`: this thread already waited on the cluster barrier of the kernel's arrival (v25's
/// producer warp, before its first add to rank 0's counter), so it does not wait again.
template <int kD, int kWarps, int kThreads, class Mark>
__device__ __forceinline__ void cluster_push_merge(
    Mark&& mark, const PushRecv<kD>& recv, const float* s_o, float (*s_max)[GqaMmaConfig::kRows],
    float (*s_sum)[GqaMmaConfig::kRows], const SplitOut& out, int64_t bi, int hk, int row0,
    int rows, int splits, const GqaGeometry& g, bool waited = false) {
  constexpr int kVec = kD / 4;
  const int tid = static_cast<int>(threadIdx.x);
  const int rank = static_cast<int>(device::cluster_ctarank());  // < splits
  __syncthreads();                                               // every warp's partial stored
  cta_row_weights<kWarps>(s_max, s_sum, rows);
  __syncthreads();
  mark(kPhWeights);
  if (!waited) device::cluster_wait();  // every peer's receive barrier initialised (the arrival)
  mark(kPhPeersReady);
  for (int e = tid; e < rows * kVec; e += kThreads) {
    const int r = e / kVec, c4 = e % kVec;
    const float4 x = cta_row4<kD, kWarps>(s_o, s_max, r, c4);
    const uint32_t owner = static_cast<uint32_t>(r % splits);
    const int slot = (r / splits) * splits + rank;
    const uint32_t bar = device::map_shared_rank(recv.bar, owner);
    device::st_async_f32x4(device::map_shared_rank(recv.o + slot * kD + 4 * c4, owner), x, bar);
    if (c4 == 0)
      device::st_async_f32(device::map_shared_rank(recv.lse + slot, owner), s_sum[0][r], bar);
  }
  mark(kPhRows);
  const int mine = PushRecv<kD>::owned(rows, splits, rank);
  if (mine == 0) return;
  // Every split's stores into this CTA, its own threads' too.
  device::mbarrier_wait_cluster(recv.bar, 0);
  mark(kPhPeersMet);
  merge_received<kD, kThreads>(recv, mine, splits, [&](int r, int c4, float4 x, float lse) {
    const int64_t row = global_row(bi, hk, row0 + rank + r * splits, g);
    store_merged4(out.o, out.lse, row, kD, c4, x, lse);
  });
  mark(kPhMerged);
}

}  // namespace klab::decode_attention
