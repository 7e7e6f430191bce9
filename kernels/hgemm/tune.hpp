#pragma once
// The tuning space of the mma.sync multistage kernel (multistage_sm80.cuh, v05's and v06's
// template; v07's table): every configuration a `klab tune` sweep may run by index, and how v07
// picks one per shape class: the tune cache for this device, then the committed table
// kernels/hgemm/tuned.json (absent until a `klab tune --commit`), then a built-in guess
// (klab/harness/tuned_lookup.hpp). Host-compilable; the kernels are instantiated in
// v07_mma_autotuned.cu, one per entry, dtype and copy path.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/hgemm/split_k_plan.hpp"
#include "kernels/hgemm/stream_k_plan.hpp"
#include "kernels/hgemm/swap_ab_stage.hpp"
#include "klab/harness/family.hpp"
#include "klab/harness/tuned_lookup.hpp"
#include "klab/harness/registry.hpp"

namespace klab::hgemm {

/// One instantiation of MultistageConfig<kBlockM, kBlockN, kBlockK, kWarpM, kWarpN, kStages,
/// kMinBlocks, kGroupM>: a block of warps() warps computes a block_m x block_n tile of C through
/// `stages` cp.async stages of block_k; each warp owns a warp_m x warp_n piece (fp32 accumulators
/// in registers); __launch_bounds__(threads(), min_blocks); group_m tile rows per rasterization
/// group. Elements are 2 bytes (bf16 and f16 alike).
struct HgemmConfig {
  int block_m, block_n, block_k;  ///< kBlockM, kBlockN, kBlockK
  int warp_m, warp_n;             ///< kWarpM, kWarpN
  int stages;                     ///< kStages
  int min_blocks;                 ///< kMinBlocks: blocks per SM the registers are capped for
  int group_m;                    ///< kGroupM

  static constexpr int kElemBytes = 2;
  static constexpr int kMaxSmemPerBlock = 227 * 1024;  ///< sm_90's opt-in limit per block
  static constexpr int kSmemPerSm = 228 * 1024;        ///< sm_90, of which 1 KiB per block reserved
  static constexpr int kRegsPerSm = 64 * 1024;

  constexpr int warps() const { return (block_m / warp_m) * (block_n / warp_n); }
  constexpr int threads() const { return 32 * warps(); }
  /// Dynamic shared memory, MultistageConfig::kSmemBytes: the stages, or the staged C tile of the
  /// epilogue when that is larger (it reuses the stages).
  constexpr int smem_bytes() const {
    const int main = stages * (block_m * block_k + block_k * block_n) * kElemBytes;
    const int epilogue = block_m * block_n * kElemBytes;
    return main > epilogue ? main : epilogue;
  }
  /// Registers per thread ptxas may use under __launch_bounds__(threads(), min_blocks).
  constexpr int register_cap() const {
    const int per_thread = (kRegsPerSm / (threads() * min_blocks)) / 8 * 8;
    return per_thread < 255 ? per_thread : 255;
  }
  /// An estimate of the registers the kernel needs: fp32 accumulators, two steps of A and B
  /// fragments, ~32 for addresses and counters (v05's 64x64 warp tile: 224; ptxas reports 254
  /// with no spills, so the rule is a floor, not a bound: check `ptxas -v` for new shapes).
  constexpr int register_estimate() const {
    return warp_m * warp_n / 32 + 2 * (warp_m / 16 * 4 + warp_n / 8 * 2) + 32;
  }

  /// The constraints the kernel template static_asserts (MultistageConfig, SwizzledLayout,
  /// TileCopier, store_tile16, WarpTile), plus shared memory and registers, in one place.
  constexpr bool valid() const {
    const int chunks_k = block_k / 8, chunks_n = block_n / 8;  // 16-byte chunks per tile row
    auto layout_ok = [](int chunks) { return chunks == 2 || chunks == 4 || chunks % 8 == 0; };
    const int period_n = chunks_n < 8 ? chunks_n : 8;  // swizzle period of the B and C rows
    if (block_m <= 0 || block_n <= 0 || block_k <= 0 || warp_m <= 0 || warp_n <= 0) return false;
    if (block_m % warp_m || block_n % warp_n || block_k % 16 || warp_m % 16 || warp_n % 16)
      return false;
    if (block_k / 16 < 2 || stages < 2 || min_blocks < 1 || group_m < 1) return false;
    if (!layout_ok(chunks_k) || !layout_ok(chunks_n)) return false;
    if ((warp_n / 8) % period_n) return false;  // a warp's B and C columns start on a period
    const int t = threads();
    if (t > 1024) return false;
    // TileCopier of A (block_m, block_k) and of B (block_k, block_n): whole passes of 8k rows.
    if (t % chunks_k || (t / chunks_k) % 8 || block_m % (t / chunks_k)) return false;
    if (t % chunks_n || (t / chunks_n) % 8 || block_k % (t / chunks_n)) return false;
    // store_tile16 of the (block_m, block_n) C tile.
    if (block_m % (t / chunks_n)) return false;
    if (smem_bytes() > kMaxSmemPerBlock) return false;
    if (min_blocks * (smem_bytes() + 1024) > kSmemPerSm) return false;
    return register_estimate() <= register_cap();
  }
  /// "128x256x64_w64x64_s4_b1_g8"
  std::string name() const;
};

/// Every configuration v07 can launch; index = position. Keep entries appended (tune tables name
/// them by name, results by index). At 4096^3 every 1-block/SM entry runs 512 tiles over 132 SMs
/// (3.88 waves, as v05); 64x128 warp tiles are out: 256 fp32 accumulators per lane exceed the
/// 255 registers.
inline constexpr HgemmConfig kTuneSpace[] = {
    // block        warp    st  b/SM grp
    {128, 256, 64, 64, 64, 4, 1, 8},   // 0: v05 (192 KiB): the built-in choice for large shapes
    {256, 128, 64, 64, 64, 4, 1, 8},   // 1: cuBLASLt's tile shape; a wave reads 2048 A rows and
                                       //    ~2100 B columns instead of 1024 and all 4096
    {128, 256, 64, 64, 64, 3, 1, 8},   // 2: a stage fewer (144 KiB): is v05's 4th stage needed?
    {128, 256, 32, 64, 64, 6, 1, 8},   // 3: v04's BK, 6 stages (144 KiB): a barrier per 32 of k
    {128, 256, 32, 64, 64, 8, 1, 8},   // 4: ... 8 stages (192 KiB): v05's bytes in flight
    {128, 256, 64, 64, 64, 4, 1, 4},   // 5: v05 in groups of 4 tile rows
    {128, 256, 64, 64, 64, 4, 1, 16},  // 6: v05 in groups of 16: a squarer wave footprint
    {128, 128, 64, 64, 64, 3, 2, 8},   // 7: v06 (2 x 96 KiB per SM): built-in for small shapes
    // One barrier per 128 of k (half v05's), double-buffered stages of 96 KiB; and
    // entry 2's three stages in entry 6's groups.
    {128, 256, 128, 64, 64, 2, 1, 16},  // 8
    {256, 128, 128, 64, 64, 2, 1, 16},  // 9
    {128, 256, 64, 64, 64, 3, 1, 16},   // 10
    // ... and v05 in groups of 32 (at 4096^3 whole tile columns) and 2 tile rows.
    {128, 256, 64, 64, 64, 4, 1, 32},  // 11
    {128, 256, 64, 64, 64, 4, 1, 2},   // 12
    // Measured at 4096^3 bf16 (tune_hgemm.txt of 2026-11-30_4f43b01_sgemm_v17_first_sweeps and
    // 2026-11-30_0473170_sgemm_v17_predicated): 8 and 9 slower than entry 0 (two stages cost more
    // than half the barriers save), 10 and 11 too; 12 committed, level with entry 0.
};
inline constexpr int kTuneSpaceSize = static_cast<int>(sizeof(kTuneSpace) / sizeof(kTuneSpace[0]));

consteval bool all_valid() {
  for (const HgemmConfig& c : kTuneSpace)
    if (!c.valid()) return false;
  return true;
}
static_assert(all_valid(), "every tune-space entry must satisfy HgemmConfig::valid()");

consteval bool all_distinct() {
  for (int i = 0; i < kTuneSpaceSize; ++i)
    for (int j = 0; j < i; ++j) {
      const HgemmConfig &a = kTuneSpace[i], &b = kTuneSpace[j];
      if (a.block_m == b.block_m && a.block_n == b.block_n && a.block_k == b.block_k &&
          a.warp_m == b.warp_m && a.warp_n == b.warp_n && a.stages == b.stages &&
          a.min_blocks == b.min_blocks && a.group_m == b.group_m)
        return false;
    }
  return true;
}
static_assert(all_distinct(), "tune-space entries must differ (names are table keys)");

/// Configuration names, in index order (the names tune tables store).
std::vector<std::string> hgemm_config_names();

/// Shape classes v07 chooses by: `large` when m * n >= 2048 * 2048 (v05's 128x256 tiles at
/// least fill the 132 SMs once), `small` otherwise. The dtype does not enter: bf16 and f16 run
/// the same mma.sync rate and the same bytes. `klab tune` at a shape of each class fills tables.
enum class ShapeClass { large, small };
const char* shape_class_name(ShapeClass c);
ShapeClass shape_class(const Problem& p);

inline constexpr const char* kV07Id = "hgemm.v07_mma_autotuned";
/// v07's committed table, relative to the source directory.
inline constexpr const char* kCommittedTable = "kernels/hgemm/tuned.json";

/// v07's built-in guess for a shape class (used when no table has an entry).
int builtin_config(ShapeClass c);

/// v07's choice for the problem and where it came from (tables read once per shape class).
TunedChoice tuned_choice(const Problem& p);
/// tuned_choice(p).config: index into kTuneSpace.
int tuned_config(const Problem& p);

/// ok, or why configuration `index` cannot run `p` (index out of range, grid size, the device's
/// shared memory per block when a device is present).
Status hgemm_config_can_implement(int index, const Problem& p);

/// Registers v07 as a tunable (klab/harness/tunable.hpp); called by register_hgemm.
void register_hgemm_tunable(Registry& r);

/// v09's entries (sm_90a, 128x256 blocks of 8 consumer warps, 64-deep k-tiles): ring depth,
/// rasterisation group and the early probe of the next stage (-1: none); index = position
/// (append only), named "s<stages>_g<group>[_p<step>]".
struct TmaProducerEntry {
  int stages, group_m, probe;
};
inline constexpr TmaProducerEntry kV09Entries[] = {
    {4, 8, -1},  // 0: v09 as first measured
    {4, 8, 1},   // 1: probe at mma step 1 of 4
    {4, 8, 2},   // 2: probe at mma step 2 of 4
    {4, 16, 2},  // 3: 2 in rasterisation groups of 16
};
inline constexpr int kV09SpaceSize = static_cast<int>(sizeof(kV09Entries) / sizeof(kV09Entries[0]));
inline constexpr const char* kV09Id = "hgemm.v09_mma_tma_producer";

std::vector<std::string> v09_config_names();
/// ok, or why v09's entry `index` cannot run `p` (index range; v09's and its fallback's grids).
Status v09_config_can_implement(int index, const Problem& p);
/// v09's choice for the problem (tune cache, committed table, built-in: entry 0).
int v09_tuned_config(const Problem& p);
/// Registers v09 as a tunable; called by register_hgemm.
void register_v09_tunable(Registry& r);

/// Whether a wgmma rung with (block_m, block_n) tiles on a 1-D grid and smem_bytes of shared
/// memory a block can run p (its fallback, v05's 128x256 kernel, has fewer tiles).
Status wgmma_rung_can_implement(const Problem& p, int64_t block_m, int64_t block_n,
                                int64_t smem_bytes);

/// v16's geometry (weight streaming, M <= 64), visible to host code: v18's dispatch sizes its
/// workspace and checks its limits without CUDA. v16_wgmma_split_k.cu static_asserts its kernel
/// against it.
struct WeightStreaming {
  static constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 64;  // A's m64 block, B's slab
  static constexpr int kStages = 4, kCtasPerSm = 2;
  static constexpr int kMinKTilesPerSplit = 2 * kStages;  // a split fills the ring twice
  static constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK * 2;
  /// The ring (1024-byte aligned: up to 1023 bytes lost aligning the base), then the barriers.
  static constexpr int kSmemBytes = 1024 + kStages * kStageBytes + 2 * kStages * 8;
};
/// The split plan v16 launches with for p on this device (its workspace is sized from it).
SplitKPlan v16_plan(const Problem& p);
/// ok, or why v16 cannot run p (M > 64, tiles, shared memory).
Status v16_can_implement(const Problem& p);
/// v16's split-K workspace for p on this device (0 with one split).
size_t v16_workspace_bytes(const Problem& p);

/// v17's geometry (stream-K weight streaming, M <= 64: one CTA an SM, an 8-stage ring of
/// 64-row A boxes and 128-column B slabs), visible to host code like v16's.
struct StreamKWeight {
  static constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 64, kStages = 8;
  static constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK * 2;
  static constexpr int kSmemBytes = 1024 + kStages * kStageBytes + 2 * kStages * 8;
};
/// The stream-K plan v17 launches with for p on this device (its workspace is sized from it).
StreamKPlan v17_plan(const Problem& p);
/// ok, or why v17 cannot run p (M > 64, tiles, shared memory).
Status v17_can_implement(const Problem& p);
/// v17's workspace for p: the segments' partial slots and the slabs' arrival counters.
size_t v17_workspace_bytes(const Problem& p);

/// v21's plan of an m x n x k problem on `slots` resident CTAs (128 x 256 tiles of 64-deep
/// k-tiles: whole waves taken whole, the rest by stream-K).
StreamKTilesPlan v21_plan(int64_t m, int64_t n, int64_t k, int slots);
/// The most CTAs v21 launches on this device (one an SM): its workspace's slots.
int v21_max_ctas();
/// ok, or why v21 cannot run p (tiles, shared memory: v14's limits).
Status v21_can_implement(const Problem& p);
/// v21's workspace for p: a 128 KiB fp32 slot per CTA (v21_slot_bytes), then a flag per tile
/// and consumer warpgroup (v21_flag_bytes; zeroed when allocated, each owner resets its flags
/// after use, and nothing else may write them: v18 keeps them last, past its other entries'
/// bytes).
size_t v21_slot_bytes();
size_t v21_flag_bytes(const Problem& p);
size_t v21_workspace_bytes(const Problem& p);
/// v22's workspace for p: two 128 KiB slots a CTA (v22_slot_bytes: its last and first stream-K
/// tiles' segments), then v21's flags (each reset by the last segment to count).
size_t v22_slot_bytes();
size_t v22_workspace_bytes(const Problem& p);
/// v23's stream-K plan of an n x k weight (M <= 64): 64-column slabs of 64-deep k-tiles over
/// one CTA an SM (plan_sm_count()).
StreamKPlan v23_plan(int64_t n, int64_t k);
/// ok, or why v23 cannot run p (M > 64; v19's limits).
Status v23_can_implement(const Problem& p);
/// v23's workspace for p: its plan's partial slots (64 x the tokens' width floats each), then a
/// counter per slab (zeroed when allocated, each reset by the last segment to count).
size_t v23_workspace_bytes(const Problem& p);
/// ok, or why v19 cannot run p (M > 128; shared memory).
Status v19_can_implement(const Problem& p);
/// Whether v24 copies B: its rows of n 2-byte elements are not whole 128-byte lines.
constexpr bool v24_copies_b(int64_t n) { return n % 64 != 0; }
/// v24's B row pitch in elements: n rounded up to whole 128-byte rows (64 elements).
int64_t v24_ldb(int64_t n);
/// v24's workspace for p: B copied with v24_ldb rows where n is not a multiple of 64 (its rows
/// not 128-byte lines), else none.
size_t v24_workspace_bytes(const Problem& p);

/// v18's entries (sm_90a): the kernel of v16, v17 (weight streaming, M <= 64) or v19 (M <= 128), or v14's
/// persistent kernel and TMA-store epilogue on 128 x block_n tiles of two m64 consumer
/// warpgroups with K split `splits` ways into persistent (tile, split) units whose fp32 partials
/// a second kernel sums in order. Index = position (append only), named "v<rung>" (v15 on
/// narrower tiles "v15_128x<block_n>"), v14's "128x<block_n>_k<splits>".
struct WgmmaDispatchEntry {
  int rung;     ///< whose kernel: 16, 17, 19, 15, 13, 12, 21, 24, or 14 (v14's, generalised)
  int block_n;  ///< v14's and v15's tiles: 256, 192 or 128
  int splits;   ///< v14's tiles: K splits
};
inline constexpr WgmmaDispatchEntry kV18Entries[] = {
    {16, 0, 1},    // 0: v16's split-K weight streaming, M <= 64
    {17, 0, 1},    // 1: v17's stream-K weight streaming, M <= 64
    {14, 256, 1},  // 2: v14's tiles
    {14, 256, 2},  // 3
    {14, 256, 4},  // 4
    {14, 128, 1},  // 5: twice the tiles, for grids under a wave
    {14, 128, 2},  // 6
    {14, 128, 4},  // 7
    {14, 128, 8},  // 8
    {15, 256, 1},  // 9: v15's 2-CTA clusters (won at 8192^3 and 6000x7000x5000 in ac8ef08's run)
    {19, 0, 1},    // 10: v19's swapped-operand weight streaming, M <= 128
    {14, 192, 1},  // 11: 128 x 192 tiles: M = 512, N = 6144 is 128 of them (96 of 128 x 256)
    {13, 256, 1},  // 12: v13's clusters, C stored from registers (no TMA store: rows of C that
                   //     are not 128-byte aligned, N = 7000, cost v14 16%: 2026-12-04_72e0ad3)
    {12, 256, 1},  // 13: v12's persistent kernel, C stored from registers
    {21, 256, 1},  // 14: v21's stream-K over the tail wave (won at 8192^3 in 72e0ad3's run)
    {15, 128, 1},  // 15: v15's clusters on entry 5's tiles (M = 512: one wave, B shared a pair)
    {15, 192, 1},  // 16: v15's clusters on entry 11's tiles
    {24, 256, 1},  // 17: v24, v14's tiles on B copied into 128-byte rows where N's are not
};
inline constexpr int kV18SpaceSize = static_cast<int>(sizeof(kV18Entries) / sizeof(kV18Entries[0]));
inline constexpr const char* kV18Id = "hgemm.v18_wgmma_dispatch";
/// The ring depth of 128 x block_n tiles in v14's kernel (the rung, v18's unsplit entries), v18's
/// split-tiles kernel and v15's clusters: 4 stages of 48 KiB at 256 and of 40 KiB at 192 (a fifth
/// would pass the 227 KiB a block may have, with the 1 KiB of the kernel's static shared memory),
/// 5 of 32 KiB at 128 (a sixth fits, as v20's ring does: on v14's kernel at M = 512 it gave back
/// most of the kernel's gain at 512 x 4096 x 12288, 2026-12-06_d948a34 in gemm.md).
constexpr int v18_stages(int block_n) { return block_n == 128 ? 5 : 4; }
/// The 64 x 64 store-box slots of each consumer warpgroup: a tile's boxes (block_n / 64) take
/// them in turn, box b in slot b % slots, so the count divides the boxes: 3 at 192, else 2.
constexpr int v18_store_slots(int block_n) { return block_n == 192 ? 3 : 2; }
/// v18's dynamic shared memory for 128 x block_n tiles: the aligned ring, the store-box slots of
/// the two consumer warpgroups, the barriers.
constexpr int v18_smem_bytes(int block_n) {
  return 1024 + v18_stages(block_n) * (128 + block_n) * 64 * 2 +
         2 * v18_store_slots(block_n) * 64 * 64 * 2 + 2 * v18_stages(block_n) * 8;
}
std::vector<std::string> v18_config_names();
/// ok, or why v18's entry `index` cannot run `p`: v16's and v17's limits; tiles and shared
/// memory; more splits than k-tiles; and split entries only where the tiles number fewer than
/// the SMs (there they fill the wave; elsewhere they would only add the partials' traffic and
/// a workspace of splits x M x N floats).
Status v18_config_can_implement(int index, const Problem& p);
/// The modelled time (seconds) of entry `index` at (m, n, k) on sm_count SMs, from the wave count
/// of its units, a per-SM wgmma rate, a fixed cost per unit (filling the ring, the epilogue) and
/// the partials' traffic and launch when split; infinity where the entry cannot run.
double v18_model_seconds(int index, int64_t m, int64_t n, int64_t k, int sm_count);
/// v18's built-in choice: v19 at M <= 64, else the tile entry of least modelled time.
int v18_builtin_config(int64_t m, int64_t n, int64_t k, int sm_count);
/// v18's shape class: "m<M rounded up to a power of two, at most 16384>_n<N>_k<K>".
std::string v18_shape_class(const Problem& p);
/// v18's configuration for the problem (tune cache, committed table, the model); `klab tune`
/// reports where it came from.
int v18_tuned_config(const Problem& p);
/// The workspace v18 needs for p: the most any entry that can run p needs.
size_t v18_workspace_bytes(const Problem& p);
/// Registers v18 as a tunable; called by register_hgemm.
void register_v18_tunable(Registry& r);

inline constexpr const char* kV19Id = "hgemm.v19_wgmma_swap_ab";
/// v19's configuration names, one per kV19Entries entry: "<slab columns>_k<splits>", then
/// "_t<halves>" where the tokens are split over a cluster.
std::vector<std::string> v19_config_names();
/// v19's entry for the problem (tune cache, committed table, else its model's: v19_model_entry
/// in CUDA builds, the model with one CTA an SM in CPU-only ones); v18's entry "v19" runs it.
int v19_tuned_config(const Problem& p);
/// Registers v19 as a tunable (its entries, per v18's shape classes); called by register_hgemm.
void register_v19_tunable(Registry& r);

#if KLAB_HAS_CUDA
/// Enqueues v16 (v05's element-copy kernel where TMA cannot run the problem); b.workspace holds
/// v16_workspace_bytes(p).
void launch_v16(const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v17 (v05's element-copy kernel where TMA cannot run the problem); b.workspace holds
/// v17_workspace_bytes(p), zeroed when allocated (its counters return to zero after each launch).
void launch_v17(const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v19 (v05's element-copy kernel where TMA cannot run the problem; no workspace) on
/// its tuned entry (v19_tuned_config).
void launch_v19(const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v19 on entry `entry` of kV19Entries.
void launch_v19_entry(int entry, const Problem& p, Buffers& b, const LaunchArgs& args);
/// v19's model's entry for p (swap_ab_stage.hpp's v19_entry), with the CTAs each entry's kernel
/// can hold on this device at once (cudaOccupancyMaxActiveClusters).
int v19_model_entry(const Problem& p);
/// Enqueues v21 (v05's element-copy kernel where TMA cannot run the problem): its slots at
/// b.workspace, its flags in the workspace's last v21_flag_bytes(p) bytes (v21's own workspace
/// and v18's alike), zeroed when allocated.
void launch_v21(const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v22 (v21's layout with v22_slot_bytes of slots).
void launch_v22(const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v23 (v05's element-copy kernel where TMA cannot run the problem).
void launch_v23(const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v24: B copied into b.workspace (v24_workspace_bytes) where its rows are not whole
/// 128-byte lines, then v14's kernel on 128 x 256 tiles (v05's element-copy kernel where TMA
/// cannot run the problem).
void launch_v24(const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v12 and v13 (v18's entries 13 and 12).
void launch_v12(const Problem& p, Buffers& b, const LaunchArgs& args);
void launch_v13(const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v15's kernel on 128 x block_n tiles (256: the rung, v18's entry 9; 128 and 192:
/// entries 15 and 16).
void launch_v15(int block_n, const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v18's entry `index`; b.workspace holds v18_workspace_bytes(p).
void launch_v18_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues v09's entry `index` (v05's element-copy kernel where TMA cannot run the problem).
void launch_v09_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args);
/// Enqueues configuration `index` of the tune space on `args.stream` (the cp.async path when the
/// problem allows 16-byte rows, element copies otherwise): no allocation, no sync.
void launch_hgemm_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args);
#endif

}  // namespace klab::hgemm
