// Problem, inputs, reference, counts and shapes of softmax: y[r][c] = exp(x[r][c] - max_r) / sum_r.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reduction/family.hpp"

namespace klab::reduction {

namespace {

Problem softmax_problem(int64_t rows, int64_t cols, DType t, int64_t misalign = 0) {
  Problem p;
  p.family = "softmax";
  p.shape.dims = {{"rows", rows}, {"cols", cols}};
  p.dtype = t;
  p.misalign = misalign;
  return p;
}

}  // namespace

Family make_softmax() {
  Family f;
  f.name = "softmax";
  f.summary = "row-wise softmax over cols (f32 or bf16 in/out, fp32 math)";
  f.dims = {"rows", "cols"};
  f.dtypes = {DType::f32, DType::bf16};
  f.ceiling = "copy";
  f.tensors = [](const Problem& p) {
    const int64_t n = checked_product({p.dim("rows"), p.dim("cols")}, "softmax elements");
    return std::vector<TensorSpec>{{"x", p.dtype, n, Role::input}, {"y", p.dtype, n, Role::output}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    auto& y = ref["y"].value;
    y.resize(static_cast<size_t>(rows * cols));
    const Tensor& x = b["x"];
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t r = 0; r < rows; ++r) {
      double m = -INFINITY;
      for (int64_t c = 0; c < cols; ++c) m = std::max(m, x.host_at(r * cols + c));
      double s = 0;
      for (int64_t c = 0; c < cols; ++c)
        s += (y[r * cols + c] = std::exp(x.host_at(r * cols + c) - m));
      for (int64_t c = 0; c < cols; ++c) y[r * cols + c] /= s;
    }
  };
  f.counts = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("rows")) * static_cast<double>(p.dim("cols"));
    // Per element: a max, a subtraction, an exp, an add, a scale (the exp counted as one).
    return Counts{5 * n, 2 * n * dtype_size(p.dtype)};
  };
  // The rungs compute in fp32, y_i = e_i / s with e_i = exp(t_i), t_i = x_i - m <= 0, s = sum e_i >= 1.
  //  - t_i is rounded (u |t_i|) and __expf errs by at most (2 + 1.17 |t|) ulp (CUDA C Programming
  //    Guide, intrinsic functions; expf: 2 ulp). An ulp is <= 2u of the value, so e_i's error is
  //    <= 4u e_i + 3.4u |t_i| e_i. The second part is at most 3.4u / e absolute (t e^t <= 1/e):
  //    atol = 4u covers it whatever |t| is, so heavy-tailed rows need no looser rtol.
  //  - s sums positive terms: no cancellation. The exp errors above, weighted by e_i / s, add at
  //    most (4 + 3.4 ln(cols)) u (sum_i p_i |t_i| = H(p) - ln s <= ln cols for p_i = e_i / s).
  //    Accumulation: no rung keeps one long fp32 running sum — v00 sums pairwise, v01 is
  //    compensated (Kahan), the block rungs add cols / block values per thread, then a tree. The
  //    worst case of a chain of L positive terms is L u; 4 sqrt(cols) u covers the per-thread
  //    chains of 256-thread blocks up to cols = 2^20 even at that worst case. (A plain running
  //    sum over a whole row does not pass: heavy-tailed rows absorb the small terms once the sum
  //    is 1/u times larger, measured 2e-5 relative at cols = 4096 — a real error, not noise.)
  //  - the final scale: 1 / s and a multiply, 2u.
  //  f32: rtol = u (16 + 4 ln cols + 4 sqrt cols), e.g. 1.7e-5 at cols = 4096; atol = 4u.
  //  bf16: the same plus one rounding of the output, u_bf16 = 2^-8 relative.
  // The whole-output relative L2 error is held to the same rtol.
  f.tolerance = [](const Problem& p) {
    const double u = dtype_unit_roundoff(DType::f32);
    const double cols = static_cast<double>(p.dim("cols"));
    double rtol = u * (16 + 4 * std::log(cols) + 4 * std::sqrt(cols));
    if (p.dtype != DType::f32) rtol += dtype_unit_roundoff(p.dtype);
    return Tolerance{4 * u, rtol, 0, rtol};
  };

  // 32768 x 4096: 512 MiB each way in f32 (the torch.softmax shape of docs/design.md's targets), 256 MiB in bf16.
  // Short rows (MoE routers, short attention rows), v05's range: 2^22 x 64, 2^21 x 128 and
  // 2^20 x 255 (a length no vector width divides), 2^28 elements each: 1 GiB each way in f32.
  for (DType t : f.dtypes) {
    f.headline.push_back(softmax_problem(32768, 4096, t));
    f.headline.push_back(softmax_problem(int64_t(1) << 22, 64, t));
    f.headline.push_back(softmax_problem(int64_t(1) << 21, 128, t));
    f.headline.push_back(softmax_problem(int64_t(1) << 20, 255, t));
  }
  // Awkward: one element; rows of one element (cols = 1); a single long prime row (more than any
  // register-resident rung holds); 33 x 31 (no vector width or block divides either); 4097^2;
  // v04's longest row (1024 threads x 32 values); misaligned bases with odd and with vector-wide
  // rows (v04's scalar path).
  for (DType t : f.dtypes) {
    for (auto [r, c] :
         std::initializer_list<std::pair<int64_t, int64_t>>{{1, 1},
                                                            {4096, 1},
                                                            {1, 1000003},
                                                            {33, 31},
                                                            {4097, 4097},
                                                            {64, kSoftmaxMaxRegisterCols}})
      f.awkward.push_back(softmax_problem(r, c, t));
    f.awkward.push_back(softmax_problem(33, 31, t, 1));
    f.awkward.push_back(softmax_problem(257, 4096, t, 1));
    // Short rows (v05): each of its lane counts and values per lane, on its vector path (the
    // multiples of the vector width) and its scalar path (17, 31, 33, 255, 257, 511, ...), with
    // row counts that fill no warp, block or wave evenly (200003 x 16 and 20001 x 512: more rows
    // than one resident wave takes, so the grid-stride loop turns); v05's longest row (1024) and one
    // column past it (v05 refuses, the others run); a misaligned vector-wide short row (v05's
    // scalar path at a vector length).
    for (auto [r, c] : std::initializer_list<std::pair<int64_t, int64_t>>{{1, 16},
                                                                          {1001, 16},
                                                                          {200003, 16},
                                                                          {777, 17},
                                                                          {3001, 31},
                                                                          {99, 33},
                                                                          {12345, 64},
                                                                          {257, 100},
                                                                          {300, 120},
                                                                          {4099, 255},
                                                                          {1027, 257},
                                                                          {513, 511},
                                                                          {20001, 512},
                                                                          {2049, 1000},
                                                                          {129, 1024},
                                                                          {65, 1025}})
      f.awkward.push_back(softmax_problem(r, c, t));
    f.awkward.push_back(softmax_problem(1001, 64, t, 1));
    // v06's spans (rows off the vector width, read as whole 16-byte vectors across S rows; 99 x 33
    // and 4099 x 255 above are odd, with a partial last span): cols = 2 mod 4 (S = 4 in bf16, 2 in
    // f32; 2001 x 510 at 8 slots a lane), bf16 cols = 4 mod 8 (S = 2; 1001 x 1020 at 8 slots),
    // each row count leaving a partial last span; 3 x 255, a matrix smaller than one span; rows
    // shorter than a vector (a vector would touch more than two rows: v06 runs v05 there); and a
    // misaligned base at 255 (v05's scalar path).
    for (auto [r, c] : std::initializer_list<std::pair<int64_t, int64_t>>{{1001, 130},
                                                                          {2001, 510},
                                                                          {4097, 252},
                                                                          {1001, 1020},
                                                                          {3, 255},
                                                                          {999, 5},
                                                                          {1001, 6},
                                                                          {1001, 7}})
      f.awkward.push_back(softmax_problem(r, c, t));
    f.awkward.push_back(softmax_problem(4099, 255, t, 1));
    // v07's staged rows (129 to 256 columns off the vector width; 4099 x 255, 1001 x 130 and
    // 3 x 255 above reach them too): the shortest row it takes, an even length off the vector
    // width with a tile of one row left over, and a matrix of fewer rows than a tile, odd ones.
    for (auto [r, c] :
         std::initializer_list<std::pair<int64_t, int64_t>>{{1001, 129}, {17, 250}, {5, 201}})
      f.awkward.push_back(softmax_problem(r, c, t));
  }
  return f;
}

}  // namespace klab::reduction
