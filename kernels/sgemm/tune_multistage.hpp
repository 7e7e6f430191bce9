#pragma once
// The tuning space of v15's kernel (sgemm_multistage_at with hoisted copies, multistage.cuh) for
// v16: every configuration a `klab tune sgemm.v16_autotuned_multistage` sweep may run by index,
// and v16's lookup per shape class (tune cache, committed table kernels/sgemm/tuned.json,
// built-in: entry 0, v15's configuration). Shape classes are v10's (tune.hpp). Host-compilable;
// the kernels are instantiated in v16_autotuned_multistage.cu.
#include <string>
#include <vector>

#include "kernels/sgemm/tune.hpp"
#include "klab/harness/family.hpp"
#include "klab/harness/tuned_lookup.hpp"
#include "klab/harness/registry.hpp"

namespace klab::sgemm {

/// One instantiation of MultistageAtConfig<block_m, block_n, block_k, warp_m, warp_n, thread_m,
/// thread_n, threads, stages, min_blocks, /*hoisted*/ true>.
struct MultistageTuneConfig {
  int block_m, block_n, block_k;
  int warp_m, warp_n;
  int thread_m, thread_n;
  int threads, stages, min_blocks;

  constexpr int warps() const { return (block_m / warp_m) * (block_n / warp_n); }
  /// Dynamic shared memory: stages of A^T (block_k x (block_m + 4)) and B (block_k x block_n).
  constexpr int smem_bytes() const { return stages * block_k * (block_m + 4 + block_n) * 4; }
  /// What sgemm_multistage_at static_asserts for the hoisted copies, plus shared memory.
  constexpr bool valid() const {
    const int copies_a = block_m * block_k / threads;
    return warp_m % thread_m == 0 && warp_n % thread_n == 0 &&
           (warp_m / thread_m) * (warp_n / thread_n) == 32 && warps() * 32 == threads &&
           block_m % warp_m == 0 && block_n % warp_n == 0 && thread_m % 4 == 0 &&
           thread_n % 4 == 0 && block_k % 8 == 0 && (threads / 32) % (block_k / 8) == 0 &&
           copies_a * threads == block_m * block_k && copies_a <= 32 &&
           threads % (block_n / 4) == 0 && (block_k * block_n / 4) % threads == 0 && stages >= 2 &&
           min_blocks * (smem_bytes() + 1024) <= 228 * 1024;
  }
  /// "128x128x16_w32x64_t8x8_s4_b2"
  std::string name() const;
};

/// Index = position; keep entries appended (tune tables name them by name).
inline constexpr MultistageTuneConfig kMultistageSpace[] = {
    // block          warp    thread  thr  st b/SM
    {128, 128, 16, 32, 64, 8, 8, 256, 4, 2},   // 0: v15
    {128, 128, 8, 32, 64, 8, 8, 256, 4, 2},    // 1: v15 at BK 8 (twice the barriers per flop)
    {128, 128, 16, 64, 32, 8, 8, 256, 4, 2},   // 2: warps of 64x32 (A reads shared by 4 lanes)
    {128, 128, 16, 32, 64, 8, 8, 256, 3, 2},   // 3: a stage fewer
    {128, 128, 16, 32, 64, 8, 8, 256, 5, 2},   // 4: a stage more (83 KiB per block)
    {256, 128, 8, 64, 64, 8, 16, 256, 3, 1},   // 5: cuBLAS's 256x128x8, 3 stages, 1 block/SM
    {256, 128, 16, 64, 64, 8, 16, 256, 3, 1},  // 6: ... at BK 16
    {128, 256, 16, 64, 64, 8, 16, 256, 3, 1},  // 7: 128x256 (B rows of 1 KiB)
    // Around the first sweep's winner (entry 5):
    {256, 128, 8, 64, 64, 8, 16, 256, 4, 1},   // 8: 5 a stage deeper
    {256, 128, 8, 64, 64, 8, 16, 256, 2, 1},   // 9: 5 with 2 stages (one in flight)
    {128, 256, 8, 64, 64, 8, 16, 256, 3, 1},   // 10: 5 transposed
    {256, 128, 8, 32, 128, 8, 16, 256, 3, 1},  // 11: 5 with warps of 32x128 (8x1 warps)
    {256, 128, 8, 64, 64, 16, 8, 256, 3, 1},   // 12: 5 with 16x8 per lane
    // For v17 (whose spread copies leave a stage's refill less lead time):
    {128, 256, 8, 64, 64, 8, 16, 256, 4, 1},  // 13: 10 a stage deeper
    // For v18 (whose best entry has BK 16: fewer waits and arrivals per flop):
    {128, 256, 32, 64, 64, 8, 16, 256, 3, 1},  // 14: 7 at BK 32
};
inline constexpr int kMultistageSpaceSize =
    static_cast<int>(sizeof(kMultistageSpace) / sizeof(kMultistageSpace[0]));

consteval bool multistage_space_valid() {
  for (const MultistageTuneConfig& c : kMultistageSpace)
    if (!c.valid()) return false;
  return true;
}
static_assert(multistage_space_valid(), "every entry must satisfy MultistageTuneConfig::valid()");

inline constexpr const char* kV16Id = "sgemm.v16_autotuned_multistage";

std::vector<std::string> multistage_config_names();
/// ok, or why entry `index` cannot run `p` (index range, gridDim.y, shared memory per block).
Status multistage_config_can_implement(int index, const Problem& p);
/// v16's choice for the problem and where it came from (as tuned_choice for v10).
TunedChoice v16_tuned_choice(const Problem& p);
int v16_tuned_config(const Problem& p);
/// Registers v16 as a tunable; called by register_sgemm.
void register_v16_tunable(Registry& r);

/// v17's space: entries of kMultistageSpace instantiated with the spread copy schedule, each
/// with the first k-step of its refill (`from`: the copies go out over steps from .. BK-2);
/// index = position (append only). Named as the kMultistageSpace entry, with "_c<from>" when
/// from > 0. (The first two sweeps also had v16's 256x128x8 entries 5 and 8 at from 0: slower
/// than the 128x256 ones, with 80-96 bytes of stack each; dropped.)
struct SpreadEntry {
  int entry, from;
};
inline constexpr SpreadEntry kSpreadEntries[] = {
    {10, 0},  // 0: v16's committed shape, copies over k-steps 0-6 (the first sweep)
    {13, 0},  // 1: ... with 4 stages
    // After reading cuBLAS's SASS (its 12 copies sit between the FFMAs of the last
    // two k-steps before the barrier, all with 1-cycle stall counts):
    {10, 6},  // 2: the copies in k-step 6 of 8 only
    {13, 6},  // 3: ... with 4 stages
    {10, 4},  // 4: k-steps 4-6
    {13, 4},  // 5: ... with 4 stages
};
inline constexpr int kSpreadSpaceSize =
    static_cast<int>(sizeof(kSpreadEntries) / sizeof(kSpreadEntries[0]));
inline constexpr const char* kV17Id = "sgemm.v17_spread_copies";

std::vector<std::string> spread_config_names();
/// ok, or why v17's entry `index` cannot run `p` (as multistage_config_can_implement).
Status spread_config_can_implement(int index, const Problem& p);
/// v17's choice for the problem (tune cache, committed table, built-in: its entry 0).
int v17_tuned_config(const Problem& p);
/// Registers v17 as a tunable; called by register_sgemm.
void register_v17_tunable(Registry& r);

/// v18's entries (TMA producer warpgroup, sm_90a): a tile shape of kMultistageSpace (its stage
/// count and blocks/SM unused: v18 runs one block per SM) and the depth of v18's stage ring;
/// index = position (append only). Named as the entry's shape with "_r<stages>".
struct TmaEntry {
  int entry, stages;
  int probe = -1;  ///< the k-step that tests the next stage early (-1: none); named "_p<step>"
};
inline constexpr TmaEntry kTmaEntries[] = {
    {10, 4},  // 0: v16's committed 128x256x8, 4 stages in the ring
    {10, 6},  // 1: ... 6 stages
    {7, 4},   // 2: 128x256x16 (half the waits and arrivals per flop)
    {5, 4},   // 3: cuBLAS's 256x128x8
    {5, 6},   // 4: ... 6 stages
    {12, 4},  // 5: 256x128x8 with 16x8 per lane
    // After the first sweep (entry 2, BK 16, first):
    {7, 3},   // 6: 2 with 3 stages
    {7, 6},   // 7: 2 with 6 stages
    {6, 4},   // 8: 256x128x16
    {14, 3},  // 9: 128x256x32, 3 stages (150 KiB)
    {14, 4},  // 10: ... 4 stages (199 KiB)
    // The next stage tested early, so that the wait at the last k-step branches on a known
    // predicate (after BK 16 beat BK 8):
    {7, 6, 8},   // 11: the winner (entry 7), probe at k-step 8 of 16
    {7, 6, 12},  // 12: ... at k-step 12
    {10, 4, 4},  // 13: BK 8 (entry 0), probe at k-step 4 of 8
    {10, 6, 4},  // 14: ... 6 stages
};
inline constexpr int kTmaSpaceSize = static_cast<int>(sizeof(kTmaEntries) / sizeof(kTmaEntries[0]));
inline constexpr const char* kV18Id = "sgemm.v18_tma_producer";

std::vector<std::string> tma_config_names();
/// ok, or why v18's entry `index` cannot run `p` (the grids as multistage_config_can_implement).
Status tma_config_can_implement(int index, const Problem& p);
/// v18's choice for the problem (tune cache, committed table, built-in: its entry 0).
int v18_tuned_config(const Problem& p);
/// Registers v18 as a tunable; called by register_sgemm.
void register_v18_tunable(Registry& r);

#if KLAB_HAS_CUDA
/// Enqueues v18's entry `index` (v09's scalar kernel when the 16-byte path is not possible).
void launch_tma_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues entry `index` (v09's scalar kernel when the 16-byte path is not possible).
void launch_multistage_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v17's entry `index` (kSpreadEntries[index] with spread copies; v09 as above).
void launch_spread_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args);
#endif

}  // namespace klab::sgemm
