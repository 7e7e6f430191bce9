// v06 gray bulk (sm_90, grayscale only): the interleaved RGB input streams into shared memory
// through the Hopper copy engine (cp.async.bulk), one contiguous 12 KiB tile (1024 pixels) per
// stage, kStages deep; each thread then reads its 4 pixels (48 bytes) from shared memory as three
// 16-byte loads and writes their 4 grays with one 16-byte store.
// Adds over v03/v04 (grayscale's ladder has no v05: v05 is the map ops' bulk-copy rung): their
// three 16-byte loads per thread sit 48 bytes apart across the warp, so every load instruction
// touches ~32 sectors of which it uses half, and the L1 has to merge the three instructions'
// requests for each sector (v04's four batches in flight per thread make that worse). Here the
// copy engine reads each tile once, contiguously, whole lines only, without registers or
// threads; shared memory does the de-interleaving, and the 48-byte stride of the reads is
// conflict-free (each quarter-warp's eight 16-byte reads fall on eight distinct 4-bank groups,
// since 48 / 16 = 3 is odd).
// Bytes in flight: (kStages - 1) x 12 KiB of reads per block, 4 blocks per SM (48 KiB of shared
// memory each): ~144 KiB per SM against the ~11 KiB of reads Little's law asks for at ~2 TB/s
// of reads per direction and ~700 ns.
// Expected bottleneck: DRAM bandwidth, at the copy ceiling; the per-tile block barrier is the
// overhead (one per 16 KiB moved).
// Requirements: sm_90; rgb and gray 16-byte aligned (else v02's path); n % 1024 pixels are
// handled by plain loads.
#include "kernels/elementwise/rung.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/tma_sm90.cuh"
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/vec.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::elementwise {

namespace {

constexpr int kThreads = 256;
constexpr int kStages = 4;
constexpr int kPixels = 4 * kThreads;                         // per tile: 4 per thread
constexpr int kTileBytes = 3 * kPixels * int(sizeof(float));  // 12 KiB of interleaved RGB

__global__ void __launch_bounds__(kThreads)
    bulk_gray(const float* __restrict__ rgb, float* __restrict__ out, int64_t n) {
  extern __shared__ __align__(128) unsigned char smem[];  // [kStages][kTileBytes]
  __shared__ uint64_t full[kStages];
  const int64_t n_tiles = n / kPixels;
  const int64_t my_tiles = blockIdx.x < n_tiles ? (n_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) device::mbarrier_init(&full[s], 1);
    device::fence_mbarrier_init();
  }
  __syncthreads();
  auto issue = [&](int64_t local) {  // thread 0: start loading this block's local-th tile
    const int s = static_cast<int>(local % kStages);
    const int64_t tile = blockIdx.x + local * gridDim.x;
    device::mbarrier_arrive_expect_tx(&full[s], kTileBytes);
    device::bulk_copy_g2s(smem + s * kTileBytes, rgb + tile * (3 * kPixels), kTileBytes, &full[s]);
  };
  if (threadIdx.x == 0)
    for (int64_t l = 0; l < kStages - 1 && l < my_tiles; ++l) issue(l);

  for (int64_t l = 0; l < my_tiles; ++l) {
    const int s = static_cast<int>(l % kStages);
    // Refill the stage consumed last iteration (everyone passed the barrier below since).
    if (threadIdx.x == 0 && l + kStages - 1 < my_tiles) issue(l + kStages - 1);
    device::mbarrier_wait(&full[s], static_cast<uint32_t>((l / kStages) & 1));
    const float4* in = reinterpret_cast<const float4*>(smem + s * kTileBytes) + 3 * threadIdx.x;
    const float4 a = in[0], b = in[1], c = in[2];  // r0 g0 b0 r1 | g1 b1 r2 g2 | b2 r3 g3 b3
    const float4 o = make_float4(gray(a.x, a.y, a.z), gray(a.w, b.x, b.y), gray(b.z, b.w, c.x),
                                 gray(c.y, c.z, c.w));
    reinterpret_cast<float4*>(out + (blockIdx.x + l * gridDim.x) * kPixels)[threadIdx.x] = o;
    // Stage s is refilled next iteration by the copy engine: order these generic-proxy reads
    // before that async-proxy write.
    device::fence_proxy_async_shared();
    __syncthreads();
  }
  // The last n % kPixels pixels: plain loads, spread over the grid.
  for (int64_t i = n_tiles * kPixels + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = gray(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

void launch_bulk_gray(const float* rgb, float* out, int64_t n, cudaStream_t stream) {
  constexpr int kSmem = kStages * kTileBytes;
  static const bool configured = [] {
    KLAB_CUDA_CHECK(
        cudaFuncSetAttribute(bulk_gray, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    return true;
  }();
  (void)configured;
  const int64_t tiles = n / kPixels;
  const int64_t grid = std::max<int64_t>(
      1,
      std::min(device::resident_wave(device_info().sm_count, bulk_gray, kThreads, kSmem), tiles));
  bulk_gray<<<static_cast<unsigned>(grid), kThreads, kSmem, stream>>>(rgb, out, n);
}

}  // namespace

Variant gpu_v06_gray_bulk_sm90() {
  Variant v = gpu_variant(
      Op::grayscale, "v06_gray_bulk_sm90",
      "RGB tiles through TMA bulk copies into a 4-stage smem pipeline, 16-byte stores (sm_90)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        for (const auto& t : b.tensors)
          if (!device::aligned16(t.data)) return launch_grid_stride(Op::grayscale, p, b, args);
        launch_bulk_gray(b.ptr<float>("rgb"), b.ptr<float>("gray"), p.dim("n"), stream_of(args));
        KLAB_CHECK_LAUNCH();
      });
  v.info.min_sm = 90;
  v.info.sweepable = false;  // the tile shape fixes the block size
  return v;
}

}  // namespace klab::elementwise
