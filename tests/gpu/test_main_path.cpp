// Every GPU rung must run its own kernel, not only a fallback, at one awkward shape at least:
// otherwise the awkward shapes never check the code the rung adds. A rung's own kernel is the one
// it runs at its family's first headline shape it takes (compared by function, so a tuned rung's
// other configurations of the same kernel template count).
#include <gtest/gtest.h>

#include <set>

#include "kernels/register.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/kernel_capture.hpp"
#include "klab/harness/registry.hpp"

using namespace klab;

namespace {

std::set<std::string> functions(const Family& f, const Variant& v, const Problem& p) {
  std::set<std::string> out;
  for (const CapturedKernel& k : capture_kernels(f, v, p))
    out.insert(kernel_function_name(k.demangled));
  return out;
}

}  // namespace

TEST(MainPath, EveryGpuRungRunsItsOwnKernelAtAnAwkwardShape) {
  int rungs = 0;
  for (const Family& f : registry().families()) {
    if (f.sabotaged) continue;
    for (const Variant& v : f.ladder) {
      if (v.info.device != Device::gpu || v.info.baseline) continue;
      if (device_info().sm() < v.info.min_sm) continue;
      const Problem* head = nullptr;
      for (const Problem& p : f.headline)
        if (can_run(v, p).ok()) {
          head = &p;
          break;
        }
      if (!head) continue;
      const std::set<std::string> own = functions(f, v, *head);
      ASSERT_FALSE(own.empty()) << v.info.id << " launched nothing at " << head->str();
      std::string seen;
      bool reached = false;
      for (const Problem& p : f.awkward) {
        if (!can_run(v, p).ok()) continue;
        const std::set<std::string> got = functions(f, v, p);
        for (const std::string& k : got) {
          reached |= own.count(k) > 0;
          if (seen.find(k) == std::string::npos) seen += " " + k;
        }
        if (reached) break;
      }
      ++rungs;
      EXPECT_TRUE(reached) << v.info.id << " runs" <<
          [&] {
            std::string s;
            for (const auto& k : own) s += " " + k;
            return s;
          }() << " at " << head->str()
                           << " but at no awkward shape (there:" << seen << ")";
    }
  }
  EXPECT_GT(rungs, 0);
}
