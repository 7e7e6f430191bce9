#pragma once
// Device building blocks of the hgemm tensor-core rungs (names per CuTe: g global, s shared,
// r registers): shared-memory tile layouts, the global -> shared tile copier (16-byte chunks,
// predicated and zero-filled at the edges, or element by element), the warp tile of
// mma.sync m16n8k16 fed by ldmatrix, and the epilogue. Each rung composes its main loop from these.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "klab/device/cp_async.cuh"
#include "klab/device/dispatch.cuh"
#include "klab/device/mma_sm80.cuh"
#include "klab/device/smem.cuh"
#include "klab/device/tile_order.hpp"

namespace klab::hgemm {

inline constexpr int kChunk = 8;  ///< elements in one 16-byte chunk (bf16/f16)

/// How a tile travels from global to shared memory.
enum class Copy {
  sync16,   ///< 16-byte LDG then STS through registers; needs GemmArgs::vec16()
  async16,  ///< 16-byte cp.async (no registers), zero-filled out of bounds; needs GemmArgs::vec16()
  scalar,   ///< element by element through registers: any shape, any alignment (fallback path)
};

/// Per-lane part of the ldmatrix addresses, computed once per thread (see frag_offset).
struct LaneFrag {
  int base;  ///< element offset of this lane's row (and, padded, its chunk)
  int t;     ///< swizzled: the lane's XOR term, (lane / 16) ^ swizzle(row)
};

// Both layouts answer the same two questions:
//   offset(row, chunk)                     where chunk `chunk` (8 elements) of row `row` lives;
//   frag_offset(lf, row0, cu, cc)          the address lane l gives ldmatrix.x4 for the 16x16
//       block at rows row0.., chunks cu+cc..: row row0 + l % 16, chunk cu + cc + l / 16.
//       row0 % 8 == 0, cu a multiple of kPeriod (runtime, warp-uniform), cc even (compile time),
//       so that everything but a compile-time constant is hoisted out of the main loop.

/// Row-major (kRows, kCols) tile whose rows are padded by kPad elements: with kPad = 8 (16 bytes)
/// the 8 row addresses of one ldmatrix phase fall in 8 different 16-byte bank groups. Costs
/// kPad / kCols extra shared memory, and 16-byte stores of consecutive chunks still conflict 2-way.
template <int kRows, int kCols, int kPad>
struct PaddedLayout {
  static constexpr int kStride = kCols + kPad;
  static constexpr int kElems = kRows * kStride;
  static constexpr int kPeriod = 1;
  __host__ __device__ static int offset(int row, int chunk) {
    return row * kStride + chunk * kChunk;
  }
  __host__ __device__ static LaneFrag lane_frag(int lane) {
    return {(lane & 15) * kStride + (lane >> 4) * kChunk, 0};
  }
  __host__ __device__ static int frag_offset(LaneFrag lf, int row0, int cu, int cc) {
    return lf.base + row0 * kStride + (cu + cc) * kChunk;
  }
};

/// Row-major (kRows, kCols) tile, unpadded, with the 16-byte chunk index XORed by a function of
/// the row: chunk c of row r lives at chunk c ^ swizzle(r). swizzle(r) takes kPeriod values over
/// each group of 8 rows that share one 128-byte bank line, so any 8 consecutive rows at the same
/// logical chunk (one ldmatrix phase) and any 8 consecutive chunks (one 16-byte store phase)
/// land in 8 distinct bank groups: no conflicts and no wasted bytes.
/// (kCols = 32: 4 chunks/row, 2 rows per line, swizzle = (r >> 1) & 3; kCols >= 64: r & 7.)
template <int kRows, int kCols>
struct SwizzledLayout {
  static constexpr int kStride = kCols;
  static constexpr int kElems = kRows * kCols;
  static constexpr int kChunks = kCols / kChunk;
  static constexpr int kPeriod = kChunks < 8 ? kChunks : 8;
  static constexpr int kRowShift = kPeriod == 8 ? 0 : kPeriod == 4 ? 1 : 2;  // log2(8 / kPeriod)
  static_assert(kChunks == 2 || kChunks == 4 || kChunks % 8 == 0, "row of 2, 4 or 8k chunks");

  __host__ __device__ static int swizzle(int row) { return (row >> kRowShift) & (kPeriod - 1); }
  __host__ __device__ static int offset(int row, int chunk) {
    return row * kStride + (chunk ^ swizzle(row)) * kChunk;
  }
  __host__ __device__ static LaneFrag lane_frag(int lane) {
    const int r = lane & 15;
    return {r * kStride, (lane >> 4) ^ swizzle(r)};
  }
  __host__ __device__ static int frag_offset(LaneFrag lf, int row0, int cu, int cc) {
    return lf.base + row0 * kStride +
           (cu + (cc & ~(kPeriod - 1)) + ((cc & (kPeriod - 1)) ^ lf.t)) * kChunk;
  }
};

/// Copies (kRows, kCols) tiles of a row-major global matrix (rows x cols, leading dimension ld)
/// into shared memory laid out as Layout. Each of kThreads threads owns one chunk column and
/// kPasses rows kRowsPerPass apart. The tile walks along K: down for B (kKAlongRows), right for A.
/// Out-of-bounds chunks or elements become zeros, so partial tiles need no special case later.
template <class T, int kRows, int kCols, int kThreads, class Layout, bool kKAlongRows>
struct TileCopier {
  static constexpr int kChunksPerRow = kCols / kChunk;
  static constexpr int kRowsPerPass = kThreads / kChunksPerRow;
  static constexpr int kPasses = kRows / kRowsPerPass;
  static_assert(kCols % kChunk == 0 && kThreads % kChunksPerRow == 0 && kRows % kRowsPerPass == 0);
  static_assert(kRowsPerPass % 8 == 0,
                "passes 8k rows apart keep the swizzle of a thread's chunks equal");

  const T* base;  // the matrix (a safe source address for zero-filled cp.async)
  const T* src;   // this thread's chunk in the current tile (may point outside the matrix)
  int row, col;   // its coordinates in the matrix
  int rows, cols, ld;
  int soff;  // its shared-memory offset (elements) within a tile

  __device__ TileCopier(const T* g, int rows_, int cols_, int ld_, int row0, int col0, int tid)
      : base(g), rows(rows_), cols(cols_), ld(ld_) {
    const int r = tid / kChunksPerRow, c = tid % kChunksPerRow;
    row = row0 + r;
    col = col0 + c * kChunk;
    src = g + static_cast<int64_t>(row) * ld + col;
    soff = Layout::offset(r, c);
  }

  /// Issues the copy of the current tile into `s` (one pipeline stage): passes [first, last) only,
  /// so that a main loop can spread one tile's copies over several mma steps. first/last must be
  /// compile-time constants after unrolling (the skipped passes then vanish).
  template <Copy kCopy>
  __device__ void copy(T* s, int first = 0, int last = kPasses) const {
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      if (p < first || p >= last) continue;
      const bool row_ok = row + p * kRowsPerPass < rows;
      const T* g = src + static_cast<int64_t>(p * kRowsPerPass) * ld;
      T* d = s + soff + p * kRowsPerPass * Layout::kStride;
      if constexpr (kCopy == Copy::async16) {
        const bool ok = row_ok && col < cols;
        device::cp_async_16(device::smem_addr(d), ok ? g : base, ok);
      } else if constexpr (kCopy == Copy::sync16) {
        uint4 v = make_uint4(0, 0, 0, 0);
        if (row_ok && col < cols) v = *reinterpret_cast<const uint4*>(g);
        *reinterpret_cast<uint4*>(d) = v;
      } else {
        const auto* g16 = reinterpret_cast<const unsigned short*>(g);
        uint32_t w[4];
#pragma unroll
        for (int e = 0; e < kChunk; e += 2) {
          const uint32_t lo = row_ok && col + e < cols ? g16[e] : 0u;
          const uint32_t hi = row_ok && col + e + 1 < cols ? g16[e + 1] : 0u;
          w[e / 2] = lo | (hi << 16);
        }
        *reinterpret_cast<uint4*>(d) = make_uint4(w[0], w[1], w[2], w[3]);
      }
    }
  }

  /// Moves to the next tile along K.
  __device__ void advance() {
    if constexpr (kKAlongRows) {
      row += kRows;
      src += static_cast<int64_t>(kRows) * ld;
    } else {
      col += kCols;
      src += kCols;
    }
  }
};

/// Block-level epilogue, second half: copies a (kRows, kCols) tile of C staged in shared memory
/// (laid out as Layout, see WarpTile::stage) to global rows row0.., columns col0.. with 16-byte
/// stores, consecutive threads on consecutive chunks of a row (fully coalesced). Needs n % 8 == 0
/// and C 16-byte aligned, so a chunk is either wholly inside or wholly outside the matrix.
template <class T, int kRows, int kCols, int kThreads, class Layout>
__device__ __forceinline__ void store_tile16(const T* s, T* c, int m, int n, int row0, int col0,
                                             int tid) {
  constexpr int kChunksPerRow = kCols / kChunk;
  constexpr int kRowsPerPass = kThreads / kChunksPerRow;
  static_assert(kThreads % kChunksPerRow == 0 && kRows % kRowsPerPass == 0);
  const int r = tid / kChunksPerRow, ch = tid % kChunksPerRow;
  const int col = col0 + ch * kChunk;
  if (col >= n) return;
#pragma unroll
  for (int p = 0; p < kRows / kRowsPerPass; ++p) {
    const int rr = r + p * kRowsPerPass;
    if (row0 + rr >= m) break;
    const uint4 v = *reinterpret_cast<const uint4*>(s + Layout::offset(rr, ch));
    *reinterpret_cast<uint4*>(c + static_cast<int64_t>(row0 + rr) * n + col) = v;
  }
}

/// One warp's (kWarpM, kWarpN) block of C in fp32 registers, as (kWarpM/16) x (kWarpN/8)
/// m16n8 accumulator fragments, and the mma.sync loop that feeds it from shared memory.
template <class T, int kWarpM, int kWarpN>
struct WarpTile {
  static constexpr int kTilesM = kWarpM / 16;
  static constexpr int kTilesN = kWarpN / 8;
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0);

  static constexpr uint32_t kBytes = sizeof(T);

  float acc[kTilesM][kTilesN][4];

  __device__ void zero() {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i)
#pragma unroll
      for (int j = 0; j < kTilesN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;
  }

  /// One 16-deep step's operands in registers: kTilesM A fragments (16x16) and kTilesN B fragments (16x8).
  struct Frags {
    uint32_t a[kTilesM][4];
    uint32_t b[kTilesN][2];
  };

  /// Loads step ks (k = 16ks .. 16ks+15) of this warp's operands: rows row0 .. row0+kWarpM of the
  /// (kBlockM, kBlockK) A tile at shared address sA, and columns 8 chunk0 .. 8 chunk0+kWarpN of the
  /// (kBlockK, kBlockN) B tile at sB; fa/fb are the lanes' LaneFrag for the two layouts, chunk0 a
  /// multiple of 8. kTilesM ldmatrix.x4 for A, kTilesN/2 ldmatrix.x4.trans for B.
  template <class LayoutA, class LayoutB>
  __device__ static void load_frags(Frags& f, uint32_t sA, uint32_t sB, LaneFrag fa, LaneFrag fb,
                                    int row0, int chunk0, int ks) {
    static_assert((kWarpN / kChunk) % LayoutB::kPeriod == 0,
                  "a warp's B columns must start on a swizzle period");
#pragma unroll
    for (int i = 0; i < kTilesM; ++i)
      device::ldmatrix_x4(f.a[i], sA + kBytes * LayoutA::frag_offset(fa, row0 + 16 * i, 0, 2 * ks));
#pragma unroll
    for (int j = 0; j < kTilesN / 2; ++j) {
      uint32_t r[4];
      device::ldmatrix_x4_trans(r, sB + kBytes * LayoutB::frag_offset(fb, 16 * ks, chunk0, 2 * j));
      f.b[2 * j][0] = r[0];
      f.b[2 * j][1] = r[1];
      f.b[2 * j + 1][0] = r[2];
      f.b[2 * j + 1][1] = r[3];
    }
  }

  /// acc += A step @ B step: kTilesM x kTilesN mma.sync (32 HMMA per 8 LDSM for a 64x64 warp tile).
  __device__ void mma(const Frags& f) {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i)
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) device::mma_m16n8k16<T>(acc[i][j], f.a[i], f.b[j]);
  }

  /// acc += the whole kBlockK-deep tile, step by step (arguments as load_frags).
  template <int kBlockK, class LayoutA, class LayoutB>
  __device__ void mma_tile(uint32_t sA, uint32_t sB, LaneFrag fa, LaneFrag fb, int row0,
                           int chunk0) {
#pragma unroll
    for (int ks = 0; ks < kBlockK / 16; ++ks) {
      Frags f;
      load_frags<LayoutA, LayoutB>(f, sA, sB, fa, fb, row0, chunk0, ks);
      mma(f);
    }
  }

  /// Block-level epilogue, first half: rounds to T and writes this warp's block into a shared
  /// (kRows, kCols) tile of C laid out as Layout, at tile rows row0.., chunks chunk0.. (chunk0 a
  /// multiple of Layout::kPeriod). 4-byte stores; with a swizzled layout the 8 rows of one store
  /// phase land in 8 distinct bank groups (conflict-free). Follow with __syncthreads and store_tile16.
  template <class Layout>
  __device__ void stage(T* s, int row0, int chunk0, int lane) const {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < kTilesM; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = row0 + 16 * i + g + 8 * h;
#pragma unroll
        for (int j = 0; j < kTilesN; ++j)
          *reinterpret_cast<uint32_t*>(s + Layout::offset(r, chunk0 + j) + 2 * t) =
              device::pack2<T>(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
      }
  }

  /// Rounds to T and writes the rows < m, columns < n of this warp's block at (row0, col0) of C.
  /// kPairs: two adjacent columns per 4-byte store (needs n even and C 4-byte aligned).
  template <bool kPairs>
  __device__ void store(T* c, int m, int n, int row0, int col0, int lane) const {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < kTilesM; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = row0 + 16 * i + g + 8 * h;
        if (r >= m) continue;
        T* crow = c + static_cast<int64_t>(r) * n;
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) {
          const int col = col0 + 8 * j + 2 * t;
          const float lo = acc[i][j][2 * h], hi = acc[i][j][2 * h + 1];
          if constexpr (kPairs) {
            if (col < n) *reinterpret_cast<uint32_t*>(crow + col) = device::pack2<T>(lo, hi);
          } else {
            if (col < n) crow[col] = device::from_float<T>(lo);
            if (col + 1 < n) crow[col + 1] = device::from_float<T>(hi);
          }
        }
      }
  }
};

}  // namespace klab::hgemm
