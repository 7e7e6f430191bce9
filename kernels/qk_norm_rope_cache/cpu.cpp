// v00 CPU: the norm, the rotation and the cache write as an OpenMP loop over tokens on the host
// (runs without a GPU), in fp32 like the GPU rungs: each token's cos and sin once (the phase
// reduced in fp64, rope.hpp; cos and sin of pi r in fp64, rounded to fp32), then per q head and,
// for a token with a slot, per k head: the sum of squares, 1 / sqrt(mean + eps), y = x * inv_rms
// * w kept in fp32, the rotated pairs rounded to bf16 into q_out or the k pool; v copied. With
// e4m3 pools, k's rotated pairs and v times their head's 1 / scale (fp32), rounded to e4m3
// (nearest, saturating).
#include <cmath>
#include <numbers>
#include <vector>

#include "kernels/qk_norm_rope_cache/family.hpp"
#include "kernels/qk_norm_rope_cache/rope.hpp"

namespace klab::qk_norm_rope_cache {

Variant cpu_v00() {
  Variant v;
  v.info.id = "qk_norm_rope_cache.v00_cpu";
  v.info.summary = "OpenMP loop over tokens on the host, fp32 (phases reduced in fp64)";
  v.info.dtypes = {DType::bf16, DType::e4m3};
  v.info.device = Device::cpu;
  v.can_implement = [](const Problem& p) {
    if (make_qk_norm_rope_cache().counts(p).flops > kCpuRungMaxFlops)
      return Status::no("qk_norm_rope_cache.v00_cpu: too slow above 2e9 flops on the host");
    return Status::yes();
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Dims s = dims_of(p);
    const auto* qkv = b.ptr<const uint16_t>("qkv");
    const auto* q_weight = b.ptr<const uint16_t>("q_weight");
    const auto* k_weight = b.ptr<const uint16_t>("k_weight");
    const auto* positions = b.ptr<const int32_t>("positions");
    const auto* slots = b.ptr<const int64_t>("slot_mapping");
    auto* q_out = b.ptr<uint16_t>("q_out");
    const bool e4m3 = p.dtype == DType::e4m3;
    auto* k_cache = b.ptr<unsigned char>("k_cache");  // bf16 or e4m3 elements
    auto* v_cache = b.ptr<unsigned char>("v_cache");
    const float* k_scale = e4m3 ? b.ptr<const float>("k_scale") : nullptr;
    const float* v_scale = e4m3 ? b.ptr<const float>("v_scale") : nullptr;
    // Element e of a pool gets x: bf16, or x times the head's 1 / scale in e4m3.
    auto put = [e4m3](unsigned char* pool, int64_t e, float x, float inv_scale) {
      if (e4m3)
        pool[e] = float_to_e4m3_bits(x * inv_scale);
      else
        reinterpret_cast<uint16_t*>(pool)[e] = float_to_bf16_bits(x);
    };
    const int64_t d = s.d, half = d / 2;
    const auto eps = static_cast<float>(kEps);
#pragma omp parallel
    {
      std::vector<float> cos(static_cast<size_t>(half)), sin(cos.size()), y(static_cast<size_t>(d));
#pragma omp for schedule(static)
      for (int64_t t = 0; t < s.tokens; ++t) {
        for (int64_t i = 0; i < half; ++i) {
          const auto r = static_cast<float>(
              rope_half_turns(positions[t], static_cast<int>(i), static_cast<int>(d)));
          cos[i] = static_cast<float>(std::cos(std::numbers::pi * r));
          sin[i] = static_cast<float>(std::sin(std::numbers::pi * r));
        }
        const int64_t slot = slots[t];
        for (int64_t h = 0; h < (slot >= 0 ? s.hq + s.hkv : s.hq); ++h) {
          const uint16_t* x = qkv + (t * s.heads() + h) * d;
          const uint16_t* w = h < s.hq ? q_weight : k_weight;
          float sum_sq = 0.f;
          for (int64_t i = 0; i < d; ++i) {
            y[i] = bf16_bits_to_float(x[i]);
            sum_sq += y[i] * y[i];
          }
          const float inv_rms = 1.f / std::sqrt(sum_sq / static_cast<float>(d) + eps);
          for (int64_t i = 0; i < d; ++i) y[i] = y[i] * inv_rms * bf16_bits_to_float(w[i]);
          for (int64_t i = 0; i < half; ++i) {  // the rotated pairs, back into y
            const float lo = y[i] * cos[i] - y[i + half] * sin[i];
            y[i + half] = y[i + half] * cos[i] + y[i] * sin[i];
            y[i] = lo;
          }
          if (h < s.hq) {
            for (int64_t i = 0; i < d; ++i)
              q_out[(t * s.hq + h) * d + i] = float_to_bf16_bits(y[i]);
            continue;
          }
          const int64_t kv = h - s.hq, at = pool_offset(slot, kv, s.hkv, s.page, d);
          const float inv_scale = e4m3 ? 1.f / k_scale[kv] : 1.f;
          for (int64_t i = 0; i < d; ++i) put(k_cache, at + i, y[i], inv_scale);
        }
        for (int64_t h = 0; slot >= 0 && h < s.hkv; ++h) {
          const uint16_t* x = qkv + (t * s.heads() + s.hq + s.hkv + h) * d;
          const int64_t at = pool_offset(slot, h, s.hkv, s.page, d);
          const float inv_scale = e4m3 ? 1.f / v_scale[h] : 1.f;
          for (int64_t i = 0; i < d; ++i) put(v_cache, at + i, bf16_bits_to_float(x[i]), inv_scale);
        }
      }
    }
  };
  return v;
}

}  // namespace klab::qk_norm_rope_cache
