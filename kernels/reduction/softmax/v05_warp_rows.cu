// v05 warp rows: short rows (up to 1024 columns) are spread over groups of kLanes = 2..32 lanes of
// one warp, 32 / kLanes rows per warp at a time; each lane holds kE values of its row in
// registers, and the max and the sum are butterfly shuffles within the group (log2 kLanes steps,
// no shared memory, no block barrier). A grid of one resident wave of 256-thread blocks strides
// over the rows, warp by warp.
// Adds over v04: v04 gives every row its own block of ceil(cols / kE) threads rounded up to a
// warp, so a row of 64 f32 is one 32-thread block holding 64 values: the SM's limit of 32
// resident blocks caps it at 1024 threads and 8 KiB in flight, two block barriers sit between
// every row's load and store, and one block launch per row costs more than the row's bytes.
// Here any number of rows shares a warp, every warp keeps kE values per lane in flight (f32:
// 8 = 32 bytes at the short lengths, bf16: 16 = 32 bytes), and the SM holds up to 64 warps.
// Dispatch by cols: kE = the dtype's base (32 bytes per lane: 8 f32, 16 bf16) and the fewest
// lanes (a power of two, at least 2) with kLanes * kE >= cols; past 32 lanes, kE doubles (f32:
// 16, 32; bf16: 32), up to 1024 columns. E.g. 64 f32: 8 lanes, 4 rows per warp; 128 bf16: 8 lanes;
// 255 f32: 32 lanes of 8 scalars; 512 f32: 32 lanes x 16.
// Vector path (cols a multiple of the 16-byte vector width, x and y 16-byte aligned): lane l of a
// group loads vectors k * kLanes + l of its row, so a group's loads of one k are contiguous and
// a warp's cover 32 / kLanes whole rows, which are contiguous too. Scalar path (any other cols,
// misaligned bases): element k * kLanes + l, the same registers, still coalesced.
// Tried for the scalar path's rows and refuted, each measured below it at 2^20 x 255
// (docs/worklogs/softmax.md): base-aligned 16-byte vectors masked to each row in registers
// (e537602 reverted it); a warp's rows staged through shared memory with whole-vector loads
// (fe006e9, b9c360b: bound by instruction issue at 37.5% occupancy); bf16 pairs in 4-byte words
// with the row's edge words masked, with streaming and with plain loads (79fc55b, af25cfd).
// Expected bottleneck: DRAM bandwidth. Little's law at ~4 TB/s and ~700 ns needs ~2.8 MB in flight
// on the chip, ~21 KiB per SM of which about half is reads; 32 bytes per lane at (register-bound)
// 1024-2048 resident threads per SM keeps 32-64 KiB of loads in flight. The shuffles (2 x log2
// kLanes) and one exp per element are far below the SM's issue rate at these bytes per element.
// Requirements: cols <= 1024 (longer rows: v04); any rows, any cols, any alignment.
#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/reduction/softmax/rung.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/vec.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::reduction {

namespace {

constexpr int kMaxCols = kSoftmaxWarpRowsMaxCols;  // 32 lanes x 32 fp32 values
constexpr int kThreads = 256;

template <int kLanes, class Op>
__device__ __forceinline__ float group_all_reduce(float v, Op op) {
  // XOR offsets below kLanes stay inside the aligned group of kLanes lanes; every lane of the
  // warp takes part (the row loop is warp-uniform), so the full mask is right.
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

template <class T, int kLanes, int kE, bool kVector>
__global__ void __launch_bounds__(kThreads) warp_rows_softmax(SoftmaxArgs<T> a) {
  using V = device::Vec16<T>;
  constexpr int kN = V::kN;
  constexpr int kRowsPerWarp = 32 / kLanes;
  static_assert(kLanes >= 2 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0, "kLanes: 2..32");
  static_assert(!kVector || kE % kN == 0, "the vector path holds whole vectors");
  const int cols = static_cast<int>(a.cols);  // <= kMaxCols: 32-bit offsets within a row
  const int lane = threadIdx.x % 32;
  const int g = lane % kLanes;  // lane within the row's group
  const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
  const int64_t warp = int64_t(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;

  // Warp-uniform loop: every lane runs every iteration, so the shuffles see full warps; lanes
  // whose row is past the end load nothing and store nothing.
  for (int64_t row0 = warp * kRowsPerWarp; row0 < a.rows; row0 += warps * kRowsPerWarp) {
    const int64_t row = row0 + lane / kLanes;
    const bool live = row < a.rows;
    const T* x = a.x + row * a.cols;
    T* y = a.y + row * a.cols;

    float e[kE];  // (kE) this lane's values: x, then exp(x - max)
    if constexpr (kVector) {
#pragma unroll
      for (int k = 0; k < kE / kN; ++k) {
        const int base = (k * kLanes + g) * kN;
        if (live && base < cols) {
          const V v = device::load16_stream(x + base);
#pragma unroll
          for (int i = 0; i < kN; ++i) e[k * kN + i] = device::to_float(v.v[i]);
        } else {
#pragma unroll
          for (int i = 0; i < kN; ++i) e[k * kN + i] = -INFINITY;
        }
      }
    } else {
#pragma unroll
      for (int k = 0; k < kE; ++k) {
        const int c = k * kLanes + g;
        e[k] = live && c < cols ? device::to_float(x[c]) : -INFINITY;
      }
    }

    float m = e[0];
#pragma unroll
    for (int k = 1; k < kE; ++k) m = fmaxf(m, e[k]);
    m = group_all_reduce<kLanes>(m, MaxOp{});  // finite for a live row (it has an element)
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < kE; ++k) s += (e[k] = exp_shifted(e[k] - m));  // padding: exp(-inf) = 0
    s = group_all_reduce<kLanes>(s, SumOp{});
    const float inv = 1.f / s;

    if (!live) continue;  // after the shuffles: the loop stays warp-uniform
    if constexpr (kVector) {
#pragma unroll
      for (int k = 0; k < kE / kN; ++k) {
        const int base = (k * kLanes + g) * kN;
        if (base < cols) {
          V o;
#pragma unroll
          for (int i = 0; i < kN; ++i) o.v[i] = device::from_float<T>(e[k * kN + i] * inv);
          device::store16(y + base, o);
        }
      }
    } else {
#pragma unroll
      for (int k = 0; k < kE; ++k) {
        const int c = k * kLanes + g;
        if (c < cols) y[c] = device::from_float<T>(e[k] * inv);
      }
    }
  }
}

template <class T, int kLanes, int kE>
void launch_with(SoftmaxArgs<T> a, bool vector, cudaStream_t st) {
  const auto kernel =
      vector ? warp_rows_softmax<T, kLanes, kE, true> : warp_rows_softmax<T, kLanes, kE, false>;
  // One thread per (row group lane): ceil(rows / rows per warp) warps, at most one resident wave.
  const int64_t threads = device::ceil_div(a.rows, 32 / kLanes) * 32;
  kernel<<<device::grid_resident_wave(device_info().sm_count, kernel, threads, kThreads), kThreads,
           0, st>>>(a);
}

}  // namespace

/// The base kE (32 bytes of the dtype per lane, as fp32 values) and the rest of the dispatch.
template <class T>
void launch_warp_rows(SoftmaxArgs<T> a, cudaStream_t st) {
  constexpr int kN = device::Vec16<T>::kN;
  constexpr int kBase = 2 * kN;  // 8 f32, 16 bf16
  const bool vector = a.cols % kN == 0 && device::aligned16(a.x) && device::aligned16(a.y);
  const int64_t c = a.cols;
  if (c <= 2 * kBase)
    launch_with<T, 2, kBase>(a, vector, st);
  else if (c <= 4 * kBase)
    launch_with<T, 4, kBase>(a, vector, st);
  else if (c <= 8 * kBase)
    launch_with<T, 8, kBase>(a, vector, st);
  else if (c <= 16 * kBase)
    launch_with<T, 16, kBase>(a, vector, st);
  else if (c <= 32 * kBase)
    launch_with<T, 32, kBase>(a, vector, st);
  else if (kBase < 16 && c <= 32 * 16) {
    if constexpr (kBase < 16) launch_with<T, 32, 16>(a, vector, st);
  } else
    launch_with<T, 32, 32>(a, vector, st);
}

template void launch_warp_rows(SoftmaxArgs<float>, cudaStream_t);
template void launch_warp_rows(SoftmaxArgs<__nv_bfloat16>, cudaStream_t);

Status warp_rows_fit(const Problem& p) {
  if (p.dim("cols") > kMaxCols)
    return Status::no("cols > " + std::to_string(kMaxCols) +
                      " (32 lanes x 32 values per row); v04 holds rows up to " +
                      std::to_string(kSoftmaxMaxRegisterCols));
  return Status::yes();
}

Variant softmax_v05_warp_rows() {
  Variant v = softmax_variant(
      "v05_warp_rows",
      "short rows (<= 1024): 2-32 lanes per row, several rows per warp, shuffles only",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        with_softmax_args(p, b,
                          [&]<class T>(SoftmaxArgs<T> a) { launch_warp_rows(a, stream_of(args)); });
        KLAB_CHECK_LAUNCH();
      });
  v.can_implement = warp_rows_fit;
  return v;
}

}  // namespace klab::reduction
