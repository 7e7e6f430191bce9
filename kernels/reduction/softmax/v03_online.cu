// v03 online softmax: the maximum and the sum come from one pass (Milakov & Gimelshein, 2018).
// Each thread keeps a running (max, sum) over its strided elements, four loads at a time: when a
// group raises the maximum the sum is rescaled by exp(old - new) once, then the group's exps are
// added. The block merges the threads' pairs (shuffles, then one barrier), and a second pass
// writes exp(x - max) / sum.
// Adds over v02: one read pass fewer (2 instead of 3) and one block reduction fewer; four
// independent loads in flight per thread.
// Expected bottleneck: the re-read in the write pass (from L1/L2 when the row survived, else
// DRAM) and the second exp per element. Predicted 70-80% of copy.
// Requirements: rows < 2^31 (one block per row); finite inputs (an all -inf row gives NaN, as
// in v02).
#include "kernels/reduction/softmax/rung.cuh"
#include "klab/device/online_softmax.cuh"

namespace klab::reduction {

namespace {

constexpr int kDefaultBlock = 256;
constexpr int kGroup = 4;  // loads issued together per thread

template <class T>
__global__ void online_softmax(SoftmaxArgs<T> a) {
  __shared__ float smem[64];
  const T* x = a.x + int64_t(blockIdx.x) * a.cols;
  T* y = a.y + int64_t(blockIdx.x) * a.cols;
  const int64_t step = blockDim.x;
  MaxSum ms;
  for (int64_t c = threadIdx.x; c < a.cols; c += kGroup * step) {
    float v[kGroup];
#pragma unroll
    for (int k = 0; k < kGroup; ++k)
      v[k] = c + k * step < a.cols ? device::to_float(x[c + k * step]) : -INFINITY;
    // v[0] is finite (element c exists); missing elements add exp(-inf) = 0.
    device::online_add_block(ms, v, [](float t) { return exp_shifted(t); });
  }
  ms = block_all_merge(ms, smem);
  const float inv = 1.f / ms.sum;
  for (int64_t c = threadIdx.x; c < a.cols; c += step)
    y[c] = device::from_float<T>(exp_shifted(device::to_float(x[c]) - ms.max) * inv);
}

}  // namespace

Variant softmax_v03_online() {
  Variant v = softmax_variant(
      "v03_online", "one block per row: online max+sum in one pass, then the write pass",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int block = warp_multiple(device::block_or(args.block_threads, kDefaultBlock));
        with_softmax_args(p, b, [&]<class T>(SoftmaxArgs<T> a) {
          online_softmax<<<static_cast<unsigned>(a.rows), block, 0, stream_of(args)>>>(a);
        });
        KLAB_CHECK_LAUNCH();
      });
  v.can_implement = one_block_per_row;
  v.info.sweepable = true;
  return v;
}

}  // namespace klab::reduction
