// v08 mma_persistent: v07's winning configuration (v05's 128x256x64 block of 8 warps of 64x64,
// 4 stages, 1 block/SM, rasterization groups of 16 tile rows) as a persistent kernel: one
// resident wave of 132 blocks, each computing every 132nd tile in turn (multistage_sm80.cuh,
// kPersistent).
// Changes over v07 (one k loop over all of a block's tiles):
// - the pipeline never drains between tiles: the cp.async copies of the next tile's first three
//   k-tiles are issued during the current tile's last k-tiles, and the first fragments of the
//   next tile are loaded in the current tile's last mma step (v05-v07 pay a fill of 3 stages,
//   ~1-2 us, at the start of each of a block's ~4 tiles);
// - the epilogue writes fragments straight from registers (4-byte stores of bf16 pairs, no
//   barrier): its stores drain while the next tile's mma steps run, instead of two block-wide
//   barriers and a staged copy during which the tensor pipe idles (~1-2 us per tile).
// Why: at 4096^3 a block computes ~4 tiles (512 tiles over 132 SMs: 3.88 waves); the fill and
// the epilogue are a few % of a tile's time there, part of v07's shortfall at 4096^3 against
// 8192^3 (where a block computes 16 tiles and the same per-tile costs weigh the same) that is not
// wave quantisation (the 4th round keeps 116 SMs busy, unchanged here).
// Expected (the prediction, written before it ran): +2-4% over v07 at 4096^3 (60.5-61.7% of
// cuBLASLt); at 8192^3 about the same gain. Risk: the unstaged 4-byte stores (16 bytes per row
// segment) cost more L2 write transactions than v05's 16-byte rows.
// Measured: refuted, slower than v05 and v07 at 4096^3 and about v07 at 8192^3. Nsight Compute:
// the tensor pipe less busy, more `wait` stalls, about twice the L2 write sectors (the 4-byte
// stores: 8 sectors per request instead of 16-byte rows) and more L2 read sectors, not explained.
// The fill and the epilogue it removes were a smaller cost than what the register-level epilogue
// and the longer loop body add. Kept as the measured counter-example. The numbers and the runs:
// docs/worklogs/gemm.md.
// Requirements: as v05 (sm_80+, 192 KiB of dynamic shared memory: H100/H200, not A100). Any m,
// n, k (cp.async path when k % 8 == 0, n % 8 == 0 and the pointers are 16-byte aligned).
#include "kernels/hgemm/multistage_sm80.cuh"

namespace klab::hgemm {

namespace {

using Cfg = MultistageConfig</*block*/ 128, 256, 64, /*warp*/ 64, 64, /*stages*/ 4,
                             /*blocks/SM*/ 1, /*group*/ 16, /*persistent*/ true>;

}  // namespace

Variant gpu_v08_mma_persistent() {
  return multistage_variant<Cfg>(
      "v08_mma_persistent",
      "v07's winner (128x256x64, 4 stages, group 16) as one resident wave looping over tiles");
}

}  // namespace klab::hgemm
