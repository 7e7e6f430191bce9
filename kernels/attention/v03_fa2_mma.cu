// v03 fa2_mma: FlashAttention 2 on tensor cores through mma.sync m16n8k16 (fa2_kernel.cuh holds
// the kernel, shared with v13). A block of 4 warps owns kBlockM = 64 query rows of one (batch,
// query head); each warp owns 16 of them (one m16 row tile) for the whole pass, with its Q
// fragments loaded once by ldmatrix into registers (at D = 256 read from Q's shared tile at every
// k step, so that O's 128 registers a thread fit); K and V blocks of 64 keys (32 at D = 256),
// double-buffered by cp.async; P kept in registers as the A operand of P V; causal blocks above
// the diagonal never loaded.
// Adds over v02: tensor cores (v02 runs every product on the FFMA pipe), P kept in registers
// between the two products, the K/V copies asynchronous and double-buffered.
// Expected bottleneck: the mma.sync issue rate and the ldmatrix traffic of K and V (each warp
// reads the whole K and V tiles for its 16 rows: 16 MACs per element loaded), then the softmax's
// FMUL/MUFU work between the two products, which nothing overlaps with the tensor pipe here
// (FA3's ping-pong does). Occupancy: 2 blocks (8 warps) per SM at D = 128.
// Prediction (written before it ran), causal D = 128 bf16 H = 32 N = 8k on an H200: 200-330
// TFLOP/s, i.e. 35-55% of cuDNN's ~600 and 0.6-1.0x PyTorch flash's ~337 (FlashAttention 2
// itself on mma.sync): mma.sync tops out far below the wgmma peak on Hopper.
// Requirements: D in {64, 128, 256}; hq and b up to 65535 (grid y, z); any alignment (16-byte
// aligned tensors take the vector path).
#include "kernels/attention/fa2_kernel.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {

/// One m16 row tile a warp; Q's fragments in registers up to D = 128 (at 256 they would take 64
/// registers beside O's 128); 32-key blocks and one block an SM at D = 256.
template <int kD>
using V03Config = fa2::Config<kD, 1, kD == 256 ? 32 : 64, kD <= 128, kD == 256 ? 1 : 2>;

struct V03Name {
  static constexpr const char* kName = "attention.v03";
};

}  // namespace

Variant gpu_v03_fa2_mma() {
  return fa2::variant<fa2::Rung<V03Config, V03Name>>(
      "attention.v03_fa2_mma",
      "FA2 on mma.sync m16n8k16: 16 query rows per warp, Q and P in registers, swizzled "
      "double-buffered cp.async K/V, causal blocks skipped");
}

}  // namespace klab::attention
