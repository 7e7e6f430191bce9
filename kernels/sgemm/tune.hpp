#pragma once
// The tuning space of the warp-tiled SGEMM kernel (v09's template, v10's table): every
// configuration a `klab tune` sweep may run by index, and how v10 picks one per shape class: the
// tune cache for this device, then the committed table kernels/sgemm/tuned.json, then a
// built-in guess (klab/harness/tuned_lookup.hpp). Host-compilable; the launcher is defined in
// v10_autotuned.cu (CUDA builds only).
#include <string>
#include <vector>

#include "klab/harness/family.hpp"
#include "klab/harness/tuned_lookup.hpp"
#include "klab/harness/registry.hpp"

namespace klab::sgemm {

/// One instantiation of the warp-tiled kernel. A block of `threads` computes a block_m x block_n
/// tile of C, stepping block_k along k through two shared-memory stages; each warp owns a
/// warp_m x warp_n piece, each lane thread_m x thread_n elements of it, in 4 x 4 chunks spread
/// (lanes_m x lanes_n lanes apart) over the warp tile so that shared reads never conflict.
struct SgemmConfig {
  int block_m, block_n, block_k;  ///< kBlockM, kBlockN, kBlockK
  int warp_m, warp_n;             ///< kWarpM, kWarpN
  int thread_m, thread_n;         ///< kThreadM, kThreadN
  int threads;                    ///< kThreads

  constexpr int lanes_m() const { return warp_m / thread_m; }
  constexpr int lanes_n() const { return warp_n / thread_n; }
  constexpr int warps() const { return (block_m / warp_m) * (block_n / warp_n); }
  /// Static shared memory: two stages of A^T (block_k x (block_m + 4)) and B (block_k x block_n).
  constexpr int smem_bytes() const { return 2 * block_k * (block_m + 4 + block_n) * 4; }
  /// The constraints the kernel template static_asserts, in one place.
  constexpr bool valid() const {
    return thread_m % 4 == 0 && thread_n % 4 == 0 && warp_m % thread_m == 0 &&
           warp_n % thread_n == 0 && lanes_m() * lanes_n() == 32 && block_m % warp_m == 0 &&
           block_n % warp_n == 0 && warps() * 32 == threads && block_m % 32 == 0 &&
           block_k % 8 == 0 && (block_m * block_k / 4) % threads == 0 &&
           (block_k * block_n / 4) % threads == 0 && smem_bytes() <= 48 * 1024;
  }
  /// "128x128x16_w32x64_t8x8_256"
  std::string name() const;
};

/// Every configuration v10 can launch; index = position. Keep entries appended (results name
/// them by index and by name).
inline constexpr SgemmConfig kTuneSpace[] = {
    {128, 128, 16, 32, 64, 8, 8, 256},  // 0: v09's configuration
    {128, 128, 8, 32, 64, 8, 8, 256},   // 1
    {128, 128, 16, 64, 32, 8, 8, 256},  // 2
    {128, 128, 8, 64, 64, 8, 16, 128},  // 3: 4 warps of 64 x 64, 128 accumulators per lane
    {128, 256, 8, 64, 64, 8, 16, 256},  // 4
    {256, 128, 8, 64, 64, 8, 16, 256},  // 5
    {64, 128, 8, 32, 64, 8, 8, 128},    // 6: BK = 8 — at 16 the staging registers spill under 128
    {128, 64, 8, 64, 32, 8, 8, 128},    // 7
    {64, 64, 16, 32, 32, 8, 4, 128},    // 8
    {64, 64, 16, 32, 32, 4, 8, 128},    // 9
    {32, 64, 16, 16, 32, 4, 4, 128},    // 10: short m
    {64, 32, 16, 32, 16, 4, 4, 128},    // 11: short n
};
inline constexpr int kTuneSpaceSize = static_cast<int>(sizeof(kTuneSpace) / sizeof(kTuneSpace[0]));

consteval bool all_valid() {
  for (const SgemmConfig& c : kTuneSpace)
    if (!c.valid()) return false;
  return true;
}
static_assert(all_valid(), "every tune-space entry must satisfy SgemmConfig::valid()");

/// The configurations a sweep can run, in index order.
std::vector<SgemmConfig> sgemm_tune_space();

/// Configuration names, in index order (the names tune tables store).
std::vector<std::string> sgemm_config_names();

/// Shape classes v10 chooses by; `klab tune` at a shape of each class fills the tables.
enum class ShapeClass { large, medium, small, short_m, short_n };
const char* shape_class_name(ShapeClass c);
ShapeClass shape_class(const Problem& p);
/// shape_class_name(shape_class(p)): the key the tune tables of v10, v16 and v17 store.
std::string shape_class_key(const Problem& p);

inline constexpr const char* kV10Id = "sgemm.v10_autotuned";
/// v10's committed table, relative to the source directory.
inline constexpr const char* kCommittedTable = "kernels/sgemm/tuned.json";

/// v10's built-in guess for a shape class (used when no table has an entry).
int builtin_config(ShapeClass c);

/// v10's choice for the problem and where it came from: the first usable of the tune cache for
/// this device, the committed table and the built-in guess. Tables are read once per shape class
/// per process.
TunedChoice tuned_choice(const Problem& p);
/// The same lookup from explicit tables and device name, read now (tests; `klab tune`).
TunedChoice tuned_choice_from(const Problem& p, const std::vector<TuneSource>& sources,
                              const std::string& device);
/// tuned_choice(p).config: index into kTuneSpace.
int tuned_config(const Problem& p);

/// ok, or why configuration `index` cannot run `p` (index out of range, grid limits).
Status sgemm_config_can_implement(int index, const Problem& p);

/// Registers v10 as a tunable (klab/harness/tunable.hpp); called by register_sgemm.
void register_sgemm_tunable(Registry& r);

#if KLAB_HAS_CUDA
/// Enqueues configuration `index` of the tune space on `args.stream`: no allocation, no sync.
void launch_sgemm_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args);
#endif

}  // namespace klab::sgemm
