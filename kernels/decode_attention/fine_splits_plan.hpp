#pragma once
// v20's plan (host-side; the CPU tests check it at the headline shapes on the H200's 132 SMs).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/decode_attention/rung_plans.hpp"

namespace klab::decode_attention {

/// v20 (e4m3): where a batch of equal lengths has at least a quarter as many row groups as the
/// device holds CTAs, about kFineCtasPerSlot CTAs a resident slot instead of plan_v13's one
/// wave, so that the block scheduler hands the CTAs to the SMs that finish first. Nsight at
/// (16, 8k) (2026-12-05_103cab6_decode_spread): v15's SMs were active 108k to 129k cycles
/// (mean 115k) on equal work; the launch lasts as long as the slowest. The counter merge takes
/// the splits (chunks of at least kMinChunk keys). Elsewhere (a ragged batch, where the grid's
/// split dimension would be mostly empty CTAs, or few row groups) plan_v13.
inline constexpr int64_t kFineCtasPerSlot = 4;
inline ClusterSplitPlan plan_v20(const Dims& s, int sm_count, int64_t elem = 1) {
  const ClusterSplitPlan v13 = plan_v13(s, sm_count, elem);
  const std::vector<int64_t> lens = context_lengths(s);
  const int64_t units = s.b * s.hkv * GqaMmaConfig::row_tiles(s);
  const int64_t slots = std::max(1, sm_count) * TmaPagesConfig::ctas_per_sm(s.d, elem);
  if (!uniform_lengths(lens) || 4 * units < slots) return v13;
  const int64_t len = lens.front();
  const int64_t splits = (kFineCtasPerSlot * slots + units - 1) / units;
  const int64_t chunk = std::max<int64_t>(
      GqaMmaConfig::kMinChunk, round_up((len + splits - 1) / splits, GqaMmaConfig::kBlockN));
  if (chunk >= v13.chunk) return v13;
  ClusterSplitPlan p;
  p.chunk = chunk;
  p.max_splits = p.splits_of(len);
  p.groups = units;
  p.cluster = false;
  return p;
}

}  // namespace klab::decode_attention
