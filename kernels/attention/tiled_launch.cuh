#pragma once
// What the tiled attention rungs (v02, v03) share on the host side: the geometry their kernels
// take, the tensors' typed pointers, and the enqueue-only launch of Rung's kernel over (query
// tiles, query heads, batch) for the problem's dtype, head dimension (64, 128, 256) and
// alignment (16-byte vector path or element copies), with its shared-memory opt-in done once per
// kernel. Rung provides Config<kD> (kBlockM, kThreads, kSmemBytes), kernel<T, kD, kVec>() and
// kName.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/attention/family.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/dispatch.cuh"
#include "klab/device/launch.hpp"
#include "klab/device/occupancy.cuh"
#include "klab/device/vec.cuh"

namespace klab::attention {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

/// A problem as the tiled kernels see it (B is the grid's z).
struct Geometry {
  int64_t nq, nkv, hq, hkv, group;
  int64_t causal_offset;  // nkv - nq: row n sees keys j <= n + offset (causal only)
  bool causal;
  float scale_log2;  // scale * log2(e)
};

/// The pointers of one problem's tensors in element type T.
template <class T>
struct Tensors {
  const T *q, *k, *v;
  T* o;
  float* lse;
  bool vec16() const {
    return device::aligned16(q) && device::aligned16(k) && device::aligned16(v) &&
           device::aligned16(o);
  }
};

/// The enqueue-only launch of Rung::kernel<T, kD, kVec>() (its shared-memory opt-in done here,
/// once per kernel).
template <class Rung, class T, int kD, bool kVec>
PreparedLaunch prepare_tiled_kernel(const Geometry& g, int64_t b, const Tensors<T>& t) {
  using C = typename Rung::template Config<kD>;
  constexpr auto kernel = Rung::template kernel<T, kD, kVec>();
  device::opt_in_dynamic_smem<kernel>(C::kSmemBytes);
  const dim3 grid(static_cast<unsigned>(device::ceil_div(g.nq, C::kBlockM)),
                  static_cast<unsigned>(g.hq), static_cast<unsigned>(b));
  return [=](Stream stream) {
    kernel<<<grid, C::kThreads, C::kSmemBytes, reinterpret_cast<cudaStream_t>(stream)>>>(
        t.q, t.k, t.v, t.o, t.lse, g);
    KLAB_CHECK_LAUNCH();
  };
}

template <class Rung, class T, int kD>
PreparedLaunch prepare_tiled_d(const Geometry& g, int64_t b, const Tensors<T>& t) {
  return t.vec16() ? prepare_tiled_kernel<Rung, T, kD, true>(g, b, t)
                   : prepare_tiled_kernel<Rung, T, kD, false>(g, b, t);
}

/// Rung's enqueue-only launch for problem p on buffers b.
template <class Rung>
PreparedLaunch prepare_tiled(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  const Geometry g{s.nq,      s.nkv,        s.hq,     s.hkv,
                   s.group(), s.nkv - s.nq, s.causal, static_cast<float>(s.scale()) * kLog2e};
  PreparedLaunch out;
  device::dispatch_among<__nv_bfloat16, __half>(p.dtype, Rung::kName, [&]<class T>() {
    const Tensors<T> t{b.ptr<T>("q"), b.ptr<T>("k"), b.ptr<T>("v"), b.ptr<T>("o"),
                       b.ptr<float>("lse")};
    out = s.d == 64    ? prepare_tiled_d<Rung, T, 64>(g, s.b, t)
          : s.d == 128 ? prepare_tiled_d<Rung, T, 128>(g, s.b, t)
                       : prepare_tiled_d<Rung, T, 256>(g, s.b, t);
  });
  return out;
}

}  // namespace klab::attention
