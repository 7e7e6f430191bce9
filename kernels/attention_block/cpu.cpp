// v00 CPU: the block from the families' CPU rungs (hgemm, qk_norm_rope_cache and
// decode_attention v00) and the norm on the host, fp32 arithmetic as the GPU rungs', wired
// exactly as the GPU rungs are (compose.cpp): runs without a GPU, so the wiring is checked in CI.
#include <cmath>

#include "kernels/attention_block/compose.hpp"
#include "kernels/decode_attention/family.hpp"
#include "kernels/hgemm/family.hpp"
#include "kernels/qk_norm_rope_cache/family.hpp"

namespace klab::attention_block {

namespace {

// h = bf16(fp32(x + residual)); y = bf16(h * (1 / sqrtf(mean(h^2) + eps)) * w), fp32 sums.
void norm_host(const NormArgs& a, Stream) {
  for (int64_t t = 0; t < a.tokens; ++t) {
    const int64_t row = t * a.hidden;
    float sum_sq = 0;
    for (int64_t i = 0; i < a.hidden; ++i) {
      const auto x = static_cast<float>(load_as_double(a.x, DType::bf16, row + i));
      const auto r = static_cast<float>(load_as_double(a.residual, DType::bf16, row + i));
      store_from_double(a.residual_out, DType::bf16, row + i, x + r);
      const auto h = static_cast<float>(load_as_double(a.residual_out, DType::bf16, row + i));
      sum_sq += h * h;
    }
    const float inv_rms = 1.f / std::sqrt(sum_sq / static_cast<float>(a.hidden) + float(kEps));
    for (int64_t i = 0; i < a.hidden; ++i) {
      const auto h = static_cast<float>(load_as_double(a.residual_out, DType::bf16, row + i));
      const auto w = static_cast<float>(load_as_double(a.weight, DType::bf16, i));
      store_from_double(a.y, DType::bf16, row + i, h * inv_rms * w);
    }
  }
}

}  // namespace

Recipe cpu_recipe() {
  Recipe r;
  r.norm = norm_host;
  r.gemm = hgemm::cpu_v00;
  r.qk = qk_norm_rope_cache::cpu_v00;
  r.attention = decode_attention::cpu_v00;
  r.host = true;
  return r;
}

Variant cpu_v00() {
  Variant v = block_variant(
      "v00_cpu", "the families' CPU rungs wired as the GPU rungs are, on the host", cpu_recipe());
  const auto steps = v.can_implement;
  v.can_implement = [steps](const Problem& p) -> Status {
    if (make_attention_block().counts(p).flops > kCpuRungMaxFlops)
      return Status::no("attention_block.v00_cpu: too slow above 2e9 flops on the host");
    return steps(p);
  };
  return v;
}

}  // namespace klab::attention_block
