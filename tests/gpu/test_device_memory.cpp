// Device memory on the GPU: the peak measured around attention's materialised rung covers its
// fp32 score workspace (a peak that missed the workspace, or was not taken as a rise over the
// first sample, fails here), check records carry it too, and a problem above the free memory is
// refused before anything is allocated.
#include <gtest/gtest.h>

#include "kernels/register.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/device_memory.hpp"
#include "klab/harness/registry.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;

namespace {

constexpr int64_t kMiB = int64_t(1) << 20;

// Beside what the harness allocates, the peak may also hold the rung's kernels loaded on their
// first launch and the driver's rounding of each allocation: a few MiB. 256 MiB is far below the
// context's own use, which a peak read as the used memory rather than its rise would include.
constexpr int64_t kSlack = 256 * kMiB;

// Attention's materialised rung on a device that runs it; skipped otherwise.
class Materialised : public ::testing::Test {
 protected:
  void SetUp() override {
    f = &registry().family("attention");
    v = f->find("attention.v01_materialised");
    if (!v) GTEST_SKIP() << "attention.v01_materialised is not built";
    if (device_info().sm() < v->info.min_sm) GTEST_SKIP() << "needs sm_" << v->info.min_sm;
  }
  const Family* f = nullptr;
  const Variant* v = nullptr;
};

}  // namespace

TEST_F(Materialised, PeakCoversItsWorkspace) {
  // 4 x 8 heads x 2048^2 bytes: 128 MiB of scores against 8 MiB of tensors.
  const Problem p = make_problem(*f, "b=1,nq=2048,nkv=2048,hq=8,hkv=8,d=64,causal=1", "bf16");
  RunOptions opt;
  opt.check = false;
  opt.bench = false;
  const Result r = run_variant(*f, *v, p, opt);
  ASSERT_EQ(r.status, "ok") << r.reason;
  ASSERT_TRUE(r.device_memory);
  const DeviceMemory& m = *r.device_memory;
  EXPECT_EQ(m.workspace, 128 * kMiB);
  ASSERT_TRUE(m.peak_measured) << m.method;
  EXPECT_GE(*m.peak_measured, m.workspace) << "the peak must see the workspace";
  EXPECT_LE(*m.peak_measured, m.needed() + kSlack) << "the peak is a rise, not the used memory";
  EXPECT_GT(m.free, 0);
}

TEST_F(Materialised, CheckRecordsCarryDeviceMemory) {
  const Problem p = make_problem(*f, "b=1,nq=512,nkv=512,hq=4,hkv=4,d=64", "bf16");
  RunOptions opt;
  opt.bench = false;
  const Result r = run_variant(*f, *v, p, opt);
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.check.passed) << r.check.summary();
  ASSERT_TRUE(r.device_memory && r.device_memory->peak_measured);
  EXPECT_GE(*r.device_memory->peak_measured, r.device_memory->workspace);
}

TEST_F(Materialised, AboveTheFreeMemoryIsRefusedBeforeAllocation) {
  const Problem p = make_problem(*f, "b=1,nq=2048,nkv=2048,hq=8,hkv=8,d=64", "bf16");
  // The device says 64 MiB are free: less than the 128 MiB of scores.
  DeviceMemoryProbe real = set_device_memory_probe([] {
    DeviceMemoryInfo m;
    m.known = true;
    m.free = 64 * kMiB;
    m.total = 128 * 1024 * kMiB;
    return m;
  });
  RunOptions opt;
  opt.check = false;
  opt.bench = false;
  const Result r = run_variant(*f, *v, p, opt);
  set_device_memory_probe(std::move(real));
  EXPECT_EQ(r.status, "skipped");
  EXPECT_EQ(r.reason.rfind("does not fit: needs", 0), 0u) << r.reason;
  EXPECT_NE(r.reason.find("0.1 GiB free"), std::string::npos) << r.reason;
  ASSERT_TRUE(r.device_memory);
  EXPECT_FALSE(r.device_memory->peak_measured);
}
