#pragma once
// The per-KV-head scales of an e4m3 KV cache, one builder for the families that read such a cache
// (decode_attention) and that write one (qk_norm_rope_cache): k_scale and v_scale, Hkv fp32 each;
// KV head h's keys are k_cache x k_scale[h] and its values v_cache x v_scale[h] (the static
// per-head scales of a served model's FP8 cache).
#include <cmath>
#include <cstdint>

#include "klab/core/dtype.hpp"
#include "klab/core/rng.hpp"
#include "klab/harness/buffers.hpp"

namespace klab {

/// 2^u for u drawn uniformly from [-2, 1] per KV head, from the seed: a rung that ignores a
/// scale, or takes another head's, is off by percents. The seed is mixed before the heads are
/// counted onto it: a family's tensors get consecutive seeds, and k_scale's head h + 1 would
/// otherwise be v_scale's head h.
inline void build_kv_scales(Tensor& t, uint64_t seed) {
  const uint64_t base = splitmix64(seed ^ 0x6b76u);
  for (int64_t h = 0; h < t.spec.numel; ++h) {
    const double u = static_cast<double>(splitmix64(base + static_cast<uint64_t>(h)) >> 11) /
                     static_cast<double>(uint64_t(1) << 53);
    store_from_double(t.host.data(), DType::f32, h, static_cast<float>(std::exp2(-2.0 + 3.0 * u)));
  }
}

}  // namespace klab
