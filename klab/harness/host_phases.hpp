#pragma once
// Where a run's host time went: wall seconds per phase of one (variant, problem) run (inputs,
// upload, reference, vendor, check, prepare, timing), kept in the record as "host_seconds" and
// printed to stderr, one line per phase, when KLAB_TRACE_PHASES is set (not "0"). GPU time is
// the scarce resource: host work between the timed launches holds the machine all the same.
#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace klab {

/// Seconds per phase, in the order the phases first ran; a phase that runs again adds to its
/// entry. "total" (when present) is the whole run, the other phases included.
struct HostSeconds {
  std::vector<std::pair<std::string, double>> phases;

  void add(const std::string& phase, double seconds) {
    for (auto& [name, s] : phases)
      if (name == phase) {
        s += seconds;
        return;
      }
    phases.emplace_back(phase, seconds);
  }
  void add(const HostSeconds& o) {
    for (const auto& [name, s] : o.phases) add(name, s);
  }
  double at(const std::string& phase) const {
    for (const auto& [name, s] : phases)
      if (name == phase) return s;
    return 0;
  }
  bool empty() const { return phases.empty(); }
};

/// Adds the wall time from its construction to stop() (or its destruction) to one phase.
class PhaseTimer {
 public:
  PhaseTimer(HostSeconds& into, std::string phase) : into_(&into), phase_(std::move(phase)) {}
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  ~PhaseTimer() { stop(); }
  void stop() {
    if (!into_) return;
    into_->add(phase_, std::chrono::duration<double>(Clock::now() - start_).count());
    into_ = nullptr;
  }

 private:
  using Clock = std::chrono::steady_clock;
  HostSeconds* into_;
  std::string phase_;
  Clock::time_point start_ = Clock::now();
};

/// True when KLAB_TRACE_PHASES is set to anything but "" or "0".
inline bool trace_phases() {
  const char* v = std::getenv("KLAB_TRACE_PHASES");
  return v && *v && std::string(v) != "0";
}

}  // namespace klab
