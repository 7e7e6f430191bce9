#pragma once
// The tuning space of the TMA transpose (v06): how much of the matrix one pipeline stage holds
// and how many stages a block keeps in flight, which together set the blocks per SM. Host-
// compilable; the kernels are instantiated in v06_tma_pipeline.cu, one per entry and dtype.
// v06 picks an entry per dtype (its shape class): this device's tune cache, then the committed
// table kernels/transpose/tuned.json, then the built-in guess (klab/harness/tuned_lookup.hpp).
#include <string>
#include <vector>

#include "klab/harness/family.hpp"
#include "klab/harness/registry.hpp"

namespace klab::transpose {

/// A stage is sub_x x sub_y sub-tiles of 128 x 128 bytes (32 x 32 f32, 64 x 64 bf16); a block
/// has 64 threads per sub-tile, `stages` input stages and two output buffers of a stage each.
struct TmaConfig {
  int sub_x, sub_y, stages;
  int group = 8;  ///< tile rows walked together (1: row by row, as a plain 2D grid would)
  /// Threads store their transposed blocks straight to global memory (16-byte st.global)
  /// instead of through two shared output buffers and TMA stores: an experiment on the write
  /// path (is it the TMA store that holds v06 below cuBLAS?).
  bool direct_store = false;
  /// Threads copy the input tiles with 16-byte cp.async (into the same 128-byte-swizzled layout)
  /// instead of one thread issuing TMA boxes: the experiment on the read path (is it the TMA
  /// load engine that caps v06 below cuBLAS's LSU loads?).
  bool cp_async_load = false;
  constexpr int threads() const { return 64 * sub_x * sub_y; }
  /// Dynamic shared memory for elements of `elem_bytes`: stages + 2 output buffers (none when
  /// storing directly), + alignment.
  constexpr int smem_bytes(int elem_bytes) const {
    const int edge = 128 / elem_bytes;  // sub-tile edge, elements
    return (stages + (direct_store ? 0 : 2)) * sub_x * sub_y * 128 * edge + 1024 + 64;
  }
  /// "2x2_s4", "2x2_s2_g1" (the group when not 8), "_st" (direct stores), "_ld" (cp.async loads)
  std::string name() const;
  /// What keeps the entry from running elements of `elem_bytes`, or nothing.
  enum class Misfit { none, shared_memory, box_side, threads };
  constexpr Misfit misfit(int elem_bytes) const {
    const int edge = 128 / elem_bytes;
    if (smem_bytes(elem_bytes) > kMaxSmemPerBlock) return Misfit::shared_memory;
    if (edge * sub_x > kMaxBoxSide || edge * sub_y > kMaxBoxSide) return Misfit::box_side;
    if (threads() > 1024) return Misfit::threads;
    return Misfit::none;
  }
  static constexpr int kMaxSmemPerBlock = 227 * 1024;  ///< sm_90's opt-in limit
  static constexpr int kMaxBoxSide = 256;              ///< a TMA box side, in elements
};

/// Every configuration v06 can launch; index = position (append only).
inline constexpr TmaConfig kTmaSpace[] = {
    {2, 2, 4},      // 0: f32 64 x 64 stages (16 KiB), 2 blocks/SM of 256 threads
    {2, 1, 4},      // 1: bf16 128 x 64 stages (16 KiB), 2 blocks/SM of 128 threads
    {2, 2, 2},      // 2: fewer stages, more blocks per SM (f32: 3)
    {1, 1, 4},      // 3: one sub-tile per stage, many small blocks
    {1, 2, 4},      // 4
    {2, 1, 2},      // 5
    {4, 2, 3},      // 6: 512 threads, long rows both ways
    {1, 1, 8},      // 7: small stages, deep ring
    {2, 2, 2, 1},   // 8: tile order row by row: each wave reads whole input rows
    {2, 2, 4, 1},   // 9
    {2, 2, 2, 32},  // 10: tall groups: longer output-row segments per wave
    {4, 2, 2, 1},   // 11: 512-byte input segments, row by row
    {2, 2, 2, 2},   // 12: 2 and 4 tile rows at a time: between row by row and 8
    {2, 2, 2, 4},   // 13
    {2, 2, 3, 1},   // 14
    {2, 2, 2, 16},  // 15: 16 tile rows: input and output segments of a wave about equal (f32)
    {2, 2, 3, 16},  // 16
    {4, 2, 2, 16},  // 17: 512-byte input rows, 16 tile rows
    {4, 2, 2, 4},   // 18
    {2, 2, 2, 64},  // 19: tall groups, as 10 but taller
    // 20-24: direct stores (no output buffers: more blocks per SM at the same stages)
    {2, 2, 2, 8, true},   // 20
    {2, 2, 4, 8, true},   // 21
    {2, 2, 2, 1, true},   // 22
    {2, 1, 4, 8, true},   // 23
    {2, 2, 2, 64, true},  // 24
    // 25-28: cp.async loads by every thread (TMA stores kept): the read-path experiment
    {2, 2, 2, 64, false, true},  // 25
    {2, 2, 4, 64, false, true},  // 26
    {2, 1, 4, 8, false, true},   // 27
    {2, 2, 3, 8, false, true},   // 28
};
inline constexpr int kTmaSpaceSize = static_cast<int>(sizeof(kTmaSpace) / sizeof(kTmaSpace[0]));

inline constexpr const char* kV06Id = "transpose.v06_tma_pipeline";
inline constexpr const char* kTransposeTable = "kernels/transpose/tuned.json";

std::vector<std::string> tma_config_names();
/// ok, or why entry `index` cannot run the problem (shared memory, box limits).
Status tma_config_can_implement(int index, const Problem& p);
/// The entry v06 uses for this problem now (tune cache, committed table, built-in).
int tma_tuned_config(const Problem& p);
/// Registers v06 as a tunable for `klab tune`.
void register_transpose_tunable(Registry& r);

#if KLAB_HAS_CUDA
/// Runs entry `index` (TMA path only: the caller checked the TMA's stride and alignment rules).
void launch_tma_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args);
/// v06's TMA rules: 16-byte row pitches and bases, 32-bit coordinates.
bool tma_path_ok(const Problem& p, const Buffers& b);
/// v05's launcher: v06 falls back to it when the TMA's rules do not hold.
void launch_vectorized(const Problem& p, Buffers& b, const LaunchArgs& args);
#endif

}  // namespace klab::transpose
