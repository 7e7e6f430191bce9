// v00 CPU: the same operation as a plain OpenMP loop on the host (runs without a GPU).
#include <algorithm>
#include <cmath>

#include "kernels/elementwise/family.hpp"
#include "klab/core/errors.hpp"

namespace klab::elementwise {

namespace {

template <class Fn>
void for_each(int64_t n, Fn&& fn) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

void launch_cpu(Op op, const Problem& p, Buffers& b) {
  const int64_t n = p.dim("n");
  const DType t = p.dtype;
  // Tensors looked up once, not per element: a name lookup per element made this rung 3x
  // slower (1016 ms -> 348 ms for vector_add at 2^26 on the 2-core build machine). The generic
  // per-element dtype conversion still costs about 5x against the CPU ladder's typed loops
  // (kernels/cpu), which are the CPU baseline; this rung is the family's plain host version.
  auto rd = [t](const void* data, int64_t i) {
    return static_cast<float>(load_as_double(data, t, i));
  };
  auto wr = [t](void* data, int64_t i, float v) { store_from_double(data, t, i, v); };
  switch (op) {
    case Op::add: {
      const void *a = b["a"].data, *x = b["b"].data;
      void* out = b["out"].data;
      for_each(n, [&](int64_t i) { wr(out, i, rd(a, i) + rd(x, i)); });
      break;
    }
    case Op::saxpy: {
      const void* x = b["x"].data;
      void* y = b["y"].data;
      for_each(n, [&](int64_t i) { wr(y, i, std::fma(kSaxpyAlpha, rd(x, i), rd(y, i))); });
      break;
    }
    case Op::relu: {
      const void* x = b["x"].data;
      void* out = b["out"].data;
      for_each(n, [&](int64_t i) { wr(out, i, std::max(rd(x, i), 0.f)); });
      break;
    }
    case Op::grayscale: {
      const void* rgb = b["rgb"].data;
      void* gray = b["gray"].data;
      for_each(n, [&](int64_t i) {
        wr(gray, i,
           std::fma(0.114f, rd(rgb, 3 * i + 2),
                    std::fma(0.587f, rd(rgb, 3 * i + 1), 0.299f * rd(rgb, 3 * i))));
      });
      break;
    }
  }
}

}  // namespace

Variant cpu_v00(Op op) {
  Variant v;
  v.info.id = std::string(op_family(op)) + ".v00_cpu";
  v.info.summary = "OpenMP loop on the host";
  v.info.dtypes = op == Op::grayscale ? std::vector<DType>{DType::f32}
                                      : std::vector<DType>{DType::f32, DType::bf16};
  v.info.device = Device::cpu;
  v.launch = [op](const Problem& p, Buffers& b, const LaunchArgs&) { launch_cpu(op, p, b); };
  return v;
}

}  // namespace klab::elementwise
