// v06 vector spans: rows that are not a whole number of 16-byte vectors (255 bf16 or f32, 130,
// 252, ...) are read and written as whole 16-byte vectors across a span of rows. A warp owns S
// consecutive rows, S = kN / gcd(cols, kN) (bf16: 8 for odd cols, 4 for cols = 2 mod 4, 2 for
// 4 mod 8; f32: 4 and 2), which together are a whole number of vectors and start on a vector
// boundary (vector_spans.hpp has the arithmetic). Lane l loads vectors l, l + 32, ... of the span
// (kSlots = J of them, a compile-time count), every load issued before any value is used. A
// vector's elements lie in at most two rows (row, row + 1, split after `split` elements): the
// lane folds each vector's two parts into per-row accumulators, only for the 2-3 rows its slot
// can touch (known at compile time from S and J), a reduce-scatter over the warp leaves row r's
// max (then sum) in the lanes l with l % S == r, and each vector fetches its two rows' values with
// a shuffle from lane `row` and `row + 1`. The output is written as whole vectors inside the span.
// The last span of the matrix, when rows is not a multiple of S, is a one-warp kernel of its own
// that bounds every access by element.
// Everything else (rows of whole vectors, rows shorter than a vector, spans of under 32 or over
// 32 kMaxSlots vectors, bases off 16 bytes) runs v05 unchanged.
// Adds over v05: v05 reads such rows with one 2-byte (bf16) or 4-byte (f32) load per element,
// in two or three batches per lane; here one 16-byte load per 8 (4) elements, all of a lane's in
// flight together. The four earlier attempts at these rows (docs/worklogs/softmax.md) each added
// a pass or a load per element and lost; this one adds selects (the row split) and, per vector,
// two compares per row of its slot's window, and keeps the loads whole and grouped.
// A lane holds kSlots x kN fp32 values (exp(x - max) in place of x): 64 at 255 bf16, so the
// kernel stays above 64 registers (ptxas figures in the worklog). Holding the raw bf16 vectors
// and computing exp twice was tried and did not save registers: the compiler keeps one widening
// of each element for both uses.
// Expected bottleneck: instruction issue once the loads are grouped (the worklog's count per
// element and prediction); DRAM bandwidth if the issue rate keeps up.
// Requirements: as v05 (cols <= 1024, any rows, any alignment); the span path itself needs
// 16-byte aligned x and y.
#include <cuda_bf16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/reduction/softmax/rung.cuh"
#include "kernels/reduction/softmax/vector_spans.hpp"
#include "klab/device/fast_exp.hpp"
#include "klab/device/occupancy.cuh"
#include "klab/device/vec.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::reduction {

namespace {

constexpr int kThreads = 128;  // fine-grained blocks: occupancy steps of 4 warps, not 8
constexpr int kMaxSlots = 8;   // 64 bf16 (32 f32) values a lane

/// The rows of a span to the lanes: on entry every lane holds a partial value of each of the
/// span's kRows rows (acc[r]); on return lane l holds row l % kRows's value reduced over the
/// warp. A reduce-scatter: at the step over lane bit b each lane keeps the half of its rows whose
/// bit b matches its own and sends the other half to its partner, so log2 kRows steps move
/// kRows - 1 values in all; then a butterfly over the lane bits above.
template <int kRows, class Op>
__device__ __forceinline__ float rows_to_lanes(float (&acc)[kRows], Op op, int lane) {
  static_assert(kRows == 1 || kRows == 2 || kRows == 4 || kRows == 8, "kRows: 1, 2, 4 or 8");
  constexpr int kSteps = kRows >= 8 ? 3 : kRows >= 4 ? 2 : kRows >= 2 ? 1 : 0;  // log2 kRows
  // Before the step over bit b, acc[k] (k < kRows >> b) holds row k * 2^b + (lane % 2^b).
#pragma unroll
  for (int b = 0; b < kSteps; ++b) {
    const bool upper = (lane >> b) & 1;
#pragma unroll
    for (int k = 0; k < (kRows >> b) / 2; ++k) {
      const float keep = upper ? acc[2 * k + 1] : acc[2 * k];
      const float send = upper ? acc[2 * k] : acc[2 * k + 1];
      acc[k] = op(keep, __shfl_xor_sync(0xffffffffu, send, 1 << b));
    }
  }
  float v = acc[0];
#pragma unroll
  for (int offset = kRows; offset < 32; offset <<= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Folds one vector's two parts (lo: row `row`, hi: row + 1) into the accumulators of the rows
/// slot j can touch; the others are left alone (compile-time bounds, vector_spans.hpp).
template <int kRows, int kSlots, int j, class Op>
__device__ __forceinline__ void fold_parts(float (&acc)[kRows], int row, float lo, float hi,
                                           Op op) {
  constexpr int first = spans::slot_first_row(kRows, kSlots, j);
  constexpr int last = spans::slot_last_row(kRows, kSlots, j);
#pragma unroll
  for (int r = first; r <= last; ++r) {
    // A select, not a branch: `if (row == r) acc[r] = ...` over r is acc[row], which nvcc turns
    // into local memory.
    acc[r] = op(acc[r], row == r ? lo : row + 1 == r ? hi : Op::kIdentity);
  }
}

/// exp(t) for t = x - max <= 0, as exp_shifted (rung.cuh) but with results below 2^-126 flushed
/// to zero: ex2.approx.ftz is one MUFU.EX2, where the non-ftz form adds a compare and two
/// conditional multiplies to scale denormal results. A flushed term is below 2^-126 of its row's
/// largest (exp(0) = 1): it changes the sum by less than fp32 can hold and its output by less
/// than the tolerance's atol (family.cpp).
__device__ __forceinline__ float exp_shifted_ftz(float t) {
  return device::ex2_ftz(t * 1.44269504088896341f);  // log2(e)
}

// A lane's vectors are held as raw 32-bit words (uint4): bf16 pairs stay packed, two to a
// register, and are widened (a shift or a mask) where used. Held as arrays of __nv_bfloat16 they
// became one 16-bit value a register, 64 registers for 8 slots instead of 32.

/// Word k (0..3, known at compile time) of w.
__device__ __forceinline__ uint32_t word(const uint4& w, int k) {
  return k == 0 ? w.x : k == 1 ? w.y : k == 2 ? w.z : w.w;
}
__device__ __forceinline__ void set_word(uint4& w, int k, uint32_t v) {
  (k == 0 ? w.x : k == 1 ? w.y : k == 2 ? w.z : w.w) = v;
}

/// Element i (0..kN-1, known at compile time) of a vector of T, as fp32.
template <class T>
__device__ __forceinline__ float element(const uint4& w, int i) {
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(word(w, i));
  } else {  // bf16: the high 16 bits of an fp32 of the same value
    const uint32_t u = word(w, i / 2);
    return __uint_as_float(i % 2 == 0 ? u << 16 : u & 0xffff0000u);
  }
}

/// Elements i and i + 1 (bf16) or i (f32) of the output vector, rounded to T.
template <class T>
__device__ __forceinline__ void set_elements(uint4& w, int i, float a, float b) {
  if constexpr (sizeof(T) == 4) {
    set_word(w, i, __float_as_uint(a));
    set_word(w, i + 1, __float_as_uint(b));
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);  // .x = a: the low half
    uint32_t u;
    memcpy(&u, &h, sizeof(u));
    set_word(w, i / 2, u);
  }
}

/// The first `count` elements (fewer than a vector's; none when count <= 0) at p, zeros after.
template <class T>
__device__ __forceinline__ uint4 load_first(const T* p, int count) {
  constexpr int kN = 16 / sizeof(T);
  uint4 w = make_uint4(0, 0, 0, 0);
  if constexpr (sizeof(T) == 4) {
    const auto* u = reinterpret_cast<const uint32_t*>(p);
#pragma unroll
    for (int i = 0; i < kN; ++i)
      if (i < count) set_word(w, i, u[i]);
  } else {
    const auto* h = reinterpret_cast<const uint16_t*>(p);
#pragma unroll
    for (int k = 0; k < 4; ++k)
      set_word(w, k,
               (2 * k < count ? uint32_t(h[2 * k]) : 0u) |
                   (2 * k + 1 < count ? uint32_t(h[2 * k + 1]) << 16 : 0u));
  }
  return w;
}

/// The first `count` elements of w to p (count < a vector's; none when count <= 0).
template <class T>
__device__ __forceinline__ void store_first(T* p, const uint4& w, int count) {
  constexpr int kN = 16 / sizeof(T);
#pragma unroll
  for (int i = 0; i < kN; ++i) {
    if (i >= count) break;
    if constexpr (sizeof(T) == 4)
      reinterpret_cast<uint32_t*>(p)[i] = word(w, i);
    else
      reinterpret_cast<uint16_t*>(p)[i] = uint16_t(word(w, i / 2) >> (16 * (i % 2)));
  }
}

template <int... js, class F>
__device__ __forceinline__ void for_slots(std::integer_sequence<int, js...>, F&& f) {
  (f(std::integral_constant<int, js>{}), ...);
}

/// One span: kRows rows from x, n of its elements real (a whole span when !kBounded: n =
/// kRows * cols). row[j] and split[j] place slot j's vector (vector_rows: the same in every span).
template <class T, int kRows, int kSlots, bool kBounded>
__device__ __forceinline__ void span_softmax(const T* __restrict__ x, T* __restrict__ y, int n,
                                             int nvec, const int (&row)[kSlots],
                                             const int (&split)[kSlots], int lane, uint32_t zero) {
  constexpr int kN = 16 / sizeof(T);
  const auto slots = std::make_integer_sequence<int, kSlots>{};
  const auto* xv = reinterpret_cast<const uint4*>(x);  // the span starts on a vector
  auto* yv = reinterpret_cast<uint4*>(y);

  // Every load first. Only the last slot can run past the span's vectors (32 (kSlots - 1) <
  // nvec); in the bounded span, the vector that crosses n is read element by element.
  uint4 raw[kSlots];  // (kSlots) this lane's vectors, as stored
#pragma unroll
  for (int j = 0; j < kSlots; ++j) {
    const int v = lane + 32 * j;
    raw[j] = make_uint4(0, 0, 0, 0);
    if (!kBounded) {
      if (j < kSlots - 1 || v < nvec) raw[j] = xv[v];
    } else if ((v + 1) * kN <= n) {
      raw[j] = xv[v];
    } else {
      raw[j] = load_first(x + v * kN, n - v * kN);
    }
  }

  // Hold every use back until every load is issued: ptxas otherwise widens each vector to fp32
  // right after its load and reuses the load's registers for the next one, so a lane waits for
  // its loads one after another (the fault of two refuted attempts, docs/worklogs/softmax.md).
  // `zero` (gridDim.y - 1: the grid is one-dimensional) is unknown to the compiler, so the words
  // all depend on the xor of all the loads, which ptxas cannot compute before the last is issued.
  uint32_t all = 0;
#pragma unroll
  for (int j = 0; j < kSlots; ++j) all ^= raw[j].x;
  const uint32_t dep = all & zero;
#pragma unroll
  for (int j = 0; j < kSlots; ++j) {
    raw[j].x += dep;
    raw[j].y += dep;
    raw[j].z += dep;
    raw[j].w += dep;
  }

  // Row max: each vector's part in `row` (elements < split) and in row + 1. Elements past the
  // span's real ones belong to rows past its end (their row is their position), whose values
  // are never stored.
  float m[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) m[r] = -INFINITY;
  for_slots(slots, [&](auto jc) {
    constexpr int j = decltype(jc)::value;
    float lo = element<T>(raw[j], 0), hi = -INFINITY;  // split >= 1
#pragma unroll
    for (int i = 1; i < kN; ++i) {
      const float e = element<T>(raw[j], i);
      if (i < split[j])
        lo = fmaxf(lo, e);
      else
        hi = fmaxf(hi, e);
    }
    fold_parts<kRows, kSlots, j>(m, row[j], lo, hi, MaxOp{});
  });
  const float row_max = rows_to_lanes(m, MaxOp{}, lane);  // row lane % kRows

  // Row sum of exp(x - max of its row).
  float e_kept[kSlots][kN];  // (kSlots, kN) exp(x - max), in place of x
  float s[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) s[r] = 0.f;
  for_slots(slots, [&](auto jc) {
    constexpr int j = decltype(jc)::value;
    const float m_lo = __shfl_sync(0xffffffffu, row_max, row[j]);
    const float m_hi = __shfl_sync(0xffffffffu, row_max, row[j] + 1);
    float lo = 0.f, hi = 0.f;
#pragma unroll
    for (int i = 0; i < kN; ++i) {
      const bool in_lo = i < split[j];
      const float e = exp_shifted_ftz(element<T>(raw[j], i) - (in_lo ? m_lo : m_hi));
      e_kept[j][i] = e;
      if (in_lo)
        lo += e;
      else
        hi += e;
    }
    fold_parts<kRows, kSlots, j>(s, row[j], lo, hi, SumOp{});
  });
  const float row_inv = 1.f / rows_to_lanes(s, SumOp{}, lane);

  // Scale and store whole vectors (element by element only where the bounded span ends).
  for_slots(slots, [&](auto jc) {
    constexpr int j = decltype(jc)::value;
    const int v = lane + 32 * j;
    const float inv_lo = __shfl_sync(0xffffffffu, row_inv, row[j]);
    const float inv_hi = __shfl_sync(0xffffffffu, row_inv, row[j] + 1);
    float out[kN];
#pragma unroll
    for (int i = 0; i < kN; ++i) out[i] = e_kept[j][i] * (i < split[j] ? inv_lo : inv_hi);
    uint4 o;
#pragma unroll
    for (int i = 0; i < kN; i += 2) set_elements<T>(o, i, out[i], out[i + 1]);
    if (!kBounded) {
      if (j < kSlots - 1 || v < nvec) yv[v] = o;
    } else if ((v + 1) * kN <= n) {
      yv[v] = o;
    } else {
      store_first(y + v * kN, o, n - v * kN);
    }
  });
}

/// kRows rows a span, kSlots vectors a lane. One resident wave of warps strides over the whole
/// spans; with kBounded, one warp takes the last, partial span (rows not a multiple of kRows). A
/// kernel of its own: inlined beside the whole spans, its element-wise path raised the kernel's
/// registers by a third.
template <class T, int kRows, int kSlots, bool kBounded>
__global__ void __launch_bounds__(kThreads) vector_span_softmax(SoftmaxArgs<T> a) {
  constexpr int kN = device::Vec16<T>::kN;
  const int cols = static_cast<int>(a.cols);  // <= 1024
  const int span_elems = kRows * cols;        // a multiple of kN
  const int nvec = span_elems / kN;           // 32 (kSlots - 1) < nvec <= 32 kSlots
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
  const int64_t warp = int64_t(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  const uint32_t zero = gridDim.y - 1;  // 0, but not to the compiler (span_softmax)
  const int64_t full_spans = a.rows / kRows;

  // Where this lane's vectors lie in a span: the same in every span, so computed once.
  int row[kSlots], split[kSlots];
#pragma unroll
  for (int j = 0; j < kSlots; ++j) {
    const spans::VectorRows vr = spans::vector_rows(lane + 32 * j, cols, kN);
    row[j] = vr.row;
    split[j] = vr.split;
  }

  if constexpr (kBounded) {
    if (warp != 0) return;
    const int64_t q = full_spans;
    span_softmax<T, kRows, kSlots, true>(a.x + q * span_elems, a.y + q * span_elems,
                                         static_cast<int>(a.rows - q * kRows) * cols, nvec, row,
                                         split, lane, zero);
  } else {
    for (int64_t q = warp; q < full_spans; q += warps)  // warp-uniform: full warps shuffle
      span_softmax<T, kRows, kSlots, false>(a.x + q * span_elems, a.y + q * span_elems, span_elems,
                                            nvec, row, split, lane, zero);
  }
}

template <class T, int kRows, int kSlots>
void launch_spans(SoftmaxArgs<T> a, cudaStream_t st) {
  const int64_t full_spans = a.rows / kRows;
  if (full_spans > 0) {
    const auto kernel = vector_span_softmax<T, kRows, kSlots, false>;
    const int64_t threads = full_spans * 32;  // a warp per span
    kernel<<<device::grid_resident_wave(device_info().sm_count, kernel, threads, kThreads),
             kThreads, 0, st>>>(a);
  }
  if (a.rows % kRows != 0) vector_span_softmax<T, kRows, kSlots, true><<<1, 32, 0, st>>>(a);
}

template <class T, int kRows>
void dispatch_slots(SoftmaxArgs<T> a, int slots, cudaStream_t st) {
  switch (slots) {  // the compile-time slot count: no slot of a lane left empty in every lane
    case 1:
      return launch_spans<T, kRows, 1>(a, st);
    case 2:
      return launch_spans<T, kRows, 2>(a, st);
    case 3:
      return launch_spans<T, kRows, 3>(a, st);
    case 4:
      return launch_spans<T, kRows, 4>(a, st);
    case 5:
      return launch_spans<T, kRows, 5>(a, st);
    case 6:
      return launch_spans<T, kRows, 6>(a, st);
    case 7:
      return launch_spans<T, kRows, 7>(a, st);
    default:
      return launch_spans<T, kRows, 8>(a, st);
  }
}

}  // namespace

template <class T>
void launch_vector_spans(SoftmaxArgs<T> a, cudaStream_t st) {
  constexpr int kN = device::Vec16<T>::kN;
  static_assert(kMaxSlots == 8, "dispatch_slots instantiates 1..8");
  if (!spans::span_path_applies(a.cols, kN, kMaxSlots) || !device::aligned16(a.x) ||
      !device::aligned16(a.y))
    return launch_warp_rows(a, st);
  const int slots = spans::slots_for(spans::span_vectors(a.cols, kN));
  switch (spans::span_rows(a.cols, kN)) {
    case 2:
      return dispatch_slots<T, 2>(a, slots, st);
    case 4:
      return dispatch_slots<T, 4>(a, slots, st);
    default:
      if constexpr (kN == 8) return dispatch_slots<T, 8>(a, slots, st);
  }
}

template void launch_vector_spans(SoftmaxArgs<float>, cudaStream_t);
template void launch_vector_spans(SoftmaxArgs<__nv_bfloat16>, cudaStream_t);

Variant softmax_v06_vector_spans() {
  Variant v = softmax_variant(
      "v06_vector_spans",
      "v05, with rows off the vector width read and written as 16-byte vectors across row spans",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        with_softmax_args(
            p, b, [&]<class T>(SoftmaxArgs<T> a) { launch_vector_spans(a, stream_of(args)); });
        KLAB_CHECK_LAUNCH();
      });
  v.can_implement = warp_rows_fit;
  return v;
}

}  // namespace klab::reduction
