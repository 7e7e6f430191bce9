// v03 mma_swizzled: v02 with XOR-swizzled shared memory instead of padded rows.
// Adds over v02: chunk c of row r is stored at chunk c ^ swizzle(r) (A rows of 4 chunks:
// swizzle = (r >> 1) & 3; B rows of 16 chunks: r & 7), so both the ldmatrix reads (8 rows, one
// logical chunk) and the 16-byte stores (8 consecutive chunks) hit 8 distinct bank groups: no
// conflicts on either side, where padding left the A stores 2-way conflicted, and no padding
// bytes (16 KiB instead of 19 KiB per stage: it matters once v04 keeps 3-4 stages resident).
// The swizzle term depends only on the lane (tiles start on 8-row boundaries), so it is computed
// once per thread; in the loop an ldmatrix address is a register plus a constant, as in v02.
// Tiles: block 128x128x32, 4 warps (2x2) of 64x64, 16 KiB shared memory.
// Expected bottleneck: as v02, latency of the synchronous loads; a small gain at most from
// the conflict-free stores (expected in ncu: shared store bank conflicts ~0, v02 has some on A).
// Requirements: sm_80+. Any m, n, k: 16-byte chunk copies with zero-filled edges when
// k % 8 == 0, n % 8 == 0 and the pointers are 16-byte aligned; element-wise copies otherwise.
#include "kernels/hgemm/synchronous_sm80.cuh"

namespace klab::hgemm {

namespace {

using LayoutA = SwizzledLayout<synchronous::kBlockM, synchronous::kBlockK>;  // (BM, BK) of A
using LayoutB = SwizzledLayout<synchronous::kBlockK, synchronous::kBlockN>;  // (BK, BN) of B

}  // namespace

Variant gpu_v03_mma_swizzled() {
  Variant v =
      gpu_variant("v03_mma_swizzled",
                  "v02 with XOR-swizzled smem: conflict-free ldmatrix and stores, no padding",
                  [](const Problem& p, Buffers& b, const LaunchArgs& args) {
                    with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
                      synchronous::launch<LayoutA, LayoutB>(g, stream_of(args));
                    });
                  });
  v.can_implement = [](const Problem& p) { return fits_grid_y(p, synchronous::kBlockM); };
  return v;
}

}  // namespace klab::hgemm
