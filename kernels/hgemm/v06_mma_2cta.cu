// v06 mma_2cta: v05's pipeline on a 128x128x64 block of 4 warps (2x2) of 64x64, 3 stages of
// 32 KiB (96 KiB), two blocks resident per SM (__launch_bounds__(128, 2): still 255 registers
// per thread, 2 x 128 x ~240 fits the 64K register file).
// The question it answers against v05: same 8 warps per SM and the same 64x64 warp tile (same
// HMMA : LDSM ratio, 32 : 8 per 16-deep step), but two independent blocks, so while one block's
// warps wait at their barrier or drain their epilogue the other block's keep the tensor pipe busy.
// The price: 128x128 outputs per (128+128) x 64 staged elements instead of 128x256 per
// (128+256) x 64, i.e. 1.33x the L2 -> SM bytes per flop (at 4096^3 ~ 3 TB/s of L2 reads at
// 500 TFLOP/s: well within H200's L2 bandwidth), and 3 stages per block instead of 4.
// Expected: about v05, +-5%: better if v05 is bound by barrier/epilogue bubbles (likely: one
// block per SM), worse if by L2 bandwidth. ~470-520 TFLOP/s at 4096^3. Same grid quantisation
// as v05 at 4096^3 (1024 tiles over 264 slots vs 512 over 132: 3.88 waves either way).
// Measured: below v05 (docs/worklogs/gemm.md). The likely cost is the smaller tile's extra
// shared-memory traffic per MMA.
// Requirements: sm_80+, 96 KiB dynamic shared memory per block (runs on A100 too, 2 blocks/SM
// there needs 2 x 97 KiB <= 164 KiB: one block/SM on A100). Any m, n, k as v04/v05.
#include "kernels/hgemm/multistage_sm80.cuh"

namespace klab::hgemm {

namespace {

using Cfg =
    MultistageConfig</*block*/ 128, 128, 64, /*warp*/ 64, 64, /*stages*/ 3, /*blocks/SM*/ 2>;

}  // namespace

Variant gpu_v06_mma_2cta() {
  return multistage_variant<Cfg>(
      "v06_mma_2cta", "v05's pipeline on 128x128x64 blocks of 4 warps, 3 stages, 2 blocks/SM");
}

}  // namespace klab::hgemm
