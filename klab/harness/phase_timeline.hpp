#pragma once
// `klab timeline`: where one launch's time goes, from the phase marks of a traced kernel
// (klab/device/phase_trace.cuh). Each CTA records, at each of its variant's named phases, its SM's
// cycle counter and the GPU's nanosecond clock; this file turns the slots of one launch into
// per-phase statistics over the CTAs, and several launches' statistics into their medians.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "klab/harness/registry.hpp"
#include "klab/harness/result.hpp"

namespace klab {

/// One phase over the CTAs that reached it. `at`: microseconds from the launch's first mark (the
/// earliest CTA start), by the nanosecond clock; `own`: microseconds since the CTA's own first
/// phase, by its SM's cycles at the launch's measured clock (exact within an SM).
struct PhaseStats {
  std::string name;
  int64_t ctas = 0;  ///< CTAs that reached it
  double at_min = 0, at_median = 0, at_max = 0;
  double own_median = 0, own_max = 0;
};

/// The last marked phase (a kernel's `end`) over the CTAs whose SM ran `sm_ctas` of the launch's
/// CTAs: whether the CTAs that shared an SM are the ones that finish last.
struct SmShareStats {
  int64_t sm_ctas = 0;  ///< CTAs the SM ran in the launch
  int64_t ctas = 0;     ///< CTAs on such SMs
  double at_median = 0, at_max = 0;
};

struct LaunchTimeline {
  std::vector<PhaseStats> phases;
  std::vector<SmShareStats> last_by_sm_share;  ///< by sm_ctas, ascending (empty: not recorded)
  double span_us = 0;                          ///< first mark to last, by the nanosecond clock
  double clock_mhz = 0;  ///< cycles over nanoseconds, summed over the CTAs' first-to-last spans
  int64_t timer_step_ns =
      0;  ///< smallest non-zero step between the clock's values seen (resolution)
  int64_t ctas = 0, sms = 0;  ///< CTAs that marked anything; distinct SMs they ran on
};

/// The slots of one launch (phase_record_u64(phases) u64 a CTA, `ctas` records: SM id, then
/// (cycles, ns) per phase; 0 where a phase was not reached) as statistics. A CTA's own time
/// counts from its first phase (phase 0). Throws if the slots are not ctas records.
LaunchTimeline summarize_launch(const std::vector<uint64_t>& slots, int64_t ctas,
                                const std::vector<std::string>& phases);

/// Several launches' timelines as one: each number the median of the launches' (a group of
/// last_by_sm_share over the launches that have it).
LaunchTimeline median_timeline(const std::vector<LaunchTimeline>& launches);

nlohmann::json to_json(const LaunchTimeline& t);
LaunchTimeline timeline_from_json(const nlohmann::json& j);

/// A traced run: v at p checked against the reference with its traced kernel (its record, whose
/// status and check say whether the marks belong to a correct launch), then `launches` launches,
/// each after an L2 flush (hot: none, so that the kernel's code and data stay in L2 between
/// launches), their marks read back one launch at a time.
struct TracedRun {
  Result record;
  std::vector<LaunchTimeline> launches;
};
/// Needs a GPU and a variant with trace phases (UsageError otherwise, before any GPU work).
TracedRun trace_variant(const Family& f, const Variant& v, const Problem& p, int launches,
                        uint64_t seed, bool hot = false);

/// A markdown table of one timeline (one row a phase), with a line of what it measured.
std::string timeline_table(const LaunchTimeline& t);

}  // namespace klab
