// v15 hoisted copies: v13's pipeline (128 x 128 blocks of 8 warps, A transposed by 4-byte
// cp.async, 4 stages, fragments double-buffered, two blocks per SM) with the copy bookkeeping
// taken out of the k loop, and BK = 16 instead of 8.
// Adds over v13:
//  - Each thread's copy sources, shared destinations and edge predicates are computed once; a
//    k-tile only advances two pointers and adds a stage offset. Blocks wholly inside C copy every
//    full k-tile unpredicated; edge blocks and the last, partial k-tile take a predicated path.
//  - BK = 16: the per-tile overhead (copies, wait, barrier, stage offsets) is paid per 1024 FFMA
//    instead of 512.
// Why: v13's main loop (`klab sass`) runs 678 instructions per iteration for 512 FFMA (75.5%;
// v09 85%, cuBLAS 88%): the address, predicate and select arithmetic of its 5 copies per thread,
// redone every 8 k-steps.
// Static check (`klab sass --kernel`, the main loop's fall-through iteration): 1162 instructions
// for 1024 FFMA, 88.1% FFMA (v13: 678 for 512, 75.5%; v09: 85.3%; BK = 8 with the same
// hoisting: about 86%). A's copies go by warp chunks of 4 rows x 8 k, so their shared-memory
// writes stay conflict-free at BK = 16.
// Expected (written before it ran): 83-88% of cuBLAS at 4096^3, from scaling v13's measured
// rate by the FFMA share; the stalls v09 and v13 share (dispatch, barrier) are untouched, so 95%
// of cuBLAS is not expected from this alone.
// Measured: inside the prediction, with more issue slots active than v09 and fewer than cuBLAS
// (Nsight Compute); the numbers and the runs: docs/worklogs/gemm.md.
// Requirements: as v13.
#include "kernels/sgemm/multistage.cuh"

namespace klab::sgemm {

namespace {

using Config = MultistageAtConfig<128, 128, 16, 32, 64, 8, 8, 256, 4, 2, /*hoisted*/ true>;

}  // namespace

Variant gpu_v15_hoisted_copies() {
  return multistage_variant<Config>(
      "v15_hoisted_copies",
      "v13 with the copies' addresses and bounds computed once per thread, BK 16");
}

}  // namespace klab::sgemm
