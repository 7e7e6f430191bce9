// v21 wgmma_stream_k_tiles (sm_90a): v14's persistent kernel (one producer, two m64n256k16
// consumer warpgroups on 128 x 256 tiles, a 4-stage TMA ring, C stored box by box through
// stmatrix and the TMA) with the tail wave spread by stream-K. The tiles that fill whole waves
// of the grid are taken whole, as v14 takes them; the k-tiles of the rest form one line that
// every CTA takes an equal piece of, first (stream_k_plan.hpp's StreamKTilesPlan). A tile split
// between pieces is summed in the kernel: each segment but the owner's (the one holding k-tile
// 0, its piece's last) stores its fp32 accumulators in its CTA's workspace slot, each thread its
// own registers as float4s (the owner's threads read them back in the same layout: no
// shuffle), fences and counts itself in on the tile's flag; the owner waits for the count, adds
// the slots in CTA order to its own registers, resets the flag for the next launch and stores C
// through v14's epilogue. One launch, the same bits every run.
// Why: v18's tiles leave the last wave part-empty where the tiles are not a multiple of 132:
// 4096^3 is 512 tiles of 128 x 256, 3.88 waves (the fourth 88% full); Qwen3-8B's projections at
// M = 512 are 64-96 such tiles, under one wave, where v18 falls back to 128 x 128 or 128 x 192
// tiles (0.96-0.98x cuBLASLt, 2026-12-04_c6ccbfb_interleaved_grids). Stream-K keeps every SM
// on 128 x 256 tiles to the end; the partials cost one 128 KiB write and read a split segment.
// Prediction (written before it ran): 4096^3 +1-3% over v18's 128 x 256 entry (the tail wave's
// idle SMs, less the partials); M = 512 x N = 4096 x K = 4096 22-25 us (v18 27.2, cuBLASLt
// 26.0: 1.04-1.18x), K = 12288 60-66 us (v18 72.6, cuBLASLt 71.2); at whole waves (tiles a
// multiple of 132) the same as v14.
// Requirements: sm_90a, every CTA of the grid resident at once (one an SM: the owners wait for
// later CTAs' first segments); 225 KiB of dynamic shared memory; the TMA path needs k % 8 == 0,
// n % 8 == 0 and 16-byte aligned pointers; other problems run v05's kernel with element copies.
#include "kernels/hgemm/stream_k_tiles_sm90.cuh"

namespace klab::hgemm {

void launch_v21(const Problem& p, Buffers& b, const LaunchArgs& args) {
  stream_k_tiles::launch_rung<false>("v21", v21_slot_bytes(), p, b, args);
}

Variant gpu_v21_wgmma_stream_k_tiles() {
  Variant v = gpu_variant(
      "v21_wgmma_stream_k_tiles",
      "v14's 128x256 persistent kernel with the tail wave spread by stream-K: whole waves of "
      "tiles taken whole, the rest's k-tiles in equal pieces a CTA, split tiles summed in CTA "
      "order by the CTA holding their first k-tile",
      launch_v21);
  v.info.min_sm = 90;
  v.can_implement = v21_can_implement;
  v.workspace_bytes = v21_workspace_bytes;
  return v;
}

}  // namespace klab::hgemm
