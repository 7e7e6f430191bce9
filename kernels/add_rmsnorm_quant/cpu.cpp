// v00 CPU: the add, the norm and the quantisation as an OpenMP loop over rows on the host (runs
// without a GPU), in fp32 like the GPU rungs: h = bf16(x + residual) written back, the row's sum
// of h^2, 1 / sqrt(mean + eps), y = h * inv_rms * weight, each slice's max |y|, its scale
// max / 448 (0 for an all-zero slice) and q = e4m3(y * 448 / max), rounded to nearest even and
// saturated (klab/core/dtype.hpp's encoder).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/add_rmsnorm_quant/family.hpp"

namespace klab::add_rmsnorm_quant {

Variant cpu_v00() {
  Variant v;
  v.info.id = "add_rmsnorm_quant.v00_cpu";
  v.info.summary = "OpenMP loop over rows on the host, fp32";
  v.info.dtypes = {DType::bf16};
  v.info.device = Device::cpu;
  v.can_implement = [](const Problem& p) {
    if (make_add_rmsnorm_quant().counts(p).flops > kCpuRungMaxFlops)
      return Status::no("add_rmsnorm_quant.v00_cpu: too slow above 2e9 flops on the host");
    return Status::yes();
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Dims s = dims_of(p);
    const auto* x = b.ptr<const uint16_t>("x");
    const auto* res = b.ptr<const uint16_t>("residual");
    const auto* w = b.ptr<const uint16_t>("weight");
    auto* h_out = b.ptr<uint16_t>("residual_out");
    auto* q = b.ptr<uint8_t>("q");
    auto* scales = b.ptr<float>("scales");
    const int64_t n = s.hidden, span = s.span();
    const auto eps = static_cast<float>(kEps), e4m3_max = static_cast<float>(kE4m3Max);
#pragma omp parallel
    {
      std::vector<float> y(static_cast<size_t>(n));
#pragma omp for schedule(static)
      for (int64_t r = 0; r < s.tokens; ++r) {
        const int64_t base = r * n;
        float sum_sq = 0.f;
        for (int64_t i = 0; i < n; ++i) {
          const uint16_t bits = float_to_bf16_bits(bf16_bits_to_float(x[base + i]) +
                                                   bf16_bits_to_float(res[base + i]));
          h_out[base + i] = bits;
          y[i] = bf16_bits_to_float(bits);
          sum_sq += y[i] * y[i];
        }
        const float inv_rms = 1.f / std::sqrt(sum_sq / static_cast<float>(n) + eps);
        for (int64_t i = 0; i < n; ++i) y[i] = y[i] * inv_rms * bf16_bits_to_float(w[i]);
        for (int64_t g = 0; g < s.groups(); ++g) {
          float amax = 0.f;
          for (int64_t i = g * span; i < (g + 1) * span; ++i)
            amax = std::max(amax, std::fabs(y[i]));
          const float inv_scale = amax > 0.f ? e4m3_max / amax : 0.f;
          scales[r * s.groups() + g] = amax / e4m3_max;
          for (int64_t i = g * span; i < (g + 1) * span; ++i)
            q[base + i] = float_to_e4m3_bits(y[i] * inv_scale);
        }
      }
    }
  };
  return v;
}

}  // namespace klab::add_rmsnorm_quant
