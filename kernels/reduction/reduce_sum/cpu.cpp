// v00 CPU: the sum as an OpenMP loop on the host (runs without a GPU). fp32 accumulation like
// the GPU rungs: each thread sums blocks of 1024 values, then adds the block sums, so no fp32
// chain is longer than the number of blocks.
#include <algorithm>

#include "kernels/reduction/family.hpp"

namespace klab::reduction {

Variant sum_v00_cpu() {
  Variant v;
  v.info.id = "reduce_sum.v00_cpu";
  v.info.summary = "OpenMP loop on the host, fp32 blocks of 1024";
  v.info.dtypes = {DType::f32, DType::bf16};
  v.info.device = Device::cpu;
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    constexpr int64_t kBlock = 1024;
    const int64_t n = p.dim("n");
    const void* x = b["x"].data;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    float total = 0.f;
#pragma omp parallel for reduction(+ : total) schedule(static)
    for (int64_t k = 0; k < blocks; ++k) {
      float s = 0.f;
      for (int64_t i = k * kBlock, end = std::min(n, i + kBlock); i < end; ++i)
        s += static_cast<float>(load_as_double(x, p.dtype, i));
      total += s;
    }
    *b.ptr<float>("sum") = total;
  };
  return v;
}

}  // namespace klab::reduction
