// v05 vectorized: 16-byte loads and stores, a 256-byte-wide tile, transposition in shared memory
// at 32-bit granularity.
// Adds over v04:
//  - Every global access is 16 bytes (4 f32 / 8 bf16): 4x / 8x fewer memory instructions, and
//    4 x 16 = 64 bytes in flight per thread (bf16: two such batches per tile) instead of 16 / 8.
//  - The tile is (kTile, kTile) with kTile x sizeof(T) = 256 bytes (64 f32 / 128 bf16): each
//    block reads kTile input-row segments and writes kTile output-row segments of 256 bytes.
//  - Shared memory holds 16-byte chunks; chunk j of tile row r lives at chunk j ^ ((r / kN) & 7)
//    (a swizzle of whole chunks, so 16-byte shared stores stay aligned and conflict-free).
//  - The write phase reads 32-bit words down a tile column: a thread gathers kN words from kN
//    consecutive tile rows and packs them into one 16-byte output vector (f32), or, in bf16,
//    splits each word's two halves (PRMT) into two output vectors for two adjacent output rows.
//    Lanes are arranged 8 (vectors along the output row) x 4 (output rows or row pairs): each
//    8-lane group stores 128 contiguous bytes, and the swizzle puts the 32 lanes' words in 32
//    distinct banks.
// Expected bottleneck: DRAM bandwidth (copy ceiling); the residual loss is DRAM page locality
// (256-byte segments on 64 / 128 rows per tile) and the barrier between a block's load and store
// phases (hidden by 6 resident blocks per SM: 40 registers, no spills). Predicted 90-95% of copy
// (f32), 88-93% (bf16).
// Requirements: rows and cols multiples of kN (4 f32, 8 bf16) and 16-byte-aligned pointers; any
// other problem runs v04's scalar path instead (decided at launch: the pointers are known then).
// Shared memory: 16 KiB (f32) / 32 KiB (bf16) per 256-thread block.
#include <cstdint>

#include "kernels/transpose/rung.cuh"
#include "kernels/transpose/tune.hpp"
#include "klab/device/vec.cuh"

namespace klab::transpose {

namespace {

constexpr int kThreads = 256;
// Resident blocks per SM the register budget must allow (<= 40 registers per thread; ptxas fits
// both dtypes without spills once the store items and the bf16 load batches are not unrolled):
// 6 blocks x 256 threads x 64 B = 96 KiB of loads in flight per SM when all are loading, well
// above the ~33 KiB Little's law asks. bf16 is capped at 6 by its 33 KiB of shared memory anyway.
constexpr int kMinBlocks = 6;

template <class T>
struct VecTile {
  static constexpr int kN = 16 / int(sizeof(T));    // elements per 16-byte chunk
  static constexpr int kPair = 4 / int(sizeof(T));  // elements per 32-bit word
  static constexpr int kChunks = 16;                // chunks per tile row: 256 bytes
  static constexpr int kTile = kChunks * kN;        // tile edge in elements (64 f32, 128 bf16)
  static constexpr int kLoads = kTile * kChunks / kThreads;  // 16-byte loads per thread
  static constexpr int kWords = kChunks * 4;                 // 32-bit words per tile row
};

/// Physical chunk of logical chunk j in tile row r.
template <int kN>
__device__ __forceinline__ int swizzle(int r, int j) {
  return j ^ ((r / kN) & 7);
}

/// Output vector p (0 .. kPair-1) from kN gathered words: word i holds tile row (base + i).
template <class T>
__device__ __forceinline__ uint4 pack(const uint32_t (&w)[VecTile<T>::kN], int p) {
  if constexpr (sizeof(T) == 4) {
    return make_uint4(w[0], w[1], w[2], w[3]);
  } else {  // two bf16 per word: take the low (p = 0) or high (p = 1) halves of word pairs
    const unsigned sel = p == 0 ? 0x5410u : 0x7632u;
    return make_uint4(__byte_perm(w[0], w[1], sel), __byte_perm(w[2], w[3], sel),
                      __byte_perm(w[4], w[5], sel), __byte_perm(w[6], w[7], sel));
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads, kMinBlocks) vectorized_transpose(Args<T> a) {
  using G = VecTile<T>;
  constexpr int kN = G::kN, kPair = G::kPair, kTile = G::kTile;
  constexpr int kRowsPerLoad = kThreads / G::kChunks;  // tile rows one load instruction covers (16)
  constexpr int kBatch = 4;                            // loads in flight per thread per batch
  constexpr int kItems = 32 / (kThreads / 32);         // (kN output rows, 8 vectors) items per warp
  __shared__ uint4 tile[kTile * G::kChunks];           // (kTile rows, 16 chunks), swizzled
  const uint32_t* words = reinterpret_cast<const uint32_t*>(tile);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;

  // Load phase: thread -> chunk lj of tile rows lr0 + 16 i (16 threads read a 256-byte segment).
  const int lr0 = tid / G::kChunks, lj = tid % G::kChunks;
  // Store phase: lane -> output vector vv (tile rows kN*vv ..) of output rows c0 + 4 kN k (+p):
  // 8 lanes cover 128 contiguous output bytes, 4 lane groups take 4 output rows (f32) / row pairs.
  const int vv = (warp % 2) * 8 + lane % 8, h = lane / 8;
  const int c0 = (warp / 2) * kN + h * kPair;
  const int64_t col0 = int64_t(blockIdx.x) * kTile;
  const bool load_col_ok = col0 + int64_t(lj) * kN < a.cols;
  const int64_t tiles_y = (a.rows + kTile - 1) / kTile;

  for (int64_t by = blockIdx.y; by < tiles_y; by += gridDim.y) {
    const int64_t row0 = by * kTile;
    const T* src = a.in + (row0 + lr0) * a.cols + col0 + int64_t(lj) * kN;
    const int64_t rows_left = a.rows - row0 - lr0;
#pragma unroll 1  // bf16: two batches, kBatch loads in flight each (keeps registers <= 40)
    for (int b = 0; b < G::kLoads; b += kBatch) {
      uint4 v[kBatch];
#pragma unroll
      for (int i = 0; i < kBatch; ++i) {
        const int dr = (b + i) * kRowsPerLoad;
        v[i] = make_uint4(0, 0, 0, 0);
        if (load_col_ok && dr < rows_left)
          v[i] = __ldcs(reinterpret_cast<const uint4*>(src + dr * a.cols));
      }
#pragma unroll
      for (int i = 0; i < kBatch; ++i) {
        const int r = lr0 + (b + i) * kRowsPerLoad;
        tile[r * G::kChunks + swizzle<kN>(r, lj)] = v[i];
      }
    }
    __syncthreads();

    const int64_t ocol = row0 + int64_t(kN) * vv;  // output column of this lane's vectors
    const bool ocol_ok = ocol < a.rows;
    T* dst = a.out + (col0 + c0) * a.rows + ocol;
#pragma unroll 1  // one item's kN words live at a time: keeps the kernel within kMinBlocks' budget
    for (int k = 0; k < kItems; ++k) {
      const int c = c0 + k * 4 * kN;  // tile column = output row within the tile; c % kN = h kPair
      uint32_t w[kN];
#pragma unroll
      for (int i = 0; i < kN; ++i) {
        const int r = kN * vv + i;
        w[i] = words[r * G::kWords + swizzle<kN>(r, c / kN) * 4 + h];
      }
#pragma unroll
      for (int p = 0; p < kPair; ++p)
        if (ocol_ok && col0 + c + p < a.cols)
          *reinterpret_cast<uint4*>(dst + int64_t(k * 4 * kN + p) * a.rows) = pack<T>(w, p);
    }
    __syncthreads();  // the next tile row reuses `tile`
  }
}

}  // namespace

void launch_vectorized(const Problem& p, Buffers& b, const LaunchArgs& args) {
  bool vector_ok = true;
  with_args(p, b, [&]<class T>(Args<T> a) {
    constexpr int kN = VecTile<T>::kN;
    vector_ok =
        a.rows % kN == 0 && a.cols % kN == 0 && device::aligned16(a.in) && device::aligned16(a.out);
    if (!vector_ok) return;
    constexpr int kTileE = VecTile<T>::kTile;
    vectorized_transpose<T>
        <<<tile_grid(a.rows, a.cols, kTileE, kTileE), kThreads, 0, stream_of(args)>>>(a);
  });
  if (!vector_ok) return launch_swizzled(p, b, args);
  KLAB_CHECK_LAUNCH();
}

Variant gpu_v05_vectorized() {
  return gpu_variant("v05_vectorized",
                     "16-byte loads/stores, 256-byte tile rows, chunk swizzle (v04 if unaligned)",
                     launch_vectorized);
}

}  // namespace klab::transpose
