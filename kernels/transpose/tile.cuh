#pragma once
// The 32 x 32 shared-memory tile kernel behind v02 (plain layout), v03 (padded) and v04
// (XOR-swizzled): the three rungs differ only in where element (r, c) of the tile lives.
#include "kernels/transpose/rung.cuh"

namespace klab::transpose {

inline constexpr int kTile = 32;  // tile edge, in elements
inline constexpr int kBlockRows =
    8;  // a 32 x 8 block: each thread moves kTile / kBlockRows elements

/// Reads a (kTile, kTile) tile of `in` along its rows (coalesced), and writes it to `out` along
/// the tile's columns, which are rows of `out` (coalesced again): the transposition happens in
/// shared memory, where a strided access costs bank conflicts instead of DRAM sectors.
template <class T, class Layout>
__global__ void __launch_bounds__(kTile* kBlockRows) tiled_transpose(Args<T> a) {
  __shared__ T tile[Layout::kElems];  // (kTile, kTile), element (r, c) at Layout::at(r, c)
  constexpr int kPerThread = kTile / kBlockRows;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t col0 = int64_t(blockIdx.x) * kTile;
  const int64_t tiles_y = (a.rows + kTile - 1) / kTile;
  for (int64_t by = blockIdx.y; by < tiles_y; by += gridDim.y) {
    const int64_t row0 = by * kTile;
    T v[kPerThread];  // all loads issued before the first shared-memory store
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int64_t r = row0 + ty + j * kBlockRows, c = col0 + tx;
      v[j] = (r < a.rows && c < a.cols) ? a.in[r * a.cols + c] : T();
    }
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) tile[Layout::at(ty + j * kBlockRows, tx)] = v[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int64_t orow = col0 + ty + j * kBlockRows, ocol = row0 + tx;  // out is (cols, rows)
      if (orow < a.cols && ocol < a.rows)
        a.out[orow * a.rows + ocol] = tile[Layout::at(tx, ty + j * kBlockRows)];
    }
    __syncthreads();  // the next tile row reuses `tile`
  }
}

/// Layout<T> places element (r, c) of the tile: kElems and at(r, c).
template <template <class> class Layout>
void launch_tiled(const Problem& p, Buffers& b, const LaunchArgs& args) {
  with_args(p, b, [&]<class T>(Args<T> a) {
    tiled_transpose<T, Layout<T>>
        <<<tile_grid(a.rows, a.cols, kTile, kTile), dim3(kTile, kBlockRows), 0, stream_of(args)>>>(
            a);
  });
  KLAB_CHECK_LAUNCH();
}

}  // namespace klab::transpose
