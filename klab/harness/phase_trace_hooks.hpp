#pragma once
// What `klab timeline` needs of a variant with a traced kernel (klab/device/phase_trace.cuh), kept
// beside the variant rather than in it: the phases its kernel marks and the CTAs a launch has, by
// variant id, added where the variant is made; and the device slots the launches prepared while a
// timeline runs mark into (ActivePhaseTrace). Nothing else reads them: a rung prepared outside
// `klab timeline` runs its untraced kernel.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "klab/harness/problem.hpp"

namespace klab {

struct TraceHooks {
  std::vector<std::string> phases;              ///< in the order the kernel numbers them
  std::function<int64_t(const Problem&)> ctas;  ///< CTAs of one launch at p (one record each)
};

/// Declares variant `id` traceable (called where the variant is made; the last call wins).
void add_trace_hooks(const std::string& id, TraceHooks hooks);
/// The hooks of variant `id`, or null.
const TraceHooks* find_trace_hooks(const std::string& id);

/// The slots that launches prepared now mark into (null: none, the rung as measured).
unsigned long long* active_phase_trace();
/// Makes `slots` the active trace for its lifetime.
class ActivePhaseTrace {
 public:
  explicit ActivePhaseTrace(unsigned long long* slots);
  ~ActivePhaseTrace();
  ActivePhaseTrace(const ActivePhaseTrace&) = delete;
  ActivePhaseTrace& operator=(const ActivePhaseTrace&) = delete;

 private:
  unsigned long long* previous_;
};

}  // namespace klab
