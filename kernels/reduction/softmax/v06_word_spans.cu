// v06 word spans: bf16 rows whose length no 16-byte vector divides (255, 257, 511, ...) are read
// and written as whole 4-byte words across the rows of a warp, instead of one 2-byte access per
// element. A warp owns a span of kR rows (kR = 2 when cols is odd, 1 when it is even), which
// starts on a 4-byte boundary (an even row times an odd cols is even) and holds kR * cols / 2
// words; lane l takes words l, l + 32, ...: each load and store instruction of the warp moves 128
// contiguous bytes, as v05's f32 scalar path does (83% of copy at 255 columns). An element's row
// is its index against cols (one compare), the max and the sum are kept per row of the span in
// two registers and reduced over the whole warp (5 shuffles each), and the output is packed back
// into words. Every other case (f32, bf16 rows of whole vectors, rows under 64 columns, a base
// not 4-byte aligned) runs v05 unchanged.
// Adds over v05: v05's bf16 scalar path (255 columns: 16 lanes x 16 elements per row, two rows a
// warp) issues a 2-byte load and store per element, each warp instruction touching 64 bytes in
// two or three sectors: twice the memory instructions per byte of f32 and partial sectors at
// every row edge. Here the instructions per byte are f32's and each instruction's 128 bytes are
// contiguous; the cost is two selects per element for the row masks.
// Expected bottleneck: DRAM bandwidth, with the same bytes in flight per lane as v05 (32 bytes).
// Prediction (written before it ran), 2^20 x 255 bf16 on an H200: 78-86% of copy (v05: 69.1%),
// i.e. about v05's f32 scalar level at the same instructions per byte; unchanged elsewhere.
// Measured (2026-12-02_8aee337_harness_p10_ceilings): far below v05, the loads serialised behind
// their uses (above); rebuilt with every load of a span issued before any use, not yet measured.
// Requirements: as v05 (cols <= 1024; any rows and alignment).
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/reduction/softmax/rung.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/vec.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::reduction {

namespace {

constexpr int kThreads = 256;
constexpr int kMinCols = 64;  // below: v05's lane groups keep several rows a warp busy

__device__ __forceinline__ float warp_all_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_all_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// One 4-byte word of two bf16, as raw bits (the conversion is left to the caller).
__device__ __forceinline__ uint32_t ld_word(const __nv_bfloat162* p) {
  return __ldg(reinterpret_cast<const unsigned int*>(p));
}

/// kR rows per warp (1 or 2), kW words per lane (kW * 32 >= kR * cols / 2).
template <int kR, int kW>
__global__ void __launch_bounds__(kThreads) word_span_softmax(SoftmaxArgs<__nv_bfloat16> a) {
  const int cols = static_cast<int>(a.cols);
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
  const int64_t warp = int64_t(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;

  for (int64_t row0 = warp * kR; row0 < a.rows; row0 += warps * kR) {
    // Elements of the span: kR rows, or one at the end of an odd row count (then the last word
    // may hold a single element, the tensor's last, read and written alone).
    const int n = (a.rows - row0 < kR ? static_cast<int>(a.rows - row0) : kR) * cols;
    const __nv_bfloat16* x = a.x + row0 * a.cols;
    __nv_bfloat16* y = a.y + row0 * a.cols;
    const auto* xw = reinterpret_cast<const __nv_bfloat162*>(x);
    auto* yw = reinterpret_cast<__nv_bfloat162*>(y);

    // Every load of the span first, into raw words, and only then any use of them: with the
    // conversion inside each load's branch (8aee337) the compiler placed each word's first use
    // right behind its load, so a lane waited out eight DRAM round trips one after another (the
    // SASS: LDG, then IMAD.U32 on its register, eight times), and the kernel read 35.9% of copy.
    uint32_t raw[kW];
#pragma unroll
    for (int k = 0; k < kW; ++k) {
      const int e = 2 * (k * 32 + lane);
      raw[k] = e + 1 < n ? ld_word(xw + k * 32 + lane) : 0u;
    }
    float lo[kW], hi[kW];  // the word's two elements: x, then exp(x - max of its row)
    float m0 = -INFINITY, m1 = -INFINITY;
#pragma unroll
    for (int k = 0; k < kW; ++k) {
      const int e = 2 * (k * 32 + lane);  // the word's first element
      if (e + 1 < n) {
        lo[k] = __uint_as_float(raw[k] << 16);  // bf16 -> fp32: the same bits, shifted
        hi[k] = __uint_as_float(raw[k] & 0xffff0000u);
      } else {  // past the span, or the tensor's last element alone in its word
        lo[k] = e < n ? __bfloat162float(x[e]) : -INFINITY;
        hi[k] = -INFINITY;
      }
      if constexpr (kR == 1) {
        m0 = fmaxf(m0, fmaxf(lo[k], hi[k]));
      } else {
        m0 = fmaxf(m0, fmaxf(e < cols ? lo[k] : -INFINITY, e + 1 < cols ? hi[k] : -INFINITY));
        m1 = fmaxf(m1, fmaxf(e < cols ? -INFINITY : lo[k], e + 1 < cols ? -INFINITY : hi[k]));
      }
    }
    m0 = warp_all_max(m0);                         // finite: the span's first row has elements
    if constexpr (kR == 2) m1 = warp_all_max(m1);  // -inf when the span holds one row
    float s0 = 0.f, s1 = 0.f;
#pragma unroll
    for (int k = 0; k < kW; ++k) {
      const int e = 2 * (k * 32 + lane);
      if constexpr (kR == 1) {
        s0 += (lo[k] = exp_shifted(lo[k] - m0));  // padding: exp(-inf) = 0
        s0 += (hi[k] = exp_shifted(hi[k] - m0));
      } else {
        // Padding sits past the span's last row: with one row, m1 = -inf and its exp is NaN, but
        // it is neither summed into row 0 nor stored.
        const bool r_lo = e >= cols, r_hi = e + 1 >= cols;
        lo[k] = exp_shifted(lo[k] - (r_lo ? m1 : m0));
        hi[k] = exp_shifted(hi[k] - (r_hi ? m1 : m0));
        s0 += (r_lo ? 0.f : lo[k]) + (r_hi ? 0.f : hi[k]);
        s1 += (r_lo ? lo[k] : 0.f) + (r_hi ? hi[k] : 0.f);
      }
    }
    const float inv0 = 1.f / warp_all_sum(s0);
    const float inv1 = kR == 2 ? 1.f / warp_all_sum(s1) : 0.f;
#pragma unroll
    for (int k = 0; k < kW; ++k) {
      const int e = 2 * (k * 32 + lane);
      const float o_lo = lo[k] * (kR == 2 && e >= cols ? inv1 : inv0);
      const float o_hi = hi[k] * (kR == 2 && e + 1 >= cols ? inv1 : inv0);
      if (e + 1 < n)
        yw[k * 32 + lane] = __floats2bfloat162_rn(o_lo, o_hi);
      else if (e < n)
        y[e] = __float2bfloat16(o_lo);
    }
  }
}

template <int kR, int kW>
void launch_span(SoftmaxArgs<__nv_bfloat16> a, cudaStream_t st) {
  const auto kernel = word_span_softmax<kR, kW>;
  const int64_t threads = device::ceil_div(a.rows, kR) * 32;
  kernel<<<device::grid_resident_wave(device_info().sm_count, kernel, threads, kThreads), kThreads,
           0, st>>>(a);
}

template <int kR>
void dispatch_words(SoftmaxArgs<__nv_bfloat16> a, cudaStream_t st) {
  const int64_t words = kR * a.cols / 2;  // <= 1024
  if (words <= 4 * 32)
    launch_span<kR, 4>(a, st);
  else if (words <= 8 * 32)
    launch_span<kR, 8>(a, st);
  else if (words <= 16 * 32)
    launch_span<kR, 16>(a, st);
  else
    launch_span<kR, 32>(a, st);
}

template <class T>
void dispatch(SoftmaxArgs<T> a, cudaStream_t st) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const bool words = a.cols % device::Vec16<T>::kN != 0 && a.cols >= kMinCols &&
                       a.cols <= kSoftmaxWarpRowsMaxCols &&
                       reinterpret_cast<uintptr_t>(a.x) % 4 == 0 &&
                       reinterpret_cast<uintptr_t>(a.y) % 4 == 0;
    if (words) return a.cols % 2 ? dispatch_words<2>(a, st) : dispatch_words<1>(a, st);
  }
  launch_warp_rows(a, st);
}

}  // namespace

Variant softmax_v06_word_spans() {
  Variant v = softmax_variant(
      "v06_word_spans",
      "v05, with bf16 rows off the vector width read and written as 4-byte words across row pairs",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        with_softmax_args(p, b, [&]<class T>(SoftmaxArgs<T> a) { dispatch(a, stream_of(args)); });
        KLAB_CHECK_LAUNCH();
      });
  v.can_implement = warp_rows_fit;
  return v;
}

}  // namespace klab::reduction
