// v00 CPU: the transpose as a cache-blocked OpenMP loop on the host (runs without a GPU).
// It copies raw bits (4- or 2-byte words), so it is exact like every other rung.
#include <algorithm>
#include <cstdint>

#include "kernels/transpose/family.hpp"
#include "klab/core/errors.hpp"

namespace klab::transpose {

namespace {

template <class Word>
void transpose_blocked(const Word* in, Word* out, int64_t rows, int64_t cols) {
  constexpr int64_t kBlock = 64;  // a 64 x 64 block of 4-byte words is 16 KiB: fits in L1
  const int64_t tiles_r = (rows + kBlock - 1) / kBlock, tiles_c = (cols + kBlock - 1) / kBlock;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t tr = 0; tr < tiles_r; ++tr)
    for (int64_t tc = 0; tc < tiles_c; ++tc) {
      const int64_t r1 = std::min(rows, (tr + 1) * kBlock), c1 = std::min(cols, (tc + 1) * kBlock);
      for (int64_t c = tc * kBlock; c < c1; ++c)
        for (int64_t r = tr * kBlock; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
    }
}

}  // namespace

Variant cpu_v00() {
  Variant v;
  v.info.id = "transpose.v00_cpu";
  v.info.summary = "cache-blocked OpenMP loop on the host";
  v.info.dtypes = {DType::f32, DType::bf16};
  v.info.device = Device::cpu;
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    switch (dtype_size(p.dtype)) {
      case 4:
        transpose_blocked(b.ptr<const uint32_t>("in"), b.ptr<uint32_t>("out"), rows, cols);
        break;
      case 2:
        transpose_blocked(b.ptr<const uint16_t>("in"), b.ptr<uint16_t>("out"), rows, cols);
        break;
      default:
        throw Error("transpose.v00_cpu: unsupported element size");
    }
  };
  return v;
}

}  // namespace klab::transpose
