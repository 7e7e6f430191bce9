// Problems, inputs, references, counts and shapes of the elementwise families.
#include "kernels/elementwise/family.hpp"

#include <cmath>
#include <limits>

#include "klab/core/errors.hpp"

namespace klab::elementwise {

const char* op_family(Op op) {
  switch (op) {
    case Op::add:
      return "vector_add";
    case Op::saxpy:
      return "saxpy";
    case Op::relu:
      return "relu";
    case Op::grayscale:
      return "grayscale";
  }
  return "?";
}

namespace {

Problem problem(const char* fam, int64_t n, DType t, int64_t misalign = 0) {
  Problem p;
  p.family = fam;
  p.shape.dims = {{"n", n}};
  p.dtype = t;
  p.misalign = misalign;
  return p;
}

// 2^26 elements: 768 MiB for vector add in f32, far above the 60 MiB L2.
constexpr int64_t kHeadlineN = int64_t(1) << 26;

// Awkward sizes: 1, around a warp, a prime above 10^6 (no tile or vector width divides it),
// the same prime with every base pointer shifted by one element, and 2^20 + 7.
std::vector<Problem> awkward(const char* fam, const std::vector<DType>& dtypes) {
  std::vector<Problem> v;
  for (DType t : dtypes)
    for (int64_t n :
         {int64_t(1), int64_t(31), int64_t(33), int64_t(1000003), (int64_t(1) << 20) + 7})
      v.push_back(problem(fam, n, t));
  for (DType t : dtypes) v.push_back(problem(fam, 1000003, t, 1));
  return v;
}

std::vector<Problem> headline(const char* fam, const std::vector<DType>& dtypes, int64_t n) {
  std::vector<Problem> v;
  for (DType t : dtypes) v.push_back(problem(fam, n, t));
  return v;
}

// Unit roundoff of the output type, in fp64.
double u(const Problem& p) { return dtype_unit_roundoff(p.dtype); }

Family map_family(Op op, std::string summary, std::vector<DType> dtypes) {
  Family f;
  f.name = op_family(op);
  f.summary = std::move(summary);
  f.dims = {"n"};
  f.dtypes = dtypes;
  f.ceiling = "copy";
  f.headline = headline(f.name.c_str(), dtypes, kHeadlineN);
  f.awkward = awkward(f.name.c_str(), dtypes);
  return f;
}

}  // namespace

Family make_vector_add() {
  Family f = map_family(Op::add, "out = a + b", {DType::f32, DType::bf16});
  f.ceiling = "read2_write1";  // two streams read per stream written: HBM's read-heavy rate
  f.tensors = [](const Problem& p) {
    const int64_t n = p.dim("n");
    return std::vector<TensorSpec>{{"a", p.dtype, n, Role::input},
                                   {"b", p.dtype, n, Role::input},
                                   {"out", p.dtype, n, Role::output}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const int64_t n = p.dim("n");
    auto& out = ref["out"].value;
    out.resize(n);
    const Tensor &a = b["a"], &bb = b["b"];
#pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) out[i] = a.host_at(i) + bb.host_at(i);
  };
  f.counts = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("n"));
    return Counts{n, 3 * n * dtype_size(p.dtype)};
  };
  // The kernels add in fp32 and round once to the output type: |err| <= u |ref| for f32, and
  // <= (u_bf16 + u_f32) |ref| for bf16. 2u leaves room for nothing but that rounding.
  f.tolerance = [](const Problem& p) { return Tolerance{0, 2 * u(p), 0, 2 * u(p)}; };
  return f;
}

Family make_saxpy() {
  Family f =
      map_family(Op::saxpy, "y = alpha * x + y (alpha = 1.5, in place)", {DType::f32, DType::bf16});
  f.ceiling = "read2_write1";  // x and y read, y written
  f.tensors = [](const Problem& p) {
    const int64_t n = p.dim("n");
    return std::vector<TensorSpec>{{"x", p.dtype, n, Role::input}, {"y", p.dtype, n, Role::inout}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const int64_t n = p.dim("n");
    auto& out = ref["y"].value;
    out.resize(n);
    const Tensor &x = b["x"], &y = b["y"];
#pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) out[i] = double(kSaxpyAlpha) * x.host_at(i) + y.host_at(i);
  };
  f.counts = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("n"));
    return Counts{2 * n, 3 * n * dtype_size(p.dtype)};
  };
  // One fused multiply-add rounds the exact alpha*x + y once: |err| <= u |ref| (plus the bf16
  // rounding of the fp32 result). 2u; no absolute slack needed since the FMA is exact-then-round.
  f.tolerance = [](const Problem& p) { return Tolerance{1e-300, 2 * u(p), 0, 2 * u(p)}; };
  return f;
}

Family make_relu() {
  Family f = map_family(Op::relu, "out = max(x, 0)", {DType::f32, DType::bf16});
  f.tensors = [](const Problem& p) {
    const int64_t n = p.dim("n");
    return std::vector<TensorSpec>{{"x", p.dtype, n, Role::input},
                                   {"out", p.dtype, n, Role::output}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const int64_t n = p.dim("n");
    auto& out = ref["out"].value;
    out.resize(n);
    const Tensor& x = b["x"];
#pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) out[i] = std::max(x.host_at(i), 0.0);
  };
  f.counts = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("n"));
    return Counts{n, 2 * n * dtype_size(p.dtype)};
  };
  // Exact: a comparison and a copy.
  f.tolerance = [](const Problem&) { return Tolerance{0, 0, 0, 0}; };
  return f;
}

Family make_grayscale() {
  Family f = map_family(Op::grayscale, "RGB (interleaved) to gray, BT.601 weights", {DType::f32});
  f.ceiling = "read3_write1";  // three values read per value written (HBM's read-heavy rate)
  f.dims = {"n"};              // pixels
  f.headline = headline(f.name.c_str(), f.dtypes, int64_t(1) << 25);  // 512 MiB moved
  f.tensors = [](const Problem& p) {
    const int64_t n = p.dim("n");
    return std::vector<TensorSpec>{
        {"rgb", p.dtype, checked_product({n, 3}, "grayscale rgb"), Role::input},
        {"gray", p.dtype, n, Role::output}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const int64_t n = p.dim("n");
    auto& r = ref["gray"];
    r.value.resize(n);
    r.magnitude.resize(n);
    const Tensor& rgb = b["rgb"];
    // The same fp32 weights the kernels use, exactly, in fp64 arithmetic.
    const double wr = 0.299f, wg = 0.587f, wb = 0.114f;
#pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) {
      const double R = rgb.host_at(3 * i), G = rgb.host_at(3 * i + 1), B = rgb.host_at(3 * i + 2);
      r.value[i] = wr * R + wg * G + wb * B;
      r.magnitude[i] = std::fabs(wr * R) + std::fabs(wg * G) + std::fabs(wb * B);
    }
  };
  f.counts = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("n"));
    return Counts{5 * n, 4 * n * dtype_size(p.dtype)};
  };
  // Three fp32 roundings (a multiply and two FMAs): |err| <= 3u * sum |w_c x_c| (+ O(u^2)).
  // Signed test data can cancel, so the bound is on the magnitude, not on |ref|; for the same
  // reason the relative L2 error against |ref| is unbounded (one pixel that cancels to ~0 makes
  // it anything), so the elementwise magnitude bound is the whole test.
  f.tolerance = [](const Problem& p) {
    return Tolerance{0, 0, 4 * u(p), std::numeric_limits<double>::infinity()};
  };
  return f;
}

}  // namespace klab::elementwise
