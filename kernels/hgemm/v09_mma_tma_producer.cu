// v09 mma_tma_producer (sm_90): v05's warp tiles, fed by a warp-specialised TMA pipeline
// (tma_producer_sm90.cuh). One producer warp issues TMA boxes into a 4-stage ring of 48 KiB
// stages with full/empty mbarriers; eight consumer warps (64x64 each, 128x256 block, 1 block/SM)
// ldmatrix and mma.sync only.
// Why: v05 (436.7 TFLOP/s at 4096^3 bf16, 58.7% of cuBLASLt in session 5) keeps the tensor pipe
// 73.5% busy. Its consumers also issue the copies (12 LDGSTS per thread per k-tile, with their
// address arithmetic and predicates: ~15% of the loop's non-HMMA issue slots) and all eight warps
// meet at a __syncthreads after every k-tile, where the SM's only block drains together (a
// `wait` + barrier bubble each 4 mma steps). Here a consumer's only synchronisation is its own
// wait on the next stage's full barrier, which is normally already complete (3 stages ahead),
// and one arrive per stage; the warps drift apart instead of meeting.
// Prediction (written before it ran): tensor pipe 73.5% -> 77-80% busy, 455-475 TFLOP/s at
// 4096^3 (61-64% of cuBLASLt), the same gain at 8192^3. Risk: with 288 threads a thread may hold
// at most 224 registers (v05 uses 254, of which the copier's addresses are ~20): spills would
// cost more than the gain; and consumer warps drifting apart may lose the L2/L1 sharing of
// v05's lockstep.
// Measured (session 6, results/h200/run_gemm_session6.json and three more runs): 519.7 TFLOP/s
// at 4096^3 bf16, 66.1% of cuBLASLt's 786.6 in the same run (v05 56.8%); 66.8-69.2% in the
// other runs, 14-19% above v05 in each: the prediction was too low. Tensor pipe 88.1% busy
// (v05 73.4%), main loop 212 instructions per k-tile (v05 309), `barrier` stalls 0.08 (v05
// 0.22); the top stalls are now the HMMA issue itself (`wait`, `math_pipe_throttle`).
// Requirements: sm_90 (TMA, mbarrier transaction counts), 193 KiB of dynamic shared memory; the
// TMA path needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers (16-byte row pitches);
// other problems run v05's kernel with element copies.
#include "kernels/hgemm/tma_producer_sm90.cuh"

namespace klab::hgemm {

namespace {

using Cfg = TmaProducerConfig</*block*/ 128, 256, /*stages*/ 4, /*group*/ 8>;
using Fallback =
    MultistageConfig</*block*/ 128, 256, 64, /*warp*/ 64, 64, /*stages*/ 4, /*blocks/SM*/ 1>;

}  // namespace

Variant gpu_v09_mma_tma_producer() {
  return tma_producer_variant<Cfg, Fallback>(
      "v09_mma_tma_producer",
      "v05's 128x256 block of 8 mma.sync warps fed by a TMA producer warp, 4-stage mbarrier ring");
}

}  // namespace klab::hgemm
