#pragma once
// What the tiled attention rungs (v02, v03, v04) share on the host side: the geometry their
// kernels take, the tensors' typed pointers, the grid over (query tiles, query heads, batch), the
// dispatch on the problem's dtype and head dimension (64, 128, 256), and for the pointer-taking
// kernels (v02, v03) the enqueue-only launch for the alignment (16-byte vector path or element
// copies), with its shared-memory opt-in done once per kernel. Such a Rung provides Config<kD>
// (kBlockM, kThreads, kSmemBytes), kernel<T, kD, kVec>() and kName.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>

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
  // e4m3 problems (v12): Q's, K's and V's scales (one fp32 each, in device memory).
  const float* q_scale = nullptr;
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
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

/// The geometry of a problem.
inline Geometry geometry_of(const Dims& s) {
  return {s.nq,      s.nkv,        s.hq,     s.hkv,
          s.group(), s.nkv - s.nq, s.causal, static_cast<float>(s.scale()) * kLog2e};
}

/// The keys the query tile of rows [n0, n0 + block_m) needs: all, or under the causal mask up to
/// its last valid row's last key (0 when the mask leaves it none).
__host__ __device__ __forceinline__ int64_t tile_keys(const Geometry& g, int64_t n0, int block_m) {
  if (!g.causal) return g.nkv;
  const int64_t last_row = (n0 + block_m < g.nq ? n0 + block_m : g.nq) - 1;
  const int64_t last_key = last_row + g.causal_offset;
  return last_key < 0 ? 0 : (last_key + 1 < g.nkv ? last_key + 1 : g.nkv);
}

/// The grid of a tiled kernel with block_m query rows a block: (query tiles, query heads, batch).
inline dim3 tiled_grid(const Geometry& g, int64_t b, int block_m) {
  return dim3(static_cast<unsigned>(device::ceil_div(g.nq, block_m)), static_cast<unsigned>(g.hq),
              static_cast<unsigned>(b));
}

/// prepare.template operator()<T, kD>(geometry, batch, tensors) for problem p's dtype (bf16,
/// f16) and head dimension (64, 128, 256) on buffers b: what a rung's enqueue-only launch is made
/// from. name: the rung, for the dtype error.
template <class Prepare>
PreparedLaunch dispatch_tiled(const char* name, const Problem& p, Buffers& b, Prepare&& prepare) {
  const Dims s = dims_of(p);
  const Geometry g = geometry_of(s);
  PreparedLaunch out;
  device::dispatch_among<__nv_bfloat16, __half>(p.dtype, name, [&]<class T>() {
    const Tensors<T> t{b.ptr<T>("q"), b.ptr<T>("k"), b.ptr<T>("v"), b.ptr<T>("o"),
                       b.ptr<float>("lse")};
    out = s.d == 64    ? prepare.template operator()<T, 64>(g, s.b, t)
          : s.d == 128 ? prepare.template operator()<T, 128>(g, s.b, t)
                       : prepare.template operator()<T, 256>(g, s.b, t);
  });
  return out;
}

/// What every tiled rung refuses (name: the rung, as its messages start): D not 64, 128 or 256;
/// hq and b past the grid's y and z limits.
inline Status tiled_limits(const std::string& name, const Dims& s) {
  if (s.d != 64 && s.d != 128 && s.d != 256) return Status::no(name + ": d must be 64, 128 or 256");
  if (s.hq > 65535) return Status::no(name + ": hq above 65535 (grid y)");
  if (s.b > 65535) return Status::no(name + ": b above 65535 (grid z)");
  return Status::yes();
}

/// A tiled rung of bf16 and f16 whose launch and prepare step are both kPrepare(p, b), the
/// problem's enqueue-only launch (the caller adds can_implement).
template <PreparedLaunch (*kPrepare)(const Problem&, Buffers&)>
Variant tiled_variant(std::string id, std::string summary, int min_sm) {
  Variant v = gpu_variant_of(
      std::move(id), std::move(summary), min_sm, {DType::bf16, DType::f16},
      [](const Problem& p, Buffers& b, const LaunchArgs& args) { kPrepare(p, b)(args.stream); });
  v.prepare = [](const Problem& p, Buffers& b, const LaunchArgs&) { return kPrepare(p, b); };
  return v;
}

/// The enqueue-only launch of Rung::kernel<T, kD, kVec>() (its shared-memory opt-in done here,
/// once per kernel).
template <class Rung, class T, int kD, bool kVec>
PreparedLaunch prepare_tiled_kernel(const Geometry& g, int64_t b, const Tensors<T>& t) {
  using C = typename Rung::template Config<kD>;
  constexpr auto kernel = Rung::template kernel<T, kD, kVec>();
  device::opt_in_dynamic_smem<kernel>(C::kSmemBytes);
  const dim3 grid = tiled_grid(g, b, C::kBlockM);
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
  return dispatch_tiled(Rung::kName, p, b,
                        []<class T, int kD>(const Geometry& g, int64_t batch, const Tensors<T>& t) {
                          return prepare_tiled_d<Rung, T, kD>(g, batch, t);
                        });
}

}  // namespace klab::attention
