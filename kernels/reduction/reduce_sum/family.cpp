// Problem, inputs, reference, counts and shapes of reduce_sum: one fp32 sum of n values.
#include <bit>
#include <cmath>
#include <limits>

#include "kernels/reduction/family.hpp"

namespace klab::reduction {

namespace {

Problem sum_problem(int64_t n, DType t, int64_t misalign = 0) {
  Problem p;
  p.family = "reduce_sum";
  p.shape.dims = {{"n", n}};
  p.dtype = t;
  p.misalign = misalign;
  return p;
}

}  // namespace

Family make_reduce_sum() {
  Family f;
  f.name = "reduce_sum";
  f.summary = "sum of n values (f32 or bf16 in, fp32 accumulation, one f32 out)";
  f.dims = {"n"};
  f.dtypes = {DType::f32, DType::bf16};
  f.ceiling = "read";
  // v03 reads 2^28 values faster than the ceiling's own read kernel (100.7% of its p10 rate in
  // 2026-12-02_545ce16_issue12_run, where the ceilings came from 8aee337): the read ceiling is
  // measured with the best read kernel at hand, so v03 probes it too.
  f.ceiling_rungs = {"v03_vectorized"};
  f.tensors = [](const Problem& p) {
    return std::vector<TensorSpec>{{"x", p.dtype, p.dim("n"), Role::input},
                                   {"sum", DType::f32, 1, Role::output}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const int64_t n = p.dim("n");
    const Tensor& x = b["x"];
    double sum = 0, mag = 0;
#pragma omp parallel for reduction(+ : sum, mag) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const double v = x.host_at(i);
      sum += v;
      mag += std::fabs(v);
    }
    ref["sum"].value = {sum};
    ref["sum"].magnitude = {mag};
  };
  f.counts = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("n"));
    return Counts{n, n * dtype_size(p.dtype) + 4};
  };
  // Inputs are exact in fp32 (bf16 converts exactly), so all error is fp32 accumulation. A sum
  // evaluated as a tree of depth L obeys |err| <= gamma_L * sum|x_i| ~= L * u_f32 * sum|x_i|
  // (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §4.2) — the magnitude, not
  // |sum|, because signed data cancels. Levels: a balanced tree over n values has
  // ceil(log2 n) + 1 of them. The rungs are not balanced trees everywhere: each thread's grid-
  // stride chain and the per-block atomics are linear chains, whose worst-case bound is their
  // length; but their rounding errors are independent and of either sign, so they grow like the
  // square root of the length (thousands of terms: tens of u), far below L at our sizes.
  // mtol = 4 L u: four times the balanced-tree bound. Values never summed (a missed tail of
  // magnitude M) fail once M > 4 L u sum|x|, e.g. a missed 1/8 of a 2^28 normal input.
  // One scalar output: the relative L2 error is |err| / |sum|, meaningless when the sum cancels
  // to near zero, so it is not limited; the element test above is the whole check.
  f.tolerance = [](const Problem& p) {
    const double levels = std::bit_width(static_cast<uint64_t>(p.dim("n") - 1)) + 1.0;
    return Tolerance{0, 0, 4 * levels * dtype_unit_roundoff(DType::f32),
                     std::numeric_limits<double>::infinity()};
  };

  // 2^28 values: 1 GiB in f32, 512 MiB in bf16, far above the 60 MiB L2.
  for (DType t : f.dtypes) f.headline.push_back(sum_problem(int64_t(1) << 28, t));
  // Awkward: 1, around a warp, one past a 256-thread block (v01's second pass), 256^2 + 1 (three
  // passes), a prime (no vector width or grid divides it), 2^20 + 7, and a misaligned base
  // (v03 peels a scalar head before its 16-byte loads).
  for (DType t : f.dtypes) {
    for (int64_t n : {int64_t(1), int64_t(31), int64_t(33), int64_t(257), int64_t(65537),
                      int64_t(1000003), (int64_t(1) << 20) + 7})
      f.awkward.push_back(sum_problem(n, t));
    f.awkward.push_back(sum_problem(1000003, t, 1));
  }
  return f;
}

}  // namespace klab::reduction
