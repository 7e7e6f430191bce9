// v05 fa3_overlap (sm_90a): v04's FlashAttention 3 block (a TMA producer warpgroup, two consumer
// warpgroups of 64 query rows, S = Q K^T by wgmma from swizzled shared memory, P in registers as
// the register A operand of O += P V) with FA3's two overlaps of the softmax and the tensor pipe:
// - Intra-warpgroup: a consumer issues S_j = Q K_j^T and then O += P_{j-1} V_{j-1} as two wgmma
//   groups, waits only for the first (wgmma.wait_group 1) and runs block j's mask and online
//   softmax while P_{j-1} V_{j-1} is still on the tensor pipe; then it waits for that product,
//   hands block j - 1's V back, rescales O by block j's alpha and rounds P_j. Through the
//   softmax a thread holds O, S_j and P_{j-1}: kD / 2 + 3 kBlockN / 4 registers (fa3_schedule.hpp),
//   160 at D = 128 with 128-key blocks and 176 at D = 256 with 64-key blocks, inside the 232 of
//   setmaxnreg with room for the rest; so every D keeps v04's blocks. (Issuing S_{j+1} before
//   block j's softmax instead would hold two S blocks: 224 at D = 128 before anything else.)
// - Ping-pong between the two consumers: before a round's wgmma a warpgroup waits on its named
//   barrier (bar.sync), after issuing them it arrives on the other's (bar.arrive), so the two
//   warpgroups' rounds reach the tensor pipe alternately and one's softmax runs under the other's
//   GEMMs. The barrier ids, the opening arrive and the balanced last round are in
//   fa3_schedule.hpp, modelled on the CPU.
// - K and V of a stage go back separately: K_j as soon as S_j is done (after wait_group 1), V_j
//   after its P V, a round later; the producer loads in the rounds' order, V one block behind K
//   (K_j, V_{j-1}: fa3_schedule.hpp's kv_step with lag 1). A three-stage ring at D = 64 and 128,
//   two stages at D = 256 (a third does not fit beside Q). The first form of v05 handed a whole
//   stage back after the P V that overlaps the next softmax, a round later than v04, which left
//   no load ahead at D = 256 (block j + 1's K could only load once round j was over, and round
//   j + 1 needs it at once); with K back after S every load is issued at least a round before
//   the wgmma that reads it, at two stages as at three (modelled on the CPU).
// The producer, the block's setup, the GEMM issue, mask, softmax step, epilogue and the host side
// are v04's (fa3_kernel.cuh); the consumer loop (fa3_overlap.cuh, shared with v06), the ring's
// depth, its load order and the K/V release points change.
// Expected bottleneck: the softmax's exp2 on the MUFU and the FMA of the rescale now overlap the
// other warpgroup's GEMMs; what remains is the tensor pipe itself plus the rounds that cannot
// overlap (each tile's first S and last P V), the masked diagonal blocks of causal tiles, the
// named-barrier handoffs, and O's stores from registers at the end of a tile (no persistent
// scheduler yet: a tile's epilogue does not overlap the next tile's loads).
// Prediction (written before it ran), causal D = 128 bf16 H = 32 N = 8k on an H200: 570-630
// TFLOP/s, 1.07-1.19x v04's 531 and 0.96-1.06x cuDNN's 594 in 2026-12-02_6fda6f1_fa3_decode_v04
// (FA3's paper gains about 15% from the two overlaps together at D = 128). Measured, and the
// prediction for the separate K/V release at D = 256: docs/worklogs/attention.md.
// Requirements: v04's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O; hq and b up
// to 65535).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/fa3_schedule.hpp"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V05Name {
  static constexpr const char* kName = "attention.v05";
};
}  // namespace

Variant gpu_v05_fa3_overlap() {
  return fa3::variant<fa3::OverlapRung<V05Name, fa3::ExactSoftmax>>(
      "attention.v05_fa3_overlap",
      "FA3 with its two overlaps: v04's block, each consumer's softmax of block j under its own "
      "P V of block j - 1 (wgmma.wait_group 1), the two consumers' GEMMs alternated by named "
      "barriers (ping-pong), K handed back after S and V after P V, three-stage K/V ring at "
      "D <= 128");
}

}  // namespace klab::attention
