// v02 vertical strip: each thread computes kRows = 4 vertically adjacent outputs of one column,
// in a grid-stride loop over one full wave of blocks.
// Adds over v01:
//  - row reuse: the strip's (kRows - 1) * s + k input rows are each loaded once and reduced over
//    the window's k columns once; a row shared by overlapping windows (k > s) feeds every output
//    that covers it. Loads per 4 outputs: 16 for k=2,s=2 (as v01), 27 for k=3,s=2 (v01: 36),
//    18 for k=3,s=1 (v01: 36).
//  - memory-level parallelism: for the common windows (k, s) = (2, 2), (3, 2), (3, 1) the window
//    is a compile-time constant, the loops unroll into one branch-free block and the loads of
//    the strip (16-27) can all be in flight at once, where v01 has k = 2-3 per thread (ptxas:
//    32 registers for 2x2, ~43 for 3x3).
//  - cheap indexing: 32-bit index math when every tensor has < 2^30 elements, and two divisions
//    per 4 outputs (v01: two emulated 64-bit divisions per output).
//  - read-only path (__ldg) and a grid-stride loop over one full wave of blocks, sized from the
//    kernel's measured occupancy (no block churn, no grid-size limit, no partial second wave).
// A warp still covers 32 adjacent output columns of one strip, so every load instruction reads a
// contiguous (stride-s) run of one input row and every store writes 32 adjacent outputs: coalesced
// without vector loads, hence no alignment requirement.
// Expected bottleneck: DRAM bandwidth. Predicted ~85-90% of the copy ceiling on the headline
// shapes, against ~70-80% for v01 on 2x2/2 and less for v01 on the overlapping 3x3/2.
// Requirements: none (any shape, any alignment).
#include <algorithm>
#include "klab/device/occupancy.cuh"

#include "kernels/maxpool/rung.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::maxpool {

namespace {

inline constexpr int kRows = 4;  // outputs per thread, stacked vertically

template <class Index>
struct StripArgs {
  Index h, w, ho, wo, k, s, p;
  Index strips;  // ceil(ho / kRows) strips per plane
  Index items;   // n * c * strips * wo: one (plane, strip, column) per loop iteration
};

// kK, kS > 0: the window and stride are compile-time constants; 0: taken from the arguments.
template <class T, class Index, int kK, int kS>
__global__ void __launch_bounds__(1024)
    strip_pool(const T* __restrict__ x, T* __restrict__ y, StripArgs<Index> a) {
  const Index k = kK > 0 ? Index(kK) : a.k;
  const Index s = kS > 0 ? Index(kS) : a.s;
  const Index span = (kRows - 1) * s + k;  // input rows under the strip's kRows windows
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index item = Index(blockIdx.x) * blockDim.x + threadIdx.x; item < a.items; item += stride) {
    const Index ow = item % a.wo, t = item / a.wo;
    const Index oh0 = (t % a.strips) * kRows, plane = t / a.strips;
    const Index ih0 = oh0 * s - a.p, iw0 = ow * s - a.p;
    const T* xp = x + plane * a.h * a.w;  // (h, w)

    float acc[kRows];
#pragma unroll
    for (int j = 0; j < kRows; ++j) acc[j] = -INFINITY;  // padded cells are skipped: -inf
    // Constant windows keep the full (unrolled) ranges; the generic path clips its loops to the
    // image so that windows made mostly of padding cost nothing. Every load reads a clamped,
    // always-valid address and a select drops cells outside the image: no branch guards a load,
    // so the unrolled loads can all be issued before the first max.
    const Index r_lo = kK > 0 ? Index(0) : max(Index(0), -ih0),
                r_hi = kK > 0 ? span : min(span, a.h - ih0);
    const Index c_lo = kK > 0 ? Index(0) : max(Index(0), -iw0),
                c_hi = kK > 0 ? k : min(k, a.w - iw0);
#pragma unroll
    for (Index r = r_lo; r < r_hi; ++r) {
      const Index ih = ih0 + r;
      const bool row_in = (ih >= 0) & (ih < a.h);
      const T* row = xp + min(max(ih, Index(0)), a.h - 1) * a.w;
      float row_max = -INFINITY;
#pragma unroll
      for (Index kw = c_lo; kw < c_hi; ++kw) {
        const Index iw = iw0 + kw;
        const float v = device::to_float(__ldg(row + min(max(iw, Index(0)), a.w - 1)));
        const bool in = row_in & (iw >= 0) & (iw < a.w);  // bitwise: a select, not a branch
        row_max = fmaxf(row_max, in ? v : -INFINITY);
      }
      // Output j of the strip covers strip rows [j*s, j*s + k).
#pragma unroll
      for (int j = 0; j < kRows; ++j)
        if (r >= j * s && r < j * s + k) acc[j] = fmaxf(acc[j], row_max);
    }
#pragma unroll
    for (int j = 0; j < kRows; ++j)
      if (oh0 + j < a.ho) y[(plane * a.ho + oh0 + j) * a.wo + ow] = device::from_float<T>(acc[j]);
  }
}

// One full wave of blocks, sized from the kernel's real occupancy: the unrolled 3x3 strips use
// ~43 registers, so fewer blocks fit per SM than max_threads_per_sm / block suggests, and a grid
// sized on that guess would run a second, partial wave.
template <class T, class Index, int kK, int kS>
void launch_window(const StripArgs<Index>& a, const T* x, T* y, int block, cudaStream_t stream) {
  const auto kernel = strip_pool<T, Index, kK, kS>;
  kernel<<<device::grid_resident_wave(device_info().sm_count, kernel, a.items, block), block, 0,
           stream>>>(x, y, a);
}

template <class T, class Index>
void launch_typed(const Geometry& g, const T* x, T* y, int block, cudaStream_t stream) {
  const int64_t strips = device::ceil_div(g.ho, kRows);
  const int64_t items = g.n * g.c * strips * g.wo;
  const StripArgs<Index> a{Index(g.h), Index(g.w), Index(g.ho),   Index(g.wo), Index(g.k),
                           Index(g.s), Index(g.p), Index(strips), Index(items)};
  if (g.k == 2 && g.s == 2)
    launch_window<T, Index, 2, 2>(a, x, y, block, stream);
  else if (g.k == 3 && g.s == 2)
    launch_window<T, Index, 3, 2>(a, x, y, block, stream);
  else if (g.k == 3 && g.s == 1)
    launch_window<T, Index, 3, 1>(a, x, y, block, stream);
  else
    launch_window<T, Index, 0, 0>(a, x, y, block, stream);
}

}  // namespace

Variant gpu_v02_vertical_strip() {
  return gpu_variant(
      "v02_vertical_strip",
      "4 outputs per thread stacked vertically: rows loaded once, unrolled, grid-stride",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int block = device::block_or(args.block_threads, kDefaultBlock);
        const Geometry g = geometry(p);
        // 32-bit indices when every index the kernel forms (the padded last strip, the window span
        // and one grid stride past the end included) stays far below 2^31.
        constexpr int64_t k32 = int64_t(1) << 30;
        const bool small = g.x_numel() < k32 && g.y_numel() < k32 &&
                           g.y_numel() + kRows * g.n * g.c * g.wo < k32 &&
                           std::max({g.k, g.s, g.p}) < (int64_t(1) << 20);
        device::dispatch_float(p.dtype, [&]<class T>() {
          if (small)
            launch_typed<T, int32_t>(g, b.ptr<const T>("x"), b.ptr<T>("y"), block, stream_of(args));
          else
            launch_typed<T, int64_t>(g, b.ptr<const T>("x"), b.ptr<T>("y"), block, stream_of(args));
        });
        KLAB_CHECK_LAUNCH();
      });
}

}  // namespace klab::maxpool
