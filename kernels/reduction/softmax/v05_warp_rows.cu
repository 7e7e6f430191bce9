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
// a warp's cover 32 / kLanes whole rows, which are contiguous too. Staged path (any other cols,
// x and y 16-byte aligned): the warp's rows are one contiguous span whose covering 16-byte vectors
// it loads (the next span's loads in flight while this one is computed) and copies into shared
// memory; the groups read their rows from there into the same registers, write the results back,
// and the warp stores whole vectors (edge elements one by one). Scalar
// path (misaligned bases): element k * kLanes + l straight from global memory, still coalesced.
// Why the staged path: the scalar path read 2^20 x 255 at 83% of copy in f32 and 69% in bf16
// (2-byte loads: 64 bytes per warp instruction, 16x the instructions of the vector path); a span
// path that masked base-aligned vectors to each row in registers was slower still (57% and 30%:
// padded rows doubled the values per lane, and every element paid 64-bit bounds arithmetic).
// Prediction (written before it ran): 2^20 x 255 in bf16 from 69% to 83-88% of copy (the
// vector path's 87-88% at 2^21 x 128, less the shared-memory round trip), f32 from 83% to 86-90%.
// Refuted by its first form (results/h200/2026-12-01_fe006e9_softmax_staged: below the scalar
// path in both dtypes), which stored each vector into shared memory in the branch that loaded it,
// so one span's loads could wait on one another, and loaded the next span only after storing this
// one: a warp had one span in flight part of the time. Now all of a span's loads are issued
// together, and the next span's while this one is computed (same prediction).
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

constexpr int kMaxCols = 1024;  // 32 lanes x 32 fp32 values
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

/// The group's softmax on its registers: e becomes exp(x - max of the row), and the result is
/// 1 / (sum of the row's exps). Padding slots hold -inf (exp: 0); every lane of the warp calls it.
template <int kLanes, int kE>
__device__ __forceinline__ float exp_and_inverse_sum(float (&e)[kE]) {
  float m = e[0];
#pragma unroll
  for (int k = 1; k < kE; ++k) m = fmaxf(m, e[k]);
  m = group_all_reduce<kLanes>(m, MaxOp{});  // finite for a live row (it has an element)
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kE; ++k) s += (e[k] = exp_shifted(e[k] - m));
  s = group_all_reduce<kLanes>(s, SumOp{});
  return 1.f / s;
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

    const float inv = exp_and_inverse_sum<kLanes>(e);

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

/// The 16-byte vectors that cover a warp's span of rows row0 .. row0 + rows_here - 1: elements
/// [begin, end) of the matrix lie in vectors first .. first + count - 1, starting `offset`
/// elements into the first.
struct Span {
  int64_t begin, end, first;
  int count, offset;
};

template <int kN>
__device__ __forceinline__ Span span_of(int64_t row0, int rows_here, int64_t cols) {
  Span s;
  s.begin = row0 * cols;
  s.end = s.begin + rows_here * cols;
  s.first = s.begin / kN;
  s.count = static_cast<int>((s.end + kN - 1) / kN - s.first);
  s.offset = static_cast<int>(s.begin - s.first * kN);
  return s;
}

/// The staged path (rows whose length is not a multiple of the vector but whose matrix starts
/// 16-byte aligned): the warp's rows row0 .. row0 + 32 / kLanes - 1 are one contiguous span of the
/// matrix, so the warp loads the 16-byte vectors that cover the span (the edge vectors hold
/// neighbours' elements too, loaded but not used), copies them into its slice of shared memory,
/// and each group reads its row from there into the same registers as the other paths, writes
/// the result back in place, and the warp stores the span: whole vectors inside the span as
/// 16-byte stores, the edge vectors' own elements one by one (their other elements belong to
/// neighbouring warps). The next span's vectors are loaded into registers as soon as this span's
/// are in shared memory, so they are in flight while this span is computed and stored. A vector
/// past the end of the matrix (the last span only) is copied element by element.
template <class T, int kLanes, int kE>
__global__ void __launch_bounds__(kThreads) staged_rows_softmax(SoftmaxArgs<T> a) {
  using V = device::Vec16<T>;
  constexpr int kN = V::kN;
  constexpr int kRowsPerWarp = 32 / kLanes;
  constexpr int kSpanVectors = 32 * kE / kN + 1;  // rows * cols <= 32 kE, plus one straddled
  constexpr int kVectorsPerLane = (kSpanVectors + 31) / 32;
  __shared__ alignas(16) T stage_of_warp[kThreads / 32][kSpanVectors * kN];
  T* stage = stage_of_warp[threadIdx.x / 32];
  const int cols = static_cast<int>(a.cols);
  const int lane = threadIdx.x % 32;
  const int g = lane % kLanes;
  const int j = lane / kLanes;  // this group's row within the warp's span
  const int64_t total = a.rows * a.cols;
  const int64_t stride = int64_t(gridDim.x) * (kThreads / 32) * kRowsPerWarp;
  const int64_t warp = int64_t(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  auto rows_at = [&](int64_t row0) {
    return static_cast<int>(a.rows - row0 < kRowsPerWarp ? a.rows - row0 : kRowsPerWarp);
  };
  // This lane's vectors of a span: k * 32 + lane, those wholly inside the matrix (all but the
  // last span's last one), all loads issued before any is used.
  auto load_span = [&](const Span& s, V(&held)[kVectorsPerLane]) {
#pragma unroll
    for (int k = 0; k < kVectorsPerLane; ++k) {
      const int v = k * 32 + lane;
      const int64_t at = (s.first + v) * kN;
      if (v < s.count && at + kN <= total) held[k] = device::load16_stream(a.x + at);
    }
  };

  int64_t row0 = warp * kRowsPerWarp;
  V held[kVectorsPerLane];
  if (row0 < a.rows) load_span(span_of<kN>(row0, rows_at(row0), a.cols), held);
  for (; row0 < a.rows; row0 += stride) {
    const int rows_here = rows_at(row0);
    const Span s = span_of<kN>(row0, rows_here, a.cols);
#pragma unroll
    for (int k = 0; k < kVectorsPerLane; ++k) {
      const int v = k * 32 + lane;
      const int64_t at = (s.first + v) * kN;
      if (v < s.count) {
        if (at + kN <= total) {
          *reinterpret_cast<V*>(stage + v * kN) = held[k];
        } else {
          for (int i = 0; i < kN && at + i < total; ++i) stage[v * kN + i] = a.x[at + i];
        }
      }
    }
    __syncwarp();
    const int64_t next = row0 + stride;
    if (next < a.rows) load_span(span_of<kN>(next, rows_at(next), a.cols), held);

    const bool live = j < rows_here;
    T* row = stage + s.offset + j * cols;
    float e[kE];
#pragma unroll
    for (int k = 0; k < kE; ++k) {
      const int c = k * kLanes + g;
      e[k] = live && c < cols ? device::to_float(row[c]) : -INFINITY;
    }
    const float inv = exp_and_inverse_sum<kLanes>(e);
    if (live) {
#pragma unroll
      for (int k = 0; k < kE; ++k) {
        const int c = k * kLanes + g;
        if (c < cols) row[c] = device::from_float<T>(e[k] * inv);
      }
    }
    __syncwarp();

#pragma unroll
    for (int k = 0; k < kVectorsPerLane; ++k) {
      const int v = k * 32 + lane;
      const int64_t at = (s.first + v) * kN;
      if (v < s.count) {
        if (at >= s.begin && at + kN <= s.end) {
          device::store16(a.y + at, *reinterpret_cast<const V*>(stage + v * kN));
        } else {
          for (int i = 0; i < kN; ++i)
            if (at + i >= s.begin && at + i < s.end) a.y[at + i] = stage[v * kN + i];
        }
      }
    }
    __syncwarp();  // the next span's copy overwrites the stage
  }
}

enum class Path { vector, staged, scalar };

template <class T, int kLanes, int kE>
void launch_with(SoftmaxArgs<T> a, Path path, cudaStream_t st) {
  const auto kernel = path == Path::vector   ? warp_rows_softmax<T, kLanes, kE, true>
                      : path == Path::staged ? staged_rows_softmax<T, kLanes, kE>
                                             : warp_rows_softmax<T, kLanes, kE, false>;
  // One thread per (row group lane): ceil(rows / rows per warp) warps, at most one resident wave.
  const int64_t threads = device::ceil_div(a.rows, 32 / kLanes) * 32;
  kernel<<<device::grid_resident_wave(device_info().sm_count, kernel, threads, kThreads), kThreads,
           0, st>>>(a);
}

/// The base kE (32 bytes of the dtype per lane, as fp32 values) and the rest of the dispatch.
template <class T>
void dispatch(SoftmaxArgs<T> a, cudaStream_t st) {
  constexpr int kN = device::Vec16<T>::kN;
  constexpr int kBase = 2 * kN;  // 8 f32, 16 bf16
  const bool aligned = device::aligned16(a.x) && device::aligned16(a.y);
  const Path path = !aligned ? Path::scalar : a.cols % kN == 0 ? Path::vector : Path::staged;
  const int64_t c = a.cols;
  if (c <= 2 * kBase)
    launch_with<T, 2, kBase>(a, path, st);
  else if (c <= 4 * kBase)
    launch_with<T, 4, kBase>(a, path, st);
  else if (c <= 8 * kBase)
    launch_with<T, 8, kBase>(a, path, st);
  else if (c <= 16 * kBase)
    launch_with<T, 16, kBase>(a, path, st);
  else if (c <= 32 * kBase)
    launch_with<T, 32, kBase>(a, path, st);
  else if (kBase < 16 && c <= 32 * 16) {
    if constexpr (kBase < 16) launch_with<T, 32, 16>(a, path, st);
  } else
    launch_with<T, 32, 32>(a, path, st);
}

Status fits(const Problem& p) {
  if (p.dim("cols") > kMaxCols)
    return Status::no("cols > " + std::to_string(kMaxCols) +
                      " (32 lanes x 32 values per row); v04 holds rows up to " +
                      std::to_string(kSoftmaxMaxRegisterCols));
  return Status::yes();
}

}  // namespace

Variant softmax_v05_warp_rows() {
  Variant v = softmax_variant(
      "v05_warp_rows",
      "short rows (<= 1024): 2-32 lanes per row, several rows per warp, shuffles only",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        with_softmax_args(p, b, [&]<class T>(SoftmaxArgs<T> a) { dispatch(a, stream_of(args)); });
        KLAB_CHECK_LAUNCH();
      });
  v.can_implement = fits;
  return v;
}

}  // namespace klab::reduction
