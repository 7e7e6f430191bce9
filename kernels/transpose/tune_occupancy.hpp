#pragma once
// The tuning space of transpose v07 (v07_high_occupancy.cu): the tile a block moves and the
// threads it moves it with. Host-compilable; the kernels are instantiated in
// v07_high_occupancy.cu, one per entry and dtype it fits. v07 picks an entry per dtype (its
// shape class) as v06 does: tune cache, committed table kernels/transpose/tuned.json, built-in.
#include <cstdint>
#include <string>
#include <vector>

#include "klab/device/tile_order.hpp"
#include "klab/harness/family.hpp"
#include "klab/harness/registry.hpp"

namespace klab::transpose {

/// A block moves a rows x cols tile (elements) with `threads` threads through shared memory, in
/// 4-byte words (one f32, two bf16): a warp reads 128 contiguous bytes of an input row, or
/// writes 128 contiguous bytes of an output row, per instruction. __launch_bounds__(threads,
/// min_blocks).
struct WideConfig {
  int rows, cols, threads, min_blocks;
  /// Streaming cache hints: loads ld.global.cs and stores st.global.cs (evict first), as the
  /// data is touched once.
  bool streaming = false;
  /// Tile order. 0: a 2-D grid, consecutive blocks along a band of input rows: the blocks
  /// resident together read long runs of few input rows and write one tile-wide piece (256 bytes
  /// in f32 at 64 rows) of each of many output rows. g > 0: a 1-D grid in groups of g tile rows,
  /// consecutive blocks walking down a group's g tile rows before the next tile column: the
  /// resident blocks write g tiles' worth of each output row they touch (g * rows elements) and
  /// read shorter runs of more input rows, trading input-row runs for output-row runs.
  int group = 0;
  /// Elements of `elem_bytes` per word, and words per thread per phase.
  static constexpr int per_word(int elem_bytes) { return 4 / elem_bytes; }
  constexpr int loads(int elem_bytes) const { return rows * cols / per_word(elem_bytes) / threads; }
  /// Shared memory: the tile with rows padded by one element (an odd pitch). Static up to 48 KiB,
  /// dynamic (opted in at launch) above, where min_blocks tiles must fit an SM (a static tile
  /// fits whatever min_blocks says: it only caps registers).
  constexpr int smem_bytes(int elem_bytes) const { return rows * (cols + 1) * elem_bytes; }
  static constexpr int kStaticSmemLimit = 48 * 1024;
  static constexpr int kSmemPerSm = 228 * 1024;  ///< sm_90, of which 1 KiB per block reserved
  /// Whether the tile is whole 128-byte warp segments on both sides, whole passes of the block,
  /// and a warp count that is a multiple of the segments per row on both sides (a warp keeps one
  /// segment of every row it moves), for elements of `elem_bytes`.
  constexpr bool fits(int elem_bytes) const {
    const int e = per_word(elem_bytes);
    return threads % 32 == 0 && threads <= 1024 && cols % (32 * e) == 0 && rows % (32 * e) == 0 &&
           (rows * (cols / e / 32)) % (threads / 32) == 0 &&
           (cols * (rows / e / 32)) % (threads / 32) == 0 &&
           (threads / 32) % (cols / e / 32) == 0 && (threads / 32) % (rows / e / 32) == 0 &&
           (smem_bytes(elem_bytes) <= kStaticSmemLimit ||
            min_blocks * (smem_bytes(elem_bytes) + 1024) <= kSmemPerSm);
  }
  /// "64x64_t256_b8", "_cs" when streaming, "_g16" with 16 tile rows per group
  std::string name() const;
};

/// Tile row and tile column of the t-th tile of a grouped walk (WideConfig::group = g > 0) over
/// tiles_x x tiles_y tiles: g tile rows at a time (the last group may be shorter), down a tile
/// column before the next: device::grouped_tile_order with tile rows along y. constexpr: the
/// kernel calls it and the CPU tests check that every tile comes once.
struct TileRowCol {
  int64_t row, col;
};
constexpr TileRowCol grouped_tile(int64_t t, int64_t g, int64_t tiles_x, int64_t tiles_y) {
  const device::TileCoord<int64_t> c = device::grouped_tile_order<int64_t>(t, g, tiles_y, tiles_x);
  return {c.m, c.n};
}

/// Index = position (append only).
inline constexpr WideConfig kWideSpace[] = {
    // f32 (tile sides multiples of 32; 64 also fit bf16)
    {64, 64, 256, 8},   // 0: cuBLAS's geam recipe: 64x64, 16 words per thread, 8 blocks/SM
    {32, 64, 256, 8},   // 1: half the tile: 8 words per thread
    {64, 64, 512, 4},   // 2: 8 words per thread, 16 warps per block
    {64, 128, 256, 4},  // 3: 512-byte input rows, 32 words per thread
    {128, 64, 256, 4},  // 4: 512-byte output rows (f32)
    {64, 64, 128, 8},   // 5: 32 words per thread, 4 warps per block
    {32, 32, 256, 8},   // 6: v03's tile with words, 4 per thread
    // bf16 (sides multiples of 64)
    {64, 128, 256, 8},   // 7: 256-byte input rows, 128-byte output rows, 16 words per thread
    {128, 128, 256, 4},  // 8: 256-byte rows both sides, 32 words per thread
    {128, 64, 256, 8},   // 9: 128-byte input rows, 256-byte output rows
    {128, 128, 512, 4},  // 10: as 8 with 16 words per thread
    {64, 64, 256, 6},    // 11: 0 with 40 registers (0 spills 3 words at 32)
    // Around the first f32 sweep's winner (entry 2):
    {64, 64, 512, 4, true},   // 12: 2 with streaming cache hints
    {128, 64, 512, 4},        // 13: 512-byte output rows (f32), 16 words per thread
    {64, 128, 512, 4},        // 14: 512-byte input rows (f32), 16 words per thread
    {64, 64, 1024, 2},        // 15: 32 warps per block, 4 words per thread
    {128, 64, 512, 4, true},  // 16: 13 with streaming hints
    // The tile order around the f32 winner (entry 2) and the bf16 one (entry 8), and 128x128 f32
    // tiles in dynamic shared memory (64.5 KiB, 2 blocks/SM); measured by
    // 2026-11-30_4f43b01_sgemm_v17_first_sweeps (tune_transpose_*.txt).
    {64, 64, 512, 4, false, 8},     // 17: 2 in groups of 8 tile rows (2 KiB output runs)
    {64, 64, 512, 4, false, 16},    // 18: ... of 16 (4 KiB)
    {64, 64, 512, 4, false, 32},    // 19: ... of 32 (8 KiB)
    {64, 64, 512, 4, false, 128},   // 20: ... of 128 (32 KiB; input runs 1 KiB)
    {128, 128, 256, 4, false, 8},   // 21: 8 in groups of 8 tile rows
    {128, 128, 256, 4, false, 32},  // 22: ... of 32
    {128, 128, 512, 2},             // 23: f32 128x128 (512-byte rows both sides), 32 words
    {128, 128, 1024, 2},            // 24: ... 16 words per thread, 64 warps per SM
    {128, 128, 512, 2, false, 16},  // 25: 23 in groups of 16 tile rows
    // The second sweep of that order: the first put groups of 128 tile rows first in f32 (at 8192^2 that
    // is every tile row: consecutive blocks walk down whole tile columns, writing whole output
    // rows in order), so longer groups, and bf16's winner (23) and 8 in the same order.
    {64, 64, 512, 4, false, 256},    // 26: 2 down whole tile columns up to 16384 rows
    {64, 64, 512, 4, false, 64},     // 27: 2 in groups of 64 tile rows
    {128, 128, 512, 2, false, 128},  // 28: 23 down whole tile columns up to 16384 rows
    {128, 128, 256, 4, false, 128},  // 29: 8 likewise
    {64, 64, 256, 6, false, 256},    // 30: 11 (cuBLAS's tile, 40 registers) likewise
    // Measured by 2026-11-30_0473170_sgemm_v17_predicated (tune_transpose_*.txt): 26 (f32) and 28
    // (bf16) won and are committed (kernels/transpose/tuned.json).
};
inline constexpr int kWideSpaceSize = static_cast<int>(sizeof(kWideSpace) / sizeof(kWideSpace[0]));

inline constexpr const char* kV07Id = "transpose.v07_high_occupancy";

std::vector<std::string> wide_config_names();
/// ok, or why entry `index` cannot run the problem's dtype.
Status wide_config_can_implement(int index, const Problem& p);
/// The entry v07 uses for this problem now (tune cache, committed table, built-in).
int wide_tuned_config(const Problem& p);
/// Registers v07 as a tunable for `klab tune`.
void register_v07_tunable(Registry& r);

#if KLAB_HAS_CUDA
/// Runs entry `index` (word path: the caller checked wide_path_ok), else v04's kernel.
void launch_wide_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args);
#endif

}  // namespace klab::transpose
