// v02 fused graph: v01's five launches captured once into a CUDA graph and replayed as one
// graph launch (graph_variant.cu), as serving engines run decode: the host's work a launch
// happens once at capture, and the GPU takes the five kernels as one submission.
// Prediction (written before it ran): against v01 in the same run, 3-8 us less at B = 1 and 16
// (the host's per-launch work and the gaps between kernels), within 2% at (64, 4k).
// Measured (2026-12-03_a787076): 1.06x v01 at (1, 4k) (2.6 us), 1.01-1.04x elsewhere.
#include "kernels/attention_block/gpu_steps.hpp"

namespace klab::attention_block {

Variant gpu_v02_fused_graph() {
  return graph_variant(
      "v02_fused_graph",
      "v01's five launches captured once into a CUDA graph, replayed as one graph launch",
      fused_recipe());
}

}  // namespace klab::attention_block
