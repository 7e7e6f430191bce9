#pragma once
// Shared plumbing of the hgemm GPU rungs: binding buffers to kernel arguments, the variant record,
// and the choice between the 16-byte (vector) and element-wise copy paths.
#include <climits>
#include <string>

#include "kernels/hgemm/family.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/dispatch.cuh"
#include "klab/device/launch.hpp"
#include "klab/device/vec.cuh"

namespace klab::hgemm {

/// The operands of one GEMM in device element type T (__nv_bfloat16 or __half).
template <class T>
struct GemmArgs {
  const T* a;  // (m, k) row-major
  const T* b;  // (k, n) row-major, rows ldb_or_n() elements apart
  T* c;        // (m, n) row-major
  int m, n, k;
  int ldb = 0;  // B's row pitch in elements where it differs from n (v24's padded copy): read by
                // make_b_panel_map alone, so only the wgmma rungs' TMA path may set it

  int64_t ldb_or_n() const { return ldb > 0 ? ldb : n; }

  /// 16-byte rows: every row of A, B and C starts on a 16-byte boundary, so tiles move as
  /// whole 8-element chunks (cp.async 16 / LDG.128) and an edge chunk is either all in or all out.
  bool vec16() const {
    return k % 8 == 0 && n % 8 == 0 && ldb % 8 == 0 && device::aligned16(a) &&
           device::aligned16(b) && device::aligned16(c);
  }
};

/// Calls fn(GemmArgs<T>) with T the device type of the problem's dtype (bf16 or f16).
template <class Fn>
void with_gemm_args(const Problem& p, Buffers& b, Fn&& fn) {
  auto bind = [&]<class T>() {
    fn(GemmArgs<T>{b.ptr<T>("a"), b.ptr<T>("b"), b.ptr<T>("c"), static_cast<int>(p.dim("m")),
                   static_cast<int>(p.dim("n")), static_cast<int>(p.dim("k"))});
  };
  device::dispatch_among<__nv_bfloat16, __half>(p.dtype, "hgemm", bind);
}

inline cudaStream_t stream_of(const LaunchArgs& a) {
  return reinterpret_cast<cudaStream_t>(a.stream);
}

/// Refuses problems whose (M-tiles) grid dimension would exceed gridDim.y's 65535.
inline Status fits_grid_y(const Problem& p, int block_m) {
  if (device::ceil_div(p.dim("m"), block_m) <= 65535) return Status::yes();
  return Status::no("m = " + std::to_string(p.dim("m")) + " needs more than 65535 row tiles of " +
                    std::to_string(block_m));
}

/// A GPU rung of hgemm: sm_80+ (bf16 mma/wmma, ldmatrix, cp.async), bf16 and f16.
inline Variant gpu_variant(
    const std::string& rung, const std::string& summary,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch) {
  return gpu_variant_of("hgemm." + rung, summary, 80, {DType::bf16, DType::f16}, std::move(launch));
}

}  // namespace klab::hgemm
