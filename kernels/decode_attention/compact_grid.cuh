#pragma once
// v22's compact grid: the counter path's CTAs (one a sequence's split and row group) without the
// empty ones. The (split, row group, sequence) grid gives every sequence the longest one's
// splits; on a ragged batch most of them have no keys (Qwen3-8B's ragged batch of 64 from 100 to
// 16k, e4m3: 3584 CTAs for 1032 splits) and each still takes a slot for a launch and a length's
// round trip. Here the grid's x enumerates the splits that exist, sequence by sequence, from the
// device's own lengths: each CTA scans seq_lens to find its (sequence, split).
#include <cstdint>

#include "kernels/decode_attention/split_kv_plan.hpp"
#include "klab/device/block_scan.cuh"

namespace klab::decode_attention {

/// The (sequence, split) of `item`, the items being every sequence's plan.splits_of(len) splits
/// in sequence order (plan.compact_batch sequences). All kThreads threads of the CTA call it: one
/// length a thread and a block scan a round of kThreads sequences, two barriers a round. False
/// when `item` lies past the batch's items. The grid's last CTA scans every sequence and traps
/// if the items outnumber the grid (the host sized it from the problem's lengths): a loud error,
/// not keys left out. s_scan: kThreads / 32 values, s_found: two.
template <int kThreads>
__device__ __forceinline__ bool find_compact_item(const int32_t* __restrict__ seq_lens,
                                                  const SplitKvPlan& plan, int64_t item,
                                                  int64_t* s_scan, int64_t* s_found, int64_t& bi,
                                                  int& split) {
  const int tid = static_cast<int>(threadIdx.x);
  const bool last_cta = blockIdx.x + 1 == gridDim.x;
  int64_t before = 0;  // items of the sequences below this round's
  bool found = false;
  for (int64_t base = 0; base < plan.compact_batch; base += kThreads) {
    const int64_t b = base + tid;
    const int64_t n = b < plan.compact_batch ? plan.splits_of(seq_lens[b]) : 0;
    int64_t round = 0;
    const int64_t excl = before + device::block_exclusive_scan<kThreads>(n, s_scan, round);
    if (n > 0 && excl <= item && item < excl + n) {
      s_found[0] = b;
      s_found[1] = item - excl;
    }
    __syncthreads();  // s_found published; s_scan free for the next round
    found = found || item < before + round;
    before += round;
    if (found && !last_cta) break;
  }
  if (last_cta && before > gridDim.x)
    __trap();  // more items than CTAs: the plan was not this batch's
  if (!found) return false;
  bi = s_found[0];
  split = static_cast<int>(s_found[1]);
  return true;
}

}  // namespace klab::decode_attention
