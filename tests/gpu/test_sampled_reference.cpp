// At a headline shape the fp64 samples, not the vendor library, judge: a vendor baseline that is
// wrong in one sampled row fails even when it is the family's second-opinion reference itself
// (before the samples, a baseline was checked against its own output there and passed).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "kernels/register.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;

namespace {

void expect_wrong_row_caught(const char* family, const char* shape, const char* dtype) {
  Family f = registry().family(family);
  const Problem p = make_problem(f, shape, dtype);
  ASSERT_TRUE(f.sampled(p)) << p.str() << " is not above the family's CPU-reference limit";
  ASSERT_NE(f.find(f.gpu_reference_variant), nullptr);
  const Variant vendor = *f.find(f.gpu_reference_variant);  // a copy: f.ladder grows below
  // The vendor's own result, then its first row copied over its last: one wrong row.
  Variant wrong = vendor;
  wrong.info.id = std::string(family) + ".test_wrong_last_row";
  wrong.prepare = nullptr;  // the vendor's own setup would launch it without the damage
  wrong.launch = [launch = vendor.launch](const Problem& q, Buffers& b, const LaunchArgs& a) {
    launch(q, b, a);
    Tensor& c = b["c"];
    const size_t row = static_cast<size_t>(q.dim("n") * dtype_size(c.spec.dtype));
    auto* base = static_cast<unsigned char*>(c.data);
    KLAB_CUDA_CHECK(cudaMemcpyAsync(base + (q.dim("m") - 1) * row, base, row,
                                    cudaMemcpyDeviceToDevice,
                                    reinterpret_cast<cudaStream_t>(a.stream)));
  };
  f.ladder.push_back(wrong);
  f.gpu_reference_variant = wrong.info.id;  // the second opinion agrees with it, by construction
  RunOptions opt;
  opt.bench = false;
  const Result r = run_variant(f, f.ladder.back(), p, opt);
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_FALSE(r.check.passed) << r.check.summary();
  EXPECT_EQ(r.check.reference, "fp64 sampled");
  EXPECT_GE(r.check.bad, p.dim("n") / 2) << r.check.summary();  // most of the last row
  for (const Mismatch& m : r.check.first) EXPECT_EQ(m.index / p.dim("n"), p.dim("m") - 1);
  // The right baseline passes against the same kind of samples, in the family as registered (its
  // second opinion is itself there, so skipped; in `f` the wrong variant would be it).
  const Result ok = run_variant(registry().family(family), vendor, p, opt);
  ASSERT_EQ(ok.status, "ok") << ok.reason;
  EXPECT_TRUE(ok.check.passed) << ok.check.summary();
  EXPECT_GE(ok.check.compared, 4096);
}

}  // namespace

TEST(SampledReference, WrongSgemmBaselineRowFailsAtHeadline) {
  expect_wrong_row_caught("sgemm", "m=4096,n=4096,k=4096", "f32");
}

TEST(SampledReference, WrongHgemmBaselineRowFailsAtHeadline) {
  expect_wrong_row_caught("hgemm", "m=4096,n=4096,k=4096", "bf16");
}
