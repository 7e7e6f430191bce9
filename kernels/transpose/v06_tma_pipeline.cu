// v06 TMA pipeline (sm_90): the copy engine moves 2D tiles between global and shared memory in
// both directions; threads only transpose inside shared memory. A persistent grid walks the tiles
// with kStages loads in flight per block.
// Adds over v05:
//  - Loads and stores are cp.async.bulk.tensor (TMA) boxes: no load/store instructions, no
//    address arithmetic, no registers holding data in flight. One thread issues them.
//  - A kStages-deep ring of input tiles (an mbarrier per stage) keeps the read stream going
//    while the block transposes and the previous tiles' stores drain (two output buffers, reused
//    once cp.async.bulk.wait_group.read says the engine has read them).
//  - Both tiles use the TMA's 128-byte swizzle: 16-byte chunk j of a 128-byte tile row r sits at
//    chunk j ^ (r % 8). Each thread moves an N x N block (N = 16 bytes / element size: 4 f32,
//    8 bf16) with N 16-byte shared loads, a register transpose and N 16-byte shared stores. Lane
//    (p, k) = (lane-group p, index k in the group of 8) takes block row a = k and block column
//    b = (k + p) % 8; with the swizzle, the 8 lanes of every 16-byte access phase hit 8 distinct
//    chunk positions on both the load and the store side: no bank conflicts.
//  - Tiles are walked in groups of kGroup tile rows (like a GEMM's rasterisation; tuned), so the tiles
//    in flight at once read kGroup x 64 input rows and write segments of many output rows, both
//    in long contiguous runs.
// Expected bottleneck: DRAM bandwidth at the copy ceiling (the elementwise v05 rung with the same
// engine reached 98.5% of copy); the residual is the DRAM page locality of 128-256-byte row
// segments. Predicted 93-97% of copy in f32 and bf16.
// Measured: below the prediction and below cuBLAS's geam at 16384^2, at every ring depth. Ruled
// out one by one: the tile order (the tune space's groups), power-of-two pitches (16448^2), the
// TMA store path (the direct-store `_st` entries are slower), generic shared-memory instructions
// (now explicit ld/st.shared: no change) and the TMA load engine (the `_ld` entries, every thread
// copying with 16-byte cp.async, are no faster). Neither the load engine nor the shared-memory
// instructions cap v06; v07 (high occupancy, plain 4-byte loads and stores) is the answer the
// ladder measured. The numbers and the runs they come from: docs/worklogs/transpose.md.
// Tuned: the stage shape (sub-tiles per stage) and the ring depth come from tune.hpp's space,
// one entry per dtype (`klab tune transpose.v06_tma_pipeline --dtype f32|bf16`).
// Requirements: sm_90; rows and cols multiples of N (16-byte row pitches) and 16-byte-aligned
// pointers; otherwise v05's path (which falls back to v04 in turn).
#include <cuda.h>

#include <algorithm>
#include <array>
#include <utility>
#include <cstdint>

#include "kernels/transpose/rung.cuh"
#include "kernels/transpose/tune.hpp"
#include "klab/device/cp_async.cuh"  // cp_async_16 (the kCpAsync entries)
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/swizzle.hpp"
#include "klab/device/tensor_map.hpp"
#include "klab/device/tile_order.hpp"
#include "klab/device/tma_sm90.cuh"
#include "klab/device/vec.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::transpose {

namespace {

/// Entry kIndex of tune.hpp's space for element type T: kSubX x kSubY sub-tiles of (E x E)
/// elements per pipeline stage, E x element size = 128 bytes.
template <class T, int kIndex>
struct TmaTile {
  static constexpr TmaConfig kCfg = kTmaSpace[kIndex];
  static constexpr int kSubX = kCfg.sub_x, kSubY = kCfg.sub_y, kStages = kCfg.stages;
  static constexpr int kGroup = kCfg.group;             // tile rows per rasterisation group
  static constexpr bool kDirect = kCfg.direct_store;    // st.global instead of TMA stores
  static constexpr bool kCpAsync = kCfg.cp_async_load;  // cp.async by all threads, not TMA loads
  static constexpr int kN = 16 / int(sizeof(T));        // elements per 16-byte chunk
  static constexpr int kE = 8 * kN;                     // sub-tile edge: 128 bytes of elements
  static constexpr int kThreads = kCfg.threads();       // 64 threads per sub-tile, N x N each
  static constexpr int kTileCols = kE * kSubX, kTileRows = kE * kSubY;  // one stage, input side
  static constexpr int kInBox = 128 * kTileRows;   // bytes of one input box (kE cols x kTileRows)
  static constexpr int kOutBox = 128 * kTileCols;  // bytes of one output box (kE x kTileCols)
  static constexpr int kStageBytes = kSubX * kInBox;  // = kSubY * kOutBox
  static constexpr int kSmem = kCfg.smem_bytes(int(sizeof(T)));
  static_assert(kSmem == (kStages + (kDirect ? 0 : 2)) * kStageBytes + 1024 + 64,
                "tune.hpp's smem_bytes and the layout agree");
};

/// Transposes an N x N block of 16-byte chunks: out[j] holds element j of every in[i].
template <class T>
__device__ __forceinline__ void transpose_block(const uint4 (&in)[16 / sizeof(T)],
                                                uint4 (&out)[16 / sizeof(T)]) {
  if constexpr (sizeof(T) == 4) {
    const uint32_t(*w)[4] = reinterpret_cast<const uint32_t(*)[4]>(in);
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = make_uint4(w[0][j], w[1][j], w[2][j], w[3][j]);
  } else {  // 8 x 8 halves: word w of out[j] = (element j of in[2w], element j of in[2w + 1])
    const uint32_t(*w)[4] = reinterpret_cast<const uint32_t(*)[4]>(in);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const unsigned sel = (j & 1) ? 0x7632u : 0x5410u;
      out[j] = make_uint4(
          __byte_perm(w[0][j / 2], w[1][j / 2], sel), __byte_perm(w[2][j / 2], w[3][j / 2], sel),
          __byte_perm(w[4][j / 2], w[5][j / 2], sel), __byte_perm(w[6][j / 2], w[7][j / 2], sel));
    }
  }
}

/// Byte offset of 16-byte chunk `chunk` of row `row` in a 128-byte-swizzled box.
__device__ __forceinline__ uint32_t swizzled(int row, int chunk) {
  return device::swizzle_128b_chunk(row, chunk);
}

template <class T, class G>
__global__ void __launch_bounds__(G::kThreads)
    tma_transpose(const __grid_constant__ CUtensorMap in_map,
                  const __grid_constant__ CUtensorMap out_map, const T* __restrict__ in,
                  T* __restrict__ out, int64_t rows, int64_t cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kN = G::kN, kE = G::kE, kStages = G::kStages, kGroup = G::kGroup;
  extern __shared__ unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 bytes: boxes start on 1024-byte boundaries.
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  unsigned char* in_stage = smem;                            // [kStages][kSubX][kInBox]
  unsigned char* out_buf = smem + kStages * G::kStageBytes;  // [2][kSubY][kOutBox] (TMA stores)
  uint64_t* full = reinterpret_cast<uint64_t*>(out_buf + (G::kDirect ? 0 : 2) * G::kStageBytes);

  const int64_t tiles_x = (cols + G::kTileCols - 1) / G::kTileCols;
  const int64_t tiles_y = (rows + G::kTileRows - 1) / G::kTileRows;
  const int64_t n_tiles = tiles_x * tiles_y;
  const int64_t my_tiles = blockIdx.x < n_tiles ? (n_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  // Tile t -> (tile row, tile column), kGroup tile rows at a time, column by column in a group.
  auto tile_origin = [&](int64_t local, int& x, int& y) {
    const int64_t t = blockIdx.x + local * gridDim.x;
    const auto [tile_row, tile_col] =
        device::grouped_tile_order<int64_t>(t, kGroup, tiles_y, tiles_x);
    y = static_cast<int>(tile_row * G::kTileRows);
    x = static_cast<int>(tile_col * G::kTileCols);
  };

  const int tid = threadIdx.x;
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) device::mbarrier_init(&full[s], 1);
    device::fence_mbarrier_init();
  }
  __syncthreads();
  auto issue_load = [&](int64_t local) {  // thread 0
    const int s = static_cast<int>(local % kStages);
    int x, y;
    tile_origin(local, x, y);
    device::mbarrier_arrive_expect_tx(&full[s], G::kStageBytes);
#pragma unroll
    for (int bx = 0; bx < G::kSubX; ++bx)
      device::tma_load_2d(in_stage + s * G::kStageBytes + bx * G::kInBox, &in_map, x + bx * kE, y,
                          &full[s]);
  };
  // kCpAsync: every thread copies kN 16-byte chunks of a stage, a warp along whole stage rows
  // (kSubX x 128 contiguous bytes), into the layout the TMA's 128-byte swizzle would give
  // (chunk j of row r of box sx at sx * kInBox + r * 128 + (j ^ (r % 8)) * 16); chunks outside
  // the matrix are zero-filled. One commit group per tile, empty past the last.
  auto issue_copy = [&](int64_t local) {  // every thread
    const int s = static_cast<int>(local % kStages);
    int x, y;
    tile_origin(local, x, y);
    constexpr int kRowChunks = G::kSubX * 8;
#pragma unroll
    for (int q = 0; q < kN; ++q) {
      const int idx = tid + q * G::kThreads, r = idx / kRowChunks, c = idx % kRowChunks;
      const int64_t row = int64_t(y) + r, col = int64_t(x) + c * kN;
      const bool ok = row < rows && col < cols;  // cols % kN == 0 on this path
      const uint32_t dst = device::smem_addr(in_stage + s * G::kStageBytes + (c / 8) * G::kInBox +
                                             swizzled(r, c % 8));
      device::cp_async_16(dst, ok ? in + row * cols + col : in, ok);
    }
  };
  if constexpr (G::kCpAsync) {
    for (int64_t l = 0; l < kStages; ++l) {
      if (l < my_tiles) issue_copy(l);
      device::cp_async_commit();
    }
  } else if (tid == 0) {
    for (int64_t l = 0; l < kStages && l < my_tiles; ++l) issue_load(l);
  }

  // This thread's N x N block: sub-tile (sx, sy), block row a, block column b (see the header).
  const int sub = tid / 64, u = tid % 64;
  const int sx = sub % G::kSubX, sy = sub / G::kSubX;
  const int a = u % 8, b = (u % 8 + u / 8) % 8;
  const int in_row0 = sy * kE + kN * a;   // rows in_row0 .. + N - 1 of input box sx, chunk b
  const int out_row0 = sx * kE + kN * b;  // rows out_row0 .. + N - 1 of output box sy, chunk a

  for (int64_t l = 0; l < my_tiles; ++l) {
    const int s = static_cast<int>(l % kStages);
    [[maybe_unused]] const int ob = static_cast<int>(l & 1);  // output buffer (TMA stores)
    if constexpr (G::kCpAsync)
      device::cp_async_wait<kStages - 1>();  // this thread's copies of tile l have landed
    else
      device::mbarrier_wait(&full[s], static_cast<uint32_t>((l / kStages) & 1));
    if constexpr (!G::kDirect || G::kCpAsync) {
      // Output buffer ob was last stored from at l - 2: wait until the engine has read it; and
      // (cp.async) every thread's copies of tile l are visible after this barrier.
      if (!G::kDirect && tid == 0) device::bulk_wait_group_read<1>();
      __syncthreads();
    }

    // By .shared address (LDS/STS): `smem` went through an integer cast for its alignment, and
    // plain dereferences of it compiled to generic LD.E/ST.E (`klab sass`).
    const uint32_t src = device::smem_addr(in_stage + s * G::kStageBytes + sx * G::kInBox);
    uint4 v[kN], w[kN];
#pragma unroll
    for (int i = 0; i < kN; ++i) v[i] = device::ld_shared_v4(src + swizzled(in_row0 + i, b));
    transpose_block<T>(v, w);
    if constexpr (G::kDirect) {
      // Output row x + out_row0 + j, columns y + sy * kE + N a .. + N - 1 (rows % N == 0 here).
      int x, y;
      tile_origin(l, x, y);
      const int64_t col = y + sy * kE + kN * a;
#pragma unroll
      for (int j = 0; j < kN; ++j) {
        const int64_t row = x + out_row0 + j;
        if (row < cols && col < rows) *reinterpret_cast<uint4*>(out + row * rows + col) = w[j];
      }
      __syncthreads();  // stage s is free for the next load
    } else {
      const uint32_t dst = device::smem_addr(out_buf + ob * G::kStageBytes + sy * G::kOutBox);
#pragma unroll
      for (int j = 0; j < kN; ++j) device::st_shared_v4(dst + swizzled(out_row0 + j, a), w[j]);
      device::fence_proxy_async_shared();  // the stores below read what this thread wrote
      __syncthreads();                     // and stage s is free for the next load
    }

    if (tid == 0) {
      if constexpr (!G::kDirect) {
        int x, y;
        tile_origin(l, x, y);
#pragma unroll
        for (int by = 0; by < G::kSubY; ++by)
          device::tma_store_2d(&out_map, y + by * kE, x,
                               out_buf + ob * G::kStageBytes + by * G::kOutBox);
        device::bulk_commit_group();
      }
      if constexpr (!G::kCpAsync)
        if (l + kStages < my_tiles) issue_load(l + kStages);
    }
    if constexpr (G::kCpAsync) {  // stage s was freed by the barrier above
      if (l + kStages < my_tiles) issue_copy(l + kStages);
      device::cp_async_commit();
    }
  }
  if (tid == 0) device::bulk_wait_group<0>();  // shared memory must outlive the engine's reads
#endif
}

template <class T, int kIndex>
void launch_tma(Args<T> a, cudaStream_t stream) {
  using G = TmaTile<T, kIndex>;
  constexpr auto kernel = tma_transpose<T, G>;
  static const bool opted_in = [] {
    KLAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmem));
    return true;
  }();
  (void)opted_in;
  const CUtensorMap in_map = device::tensor_map_2d(
      a.in, device::tma_data_type<T>(), uint64_t(a.cols), uint64_t(a.rows),
      uint64_t(a.cols) * sizeof(T), G::kE, G::kTileRows, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap out_map = device::tensor_map_2d(
      a.out, device::tma_data_type<T>(), uint64_t(a.rows), uint64_t(a.cols),
      uint64_t(a.rows) * sizeof(T), G::kE, G::kTileCols, CU_TENSOR_MAP_SWIZZLE_128B);
  const int64_t tiles =
      device::ceil_div(a.rows, G::kTileRows) * device::ceil_div(a.cols, G::kTileCols);
  const int64_t grid =
      std::min(device::resident_wave(device_info().sm_count, kernel, G::kThreads, G::kSmem), tiles);
  kernel<<<static_cast<unsigned>(grid), G::kThreads, G::kSmem, stream>>>(in_map, out_map, a.in,
                                                                         a.out, a.rows, a.cols);
}

// Entries too large for a dtype (tma_config_can_implement refuses them) are never instantiated.
template <class T, int kIndex>
constexpr bool kFits = kTmaSpace[kIndex].misfit(int(sizeof(T))) == TmaConfig::Misfit::none;

template <class T, int kIndex>
void launch_entry(Args<T> a, cudaStream_t stream) {
  if constexpr (kFits<T, kIndex>)
    launch_tma<T, kIndex>(a, stream);
  else
    throw Error("transpose v06: entry " + kTmaSpace[kIndex].name() + " does not fit this dtype");
}

template <class T>
using Launcher = void (*)(Args<T>, cudaStream_t);

template <class T, size_t... I>
constexpr std::array<Launcher<T>, sizeof...(I)> launchers(std::index_sequence<I...>) {
  return {&launch_entry<T, static_cast<int>(I)>...};
}

}  // namespace

bool tma_path_ok(const Problem& p, const Buffers& b) {
  bool ok = false;
  with_args(p, const_cast<Buffers&>(b), [&]<class T>(Args<T> a) {
    constexpr int kN = 16 / int(sizeof(T));
    ok = a.rows % kN == 0 && a.cols % kN == 0 && device::aligned16(a.in) &&
         device::aligned16(a.out) && a.rows < (int64_t(1) << 31) && a.cols < (int64_t(1) << 31);
  });
  return ok;
}

void launch_tma_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args) {
  KLAB_CHECK(index >= 0 && index < kTmaSpaceSize, "transpose tune-space index out of range");
  with_args(p, b, [&]<class T>(Args<T> a) {
    static constexpr auto table = launchers<T>(std::make_index_sequence<kTmaSpaceSize>());
    table[static_cast<size_t>(index)](a, stream_of(args));
  });
  KLAB_CHECK_LAUNCH();
}

Variant gpu_v06_tma_pipeline() {
  Variant v = gpu_variant("v06_tma_pipeline",
                          "TMA tile loads and stores, mbarrier ring, persistent grid, tuned per "
                          "dtype (sm_90; v05 otherwise)",
                          [](const Problem& p, Buffers& b, const LaunchArgs& args) {
                            if (!tma_path_ok(p, b)) return launch_vectorized(p, b, args);
                            launch_tma_config(tma_tuned_config(p), p, b, args);
                          });
  v.info.min_sm = 90;
  return v;
}

}  // namespace klab::transpose
