// v01 naive: one thread per row, three passes over its row — the maximum, the sum of
// exp(x - max), then the normalised write — all straight from global memory.
// Adds: nothing — the first correct (and overflow-safe) kernel. One concession to accuracy: the
// running sum is compensated (Kahan). A plain fp32 running sum over a whole row absorbs the
// small terms once it is 1/u times larger than them; with heavy-tailed rows that loses ~2e-5 of
// the sum at cols = 4096, above the family's tolerance. The block rungs need no compensation:
// each thread sums only cols / block values before a tree.
// Expected bottleneck: access pattern and parallelism. The 32 lanes of a warp walk 32 different
// rows, so every load touches 32 sectors 4 (or 2) bytes at a time, and each row is read three
// times; the third pass re-reads a row set (32 rows x 16 KiB per warp at cols = 4096) far larger
// than L1, so most of it comes back from L2 or DRAM. rows = 32768 is also only 32768 threads,
// an eighth of what 132 SMs hold. Predicted 3-10% of copy.
// Requirements: none.
#include "kernels/reduction/softmax/rung.cuh"

namespace klab::reduction {

namespace {

constexpr int kDefaultBlock = 128;

template <class T>
__global__ void naive_softmax(SoftmaxArgs<T> a) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= a.rows) return;
  const T* x = a.x + r * a.cols;
  T* y = a.y + r * a.cols;
  float m = -INFINITY;
  for (int64_t c = 0; c < a.cols; ++c) m = fmaxf(m, device::to_float(x[c]));
  float s = 0.f, comp = 0.f;  // comp: the low-order part lost by the last addition, negated
  for (int64_t c = 0; c < a.cols; ++c) {
    const float term = exp_shifted(device::to_float(x[c]) - m) - comp;
    const float next = s + term;
    comp = (next - s) - term;
    s = next;
  }
  const float inv = 1.f / s;
  for (int64_t c = 0; c < a.cols; ++c)
    y[c] = device::from_float<T>(exp_shifted(device::to_float(x[c]) - m) * inv);
}

}  // namespace

Variant softmax_v01_naive() {
  Variant v = softmax_variant(
      "v01_naive", "one thread per row, three passes from global memory",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int block = device::block_or(args.block_threads, kDefaultBlock);
        with_softmax_args(p, b, [&]<class T>(SoftmaxArgs<T> a) {
          naive_softmax<<<device::grid_1d(a.rows, block), block, 0, stream_of(args)>>>(a);
        });
        KLAB_CHECK_LAUNCH();
      });
  v.info.sweepable = true;
  return v;
}

}  // namespace klab::reduction
