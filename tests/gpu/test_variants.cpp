// Every registered GPU variant x (headline + awkward shapes), each checked with fresh inputs
// (three distributions at awkward shapes, one at the large headline shapes). Exit 77 (CTest: skipped) when there is no GPU.
// KLAB_TEST_SHAPES=awkward limits the run to awkward shapes; KLAB_TEST_SHAPES=small to awkward
// shapes of at most 2 GFLOP and 256 MB (compute-sanitizer memcheck runs use it: it slows kernels
// ~100x); KLAB_TEST_SHAPES=tiny to at most 0.1 GFLOP and 16 MB (racecheck).
// KLAB_TEST_SEEDS=N checks each case at the fixed seeds 1..N instead of one fresh seed: a family
// whose seed also places its work (decode_attention's lengths and pages) gets N placements, where
// a timing-dependent failure shows at some and not others.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

#include "kernels/register.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/runner.hpp"
#include "test_shapes.hpp"

using namespace klab;

namespace {

struct Case {
  const Family* family;
  const Variant* variant;
  Problem problem;
  bool headline;  // headline shapes are large: one distribution; awkward shapes get all three
};

std::vector<Case> cases() {
  const std::string mode = test::shapes_mode();
  const bool awkward_only = mode == "awkward" || mode == "small" || mode == "tiny";
  std::vector<Case> out;
  for (const auto& f : registry().families())
    for (const auto& v : f.ladder) {
      // Sabotaged families fail on purpose: tests/gpu/test_doctor.cpp checks their diagnosis.
      if (f.sabotaged || v.info.device != Device::gpu) continue;
      if (!awkward_only)
        for (const auto& p : f.headline) out.push_back({&f, &v, p, true});
      for (const auto& p : test::awkward_shapes(f, mode)) out.push_back({&f, &v, p, false});
    }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return test::case_name(info.param.variant->info.id, info.param.problem, info.index);
}

class GpuVariant : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(GpuVariant, PassesCheck) {
  const Case& c = GetParam();
  if (device_info().sm() < c.variant->info.min_sm)
    GTEST_SKIP() << "needs sm_" << c.variant->info.min_sm;
  RunOptions opt;
  opt.bench = false;
  // Awkward shapes: three distributions. Headline shapes (hundreds of MB, checked against a CPU
  // or cuBLAS reference): the normal one, with fresh inputs — `klab check --dist all` does all three.
  opt.dists = c.headline ? std::vector<Dist>{Dist::normal}
                         : std::vector<Dist>{Dist::normal, Dist::uniform, Dist::heavy};
  const char* seeds_env = std::getenv("KLAB_TEST_SEEDS");
  const int seeds = seeds_env ? std::max(1, std::atoi(seeds_env)) : 0;  // 0: one fresh seed
  for (int s = seeds > 0 ? 1 : 0; s <= seeds; ++s) {
    opt.seed = static_cast<uint64_t>(s);
    const Result r = run_variant(*c.family, *c.variant, c.problem, opt);
    if (r.status == "skipped") GTEST_SKIP() << r.reason;  // can_implement refused, with its reason
    ASSERT_EQ(r.status, "ok") << r.reason;
    EXPECT_TRUE(r.check.passed) << c.problem.str() << " (--seed " << r.seed
                                << "): " << r.check.summary();
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, GpuVariant, ::testing::ValuesIn(cases()), case_name);

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!device_info().present) {
    std::cout << "SKIPPED: no GPU (" << device_info().absent_reason << ")\n";
    return 77;
  }
  return RUN_ALL_TESTS();
}
