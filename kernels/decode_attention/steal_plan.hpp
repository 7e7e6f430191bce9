#pragma once
// v25's plan (host-side; the CPU tests check it at the headline shapes on the H200's 132 SMs).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/decode_attention/rung_plans.hpp"

namespace klab::decode_attention {

/// v25 and v26: v13's clusters without its cap on the chunk. v13 clusters chunks of at most
/// kPushClusterMaxChunk keys because longer static chunks spread in the stream ((1, 32k): the
/// 128 CTAs' streams ended between 27.6 and 37.9 us, 2026-12-04_54fa11d_decode_v13_long_chunks);
/// v25's splits share their sequence's stages through a counter, so the stream ends together
/// and the push merge's shorter tail can pay at any length. So: cluster_splits on v13's shared
/// memory wherever the batch's lengths are equal, the launch makes at most kClusterMaxClusters
/// clusters and a row group's rows fit the push merge's region; plan_v13 elsewhere.
inline ClusterSplitPlan plan_v25(const Dims& s, int sm_count, int64_t elem = 2) {
  const std::vector<int64_t> lens = context_lengths(s);
  const SplitKvPlan c = cluster_splits(s, lens, sm_count, PushMergeConfig::ctas_per_sm(s.d, elem));
  const int64_t rows = std::min<int64_t>(GqaMmaConfig::kRows, s.group() * s.qlen);
  const bool fits = std::all_of(lens.begin(), lens.end(), [&](int64_t len) {
    return PushMergeConfig::fits(rows, std::max(1, c.splits_of(len)));
  });
  if (fits && c.max_splits > 1 &&
      cluster_merge_pays(s, lens, c, std::numeric_limits<int64_t>::max()))
    return clustered(c);
  return plan_v13(s, sm_count, elem);
}

}  // namespace klab::decode_attention
