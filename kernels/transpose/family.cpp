// Problem, inputs, reference, counts and shapes of the transpose family.
#include "kernels/transpose/family.hpp"

namespace klab::transpose {

namespace {

Problem problem(int64_t rows, int64_t cols, DType t, int64_t misalign = 0) {
  Problem p;
  p.family = "transpose";
  p.shape.dims = {{"rows", rows}, {"cols", cols}};
  p.dtype = t;
  p.misalign = misalign;
  return p;
}

const std::vector<DType> kDtypes = {DType::f32, DType::bf16};

}  // namespace

Family make_transpose() {
  Family f;
  f.name = "transpose";
  f.summary = "out[c][r] = in[r][c] (row-major rows x cols in, cols x rows out)";
  f.dims = {"rows", "cols"};
  f.dtypes = kDtypes;
  f.ceiling = "copy";
  f.tensors = [](const Problem& p) {
    const int64_t n = checked_product({p.dim("rows"), p.dim("cols")}, "transpose elements");
    return std::vector<TensorSpec>{{"in", p.dtype, n, Role::input},
                                   {"out", p.dtype, n, Role::output}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    auto& out = ref["out"].value;
    out.resize(static_cast<size_t>(rows * cols));
    const Tensor& in = b["in"];
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in.host_at(r * cols + c);
  };
  f.counts = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("rows")) * static_cast<double>(p.dim("cols"));
    return Counts{0, 2 * n * dtype_size(p.dtype)};
  };
  // Exact: a transpose moves bits. Every output element is a copy of one input element, and
  // every f32/bf16 value is exact in the fp64 reference, so any difference at all is a bug.
  f.tolerance = [](const Problem&) { return Tolerance{0, 0, 0, 0}; };

  // 256 MiB and 1 GiB per tensor in f32: far above the 60 MiB L2.
  for (DType t : kDtypes)
    for (int64_t n : {int64_t(8192), int64_t(16384)}) f.headline.push_back(problem(n, n, t));

  // Awkward: a single element, odd sizes around a 32-wide tile, a column and a row (one tile
  // extent is 1, the other a prime), a non-multiple of every tile, multiples of the 16-byte vector
  // width that are not multiples of any tile (v05's vector path with partial tiles), a short
  // wide matrix, a small one on the 16-byte/TMA paths with partial tiles (small enough for
  // racecheck), and misaligned base pointers (v05 and v06 must fall back).
  for (DType t : kDtypes) {
    for (auto [r, c] : std::initializer_list<std::pair<int64_t, int64_t>>{{1, 1},
                                                                          {31, 33},
                                                                          {1000003, 1},
                                                                          {1, 1000003},
                                                                          {4097, 4095},
                                                                          {4104, 4088},
                                                                          {24, 100000},
                                                                          {520, 1000}})
      f.awkward.push_back(problem(r, c, t));
    f.awkward.push_back(problem(4097, 4095, t, 1));
    f.awkward.push_back(problem(1024, 1024, t, 1));
  }
  return f;
}

}  // namespace klab::transpose
