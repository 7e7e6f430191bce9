// Problem, inputs, reference, counts and shapes of the sabotage family (a three-point stencil).
#include "kernels/sabotage/family.hpp"

#include <cmath>

namespace klab::sabotage {

namespace {

Problem problem(int64_t n, int64_t misalign = 0) {
  Problem p;
  p.family = "sabotage";
  p.shape.dims = {{"n", n}};
  p.dtype = DType::f32;
  p.misalign = misalign;
  return p;
}

}  // namespace

Family make_sabotage() {
  Family f;
  f.name = "sabotage";
  f.summary =
      "wrong or slow on purpose (klab doctor's exhibits): y[i] = x[i-1]/4 + x[i]/2 + x[i+1]/4";
  f.dims = {"n"};
  f.dtypes = {DType::f32};
  f.ceiling = "copy";
  f.sabotaged = true;
  f.tensors = [](const Problem& p) {
    const int64_t n = p.dim("n");
    return std::vector<TensorSpec>{{"x", DType::f32, n, Role::input},
                                   {"y", DType::f32, n, Role::output}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const int64_t n = p.dim("n");
    const Tensor& x = b["x"];
    auto& out = ref["y"];
    out.value.resize(n);
    out.magnitude.resize(n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const double l = i > 0 ? x.host_at(i - 1) : 0.0, c = x.host_at(i),
                   r = i + 1 < n ? x.host_at(i + 1) : 0.0;
      out.value[i] = 0.25 * l + 0.5 * c + 0.25 * r;
      out.magnitude[i] = 0.25 * std::abs(l) + 0.5 * std::abs(c) + 0.25 * std::abs(r);
    }
  };
  // Three multiplies by powers of two and two adds per output; each input read once, each output
  // written once.
  f.counts = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("n"));
    return Counts{5 * n, 8 * n};
  };
  // The products by 1/4 and 1/2 are exact (barring underflow); the two additions (or FMAs) round
  // once each: |error| <= 2u * sum |w_j x_j|. 3u leaves room for the order of the additions.
  f.tolerance = [](const Problem& p) {
    const double u = dtype_unit_roundoff(p.dtype);
    return Tolerance{0, 0, 3 * u, 3 * u};
  };
  // 4 Mi elements (32 MiB moved): large enough for many waves of blocks, small enough that the
  // compute-sanitizer tools (racecheck instruments every shared-memory access) finish in seconds.
  f.headline = {problem(int64_t(1) << 22)};
  // One element, less than a block, a block exactly, a block and one, a prime, and the prime with
  // every base pointer shifted by one element.
  for (int64_t n : {int64_t(1), int64_t(2), int64_t(255), int64_t(256), int64_t(257),
                    int64_t(1000003), (int64_t(1) << 20) + 7})
    f.awkward.push_back(problem(n));
  f.awkward.push_back(problem(1000003, 1));
  return f;
}

}  // namespace klab::sabotage
