// v05 bulk copy (sm_90): inputs stream into shared memory through the Hopper copy engine (TMA,
// cp.async.bulk), kStages tiles deep, each stage completing on an mbarrier; threads compute from
// shared memory and store 16-byte vectors.
// Adds over v03/v04: loads no longer occupy threads or registers — one thread issues a tile's
// copy and the engine keeps (kStages - 1) x 8 KiB per input in flight per block, a deep, regular
// read stream (the approach CUB's DeviceTransform takes on Hopper).
// Expected bottleneck: DRAM bandwidth, at the copy ceiling; the per-tile block barrier is the
// overhead (one per 8 KiB per input).
// Requirements: sm_90; 16-byte aligned pointers (else v02's path). Map ops only (not grayscale).
#include "kernels/elementwise/rung.cuh"
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/tma_sm90.cuh"
#include "klab/device/vec.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::elementwise {

namespace {

constexpr int kThreads = 256;
constexpr int kStages = 4;
constexpr int kTileBytes = 8192;  // per input per stage: 2 x 16-byte vectors per thread

template <class Op, class T, int kIn>
__global__ void __launch_bounds__(kThreads) bulk_map(Op op, MapArgs<T, kIn> a) {
  using V = device::Vec16<T>;
  constexpr int kTile = kTileBytes / sizeof(T);  // elements per tile
  constexpr int kVecs = kTileBytes / 16;
  extern __shared__ __align__(128) unsigned char smem[];  // [kStages][kIn][kTileBytes]
  __shared__ uint64_t full[kStages];
  auto stage_ptr = [&](int s, int k) {
    return reinterpret_cast<T*>(smem + (s * kIn + k) * kTileBytes);
  };

  const int64_t n_tiles = a.n / kTile;
  // Tiles of this block: blockIdx.x, blockIdx.x + gridDim.x, ...
  const int64_t my_tiles = blockIdx.x < n_tiles ? (n_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) device::mbarrier_init(&full[s], 1);
    device::fence_mbarrier_init();
  }
  __syncthreads();
  auto issue = [&](int64_t local) {  // thread 0: start loading this block's local-th tile
    const int s = static_cast<int>(local % kStages);
    const int64_t tile = blockIdx.x + local * gridDim.x;
    device::mbarrier_arrive_expect_tx(&full[s], kIn * kTileBytes);
#pragma unroll
    for (int k = 0; k < kIn; ++k)
      device::bulk_copy_g2s(stage_ptr(s, k), a.in[k] + tile * kTile, kTileBytes, &full[s]);
  };
  if (threadIdx.x == 0)
    for (int64_t l = 0; l < kStages - 1 && l < my_tiles; ++l) issue(l);

  for (int64_t l = 0; l < my_tiles; ++l) {
    const int s = static_cast<int>(l % kStages);
    // Refill the stage consumed last iteration (everyone passed the barrier below since).
    if (threadIdx.x == 0 && l + kStages - 1 < my_tiles) issue(l + kStages - 1);
    device::mbarrier_wait(&full[s], static_cast<uint32_t>((l / kStages) & 1));
    T* out = a.out + (blockIdx.x + l * gridDim.x) * kTile;
#pragma unroll
    for (int v = threadIdx.x; v < kVecs; v += kThreads) {
      V in[kIn];
#pragma unroll
      for (int k = 0; k < kIn; ++k) in[k] = device::load16(stage_ptr(s, k) + v * V::kN);
      device::store16(out + v * V::kN, apply_vec16(op, in));
    }
    // Stage s is refilled next iteration by the copy engine: order these generic-proxy reads
    // before that async-proxy write.
    device::fence_proxy_async_shared();
    __syncthreads();
  }
  // The last n % kTile elements: plain loads, spread over the grid.
  for (int64_t i = n_tiles * kTile + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
       i += int64_t(gridDim.x) * blockDim.x)
    a.out[i] = apply_at(op, a, i);
}

template <class Op, class T, int kIn>
void launch_bulk(Op op, MapArgs<T, kIn> a, cudaStream_t stream) {
  constexpr int kSmem = kStages * kIn * kTileBytes;
  static const bool configured = [] {
    KLAB_CUDA_CHECK(cudaFuncSetAttribute(bulk_map<Op, T, kIn>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    return true;
  }();
  (void)configured;
  const int64_t tiles = a.n / (kTileBytes / sizeof(T));
  const int64_t grid = std::max<int64_t>(
      1,
      std::min(device::resident_wave(device_info().sm_count, bulk_map<Op, T, kIn>, kThreads, kSmem),
               tiles));
  bulk_map<<<static_cast<unsigned>(grid), kThreads, kSmem, stream>>>(op, a);
}

}  // namespace

Variant gpu_v05_bulk_copy_sm90(Op op) {
  return bulk_map_variant(op, "v05_bulk_copy_sm90",
                          "TMA bulk copies into a 4-stage shared-memory pipeline (sm_90)",
                          [](auto f, auto a, cudaStream_t s) { launch_bulk(f, a, s); });
}

}  // namespace klab::elementwise
