// v04 registers: one block per row, and the whole row lives in the block's registers — loaded
// once with 16-byte vector loads, exponentiated once, written once with 16-byte stores.
// Adds over v03: DRAM is touched exactly once per element each way (no re-read pass at all),
// one exp per element instead of two, and 16-byte accesses (4 f32 / 8 bf16 per instruction,
// kE / kN of them in flight per thread before the first reduction).
// Per row: kE values per thread (4, 8, 16 or 32; the smallest that keeps the block at <= 256
// threads, or 32 with up to 1024 threads), block = ceil(cols / kE) rounded up to whole warps.
// Headline 4096 columns: 256 threads x 16 values (f32: 4 loads of 16 B; bf16: 2).
// Rows whose length is not a multiple of the vector width, or misaligned bases, take a scalar
// path with the same registers (element k of thread t is k * block + t: still coalesced).
// Expected bottleneck: DRAM bandwidth; the block's two reductions (max, then sum) sit between its
// loads and its stores, hidden by the other resident blocks (8 per SM at 256 threads).
// Predicted 88-93% of copy (both dtypes), i.e. ~1.5x torch.softmax's 2.40 TB/s.
// Requirements: cols <= 32768 (1024 threads x 32 fp32 registers); longer rows are refused
// (v03 streams any length). rows < 2^31.
#include <cstdint>

#include "kernels/reduction/softmax/rung.cuh"
#include "klab/device/vec.cuh"

namespace klab::reduction {

namespace {

constexpr int kMaxE = 32;  // fp32 values per thread at most (kSoftmaxMaxRegisterCols / 1024)

template <class T, int kE, bool kVector>
__global__ void __launch_bounds__(kE == kMaxE ? 1024 : 256) register_softmax(SoftmaxArgs<T> a) {
  using V = device::Vec16<T>;
  constexpr int kN = V::kN;
  constexpr int kVecs = kE / kN;
  static_assert(kE % kN == 0, "kE must be whole vectors");
  __shared__ float smem[32];
  const int t = threadIdx.x, block = blockDim.x;
  const int cols = static_cast<int>(a.cols);  // <= kSoftmaxMaxRegisterCols: 32-bit offsets
  const T* x = a.x + int64_t(blockIdx.x) * cols;
  T* y = a.y + int64_t(blockIdx.x) * cols;

  float e[kE];  // (kE) this thread's values: x, then exp(x - max)
  if constexpr (kVector) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int base = (k * block + t) * kN;  // vector k*block + t of the row
      if (base < cols) {
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
      const int c = k * block + t;
      e[k] = c < cols ? device::to_float(x[c]) : -INFINITY;
    }
  }

  float m = e[0];
#pragma unroll
  for (int k = 1; k < kE; ++k) m = fmaxf(m, e[k]);
  m = block_all_reduce(m, MaxOp{}, smem);  // finite: every row has an element
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kE; ++k) s += (e[k] = exp_shifted(e[k] - m));  // padding: exp(-inf) = 0
  s = block_all_reduce(s, SumOp{}, smem);
  const float inv = 1.f / s;

  if constexpr (kVector) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int base = (k * block + t) * kN;
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
      const int c = k * block + t;
      if (c < cols) y[c] = device::from_float<T>(e[k] * inv);
    }
  }
}

template <class T, int kE>
void launch_with(SoftmaxArgs<T> a, bool vector, int block, cudaStream_t st) {
  const unsigned grid = static_cast<unsigned>(a.rows);
  if (vector)
    register_softmax<T, kE, true><<<grid, block, 0, st>>>(a);
  else
    register_softmax<T, kE, false><<<grid, block, 0, st>>>(a);
}

Status fits(const Problem& p) {
  if (p.dim("cols") > kSoftmaxMaxRegisterCols)
    return Status::no(
        "cols > " + std::to_string(kSoftmaxMaxRegisterCols) +
        " does not fit in one block's registers (1024 threads x 32 values); v03 streams any row");
  return one_block_per_row(p);
}

}  // namespace

Variant softmax_v04_registers() {
  Variant v = softmax_variant(
      "v04_registers", "row held in registers: one read, one exp, one write, 16-byte accesses",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        with_softmax_args(p, b, [&]<class T>(SoftmaxArgs<T> a) {
          constexpr int kN = device::Vec16<T>::kN;
          const bool vector = a.cols % kN == 0 && device::aligned16(a.x) && device::aligned16(a.y);
          // The smallest kE (whole vectors, <= kMaxE) that keeps the block at <= 256 threads.
          int e = kN;
          while (e < kMaxE && device::ceil_div(a.cols, e) > 256) e *= 2;
          const int block =
              static_cast<int>(device::ceil_div(device::ceil_div(a.cols, e), 32) * 32);
          KLAB_CHECK(
              block <= 1024,
              "softmax.v04_registers: row does not fit (can_implement should have refused it)");
          const cudaStream_t st = stream_of(args);
          switch (e) {
            case 4:
              if constexpr (kN <= 4) launch_with<T, 4>(a, vector, block, st);
              break;
            case 8:
              launch_with<T, 8>(a, vector, block, st);
              break;
            case 16:
              launch_with<T, 16>(a, vector, block, st);
              break;
            default:
              launch_with<T, kMaxE>(a, vector, block, st);
              break;
          }
        });
        KLAB_CHECK_LAUNCH();
      });
  v.can_implement = fits;
  return v;
}

}  // namespace klab::reduction
