// v13 fa2_two_row_tiles: v03's kernel (fa2_kernel.cuh) in FlashAttention 2's own tile shape at
// D = 64 and 128: 128 query rows a block of four warps, so a warp owns 32 rows (two m16 row
// tiles) and every K and V fragment it loads by ldmatrix feeds two MMAs; 64-key blocks; Q's
// fragments read from Q's shared tile at every k step at D = 128 (in registers they would be 64
// beside O's 128 and S's 64), kept in registers at D = 64 (32). D = 256 runs v03's form (O alone
// is 128 registers a thread there).
// Changes from v03: the Config (row tiles, Q's place); the kernel's copies of K and V walk one
// running pointer a thread, so that no per-chunk offsets stay live across the loop (with them,
// 4e010c8's first two-row-tile form spilled 172 bytes at 64 keys and fell back to 32-key blocks,
// which cost more than the second row tile gained).
// Expected bottleneck: v03's profile (4e8807c) had the tensor pipe 50% busy, eight warps an SM
// and shared memory near its bandwidth: per MMA a warp read 256 bytes of K or V fragments and
// its block 64 bytes of cp.async stores. With two row tiles a warp and a 128-row block: ~160
// bytes of fragments (K, V and now Q) and 32 of stores an MMA.
// Prediction (written before it ran), causal D = 128 bf16 H = 32 at 8k and 16k on an H200:
// 325-360 TFLOP/s, +4-15% over v03 in the same run, 0.95-1.05x PyTorch's flash back end;
// D = 64 +0-10% over v03. Refuted if v13 is within 2% of v03 or below it.
// Requirements: v03's.
#include "kernels/attention/fa2_kernel.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {

/// Two m16 row tiles a warp and 64-key blocks at D = 64 and 128 (Q in registers at 64 only);
/// v03's configuration at 256.
template <int kD>
using V13Config =
    fa2::Config<kD, kD == 256 ? 1 : 2, kD == 256 ? 32 : 64, kD == 64, kD == 256 ? 1 : 2>;

struct V13Name {
  static constexpr const char* kName = "attention.v13";
};

}  // namespace

Variant gpu_v13_fa2_two_row_tiles() {
  return fa2::variant<fa2::Rung<V13Config, V13Name>>(
      "attention.v13_fa2_two_row_tiles",
      "v03 in FA2's tile shape: 128-row blocks, two m16 row tiles a warp (each K/V fragment "
      "feeds two MMAs), Q read from shared memory at every k step at D = 128, 64-key blocks");
}

}  // namespace klab::attention
