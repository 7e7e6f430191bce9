// v03 vector rows: each thread computes a tile of kRows output rows x kC output columns, where kC
// outputs of one row are exactly 16 bytes (8 bf16 or 4 f32), reading its input rows with 16-byte
// vector loads and writing each output row with one 16-byte store.
// Adds over v02: v02's loads are one element wide and stride s apart, so a warp's load moves
// 32 x 2 useful bytes in bf16 (64 in f32) and an input line needs k load instructions; the
// load/store instruction count per byte, not DRAM, bounds it, worst in bf16. Here one 16-byte
// load brings 8 bf16 (4 f32): a thread's kC outputs read kS whole vectors per input row
// (columns [c0, c0 + kC * kS), c0 = 16 * kS bytes aligned) plus the window's halo columns as
// scalars (kP on the left, k - s - p on the right; none for 2x2/2, one for 3x3/2 pad 1), which
// the neighbouring thread's vectors have just brought into L1. Per 16 bytes of output: 2x2/2
// issues kRows-independent loads of 4 x 16 bytes; bytes in flight per thread: 2x2/2 (kRows = 2):
// 4 rows x 32 bytes; 3x3/2 (kRows = 4): 9 rows x 32 bytes (+ halo).
// The window (k, s, p) is a compile-time constant on the vector path: 2x2/2/0 (kRows = 2) and
// 3x3/2/1 (kRows = 4, so the row shared by vertically adjacent windows is read once per 4 output
// rows, not once per 2). A thread's two vectors of one row are 32 bytes apart across the warp:
// the first load instruction misses every 32-byte sector of its 1 KiB span, the second hits
// them in L1 (loads through the non-coherent path, which allocates in L1).
// Expected bottleneck: DRAM bandwidth (read the input once, write the output once); the vertical
// overlap of 3x3/2 strips adds 1/8 of the input as L2 hits, not DRAM traffic.
// Requirements for the vector path: x 16-byte aligned, w * sizeof(T) a multiple of 16, window
// 2x2/2/0 or 3x3/2/1; the output is stored as vectors when y is aligned and wo * sizeof(T) is a
// multiple of 16, element by element otherwise. Anything else (other windows, odd widths,
// misaligned x) takes a scalar one-output-per-thread grid-stride path: correct, not fast.
#include <algorithm>
#include <cstdint>

#include "kernels/maxpool/rung.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/vec.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::maxpool {

namespace {

// Fixed block (not sweepable): __launch_bounds__ lets ptxas give the 3x3 tiles the registers
// they need (up to ~76), which a 1024-thread block could not have.
constexpr int kBlock = 256;

template <class Index>
struct TileArgs {
  Index h, w, ho, wo;
  Index strips;  // ceil(ho / kRows) strips of output rows per plane
  Index groups;  // ceil(wo / kC) groups of kC output columns per row
  Index items;   // n * c * strips * groups: one (plane, strip, group) per loop iteration
  bool vector_store;
};

// (kK, kS, kP): the window; kRows output rows per thread.
template <class T, class Index, int kK, int kS, int kP, int kRows>
__global__ void __launch_bounds__(kBlock)
    vector_pool(const T* __restrict__ x, T* __restrict__ y, TileArgs<Index> a) {
  using V = device::Vec16<T>;
  constexpr int kC = V::kN;                          // outputs per thread per row: 16 bytes
  constexpr int kRight = std::max(kK - kS - kP, 0);  // halo columns right of the vectors
  constexpr int kCols = kP + kC * kS + kRight;       // local column j = input column c0 - kP + j
  constexpr int kSpan = (kRows - 1) * kS + kK;       // input rows under the strip's windows
  static_assert(kP < kK && kS <= kK, "vector path: overlapping or touching windows only");
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index item = Index(blockIdx.x) * blockDim.x + threadIdx.x; item < a.items; item += stride) {
    const Index grp = item % a.groups, t = item / a.groups;
    const Index oh0 = (t % a.strips) * kRows, plane = t / a.strips;
    const Index c0 = grp * (kC * kS);  // first vector column: 16 * kS bytes aligned
    const Index ih0 = oh0 * kS - kP;
    const T* xp = x + plane * a.h * a.w;  // (h, w)

    float acc[kRows][kC];
#pragma unroll
    for (int j = 0; j < kRows; ++j)
#pragma unroll
      for (int o = 0; o < kC; ++o) acc[j][o] = -INFINITY;

#pragma unroll
    for (int r = 0; r < kSpan; ++r) {
      const Index ih = ih0 + r;
      const bool row_in = ih >= 0 && ih < a.h;
      const T* row = xp + ih * a.w;
      float v[kCols];
#pragma unroll
      for (int q = 0; q < kS; ++q) {  // whole vectors: all in the row or all past its end
        const Index col = c0 + q * kC;
        if (row_in && col < a.w) {
          const int4 raw = __ldg(reinterpret_cast<const int4*>(row + col));
          const V vec = *reinterpret_cast<const V*>(&raw);
#pragma unroll
          for (int i = 0; i < kC; ++i) v[kP + q * kC + i] = device::to_float(vec.v[i]);
        } else {
#pragma unroll
          for (int i = 0; i < kC; ++i) v[kP + q * kC + i] = -INFINITY;
        }
      }
#pragma unroll
      for (int i = 0; i < kP; ++i) {  // left halo: columns c0 - kP .. c0 - 1
        const Index col = c0 - kP + i;
        v[i] = row_in && col >= 0 ? device::to_float(__ldg(row + col)) : -INFINITY;
      }
#pragma unroll
      for (int i = 0; i < kRight; ++i) {  // right halo
        const Index col = c0 + kC * kS + i;
        v[kP + kC * kS + i] = row_in && col < a.w ? device::to_float(__ldg(row + col)) : -INFINITY;
      }
      // Output column o covers local columns [o * kS, o * kS + kK); output row j of the strip
      // covers strip rows [j * kS, j * kS + kK).
#pragma unroll
      for (int o = 0; o < kC; ++o) {
        float m = v[o * kS];
#pragma unroll
        for (int kw = 1; kw < kK; ++kw) m = fmaxf(m, v[o * kS + kw]);
#pragma unroll
        for (int j = 0; j < kRows; ++j)
          if (r >= j * kS && r < j * kS + kK) acc[j][o] = fmaxf(acc[j][o], m);
      }
    }

    const Index ow0 = grp * kC;
#pragma unroll
    for (int j = 0; j < kRows; ++j) {
      if (oh0 + j >= a.ho) break;
      T* out = y + (plane * a.ho + oh0 + j) * a.wo + ow0;
      if (a.vector_store) {  // wo a multiple of kC: the group is whole
        V o;
#pragma unroll
        for (int i = 0; i < kC; ++i) o.v[i] = device::from_float<T>(acc[j][i]);
        device::store16(out, o);
      } else {
#pragma unroll
        for (int i = 0; i < kC; ++i)
          if (ow0 + i < a.wo) out[i] = device::from_float<T>(acc[j][i]);
      }
    }
  }
}

// Any shape, window and alignment: one output per thread, grid-stride, 64-bit indices.
template <class T>
__global__ void __launch_bounds__(kBlock)
    scalar_pool(const T* __restrict__ x, T* __restrict__ y, Geometry g) {
  const int64_t n = g.y_numel(), stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t ow = i % g.wo, t = i / g.wo;
    const int64_t oh = t % g.ho, plane = t / g.ho;
    const T* xp = x + plane * g.h * g.w;
    float m = -INFINITY;  // padded cells never win
    for (int64_t ih = max(oh * g.s - g.p, int64_t(0)); ih < min(oh * g.s - g.p + g.k, g.h); ++ih)
      for (int64_t iw = max(ow * g.s - g.p, int64_t(0)); iw < min(ow * g.s - g.p + g.k, g.w); ++iw)
        m = fmaxf(m, device::to_float(__ldg(xp + ih * g.w + iw)));
    y[i] = device::from_float<T>(m);
  }
}

template <class T, class Index, int kK, int kS, int kP, int kRows>
void launch_vector(const Geometry& g, const T* x, T* y, int block, cudaStream_t stream) {
  constexpr int kC = device::Vec16<T>::kN;
  const int64_t strips = device::ceil_div(g.ho, kRows), groups = device::ceil_div(g.wo, kC);
  const int64_t items = g.n * g.c * strips * groups;
  const bool vector_store = device::aligned16(y) && (g.wo * int64_t(sizeof(T))) % 16 == 0;
  const TileArgs<Index> a{Index(g.h),    Index(g.w),    Index(g.ho),  Index(g.wo),
                          Index(strips), Index(groups), Index(items), vector_store};
  const auto kernel = vector_pool<T, Index, kK, kS, kP, kRows>;
  kernel<<<device::grid_resident_wave(device_info().sm_count, kernel, items, block), block, 0,
           stream>>>(x, y, a);
}

template <class T, class Index>
bool try_vector(const Geometry& g, const T* x, T* y, int block, cudaStream_t stream) {
  if (!device::aligned16(x) || (g.w * int64_t(sizeof(T))) % 16 != 0) return false;
  if (g.k == 2 && g.s == 2 && g.p == 0)
    launch_vector<T, Index, 2, 2, 0, 2>(g, x, y, block, stream);
  else if (g.k == 3 && g.s == 2 && g.p == 1)
    launch_vector<T, Index, 3, 2, 1, 4>(g, x, y, block, stream);
  else
    return false;
  return true;
}

}  // namespace

Variant gpu_v03_vector_rows() {
  Variant v = gpu_variant(
      "v03_vector_rows",
      "16-byte loads and stores: kC outputs x kRows rows per thread (2x2/2, 3x3/2/1)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int block = kBlock;
        const Geometry g = geometry(p);
        // 32-bit indices when every index the kernel forms (the strip's rows below the image,
        // the padded last strip and group, one grid stride past the end) stays far below 2^31.
        constexpr int64_t k32 = int64_t(1) << 30;
        const bool small = g.x_numel() < k32 && (g.h + 16) * g.w < k32 &&
                           g.y_numel() + 4 * g.n * g.c * (g.wo + 8) < k32;
        device::dispatch_float(p.dtype, [&]<class T>() {
          const T* x = b.ptr<const T>("x");
          T* y = b.ptr<T>("y");
          const cudaStream_t st = stream_of(args);
          const bool done = small ? try_vector<T, int32_t>(g, x, y, block, st)
                                  : try_vector<T, int64_t>(g, x, y, block, st);
          if (!done) {
            const auto kernel = scalar_pool<T>;
            const unsigned grid =
                device::grid_resident_wave(device_info().sm_count, kernel, g.y_numel(), block);
            kernel<<<grid, block, 0, st>>>(x, y, g);
          }
        });
        KLAB_CHECK_LAUNCH();
      });
  v.info.sweepable = false;  // kBlock is fixed (see above)
  return v;
}

}  // namespace klab::maxpool
