// v02 mma_ldmatrix: the tensor cores through PTX: mma.sync.aligned.m16n8k16.row.col (bf16/f16
// in, f32 accumulate) fed by ldmatrix.x4 (A) and ldmatrix.x4.trans (B, row-major [k][n] tile ->
// the "col" fragment), from row-padded shared memory.
// Adds over v01: the fragment layout is ours, not WMMA's opaque one: one ldmatrix.x4 loads a
// whole 16x16 A fragment (or two 16x8 B fragments), a 64x64 warp tile (4x8 m16n8 tiles, 128
// fp32 accumulators per thread) gives 32 HMMA per 8 LDSM, and the epilogue writes straight
// from registers (no shared-memory round trip).
// Tiles: block 128x128x32, 4 warps (2x2) of 64x64; shared memory 19 KiB (rows padded by 16 B
// so that the 8 rows of an ldmatrix phase hit 8 different bank groups).
// Expected bottleneck: latency. Loads are synchronous (LDG -> STS -> barrier -> mma -> barrier):
// nothing overlaps the global loads but the other resident block's work (2 blocks per SM).
// Requirements: sm_80+. Any m, n, k: 16-byte chunk copies with zero-filled edges when
// k % 8 == 0, n % 8 == 0 and the pointers are 16-byte aligned; element-wise copies otherwise.
#include "kernels/hgemm/synchronous_sm80.cuh"

namespace klab::hgemm {

namespace {

constexpr int kPad = 8;
using LayoutA = PaddedLayout<synchronous::kBlockM, synchronous::kBlockK, kPad>;  // (BM, BK) of A
using LayoutB = PaddedLayout<synchronous::kBlockK, synchronous::kBlockN, kPad>;  // (BK, BN) of B

}  // namespace

Variant gpu_v02_mma_ldmatrix() {
  Variant v = gpu_variant("v02_mma_ldmatrix",
                          "mma.sync m16n8k16 via PTX + ldmatrix.x4, padded smem, 64x64 warp tile",
                          [](const Problem& p, Buffers& b, const LaunchArgs& args) {
                            with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
                              synchronous::launch<LayoutA, LayoutB>(g, stream_of(args));
                            });
                          });
  v.can_implement = [](const Problem& p) { return fits_grid_y(p, synchronous::kBlockM); };
  return v;
}

}  // namespace klab::hgemm
