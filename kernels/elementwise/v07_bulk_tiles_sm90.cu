// v07 bulk tiles (sm_90): one tile per block, no loop. Each block copies its 8 KiB tile of each
// input global -> shared with one bulk copy (TMA, cp.async.bulk) completing on an mbarrier, waits
// once, maps, and stores 16-byte vectors; the grid is every tile, and the block scheduler keeps
// as many blocks resident as fit (8 an SM at 256 threads), each with its copy in flight.
// Adds over v05: v05 is persistent (one resident wave striding over the tiles through a 4-stage
// ring, a block barrier per tile). It reaches 94-95% of copy for two-input maps but 65% for relu
// f32 and 21% for relu bf16 in 18aeb7d's run (kernels/elementwise/README.md), where v03 reaches
// 91% and CUB's DeviceTransform 99%. CUB's Hopper path is this shape: a block per tile, the tile
// sized so that the resident blocks keep at least 48 KiB an SM in flight, one bulk copy and one
// wait a block. Here 8 resident blocks x 8 KiB = 64 KiB an SM for one input, 128 KiB for two.
// Expected bottleneck: DRAM bandwidth, at CUB's 98-99% of copy for relu, add and saxpy in both
// dtypes; the cost is a block launch, an mbarrier init and a wait per 8 KiB per input.
// Requirements: sm_90; 16-byte aligned pointers (else v02's path). Map ops only (not grayscale).
// The last n % tile elements run element by element in the last block.
#include "kernels/elementwise/rung.cuh"
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/tma_sm90.cuh"
#include "klab/device/vec.cuh"

namespace klab::elementwise {

namespace {

constexpr int kThreads = 256;
constexpr int kTileBytes = 8192;  // per input: 2 x 16-byte vectors a thread

template <class Op, class T, int kIn>
__global__ void __launch_bounds__(kThreads) bulk_tile_map(Op op, MapArgs<T, kIn> a) {
  using V = device::Vec16<T>;
  constexpr int kTile = kTileBytes / sizeof(T);  // elements
  constexpr int kVecs = kTileBytes / 16;
  __shared__ __align__(128) unsigned char tile[kIn][kTileBytes];
  __shared__ uint64_t full;

  const int64_t start = int64_t(blockIdx.x) * kTile;
  if (start + kTile > a.n) {  // the last, partial tile: element by element
    for (int64_t i = start + threadIdx.x; i < a.n; i += kThreads) a.out[i] = apply_at(op, a, i);
    return;
  }
  if (threadIdx.x == 0) {
    device::mbarrier_init(&full, 1);
    device::fence_mbarrier_init();
    device::mbarrier_arrive_expect_tx(&full, kIn * kTileBytes);
#pragma unroll
    for (int k = 0; k < kIn; ++k)
      device::bulk_copy_g2s(tile[k], a.in[k] + start, kTileBytes, &full);
  }
  __syncthreads();  // the barrier is initialised before anyone waits on it
  device::mbarrier_wait(&full, 0);

  T* out = a.out + start;
#pragma unroll
  for (int v = threadIdx.x; v < kVecs; v += kThreads) {
    V in[kIn];
#pragma unroll
    for (int k = 0; k < kIn; ++k) in[k] = device::load16(reinterpret_cast<T*>(tile[k]) + v * V::kN);
    device::store16(out + v * V::kN, apply_vec16(op, in));
  }
}

template <class Op, class T, int kIn>
void launch_bulk_tiles(Op op, MapArgs<T, kIn> a, cudaStream_t stream) {
  constexpr int64_t kTile = kTileBytes / sizeof(T);
  // Below 2^31 blocks for any n a GPU's memory holds (2^31 tiles are 16 TiB of each input).
  const int64_t grid = std::max<int64_t>(1, device::ceil_div(a.n, kTile));
  bulk_tile_map<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(op, a);
}

}  // namespace

Variant gpu_v07_bulk_tiles_sm90(Op op) {
  return bulk_map_variant(op, "v07_bulk_tiles_sm90",
                          "a block per 8 KiB tile: one TMA bulk copy and one wait (sm_90)",
                          [](auto f, auto a, cudaStream_t s) { launch_bulk_tiles(f, a, s); });
}

}  // namespace klab::elementwise
