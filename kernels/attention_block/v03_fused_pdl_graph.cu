// v03 fused pdl graph: v02 with programmatic dependent launch (klab/device/pdl.cuh). Each kernel
// after the first may start while the one before it finishes: the QKV and output GEMMs (hgemm
// v19) issue their first ring lap of weight boxes, which nothing in the block writes, then wait
// on the grid dependency before loading the activations; qk_norm_rope_cache v02 and decode
// attention wait before anything. Every kernel lets the next one be scheduled at its start.
// Why: Nsight of a787076's run at (1, 4k) puts 28 us of the block's 49 in the two M = 1 GEMMs,
// at 3.1 and 2.8 TB/s, each paying a ~5 us start (the first stages' round trip) that hgemm's
// own M = 1 rows pay too; the three small kernels are latency alone.
// Prediction (written before it ran): against v02 in the same run, 1.08-1.15x at (1, 4k) and
// (4, 4k) (4-7 us: two GEMM starts and the gaps at the four boundaries), 1.03-1.06x at (1, 32k),
// within 2% at (16, 8k) and (64, 4k), where the KV cache's stream dominates.
// Measured (2026-12-03_67777d3): 1.07x at (1, 4k), 1.11x at (4, 4k), 1.08x at (1, 32k), 1.02x at
// (16, 8k) and (64, 4k). With the GEMMs' signal moved past their main loop (4e8807c's run)
// 1.02-1.08x: the signal went back to the start. As it stands (2026-12-03_8821e21): 1.06x at
// (1, 4k) (44.8 us against 47.4), 1.09x at (4, 4k), 1.08x at (1, 32k), 1.02x at (16, 8k) and
// (64, 4k); 1.06-1.33x the unfused launches.
#include "kernels/attention_block/gpu_steps.hpp"

namespace klab::attention_block {

Variant gpu_v03_fused_pdl_graph() {
  Recipe r = fused_recipe();
  r.programmatic = true;
  return graph_variant(
      "v03_fused_pdl_graph",
      "v02 with programmatic dependent launch: each kernel starts while the one before ends, the "
      "GEMMs' first weight boxes in flight before they wait for the activations",
      r);
}

}  // namespace klab::attention_block
