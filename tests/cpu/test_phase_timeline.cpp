// klab timeline's arithmetic: one launch's marks into per-phase statistics, launches into medians,
// the record's JSON round trip, and the traced variants' hooks.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/phase_timeline.hpp"
#include "klab/harness/phase_trace_hooks.hpp"

using namespace klab;

namespace {

// One CTA's record: SM id, then (cycles, ns) per phase; ns = 0: not reached.
void put(std::vector<uint64_t>& slots, int cta, int phases, uint64_t sm,
         std::vector<std::pair<uint64_t, uint64_t>> marks) {
  const int rec = 1 + 2 * phases;
  slots[cta * rec] = sm;
  for (size_t k = 0; k < marks.size(); ++k) {
    slots[cta * rec + 1 + 2 * k] = marks[k].first;
    slots[cta * rec + 2 + 2 * k] = marks[k].second;
  }
}

const std::vector<std::string> kPhases{"start", "mid", "end"};

}  // namespace

TEST(PhaseTimeline, PhasesFromTheFirstMarkAndFromEachCtasStart) {
  std::vector<uint64_t> slots(3 * 7, 0);
  // 2 GHz: 2000 cycles a µs. CTA 0 starts at 1000 ns, CTA 1 at 2000 ns on another SM; CTA 2
  // never ran (all zero).
  put(slots, 0, 3, 5, {{10000, 1000}, {12000, 2000}, {20000, 6000}});
  put(slots, 1, 3, 7, {{500, 2000}, {4500, 4000}, {8500, 6000}});
  const LaunchTimeline t = summarize_launch(slots, 3, kPhases);
  EXPECT_EQ(t.ctas, 2);
  EXPECT_EQ(t.sms, 2);
  EXPECT_DOUBLE_EQ(t.span_us, 5.0);
  EXPECT_DOUBLE_EQ(t.clock_mhz, 2000.0);  // (10000 + 8000) cycles over (5000 + 4000) ns
  EXPECT_EQ(t.timer_step_ns, 1000);
  ASSERT_EQ(t.phases.size(), 3u);
  EXPECT_EQ(t.phases[1].name, "mid");
  EXPECT_EQ(t.phases[1].ctas, 2);
  EXPECT_DOUBLE_EQ(t.phases[1].at_min, 1.0);
  EXPECT_DOUBLE_EQ(t.phases[1].at_max, 3.0);
  EXPECT_DOUBLE_EQ(t.phases[1].at_median, 2.0);
  EXPECT_DOUBLE_EQ(t.phases[1].own_median, 1.5);  // 1 µs and 2 µs since their starts
  EXPECT_DOUBLE_EQ(t.phases[1].own_max, 2.0);
  EXPECT_DOUBLE_EQ(t.phases[2].own_max, 5.0);
}

TEST(PhaseTimeline, APhaseSomeCtasNeverReachCountsOnlyThoseThatDid) {
  std::vector<uint64_t> slots(2 * 7, 0);
  put(slots, 0, 3, 1, {{0, 100}, {0, 0}, {2000, 1100}});  // skipped "mid" (an early exit)
  put(slots, 1, 3, 2, {{0, 100}, {1000, 600}, {2000, 1100}});
  const LaunchTimeline t = summarize_launch(slots, 2, kPhases);
  EXPECT_EQ(t.phases[1].ctas, 1);
  EXPECT_EQ(t.phases[2].ctas, 2);
  EXPECT_DOUBLE_EQ(t.phases[1].at_median, 0.5);
}

TEST(PhaseTimeline, TheLastPhaseSplitsByTheCtasTheirSmRan) {
  std::vector<uint64_t> slots(4 * 7, 0);
  // SM 3 runs CTAs 0 and 1, SM 9 runs CTA 2 alone; CTA 3 never ran. No CTA marks "end": the
  // split is of "mid", the last phase marked.
  put(slots, 0, 3, 3, {{0, 1000}, {4000, 5000}});
  put(slots, 1, 3, 3, {{0, 1000}, {6000, 7000}});
  put(slots, 2, 3, 9, {{0, 1000}, {2000, 3000}});
  const LaunchTimeline t = summarize_launch(slots, 4, kPhases);
  ASSERT_EQ(t.last_by_sm_share.size(), 2u);
  EXPECT_EQ(t.last_by_sm_share[0].sm_ctas, 1);
  EXPECT_EQ(t.last_by_sm_share[0].ctas, 1);
  EXPECT_DOUBLE_EQ(t.last_by_sm_share[0].at_max, 2.0);
  EXPECT_EQ(t.last_by_sm_share[1].sm_ctas, 2);
  EXPECT_EQ(t.last_by_sm_share[1].ctas, 2);
  EXPECT_DOUBLE_EQ(t.last_by_sm_share[1].at_median, 5.0);  // 4 and 6 µs
  EXPECT_DOUBLE_EQ(t.last_by_sm_share[1].at_max, 6.0);
  const std::string table = timeline_table(t);
  EXPECT_NE(table.find("The last phase (mid) by the CTAs their SM ran: 1 CTA an SM: 1 CTAs, median "
                       "2.00, last 2.00 µs; 2 CTAs an SM: 2 CTAs, median 5.00, last 6.00 µs."),
            std::string::npos)
      << table;
  // Launches combine group by group (a group a launch lacks is the median of those that have it),
  // and the groups survive JSON; a timeline recorded before them reads back without any.
  LaunchTimeline other = t;
  other.last_by_sm_share.pop_back();
  other.last_by_sm_share[0].at_max = 4.0;
  const LaunchTimeline m = median_timeline({t, other, t});
  ASSERT_EQ(m.last_by_sm_share.size(), 2u);
  EXPECT_DOUBLE_EQ(m.last_by_sm_share[0].at_max, 2.0);
  EXPECT_DOUBLE_EQ(m.last_by_sm_share[1].at_max, 6.0);
  const LaunchTimeline back = timeline_from_json(to_json(m));
  ASSERT_EQ(back.last_by_sm_share.size(), 2u);
  EXPECT_EQ(back.last_by_sm_share[1].ctas, 2);
  nlohmann::json old = to_json(m);
  old.erase("last_by_sm_share");
  EXPECT_TRUE(timeline_from_json(old).last_by_sm_share.empty());
  EXPECT_EQ(timeline_table(timeline_from_json(old)).find("by the CTAs their SM ran"),
            std::string::npos);
}

TEST(PhaseTimeline, RefusesSlotsThatAreNotOneRecordACta) {
  EXPECT_THROW(summarize_launch(std::vector<uint64_t>(20, 0), 3, kPhases), std::exception);
}

TEST(PhaseTimeline, LaunchesCombineByMedianAndSurviveJson) {
  std::vector<LaunchTimeline> ls;
  for (double span : {4.0, 9.0, 5.0}) {
    LaunchTimeline t;
    t.span_us = span;
    t.clock_mhz = 1980;
    t.ctas = 128;
    t.sms = 128;
    t.phases.push_back({"start", 128, 0, span / 4, span / 2, 0, 1});
    ls.push_back(t);
  }
  const LaunchTimeline m = median_timeline(ls);
  EXPECT_DOUBLE_EQ(m.span_us, 5.0);
  EXPECT_DOUBLE_EQ(m.phases[0].at_median, 1.25);
  const LaunchTimeline back = timeline_from_json(to_json(m));
  EXPECT_DOUBLE_EQ(back.span_us, 5.0);
  EXPECT_EQ(back.phases[0].name, "start");
  EXPECT_DOUBLE_EQ(back.phases[0].at_max, 2.5);
  EXPECT_NE(timeline_table(m).find("| start | 128 |"), std::string::npos);
  EXPECT_EQ(timeline_table(m).find("left out"), std::string::npos);
  // A phase of the shared list that no CTA of this kernel marks is named, not tabled as zeros.
  LaunchTimeline some = m;
  some.phases.push_back({"weights", 0, 0, 0, 0, 0, 0});
  const std::string table = timeline_table(some);
  EXPECT_EQ(table.find("| weights |"), std::string::npos);
  EXPECT_NE(table.find("Phases no CTA marked (left out): weights."), std::string::npos);
}

TEST(PhaseTimeline, TheTraceIsScoped) {
  EXPECT_EQ(active_phase_trace(), nullptr);
  unsigned long long fake = 0;
  {
    const ActivePhaseTrace a(&fake);
    EXPECT_EQ(active_phase_trace(), &fake);
  }
  EXPECT_EQ(active_phase_trace(), nullptr);
}

#if KLAB_HAS_CUDA
TEST(PhaseTimeline, OnlyTracedVariantsHaveHooks) {
  registry();  // makes the variants, which add their hooks
  const TraceHooks* h = find_trace_hooks("decode_attention.v11_cluster_merge");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->phases.front(), "start");
  EXPECT_EQ(h->phases.back(), "end");
  EXPECT_EQ(find_trace_hooks("decode_attention.v10_swap_ab"), nullptr);
}

TEST(PhaseTimeline, TheCommandRefusesAVariantWithoutATracedKernel) {
  registry();
  const auto [f, v] = registry().variant("decode_attention.v10_swap_ab");
  EXPECT_THROW(trace_variant(*f, *v, f->headline.front(), 1, 1), UsageError);
}
#endif
