// v00 CPU: attention as an OpenMP loop over query rows on the host (runs without a GPU), in fp32
// like the GPU rungs: the row's scores scale * q . k_j, their maximum, p_j = exp(s_j - max), the
// sum l, then o = (sum_j p_j v_j) / l and lse = max + log(l); a row with no visible key writes
// o = 0 and lse = -inf. P is not rounded to the input type (the GPU rungs that feed it to a
// tensor-core product do; the tolerance covers both). e4m3 inputs are taken times their
// tensors' scales (fp32 products), o written in bf16.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {

// A bf16/f16 tensor as fp32 (exact); an e4m3 one times its scale (rounded to fp32).
std::vector<float> as_float(const void* data, DType t, int64_t n, float scale = 1.f) {
  std::vector<float> out(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(load_as_double(data, t, i)) * scale;
  return out;
}

// The scale of input `name` of an e4m3 problem (1 otherwise), from the device buffer's scalar.
float scale_of(const Buffers& b, const char* name, DType t) {
  return t == DType::e4m3 ? static_cast<float>(load_as_double(b[name].data, DType::f32, 0)) : 1.f;
}

}  // namespace

Variant cpu_v00() {
  Variant v;
  v.info.id = "attention.v00_cpu";
  v.info.summary = "OpenMP loop over query rows on the host, fp32, safe softmax";
  v.info.dtypes = {DType::bf16, DType::f16, DType::e4m3};
  v.info.device = Device::cpu;
  v.can_implement = [](const Problem& p) {
    const Dims s = dims_of(p);
    const double flops = 4.0 * static_cast<double>(s.b * s.hq * s.d) * visible_pairs(s);
    if (flops > kCpuRungMaxFlops)
      return Status::no("attention.v00_cpu: too slow above 1e10 flops on the host");
    return Status::yes();
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Dims s = dims_of(p);
    const DType t = p.dtype;
    const std::vector<float> q =
        as_float(b["q"].data, t, b["q"].spec.numel, scale_of(b, "q_scale", t));
    const std::vector<float> k =
        as_float(b["k"].data, t, b["k"].spec.numel, scale_of(b, "k_scale", t));
    const std::vector<float> vv =
        as_float(b["v"].data, t, b["v"].spec.numel, scale_of(b, "v_scale", t));
    void* o = b["o"].data;
    const DType ot = output_dtype(t);
    float* lse = b.ptr<float>("lse");
    const float scale = static_cast<float>(s.scale());
    const int64_t d = s.d;
#pragma omp parallel
    {
      std::vector<float> pj(static_cast<size_t>(s.nkv)), acc(static_cast<size_t>(d));
#pragma omp for schedule(dynamic, 8)
      for (int64_t r = 0; r < s.rows(); ++r) {
        const int64_t bi = r / (s.nq * s.hq), n = (r / s.hq) % s.nq, h = r % s.hq;
        const int64_t hk = h / s.group(), nvis = s.visible_keys(n);
        const float* qr = q.data() + r * d;
        auto kv = [&](const std::vector<float>& x, int64_t j) {
          return x.data() + ((bi * s.nkv + j) * s.hkv + hk) * d;
        };
        float mx = -INFINITY;
        for (int64_t j = 0; j < nvis; ++j) {
          const float* kr = kv(k, j);
          float dot = 0.f;
          for (int64_t i = 0; i < d; ++i) dot += qr[i] * kr[i];
          pj[j] = scale * dot;
          mx = std::max(mx, pj[j]);
        }
        float l = 0.f;
        for (int64_t j = 0; j < nvis; ++j) l += (pj[j] = std::exp(pj[j] - mx));
        std::fill(acc.begin(), acc.end(), 0.f);
        for (int64_t j = 0; j < nvis; ++j) {
          const float* vr = kv(vv, j);
          for (int64_t i = 0; i < d; ++i) acc[i] += pj[j] * vr[i];
        }
        const float inv = nvis > 0 ? 1.f / l : 0.f;
        for (int64_t i = 0; i < d; ++i) store_from_double(o, ot, r * d + i, acc[i] * inv);
        lse[(bi * s.hq + h) * s.nq + n] = nvis > 0 ? mx + std::log(l) : -INFINITY;
      }
    }
  };
  return v;
}

}  // namespace klab::attention
