// Problem, validation, inputs, reference, counts and shapes of the 2D max-pool family.
#include "kernels/maxpool/family.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "klab/core/errors.hpp"

namespace klab::maxpool {

namespace {

// h + 2p without overflow (the shape parser allows extents up to 2^63 - 1).
int64_t padded(int64_t h, int64_t p, const char* dim) {
  if (p > (std::numeric_limits<int64_t>::max() - h) / 2)
    throw UsageError(std::string("maxpool: ") + dim + " + 2p overflows a 64-bit integer");
  return h + 2 * p;
}

// Input rows (or columns) that at least one window touches: all of them when s <= k and the
// sizes line up, fewer when the stride leaves gaps (s > k) or the last rows fit no window.
// The minimal byte count reads only these; counting the whole input would let a kernel that
// skips the gaps report more than the copy ceiling.
int64_t covered(int64_t h, int64_t k, int64_t s, int64_t p, int64_t ho) {
  int64_t total = 0, next = 0;  // next: first row not yet counted
  for (int64_t o = 0; o < ho; ++o) {
    const int64_t lo = std::max(o * s - p, next), hi = std::min(o * s - p + k, h);
    if (hi > lo) {
      total += hi - lo;
      next = hi;
    }
  }
  return total;
}

Problem problem(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p,
                DType t, int64_t misalign = 0) {
  Problem pr;
  pr.family = "maxpool";
  pr.shape.dims = {{"n", n}, {"c", c}, {"h", h}, {"w", w}, {"k", k}, {"s", s}, {"p", p}};
  pr.dtype = t;
  pr.misalign = misalign;
  return pr;
}

void validate(const Problem& pr) {
  const int64_t h = pr.dim("h"), w = pr.dim("w"), k = pr.dim("k"), s = pr.dim("s"), p = pr.dim("p");
  for (const char* d : {"n", "c", "h", "w", "k"})
    if (pr.dim(d) < 1) throw UsageError(std::string("maxpool: ") + d + " must be >= 1");
  if (s < 1) throw UsageError("maxpool: stride s=" + std::to_string(s) + " must be >= 1");
  if (p < 0) throw UsageError("maxpool: padding p=" + std::to_string(p) + " must be >= 0");
  if (p >= k)
    throw UsageError("maxpool: padding p=" + std::to_string(p) +
                     " must be smaller than the window k=" + std::to_string(k) +
                     " (a window of padding alone has no max)");
  if (k > padded(h, p, "h"))
    throw UsageError("maxpool: window k=" + std::to_string(k) +
                     " exceeds the padded height h+2p=" + std::to_string(h + 2 * p));
  if (k > padded(w, p, "w"))
    throw UsageError("maxpool: window k=" + std::to_string(k) +
                     " exceeds the padded width w+2p=" + std::to_string(w + 2 * p));
}

}  // namespace

Geometry geometry(const Problem& pr) {
  Geometry g{};
  g.n = pr.dim("n");
  g.c = pr.dim("c");
  g.h = pr.dim("h");
  g.w = pr.dim("w");
  g.k = pr.dim("k");
  g.s = pr.dim("s");
  g.p = pr.dim("p");
  g.ho = (g.h + 2 * g.p - g.k) / g.s + 1;
  g.wo = (g.w + 2 * g.p - g.k) / g.s + 1;
  return g;
}

Family make_maxpool() {
  Family f;
  f.name = "maxpool";
  f.summary = "2D max pooling, NCHW: y = max over each k x k window (stride s, padding p = -inf)";
  f.dims = {"n", "c", "h", "w", "k", "s", "p"};
  f.zero_ok_dims = {"p"};  // no padding is the common case
  f.dtypes = {DType::f32, DType::bf16};
  // The headline windows (2x2 stride 2, 3x3 stride 2) read each input once and write a quarter
  // as many outputs: the traffic of the four-streams-read-per-stream-written ceiling.
  f.ceiling = "read4_write1";
  f.validate = validate;
  f.tensors = [](const Problem& pr) {
    const Geometry g = geometry(pr);
    return std::vector<TensorSpec>{
        {"x", pr.dtype, checked_product({g.n, g.c, g.h, g.w}, "maxpool x"), Role::input},
        {"y", pr.dtype, checked_product({g.n, g.c, g.ho, g.wo}, "maxpool y"), Role::output}};
  };
  f.reference = [](const Problem& pr, const Buffers& b, Reference& ref) {
    const Geometry g = geometry(pr);
    auto& y = ref["y"].value;
    y.resize(g.y_numel());
    const Tensor& x = b["x"];
    const int64_t rows = g.n * g.c * g.ho;  // one output row per iteration
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t plane = r / g.ho, oh = r % g.ho;
      for (int64_t ow = 0; ow < g.wo; ++ow) {
        double m = -std::numeric_limits<double>::infinity();  // padded cells never win
        for (int64_t ih = oh * g.s - g.p; ih < oh * g.s - g.p + g.k; ++ih) {
          if (ih < 0 || ih >= g.h) continue;
          for (int64_t iw = ow * g.s - g.p; iw < ow * g.s - g.p + g.k; ++iw)
            if (iw >= 0 && iw < g.w) m = std::max(m, x.host_at((plane * g.h + ih) * g.w + iw));
        }
        y[r * g.wo + ow] = m;
      }
    }
  };
  f.counts = [](const Problem& pr) {
    const Geometry g = geometry(pr);
    const double planes = static_cast<double>(g.n) * static_cast<double>(g.c);
    const double outputs = planes * static_cast<double>(g.ho) * static_cast<double>(g.wo);
    const double read = planes * static_cast<double>(covered(g.h, g.k, g.s, g.p, g.ho)) *
                        static_cast<double>(covered(g.w, g.k, g.s, g.p, g.wo));
    return Counts{outputs * static_cast<double>(g.k * g.k),
                  (read + outputs) * dtype_size(pr.dtype)};
  };
  // Exact: the max of a set is one of its elements, and every rung compares values in a type
  // that holds the input exactly (f32, or bf16 widened to f32), so no rounding ever happens.
  f.tolerance = [](const Problem&) { return Tolerance{0, 0, 0, 0}; };

  // 32 x 64 x 224 x 224 (a ResNet stem's activations): 392 MiB of f32 input, far above the 60 MiB
  // L2. bf16 doubles n to keep the working set above 256 MiB.
  for (const auto& [t, n] :
       {std::pair{DType::f32, int64_t(32)}, std::pair{DType::bf16, int64_t(64)}}) {
    f.headline.push_back(problem(n, 64, 224, 224, 2, 2, 0, t));  // disjoint 2x2 windows
    f.headline.push_back(problem(n, 64, 224, 224, 3, 2, 1, t));  // overlapping 3x3 (ResNet stem)
  }

  // Awkward: a single element, odd and prime extents (no tile divides them; the last rows and
  // columns fit no window), overlapping and gapped windows, even windows with odd strides, windows
  // mostly made of padding, many tiny planes (warps straddle planes), and a misaligned prime case.
  for (DType t : f.dtypes) {
    f.awkward.push_back(problem(1, 1, 1, 1, 1, 1, 0, t));
    f.awkward.push_back(problem(2, 3, 31, 33, 2, 2, 0, t));
    f.awkward.push_back(problem(1, 5, 33, 31, 3, 2, 1, t));
    f.awkward.push_back(problem(1, 3, 37, 41, 3, 1, 1, t));
    f.awkward.push_back(problem(2, 2, 101, 103, 5, 2, 2, t));
    f.awkward.push_back(problem(1, 2, 43, 47, 4, 3, 2, t));
    f.awkward.push_back(problem(1, 3, 29, 53, 2, 3, 1, t));
    f.awkward.push_back(problem(1, 1, 1, 97, 3, 1, 1, t));
    f.awkward.push_back(problem(3, 1, 61, 59, 1, 2, 0, t));
    f.awkward.push_back(problem(1, 1, 17, 19, 7, 5, 3, t));
    f.awkward.push_back(problem(7, 13, 5, 3, 2, 1, 1, t));
    // v03's vector path (w * sizeof(T) a multiple of 16, window 2x2/2 or 3x3/2/1): odd heights
    // (a last strip of one row, a last input row no window reads), output rows of a partial
    // 16-byte group (stored element by element) and of whole groups (vector stores).
    f.awkward.push_back(problem(2, 3, 37, 40, 2, 2, 0, t));
    f.awkward.push_back(problem(1, 5, 33, 48, 3, 2, 1, t));
    f.awkward.push_back(problem(3, 2, 30, 24, 3, 2, 1, t));
    f.awkward.push_back(problem(2, 3, 65, 232, 3, 2, 1, t));
  }
  for (DType t : f.dtypes) f.awkward.push_back(problem(3, 5, 127, 131, 3, 2, 1, t, 1));
  return f;
}

}  // namespace klab::maxpool
