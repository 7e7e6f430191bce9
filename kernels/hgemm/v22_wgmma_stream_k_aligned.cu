// v22 wgmma_stream_k_aligned (sm_90a): v21 with its stream-K pieces walking K together.
// Why: v21's pieces start where the line cuts them, anywhere in K, so the CTAs read A and B
// panels from all over both at once and L2 serves few of them twice: at 2048 x 4096 x 12288 v21
// read 905 MB from DRAM where v14's waves read 208 MB (the minimum 168), its L2 hit rate 58%
// against 78% (2026-12-04_d53a4f9_v15_narrow_grid, Nsight), and it lost 0.70-0.93x cuBLASLt
// wherever the line is most of the work (M = 512, 4096^3's tail, 2048 x 4096 x 12288; the gemm
// worklog's v21 section).
// What changes (stream_k_tiles_sm90.cuh, kAligned; stream_k_plan.hpp's aligned order): each
// piece runs its segments in reverse, its last tile's (from k-tile 0) first and its first
// tile's (the high k-tiles) last, so a piece that spans two tiles walks k-tiles 0 .. 63 with one
// jump and the grid's CTAs stay within a jump of each other in K, as a wave does (4096^3's tail:
// pieces of 56 k-tiles, every CTA at k-tile t or t + 8). The owner can no longer wait for its
// contributors (their segments now run last: a chain of waits through the grid), so no segment
// waits: each split tile's segments all store their fp32 partial (two 128 KiB slots a CTA: its
// last tile's and its first tile's) and count themselves in on the tile's flag; the last to count
// (bar.red.or tells its warpgroup) resets the flag, sums the slots in CTA order (v21's order and
// bits) and stores C. One more 128 KiB write and read per split tile than v21 (the owner's own
// part), in L2; no CTA waits for another, so residency no longer matters for correctness.
// Prediction (written before it ran), paired with v21, v18 and cuBLASLt: the DRAM bytes of
// 2048 x 4096 x 12288 within 1.5x of v14's (v21 4.4x); M = 512 x N = 4096 x K = 4096 23-27 us
// (cuBLASLt 26.0: 0.96-1.13x; v21 0.70-0.79x), M = 512 at N = 6144 and 24576 and K = 12288
// 0.97-1.05x; 4096^3 1.00-1.02x (v18 0.99x: the fourth wave's idle 12% of SMs, less the
// partials); at whole waves the same as v14 (no stream-K).
// Requirements: v21's (sm_90a; 225 KiB of dynamic shared memory; the TMA path needs k % 8 == 0,
// n % 8 == 0 and 16-byte aligned pointers; other problems run v05's kernel with element copies).
// Measured (2026-12-05_382bde2_hgemm_v22): DRAM bytes as predicted, time refuted where K = 4096
// (4096^3 0.92x cuBLASLt); level with v18 at K = 12288.
#include "kernels/hgemm/stream_k_tiles_sm90.cuh"

namespace klab::hgemm {

void launch_v22(const Problem& p, Buffers& b, const LaunchArgs& args) {
  stream_k_tiles::launch_rung<true>("v22", v22_slot_bytes(), p, b, args);
}

Variant gpu_v22_wgmma_stream_k_aligned() {
  Variant v = gpu_variant(
      "v22_wgmma_stream_k_aligned",
      "v21 with each stream-K piece's segments in reverse, so the CTAs walk K together as a wave "
      "does; every split segment stored and counted, the last to count sums them in CTA order",
      launch_v22);
  v.info.min_sm = 90;
  v.can_implement = v21_can_implement;
  v.workspace_bytes = v22_workspace_bytes;
  return v;
}

}  // namespace klab::hgemm
