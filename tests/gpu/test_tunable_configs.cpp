// Every configuration of every tunable rung (`klab tune`'s space: tile shapes, splits, v18's and
// v19's entries) checked at its family's awkward shapes. A rung's own tests run the configuration
// it picks per shape class, and `klab tune` checks each configuration only at the shape it times,
// so a configuration no table picks yet would otherwise meet an awkward shape first in a user's
// tune. The configurations are many: the awkward shapes within KLAB_TEST_SHAPES=small's limits
// unless KLAB_TEST_SHAPES names another mode (tiny; awkward or anything else: every one), one
// distribution each, one fresh seed (KLAB_TEST_SEEDS as in test_variants.cpp is not read here).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/runner.hpp"
#include "test_shapes.hpp"

using namespace klab;

namespace {

struct ConfigCase {
  const Family* family;
  const Tunable* tunable;
  int config;
  Problem problem;
};

std::vector<ConfigCase> config_cases() {
  std::string mode = test::shapes_mode();
  if (mode.empty()) mode = "small";
  std::vector<ConfigCase> out;
  for (const Tunable& t : registry().tunables()) {
    // A build without CUDA registers the tunables but not their GPU rungs: nothing to check.
    std::pair<const Family*, const Variant*> found;
    try {
      found = registry().variant(t.variant);
    } catch (const UsageError&) {
      continue;
    }
    const auto [family, rung] = found;
    if (family->sabotaged || rung->info.device != Device::gpu) continue;
    for (int i = 0; i < int(t.configs.size()); ++i)
      for (const Problem& p : test::awkward_shapes(*family, mode))
        out.push_back({family, &t, i, p});
  }
  return out;
}

std::string config_case_name(const ::testing::TestParamInfo<ConfigCase>& info) {
  const ConfigCase& c = info.param;
  return test::case_name(c.tunable->variant + "_" + c.tunable->configs[size_t(c.config)], c.problem,
                         info.index);
}

class TunableConfig : public ::testing::TestWithParam<ConfigCase> {};

}  // namespace

TEST_P(TunableConfig, PassesCheck) {
  const ConfigCase& c = GetParam();
  const Variant v = c.tunable->make(c.config);
  if (device_info().sm() < v.info.min_sm) GTEST_SKIP() << "needs sm_" << v.info.min_sm;
  RunOptions opt;
  opt.bench = false;
  const Result r = run_variant(*c.family, v, c.problem, opt);
  if (r.status == "skipped") GTEST_SKIP() << r.reason;  // this configuration cannot run it
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.check.passed) << v.info.id << " " << c.problem.str() << " (--seed " << r.seed
                              << "): " << r.check.summary();
}

INSTANTIATE_TEST_SUITE_P(Registry, TunableConfig, ::testing::ValuesIn(config_cases()),
                         config_case_name);
