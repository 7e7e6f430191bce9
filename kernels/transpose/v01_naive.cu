// v01 naive: one thread per element, out[c][r] = in[r][c] straight from global memory.
// Adds: nothing — the first correct kernel. A warp reads 32 consecutive elements of one input
// row (coalesced) and writes them down one output column: 32 different rows of `out`, so every
// 4-byte (f32) or 2-byte (bf16) store touches its own 32-byte sector.
// Expected bottleneck: the scattered stores — 8x (f32) / 16x (bf16) more L2 write transactions
// than bytes written; the L2 merges the partial sectors of neighbouring block rows before DRAM,
// so the cost shows up as LSU/L2 throughput rather than DRAM bytes. Predicted 25-35% of copy.
// Requirements: none (any shape, any alignment).
#include "kernels/transpose/rung.cuh"

namespace klab::transpose {

namespace {

constexpr int kDefaultBlock = 256;  // 32 x 8

template <class T>
__global__ void naive_transpose(Args<T> a) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= a.cols) return;
  const int64_t stride = int64_t(gridDim.y) * blockDim.y;
  for (int64_t r = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; r < a.rows; r += stride)
    a.out[c * a.rows + r] = a.in[r * a.cols + c];
}

}  // namespace

Variant gpu_v01_naive() {
  Variant v = gpu_variant("v01_naive", "one thread per element, scattered stores",
                          [](const Problem& p, Buffers& b, const LaunchArgs& args) {
                            // A sweep's block size becomes a 32-wide block of block / 32 rows.
                            const int rows_per_block = std::max(
                                1, device::block_or(args.block_threads, kDefaultBlock) / 32);
                            with_args(p, b, [&]<class T>(Args<T> a) {
                              naive_transpose<<<tile_grid(a.rows, a.cols, rows_per_block, 32),
                                                dim3(32, rows_per_block), 0, stream_of(args)>>>(a);
                            });
                            KLAB_CHECK_LAUNCH();
                          });
  v.info.sweepable = true;
  return v;
}

}  // namespace klab::transpose
