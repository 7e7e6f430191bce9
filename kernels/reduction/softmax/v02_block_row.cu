// v02 block per row: one block owns a row; its threads stride along the row together (coalesced),
// and each of the three passes ends with a block reduction (warp shuffles + one barrier):
// the maximum, then the sum of exp(x - max) (the "safe" softmax), then the normalised write.
// Adds over v01: coalesced accesses and rows x block threads of parallelism.
// Expected bottleneck: the row is read three times. Only the first read comes from DRAM if the
// row (16 KiB at cols = 4096 f32) is still in L1 or L2 for the next two passes; those re-reads
// and the exp computed twice per element (sum pass, write pass) cost L1/L2 bandwidth and issue
// slots, and the barriers between passes leave a block idle while its loads land.
// Predicted 55-70% of copy.
// Requirements: rows < 2^31 (one block per row).
#include "kernels/reduction/softmax/rung.cuh"

namespace klab::reduction {

namespace {

constexpr int kDefaultBlock = 256;

template <class T>
__global__ void block_row_softmax(SoftmaxArgs<T> a) {
  __shared__ float smem[32];
  const T* x = a.x + int64_t(blockIdx.x) * a.cols;
  T* y = a.y + int64_t(blockIdx.x) * a.cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) m = fmaxf(m, device::to_float(x[c]));
  m = block_all_reduce(m, MaxOp{}, smem);
  float s = 0.f;
  for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x)
    s += exp_shifted(device::to_float(x[c]) - m);
  s = block_all_reduce(s, SumOp{}, smem);
  const float inv = 1.f / s;
  for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x)
    y[c] = device::from_float<T>(exp_shifted(device::to_float(x[c]) - m) * inv);
}

}  // namespace

Variant softmax_v02_block_row() {
  Variant v = softmax_variant(
      "v02_block_row", "one block per row: max, sum, write passes with block reductions",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int block = warp_multiple(device::block_or(args.block_threads, kDefaultBlock));
        with_softmax_args(p, b, [&]<class T>(SoftmaxArgs<T> a) {
          block_row_softmax<<<static_cast<unsigned>(a.rows), block, 0, stream_of(args)>>>(a);
        });
        KLAB_CHECK_LAUNCH();
      });
  v.can_implement = one_block_per_row;
  v.info.sweepable = true;
  return v;
}

}  // namespace klab::reduction
