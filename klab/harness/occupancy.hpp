#pragma once
// Occupancy by hand: how many blocks of a kernel fit on one SM, and which resource runs out
// first. The same rules as the CUDA occupancy calculator (cuda_occupancy.h), written out so that
// the limiting factor can be named and the numbers checked by a CPU test. Host code only.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace klab {

/// Per-SM resources and allocation rules of one architecture.
struct SmLimits {
  std::string arch = "sm_90";
  int warp_size = 32;
  int max_threads_per_sm = 2048;
  int max_warps_per_sm = 64;
  int max_blocks_per_sm = 32;
  int max_threads_per_block = 1024;
  int regs_per_sm = 65536;
  int regs_per_block = 65536;
  int max_regs_per_thread = 255;
  int reg_alloc_unit = 256;  ///< registers are given to a warp in units of this many
  int sub_partitions = 4;    ///< each holds regs_per_sm / sub_partitions registers and whole warps
  int64_t smem_per_sm = 228 * 1024;           ///< the largest shared-memory carveout
  int64_t smem_per_block_optin = 227 * 1024;  ///< what a block may ask for (opt-in above 48 KiB)
  int64_t smem_reserved_per_block = 1024;     ///< the driver's per-block reservation (sm_80+)
  int smem_alloc_unit = 128;
  /// The shared-memory sizes the L1/shared split can take, ascending (bytes).
  std::vector<int64_t> smem_carveouts{0,          8 * 1024,   16 * 1024,  32 * 1024,  64 * 1024,
                                      100 * 1024, 132 * 1024, 164 * 1024, 196 * 1024, 228 * 1024};

  /// Hopper (H100/H200): the defaults above.
  static SmLimits sm90() { return {}; }
};

/// What one launch of a kernel asks of an SM.
struct KernelResources {
  int block_threads = 0;     ///< threads per block (x*y*z)
  int regs_per_thread = 0;   ///< from the compiler (cudaFuncAttributes::numRegs)
  int64_t static_smem = 0;   ///< __shared__ arrays (cudaFuncAttributes::sharedSizeBytes)
  int64_t dynamic_smem = 0;  ///< the launch's dynamic shared memory
  /// cudaFuncAttributePreferredSharedMemoryCarveout: percent of smem_per_sm, -1 = driver default.
  int carveout_pct = -1;
};

enum class Limiter : uint8_t { threads, warps, blocks, registers, shared_memory };
std::string_view limiter_name(Limiter l);

inline constexpr int kUnlimited = 1 << 30;

struct Occupancy {
  int blocks_per_sm = 0;  ///< resident blocks per SM: the minimum of the by_* limits
  int warps_per_block = 0;
  int active_warps = 0;  ///< blocks_per_sm * warps_per_block
  double occupancy = 0;  ///< active_warps / max_warps_per_sm (theoretical)

  // Blocks per SM each resource alone would allow (kUnlimited when it does not bind).
  int by_threads = 0, by_warps = 0, by_blocks = 0, by_registers = 0, by_smem = 0;
  /// Every resource whose limit equals blocks_per_sm, in the Limiter order (ties are common:
  /// threads and warps are one resource counted two ways).
  std::vector<Limiter> limiters;

  int regs_per_warp = 0;           ///< allocated: regs * 32 rounded up to reg_alloc_unit
  int64_t regs_per_block = 0;      ///< allocated for the whole block
  int64_t smem_per_block = 0;      ///< allocated: static + dynamic + reserved, rounded up
  int64_t smem_config = 0;         ///< the carveout the shared-memory limit was computed against
  int64_t smem_config_needed = 0;  ///< the smallest carveout that holds blocks_per_sm blocks

  std::string invalid;  ///< non-empty: the launch cannot run at all (and why)

  Limiter limiter() const { return limiters.empty() ? Limiter::threads : limiters.front(); }
  /// "registers" or "threads = warps" when tied.
  std::string limiter_text() const;
};

/// Theoretical occupancy of one launch on one SM.
Occupancy compute_occupancy(const KernelResources& k, const SmLimits& sm = SmLimits::sm90());

/// The smallest carveout in `sm.smem_carveouts` that is >= bytes (-1 when none is).
int64_t smallest_carveout(const SmLimits& sm, int64_t bytes);

}  // namespace klab
