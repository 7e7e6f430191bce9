// v06 tma_pages: v03's split-KV CTA fed by the copy engine, in one launch. A CTA holds one m16
// tile of a KV head's query rows and one chunk of a sequence's keys, as v03's; a fifth warp, the
// producer, gathers the chunk's pages with TMA: each (page, KV head) of the HND cache is one
// contiguous run of page x D elements, read as boxes of min(page, 64) key rows x 64 columns of a
// 2-D tensor map over the pool (rows: pages x KV heads x page slots), 128-byte swizzled, into a
// ring of 64-key stages that completes on mbarriers (full: the stage's bytes landed; empty: the
// four math warps are done with it). Its lanes read the stage's block-table entries one stage
// ahead (one lane a page) and issue one page's boxes each. The math warps run gqa_mma.cuh's stage
// (S and P V on mma.sync m16n8k16, online softmax in registers) on the swizzled tiles; on the
// chunk's last stage each warp zeroes its V rows past the chunk first (a page's slots past the
// sequence, or pages not loaded, may hold anything, and 0 x NaN is NaN). A sequence cut into
// several splits is merged in the same launch: each split writes its normalised fp32 partial and
// lse, fences, and counts itself in on its row group's counter; the CTA that arrives last merges
// the splits by log-sum-exp in split order (partial_merge.cuh: the same bits whoever arrives
// last) and resets the counter.
// Changes from v03: (1) TMA boxes of whole pages issued by one warp instead of 16-byte cp.async
// by every thread (2048 a 32 KiB stage): the hypothesis is that v03's batched rate, ~3.9 TB/s
// (~30 GB/s an SM, where cuDNN reads 4.1-4.4 TB/s), is the SM's limit on cp.async copies in
// flight, not DRAM's; the copy engine keeps a stage's 32 KiB in flight as 16 requests. (2) No
// merge kernel: v03's walks a row's splits one dependent L2 load after another (~25 us at
// (1, 4k) and (1, 32k), ~50 us at (1, 128k) by the worklog's fit); here the last CTA's loads
// are independent. (3) The chunk comes from a wave model (plan_v06) instead of the total spread
// over one wave and capped at 2048 keys: (64, 4k) one split of 4096 keys (512 CTAs, two waves)
// instead of two of 2048; (1, 128k) 32 splits of 4096 in one wave instead of 64 in two.
// (4) The page indices are not staged before the first copy: a CTA's first copies wait for one
// table entry, not for the chunk's whole index list.
// Expected bottleneck: DRAM reads of K and V at the batched shapes and long sequences (two CTAs
// an SM at D = 128, two 32 KiB stages in flight each); at (1, 4k) the chain of one launch: seq
// len and table entry, the first stage, the epilogue, the fence and atomic, the merge's loads.
// Prediction (written before it ran), Qwen3-8B heads (32 / 8, D = 128), fraction of the read
// ceiling (~4.5 TB/s), pages 16 and 64 alike: if (1) holds, (256, 2k), (64, 4k), (16, 8k)
// 0.90-0.95 (v03 0.79-0.86); if it does not, within 3% of v03 there. (1, 128k) 0.88-0.93 (v03
// 0.60); (1, 32k) 0.75-0.85 (v03 0.47; the fixed ~5 us of start, epilogue and merge is 15% of
// a 30 us stream); (1, 4k) 7-10 us (v03 35 us, cuDNN 15.6); the ragged batch 0.75-0.85 (v03
// 0.69: its longest sequence takes 3 splits of ~5.5k keys on the wave model).
// Requirements: D = 64, 128 or 256 (v03's stages: 4 x 16, 3 x 32, 2 x 64 KiB); pages a power of
// two from 8 tokens (whole 1024-byte swizzle atoms; a stage of 64 keys spans whole pages or lies
// in one); the pool's rows (pages x KV heads x page) and a stage's page count within i32; b and
// Hkv x row tiles at most 65535 (grid z and y); the workspace of CountedSplitPlan.
// The kernel lives in tma_pages_kernel.cuh, shared with v08 (e4m3 KV).
#include "kernels/decode_attention/tma_pages_kernel.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

Variant gpu_v06_tma_pages() {
  auto plan = [](const Problem& p) { return plan_v06(dims_of(p), device_info().sm_count); };
  return split_kv_variant(
      "v06_tma_pages",
      "split-KV in one launch: a producer warp gathers whole pages by TMA (128-byte swizzled "
      "boxes) into an mbarrier ring, v03's mma.sync math warps, splits merged by the last CTA",
      [plan](const Problem& p, Buffers& b) {
        return tma_pages_launch<TmaRung{.elem = 2}>(p, b, plan(p));
      },
      plan, [](const Problem& p) { return tma_pages_limits("v06", dims_of(p)); }, /*min_sm*/ 90);
}

}  // namespace klab::decode_attention
