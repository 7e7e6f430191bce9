// v00 CPU: the same pooling as a plain OpenMP loop on the host (runs without a GPU).
// One output row per iteration; each window is clipped to the image, so padding never wins.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/maxpool/family.hpp"

namespace klab::maxpool {

namespace {

float load(const float* x, int64_t i) { return x[i]; }
float load(const uint16_t* x, int64_t i) { return bf16_bits_to_float(x[i]); }
void store(float* y, int64_t i, float v) { y[i] = v; }
void store(uint16_t* y, int64_t i, float v) { y[i] = float_to_bf16_bits(v); }  // exact: v is a bf16

template <class T>
void pool(const Geometry& g, const T* x, T* y) {
  const int64_t rows = g.n * g.c * g.ho;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t plane = r / g.ho, oh = r % g.ho;
    const int64_t h0 = std::max<int64_t>(oh * g.s - g.p, 0),
                  h1 = std::min(oh * g.s - g.p + g.k, g.h);
    const T* xp = x + plane * g.h * g.w;
    for (int64_t ow = 0; ow < g.wo; ++ow) {
      const int64_t w0 = std::max<int64_t>(ow * g.s - g.p, 0),
                    w1 = std::min(ow * g.s - g.p + g.k, g.w);
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t ih = h0; ih < h1; ++ih)
        for (int64_t iw = w0; iw < w1; ++iw) m = std::max(m, load(xp, ih * g.w + iw));
      store(y, r * g.wo + ow, m);
    }
  }
}

}  // namespace

Variant cpu_v00() {
  Variant v;
  v.info.id = "maxpool.v00_cpu";
  v.info.summary = "OpenMP loop on the host, one output row per iteration";
  v.info.dtypes = {DType::f32, DType::bf16};
  v.info.device = Device::cpu;
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Geometry g = geometry(p);
    if (p.dtype == DType::f32)
      pool(g, b.ptr<const float>("x"), b.ptr<float>("y"));
    else
      pool(g, b.ptr<const uint16_t>("x"), b.ptr<uint16_t>("y"));
  };
  return v;
}

}  // namespace klab::maxpool
