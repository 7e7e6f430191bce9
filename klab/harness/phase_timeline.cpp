#include "klab/harness/phase_timeline.hpp"

#include <algorithm>
#include <map>
#include <cstdio>
#include <limits>
#include <set>

#include "klab/core/errors.hpp"
#include "klab/harness/phase_trace_hooks.hpp"
#include "klab/harness/stats.hpp"

namespace klab {

namespace {

constexpr int64_t record_u64(size_t phases) { return 1 + 2 * static_cast<int64_t>(phases); }

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : percentile(std::move(v), 0.5); }

template <class... A>
std::string format(const char* f, A... a) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, a...);
  return buf;
}

std::map<std::string, TraceHooks>& hooks_by_id() {
  static std::map<std::string, TraceHooks> m;
  return m;
}

unsigned long long*& active_slots() {
  static unsigned long long* slots = nullptr;
  return slots;
}

}  // namespace

void add_trace_hooks(const std::string& id, TraceHooks hooks) {
  hooks_by_id()[id] = std::move(hooks);
}

const TraceHooks* find_trace_hooks(const std::string& id) {
  const auto it = hooks_by_id().find(id);
  return it == hooks_by_id().end() ? nullptr : &it->second;
}

unsigned long long* active_phase_trace() { return active_slots(); }

ActivePhaseTrace::ActivePhaseTrace(unsigned long long* slots) : previous_(active_slots()) {
  active_slots() = slots;
}

ActivePhaseTrace::~ActivePhaseTrace() { active_slots() = previous_; }

LaunchTimeline summarize_launch(const std::vector<uint64_t>& slots, int64_t ctas,
                                const std::vector<std::string>& phases) {
  KLAB_CHECK(!phases.empty(), "timeline: no phases");
  const int64_t rec = record_u64(phases.size());
  KLAB_CHECK(static_cast<int64_t>(slots.size()) == ctas * rec,
             "timeline: the slots are not one record a CTA");
  auto cycles = [&](int64_t c, size_t k) { return slots[c * rec + 1 + 2 * k]; };
  auto ns = [&](int64_t c, size_t k) { return slots[c * rec + 2 + 2 * k]; };
  LaunchTimeline t;
  uint64_t first = std::numeric_limits<uint64_t>::max(), last = 0;
  std::map<uint64_t, int64_t> on_sm;  // SM id -> CTAs that marked anything there
  std::set<uint64_t> values;
  double span_cycles = 0, span_ns = 0;
  for (int64_t c = 0; c < ctas; ++c) {
    bool any = false;
    uint64_t c_first = 0, c_last = 0, k_first = 0, k_last = 0;
    for (size_t k = 0; k < phases.size(); ++k) {
      if (ns(c, k) == 0) continue;
      if (!any) c_first = ns(c, k), k_first = cycles(c, k);
      any = true;
      c_last = ns(c, k), k_last = cycles(c, k);
      first = std::min<uint64_t>(first, ns(c, k));
      last = std::max<uint64_t>(last, ns(c, k));
      values.insert(ns(c, k));
    }
    if (!any) continue;
    ++t.ctas;
    ++on_sm[slots[c * rec]];
    if (c_last > c_first) {
      span_cycles += static_cast<double>(k_last - k_first);
      span_ns += static_cast<double>(c_last - c_first);
    }
  }
  t.sms = static_cast<int64_t>(on_sm.size());
  if (t.ctas == 0) {
    for (const auto& name : phases) t.phases.push_back({name});
    return t;
  }
  t.span_us = static_cast<double>(last - first) / 1e3;
  t.clock_mhz = span_ns > 0 ? span_cycles / span_ns * 1e3 : 0;
  for (auto it = values.begin(); it != values.end() && std::next(it) != values.end(); ++it) {
    const auto step = static_cast<int64_t>(*std::next(it) - *it);
    t.timer_step_ns = t.timer_step_ns == 0 ? step : std::min(t.timer_step_ns, step);
  }
  for (size_t k = 0; k < phases.size(); ++k) {
    PhaseStats s{phases[k]};
    std::vector<double> at, own;
    for (int64_t c = 0; c < ctas; ++c) {
      if (ns(c, k) == 0) continue;
      at.push_back(static_cast<double>(ns(c, k) - first) / 1e3);
      if (ns(c, 0) != 0 && t.clock_mhz > 0)
        own.push_back(static_cast<double>(cycles(c, k) - cycles(c, 0)) / t.clock_mhz);
    }
    s.ctas = static_cast<int64_t>(at.size());
    if (!at.empty()) {
      s.at_min = *std::min_element(at.begin(), at.end());
      s.at_max = *std::max_element(at.begin(), at.end());
      s.at_median = median_of(at);
    }
    if (!own.empty()) {
      s.own_max = *std::max_element(own.begin(), own.end());
      s.own_median = median_of(own);
    }
    t.phases.push_back(std::move(s));
  }
  // The last phase any CTA marked, split by how many CTAs each one's SM ran.
  size_t last_k = phases.size();
  for (size_t k = phases.size(); k-- > 0;)
    if (t.phases[k].ctas > 0) {
      last_k = k;
      break;
    }
  if (last_k == phases.size()) return t;
  std::map<int64_t, std::vector<double>> by_share;
  for (int64_t c = 0; c < ctas; ++c)
    if (ns(c, last_k) != 0)
      by_share[on_sm[slots[c * rec]]].push_back(static_cast<double>(ns(c, last_k) - first) / 1e3);
  for (auto& [n, at] : by_share)
    t.last_by_sm_share.push_back({n, static_cast<int64_t>(at.size()), median_of(at),
                                  *std::max_element(at.begin(), at.end())});
  return t;
}

LaunchTimeline median_timeline(const std::vector<LaunchTimeline>& launches) {
  KLAB_CHECK(!launches.empty(), "timeline: no launches");
  auto med = [&](auto field) {
    std::vector<double> v;
    for (const auto& l : launches) v.push_back(static_cast<double>(field(l)));
    return median_of(std::move(v));
  };
  LaunchTimeline t;
  t.span_us = med([](const LaunchTimeline& l) { return l.span_us; });
  t.clock_mhz = med([](const LaunchTimeline& l) { return l.clock_mhz; });
  t.timer_step_ns =
      static_cast<int64_t>(med([](const LaunchTimeline& l) { return l.timer_step_ns; }));
  t.ctas = static_cast<int64_t>(med([](const LaunchTimeline& l) { return l.ctas; }));
  t.sms = static_cast<int64_t>(med([](const LaunchTimeline& l) { return l.sms; }));
  for (size_t k = 0; k < launches.front().phases.size(); ++k) {
    for (const auto& l : launches)
      KLAB_CHECK(l.phases.size() == launches.front().phases.size(),
                 "timeline: launches with different phases");
    auto ph = [&](auto field) {
      return med([&](const LaunchTimeline& l) { return field(l.phases[k]); });
    };
    PhaseStats s{launches.front().phases[k].name};
    s.ctas = static_cast<int64_t>(ph([](const PhaseStats& p) { return p.ctas; }));
    s.at_min = ph([](const PhaseStats& p) { return p.at_min; });
    s.at_median = ph([](const PhaseStats& p) { return p.at_median; });
    s.at_max = ph([](const PhaseStats& p) { return p.at_max; });
    s.own_median = ph([](const PhaseStats& p) { return p.own_median; });
    s.own_max = ph([](const PhaseStats& p) { return p.own_max; });
    t.phases.push_back(std::move(s));
  }
  std::map<int64_t, std::vector<const SmShareStats*>> shares;
  for (const auto& l : launches)
    for (const auto& g : l.last_by_sm_share) shares[g.sm_ctas].push_back(&g);
  for (const auto& [n, gs] : shares) {
    auto gmed = [&](auto field) {
      std::vector<double> v;
      for (const SmShareStats* g : gs) v.push_back(static_cast<double>(field(*g)));
      return median_of(std::move(v));
    };
    t.last_by_sm_share.push_back(
        {n, static_cast<int64_t>(gmed([](const SmShareStats& g) { return g.ctas; })),
         gmed([](const SmShareStats& g) { return g.at_median; }),
         gmed([](const SmShareStats& g) { return g.at_max; })});
  }
  return t;
}

nlohmann::json to_json(const LaunchTimeline& t) {
  nlohmann::json ph = nlohmann::json::array();
  for (const auto& p : t.phases)
    ph.push_back({{"name", p.name},
                  {"ctas", p.ctas},
                  {"at_min_us", p.at_min},
                  {"at_median_us", p.at_median},
                  {"at_max_us", p.at_max},
                  {"own_median_us", p.own_median},
                  {"own_max_us", p.own_max}});
  nlohmann::json shares = nlohmann::json::array();
  for (const auto& g : t.last_by_sm_share)
    shares.push_back({{"sm_ctas", g.sm_ctas},
                      {"ctas", g.ctas},
                      {"at_median_us", g.at_median},
                      {"at_max_us", g.at_max}});
  return {{"phases", ph},
          {"last_by_sm_share", shares},
          {"span_us", t.span_us},
          {"clock_mhz", t.clock_mhz},
          {"timer_step_ns", t.timer_step_ns},
          {"ctas", t.ctas},
          {"sms", t.sms}};
}

LaunchTimeline timeline_from_json(const nlohmann::json& j) {
  LaunchTimeline t;
  t.span_us = j.at("span_us").get<double>();
  t.clock_mhz = j.at("clock_mhz").get<double>();
  t.timer_step_ns = j.at("timer_step_ns").get<int64_t>();
  t.ctas = j.at("ctas").get<int64_t>();
  t.sms = j.at("sms").get<int64_t>();
  for (const auto& p : j.at("phases"))
    t.phases.push_back({p.at("name").get<std::string>(), p.at("ctas").get<int64_t>(),
                        p.at("at_min_us").get<double>(), p.at("at_median_us").get<double>(),
                        p.at("at_max_us").get<double>(), p.at("own_median_us").get<double>(),
                        p.at("own_max_us").get<double>()});
  if (j.contains("last_by_sm_share"))  // timelines recorded before it have none
    for (const auto& g : j.at("last_by_sm_share"))
      t.last_by_sm_share.push_back({g.at("sm_ctas").get<int64_t>(), g.at("ctas").get<int64_t>(),
                                    g.at("at_median_us").get<double>(),
                                    g.at("at_max_us").get<double>()});
  return t;
}

std::string timeline_table(const LaunchTimeline& t) {
  std::string md =
      "| phase | CTAs | from the first CTA's start: first | median | last | since the CTA's own "
      "start: median | max |\n|---|---:|---:|---:|---:|---:|---:|\n";
  std::string unmarked;  // phases this kernel has no mark for (a shared phase list's others)
  for (const auto& p : t.phases) {
    if (p.ctas == 0) {
      unmarked += (unmarked.empty() ? "" : ", ") + p.name;
      continue;
    }
    md += format("| %s | %lld | %.2f | %.2f | %.2f | %.2f | %.2f |\n", p.name.c_str(),
                 static_cast<long long>(p.ctas), p.at_min, p.at_median, p.at_max, p.own_median,
                 p.own_max);
  }
  md += format(
      "\nµs. %lld CTAs on %lld SMs; first mark to last %.2f µs; SM clock %.0f MHz (cycles over "
      "the nanosecond clock); the nanosecond clock's smallest step seen %lld ns.\n",
      static_cast<long long>(t.ctas), static_cast<long long>(t.sms), t.span_us, t.clock_mhz,
      static_cast<long long>(t.timer_step_ns));
  if (!unmarked.empty()) md += "Phases no CTA marked (left out): " + unmarked + ".\n";
  if (t.last_by_sm_share.size() > 1) {  // one group would repeat the table's last row
    std::string last;
    for (const auto& p : t.phases)
      if (p.ctas > 0) last = p.name;
    md += "The last phase (" + last + ") by the CTAs their SM ran:";
    for (size_t i = 0; i < t.last_by_sm_share.size(); ++i) {
      const SmShareStats& g = t.last_by_sm_share[i];
      md += format("%s %lld CTA%s an SM: %lld CTAs, median %.2f, last %.2f µs", i == 0 ? "" : ";",
                   static_cast<long long>(g.sm_ctas), g.sm_ctas == 1 ? "" : "s",
                   static_cast<long long>(g.ctas), g.at_median, g.at_max);
    }
    md += ".\n";
  }
  return md;
}

#if !KLAB_HAS_CUDA
TracedRun trace_variant(const Family&, const Variant& v, const Problem&, int, uint64_t, bool) {
  throw UsageError("timeline needs a CUDA build and a GPU (" + v.info.id + ")");
}
#endif

}  // namespace klab
