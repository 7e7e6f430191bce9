// v13 multistage, A transposed: v09's tiles (128 x 128 blocks of 8 warps, 32 x 64 warp tiles,
// 8 x 8 per lane, two blocks per SM) fed by a 4-stage cp.async pipeline that transposes A on its
// way into shared memory, with the fragments double-buffered in registers.
// Adds over v11 (measured slower than v09):
//  - A is copied 4 bytes at a time (cp.async.ca ... 4), each element straight to its transposed
//    place: the k loop reads a k-step's A fragment with 2 LDS.128, as v09, where v11 needs 4 LDS.64
//    (A row-major) and so ran out of registers to unroll (its kk loop stays rolled).
//  - BK = 8 (cuBLAS's FFMA kernel on this GPU: 256x128x8, 3 stages), 4 stages in flight.
//  - The fragments of k-step i + 1 load while k-step i's 64 FFMA issue, across the barrier too:
//    the next tile's first fragments are read right after the one barrier per k-tile, so the
//    LDS latency is never exposed (v09 leaves it to the other warps at each tile boundary).
// Why: v10's profile issues on fewer cycles than cuBLAS's; v11 showed that cp.async alone does
// not help when it costs the transposed A layout.
// Expected: 85-90% of cuBLAS at 4096^3; if it lands at v09's rate, the gap is not the pipeline
// but the instruction schedule (register banks, dual issue) — the SASS comparison with cuBLAS is
// the next step.
// Measured: below v09 (docs/worklogs/gemm.md). The main loop is 678 instructions for 512 FFMA
// (`klab sass`; v09's loop is FFMA-denser): the per-tile copy arithmetic of BK = 8 with 4-byte
// copies.
// Requirements: as v11 (16-byte path: k % 4 == 0, n % 4 == 0, 16-byte-aligned A, B, C; any other
// problem runs v09's scalar path).
#include "kernels/sgemm/multistage.cuh"

namespace klab::sgemm {

namespace {

using Config = MultistageAtConfig<128, 128, 8, 32, 64, 8, 8, 256, 4, 2>;

}  // namespace

Variant gpu_v13_multistage_at() {
  return multistage_variant<Config>(
      "v13_multistage_at",
      "A transposed by 4-byte cp.async, 4 stages, BK 8, fragments double-buffered (2 blocks/SM)");
}

}  // namespace klab::sgemm
