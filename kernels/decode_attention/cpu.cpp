// v00 CPU: decode attention as an OpenMP loop over query rows on the host (runs without a GPU),
// in fp32 like the GPU rungs: for each visible token j, its page from the block table, the score
// scale * q . k_j, the maximum, p_j = exp(s_j - max), the sum l, then o = (sum_j p_j v_j) / l and
// lse = max + log(l); a row without keys (an empty slot, or a speculative token before the
// sequence's first) writes o = 0 and lse = -inf. P stays fp32. An e4m3 cache's values are
// multiplied by their KV head's scale as they are read.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/decode_attention/family.hpp"

namespace klab::decode_attention {

namespace {

float bf16_at(const uint16_t* p, int64_t i) {
  const uint32_t w = static_cast<uint32_t>(p[i]) << 16;
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}

}  // namespace

Variant cpu_v00() {
  Variant v;
  v.info.id = "decode_attention.v00_cpu";
  v.info.summary = "OpenMP loop over query rows on the host, pages through the block table, fp32";
  v.info.dtypes = {DType::bf16, DType::e4m3};
  v.info.device = Device::cpu;
  v.can_implement = [](const Problem& p) {
    if (make_decode_attention().counts(p).flops > kCpuRungMaxFlops)
      return Status::no("decode_attention.v00_cpu: too slow above 2e9 flops on the host");
    return Status::yes();
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Dims s = dims_of(p);
    const auto* q = b.ptr<const uint16_t>("q");
    const auto* kc = b.ptr<const unsigned char>("k_cache");
    const auto* vc = b.ptr<const unsigned char>("v_cache");
    const bool e4m3 = p.dtype == DType::e4m3;
    const float* k_scale = e4m3 ? b.ptr<const float>("k_scale") : nullptr;
    const float* v_scale = e4m3 ? b.ptr<const float>("v_scale") : nullptr;
    // Element i of a row starting at element `row` of a cache.
    auto kv_at = [e4m3](const unsigned char* cache, int64_t row, int64_t i) {
      return e4m3 ? e4m3_bits_to_float(cache[row + i])
                  : bf16_at(reinterpret_cast<const uint16_t*>(cache), row + i);
    };
    const auto* lens = b.ptr<const int32_t>("seq_lens");
    const auto* table = b.ptr<const int32_t>("block_table");
    void* o = b["o"].data;
    float* lse = b.ptr<float>("lse");
    const float scale = static_cast<float>(s.scale());
    const int64_t d = s.d, cols = s.max_pages();
#pragma omp parallel
    {
      std::vector<float> pj, qf(static_cast<size_t>(d)), acc(static_cast<size_t>(d));
#pragma omp for schedule(dynamic, 1)
      for (int64_t r = 0; r < s.rows(); ++r) {
        const int64_t bi = r / (s.qlen * s.hq), t = (r / s.hq) % s.qlen, h = r % s.hq;
        const int64_t n = s.visible_keys(lens[bi], t), hk = h / s.group();
        // Token j's row of KV head hk: its page from the table, its slot in the page.
        auto row = [&](int64_t j) {
          const int64_t page = table[bi * cols + j / s.page];
          return ((page * s.hkv + hk) * s.page + j % s.page) * d;
        };
        const float ks = e4m3 ? k_scale[hk] : 1.f, vs = e4m3 ? v_scale[hk] : 1.f;
        for (int64_t i = 0; i < d; ++i) qf[i] = bf16_at(q, r * d + i);
        pj.resize(static_cast<size_t>(n));
        float mx = -INFINITY;
        for (int64_t j = 0; j < n; ++j) {
          const int64_t kr = row(j);
          float dot = 0.f;
          for (int64_t i = 0; i < d; ++i) dot += qf[i] * (kv_at(kc, kr, i) * ks);
          pj[j] = scale * dot;
          mx = std::max(mx, pj[j]);
        }
        float l = 0.f;
        for (int64_t j = 0; j < n; ++j) l += (pj[j] = std::exp(pj[j] - mx));
        std::fill(acc.begin(), acc.end(), 0.f);
        for (int64_t j = 0; j < n; ++j) {
          const int64_t vr = row(j);
          for (int64_t i = 0; i < d; ++i) acc[i] += pj[j] * (kv_at(vc, vr, i) * vs);
        }
        const float inv = n > 0 ? 1.f / l : 0.f;
        for (int64_t i = 0; i < d; ++i) store_from_double(o, DType::bf16, r * d + i, acc[i] * inv);
        lse[r] = n > 0 ? mx + std::log(l) : -INFINITY;
      }
    }
  };
  return v;
}

}  // namespace klab::decode_attention
