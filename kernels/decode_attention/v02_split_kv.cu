// v02 split_kv: flash-decoding. v01's block per query row, each row's keys now cut into chunks
// handled by separate blocks (grid (rows, splits)); a block whose sequence has more than one
// split writes its normalised fp32 partial O and its lse to a workspace, and a second kernel
// merges each row's partials by log-sum-exp in split order (split_kv.cuh, lse_merge.hpp:
// deterministic, no atomics). The chunk comes from the shape (rung_plans.hpp, plan_v02): the
// batch's total length spread over one wave of 16 blocks an SM, at least 128 keys (32 a warp);
// a sequence of length L has ceil(L / chunk) splits, an empty one a single split that writes
// O = 0 and lse = -inf.
// Changes from v01: only the plan (the same kernel, block_per_row.cuh; v01 runs it with one
// split). Where v01 had B * Qlen * Hq blocks (32 at B = 1: a quarter of the SMs), v02 fills the
// device at every batch size.
// Expected bottleneck: still v01's per-warp latency chain (a table load, then K and V rows of
// 2 D bytes, a shuffle reduction and two exps per key, about one key in flight per warp), now
// with every SM holding 16 blocks: 64 warps an SM, each with about 512 bytes in flight, ~32 KiB
// an SM, a little below what Little's law asks at ~1 us of loaded latency. The Hq / Hkv query
// heads of a group read the same K/V rows in their own blocks (split s of every row runs in the
// same wave, so their reads mostly hit L2; L2 -> SM traffic is Hq / Hkv times the DRAM bytes).
// Prediction (written before it ran), fraction of the KV read ceiling (~4.0-4.4 TB/s) with
// Qwen3-8B heads (32 / 8, D = 128), pages 16 and 64 alike: (1, 32k) 0.35-0.6 (v01: a few
// percent), (16, 8k) 0.35-0.6, (64, 4k) and (256, 2k) 0.3-0.5 (one split or few: v01's
// numbers, since those batches already fill the device); below cuDNN's paged SDPA at the large
// shapes (3.8-4.4 TB/s), above it at (1, 4k) only if the latency chain hides in the 16x wider
// grid (cuDNN: 0.95 TB/s there). The merge adds (rows x splits x (D + 1) x 4) bytes twice: 1.5%
// of the KV bytes at (1, 32k).
// Requirements: D = 64, 128 or 256; B * Qlen * Hq < 2^31 (grid x); the plan's splits below
// 65535 (grid y; the plan keeps them near one wave's worth); the workspace of
// SplitKvPlan::workspace_floats.
#include <climits>

#include "kernels/decode_attention/block_per_row.cuh"
#include "kernels/decode_attention/rung_plans.hpp"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

namespace {

SplitKvPlan v02_plan(const Problem& p) { return plan_v02(dims_of(p), device_info().sm_count); }

}  // namespace

Variant gpu_v02_split_kv() {
  return split_kv_variant(
      "v02_split_kv",
      "flash-decoding: v01's block per query row over chunks of the keys (one wave of blocks), "
      "partials merged by log-sum-exp in split order",
      [](const Problem& p, Buffers& b) { return row_launch(p, b, v02_plan(p)); }, v02_plan,
      [](const Problem& p) {
        if (dims_of(p).rows() > INT_MAX)
          return Status::no("decode_attention.v02: b * qlen * hq above 2^31 (grid x)");
        if (v02_plan(p).max_splits > 65535)
          return Status::no("decode_attention.v02: more than 65535 splits (grid y)");
        return Status::yes();
      });
}

}  // namespace klab::decode_attention
