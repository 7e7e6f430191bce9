// v07 high occupancy: cuBLAS's recipe instead of v06's engine. Plain 4-byte loads and stores
// (one f32 or two bf16 per word), a warp moving 128 contiguous bytes of a row per instruction,
// every load of a tile issued before the first shared-memory store, a one-element pad per tile
// row (an odd pitch: conflict-free columns), and as many resident warps as the SM holds (up to
// 64, 32 registers each). Tile shape, block size and blocks per SM are tuned per dtype (`klab
// tune transpose.v07_high_occupancy`; tune_occupancy.hpp).
// Why: at 16384^2 f32 v06 stays below cuBLAS's geam, and their profiles differ in how latency is
// hidden, not in bytes: both move about the minimal DRAM bytes; v06 runs 24 warps per SM whose
// only global traffic is one thread's TMA boxes (`long_scoreboard` its top stall), cuBLAS 63
// warps per SM each with 16 independent 4-byte loads in flight
// (`transpose_readWrite_alignment_kernel`, 64x64 tiles, 256 threads, 32 registers). v06's
// experiments ruled out the tile order, power-of-two pitches, the TMA store path, its
// shared-memory instructions and its TMA loads (v06_tma_pipeline.cu). What is left is the number
// of independent request streams per SM, which this rung maximises.
// bf16: a word holds two elements of an input row; the tile is kept as 2-byte elements so that a
// lane gathers the two elements of an output word from two consecutive tile rows (two LDS.U16 and
// one shift-or), with the odd pitch keeping both the 2-byte stores and the column reads
// conflict-free.
// Expected (the prediction, written before it ran): f32 matches cuBLAS, 92-94% of copy at
// 16384^2 (the 64x64 entry is its configuration); bf16, with no cuBLAS kernel to compare, 90-93%
// (it moves the same 4-byte words). Neither reaches 95% unless a tile shape beats cuBLAS's DRAM
// efficiency.
// Measured: the sweeps found cuBLAS's own shape (256 threads, 8 blocks/SM, 32 registers) spills
// at 32 registers (local traffic, `mio_throttle` its top stall); 1024 threads and streaming cache
// hints are slower; in bf16 128x128 tiles (256-byte rows on both sides) lead. The tile order
// (WideConfig::group) decides the rest: walking whole tile columns (group >= the tile rows:
// consecutive blocks write each output row front to back) wins in both dtypes, and with it both
// goals (f32 above cuBLAS, 95% of copy in f32 and bf16) are met. The committed groups (256 tile
// rows f32, 128 bf16) are whole columns up to 16384 rows; taller inputs walk groups of them, an
// order measured only at 16384^2. The numbers, the sweeps and the runs they come from:
// docs/worklogs/transpose.md.
// Requirements: f32 any shape; bf16 the word path needs even rows and cols and 4-byte-aligned
// pointers (else v04's kernel runs).
#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/transpose/rung.cuh"
#include "kernels/transpose/tune_occupancy.hpp"

namespace klab::transpose {

namespace {

template <class T, int kIndex>
struct Wide {
  static constexpr WideConfig kC = kWideSpace[kIndex];
  static constexpr int kE = 4 / int(sizeof(T));  // elements per word
  static constexpr int kPitch = kC.cols + 1;     // tile row pitch, elements (odd)
  static constexpr int kWarps = kC.threads / 32;
  static constexpr int kInSegs = kC.cols / kE / 32;          // 128-byte segments per input tile row
  static constexpr int kOutSegs = kC.rows / kE / 32;         // ... per output tile row
  static constexpr int kLoads = kC.rows * kInSegs / kWarps;  // words per thread, load phase
  static constexpr int kStores = kC.cols * kOutSegs / kWarps;    // words per thread, store phase
  using Elem = std::conditional_t<kE == 1, uint32_t, uint16_t>;  // a tile element's bits
  static constexpr bool kDynamic = kC.smem_bytes(int(sizeof(T))) > WideConfig::kStaticSmemLimit;
};

/// The tile's shared storage: static up to 48 KiB, else the dynamic allocation (launch opts in).
template <class W>
__device__ __forceinline__ typename W::Elem* tile_storage() {
  if constexpr (W::kDynamic) {
    extern __shared__ __align__(16) unsigned char dynamic_tile[];
    return reinterpret_cast<typename W::Elem*>(dynamic_tile);
  } else {
    __shared__ typename W::Elem static_tile[W::kC.rows * W::kPitch];
    return static_tile;
  }
}

/// Moves the tile at input rows row0.., columns col0.. to output rows col0.., columns row0..
template <class T, int kIndex>
__device__ __forceinline__ void move_tile(const Args<T>& a, typename Wide<T, kIndex>::Elem* tile,
                                          int64_t row0, int64_t col0) {
  using W = Wide<T, kIndex>;
  constexpr int kE = W::kE, kPitch = W::kPitch, kRows = W::kC.rows, kCols = W::kC.cols;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t in_words = a.cols / kE, out_words = a.rows / kE;  // words per row
  const auto* in = reinterpret_cast<const uint32_t*>(a.in);
  auto* out = reinterpret_cast<uint32_t*>(a.out);

  // A warp's items step through whole tile rows (columns): its segment is fixed, its row
  // (column) advances by kRowStep (kColStep) per item. Load item i: tile row r0 + i * kRowStep,
  // word w_in of it; store item j: output row (tile column) c0 + j * kColStep, word w_out, which
  // holds tile rows kE * w_out .. kE * w_out + kE - 1.
  constexpr int kRowStep = W::kWarps / W::kInSegs, kColStep = W::kWarps / W::kOutSegs;
  const int r0 = warp / W::kInSegs, w_in = (warp % W::kInSegs) * 32 + lane;
  const int c0 = warp / W::kOutSegs, w_out = (warp % W::kOutSegs) * 32 + lane;
  const int64_t gw = col0 / kE + w_in;  // this thread's input word column
  const bool gw_ok = gw < in_words;
  const bool whole = col0 + kCols <= a.cols && row0 + kRows <= a.rows;  // no bounds checks inside

  const uint32_t* src = in + (row0 + r0) * in_words + gw;
  uint32_t v[W::kLoads];
#pragma unroll
  for (int i = 0; i < W::kLoads; ++i) {
    const int r = r0 + i * kRowStep;
    const uint32_t* p = src + int64_t(i * kRowStep) * in_words;
    v[i] = whole || (gw_ok && row0 + r < a.rows) ? (W::kC.streaming ? __ldcs(p) : *p) : 0u;
  }
#pragma unroll
  for (int i = 0; i < W::kLoads; ++i) {
    const int r = r0 + i * kRowStep;
    if constexpr (kE == 1) {
      tile[r * kPitch + w_in] = v[i];
    } else {  // elements (r, 2w) and (r, 2w + 1): 2-byte stores, the pitch being odd
      tile[r * kPitch + 2 * w_in] = static_cast<uint16_t>(v[i]);
      tile[r * kPitch + 2 * w_in + 1] = static_cast<uint16_t>(v[i] >> 16);
    }
  }
  __syncthreads();
  const int64_t ow = row0 / kE + w_out;  // this thread's output word column
  const bool ow_ok = ow < out_words;
  uint32_t* dst = out + (col0 + c0) * out_words + ow;
#pragma unroll
  for (int j = 0; j < W::kStores; ++j) {
    const int c = c0 + j * kColStep;
    if (whole || (ow_ok && col0 + c < a.cols)) {
      uint32_t word;
      if constexpr (kE == 1)
        word = tile[w_out * kPitch + c];
      else
        word = uint32_t(tile[2 * w_out * kPitch + c]) | uint32_t(tile[(2 * w_out + 1) * kPitch + c])
                                                            << 16;
      uint32_t* p = dst + int64_t(j * kColStep) * out_words;
      if constexpr (W::kC.streaming)
        __stcs(p, word);
      else
        *p = word;
    }
  }
  __syncthreads();  // the next tile reuses `tile`
}

template <class T, int kIndex>
__global__ void __launch_bounds__(kWideSpace[kIndex].threads, kWideSpace[kIndex].min_blocks)
    wide_transpose(Args<T> a) {
  using W = Wide<T, kIndex>;
  constexpr int kRows = W::kC.rows, kCols = W::kC.cols, kGroup = W::kC.group;
  typename W::Elem* tile = tile_storage<W>();
  const int64_t tiles_y = (a.rows + kRows - 1) / kRows;
  if constexpr (kGroup == 0) {  // 2-D grid: x the tile column, y (strided) the tile row
    const int64_t col0 = int64_t(blockIdx.x) * kCols;
    for (int64_t by = blockIdx.y; by < tiles_y; by += gridDim.y)
      move_tile<T, kIndex>(a, tile, by * kRows, col0);
  } else {  // 1-D grid (strided) over tiles, in groups of kGroup tile rows, column-major inside
    const int64_t tiles_x = (a.cols + kCols - 1) / kCols;
    for (int64_t t = blockIdx.x; t < tiles_x * tiles_y; t += gridDim.x) {
      const TileRowCol rc = grouped_tile(t, kGroup, tiles_x, tiles_y);
      move_tile<T, kIndex>(a, tile, rc.row * kRows, rc.col * kCols);
    }
  }
}

template <class T, int kIndex>
void launch_entry(const Args<T>& a, cudaStream_t stream) {
  if constexpr (kWideSpace[kIndex].fits(int(sizeof(T)))) {
    using W = Wide<T, kIndex>;
    constexpr auto kernel = wide_transpose<T, kIndex>;
    const int smem = W::kDynamic ? W::kC.smem_bytes(int(sizeof(T))) : 0;
    if constexpr (W::kDynamic) {
      static const bool opted_in = [] {
        KLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             W::kC.smem_bytes(int(sizeof(T)))));
        return true;
      }();
      (void)opted_in;
    }
    dim3 grid = tile_grid(a.rows, a.cols, W::kC.rows, W::kC.cols);
    if constexpr (W::kC.group > 0)
      grid = dim3(static_cast<unsigned>(std::min<int64_t>(
          int64_t(device::ceil_div(a.rows, W::kC.rows)) * device::ceil_div(a.cols, W::kC.cols),
          kMaxGridX)));
    kernel<<<grid, W::kC.threads, smem, stream>>>(a);
  } else {
    KLAB_CHECK(false, "transpose v07 entry does not fit this dtype (can_implement says so)");
  }
}

template <class T>
using Launcher = void (*)(const Args<T>&, cudaStream_t);

template <class T, size_t... I>
constexpr std::array<Launcher<T>, sizeof...(I)> launchers(std::index_sequence<I...>) {
  return {&launch_entry<T, static_cast<int>(I)>...};
}

/// The word path: 4-byte words never straddle a row (bf16: even rows and cols) and are aligned.
bool wide_path_ok(const Problem& p, Buffers& b) {
  bool ok = false;
  with_args(p, b, [&]<class T>(Args<T> a) {
    constexpr int kE = 4 / int(sizeof(T));
    ok = a.rows % kE == 0 && a.cols % kE == 0 && reinterpret_cast<uintptr_t>(a.in) % 4 == 0 &&
         reinterpret_cast<uintptr_t>(a.out) % 4 == 0;
  });
  return ok;
}

}  // namespace

void launch_wide_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args) {
  KLAB_CHECK(index >= 0 && index < kWideSpaceSize, "transpose v07 tune-space index out of range");
  if (!wide_path_ok(p, b)) return launch_swizzled(p, b, args);
  with_args(p, b, [&]<class T>(Args<T> a) {
    static constexpr auto table = launchers<T>(std::make_index_sequence<kWideSpaceSize>());
    table[static_cast<size_t>(index)](a, stream_of(args));
  });
  KLAB_CHECK_LAUNCH();
}

Variant gpu_v07_high_occupancy() {
  return gpu_variant("v07_high_occupancy",
                     "cuBLAS's recipe: 4-byte words, all of a tile's loads in flight, up to 64 "
                     "warps per SM; tile tuned per dtype",
                     [](const Problem& p, Buffers& b, const LaunchArgs& args) {
                       launch_wide_config(wide_tuned_config(p), p, b, args);
                     });
}

}  // namespace klab::transpose
