// v09 fa3_three_consumers (sm_90a): v07 with a third consumer warpgroup at D = 64, as
// FlashAttention 3 runs that head dimension (192-row tiles). At D = 64 a round's two GEMMs
// (64 x 128 x 64, twice) take ~512 clocks of the tensor pipe, half of D = 128's, while a
// warpgroup's softmax of the same 64 x 128 scores does not shrink: in 52cd004's and 4e010c8's
// runs v07 kept the tensor pipe 44% busy at D = 64 non-causal (cuDNN 59%), its top stall
// `wait` (fixed-latency dependencies) and its issue slots half used. With two consumers one
// softmax must hide under one other round's GEMMs; with three, under two.
// - The block: three consumer warpgroups of 64 rows (kBlockM = 192) and the producer warpgroup,
//   512 threads; setmaxnreg 24 for the producer (its one thread issues TMA copies) and 160 for
//   the consumers, which hold O (32 registers at D = 64), S (64) and the P in flight (32).
// - The ping-pong cycles over the three (fa3_schedule.hpp: each waits on its own named barrier
//   and arrives on the next one's; the last opens the first's first round and leaves out its
//   arrive after its own last round), modelled on the CPU for two and three warpgroups.
// - Q's tile is 192 rows (24 KiB); the K/V ring keeps three stages of 128 keys.
// At D = 128 and 256 the rung is v07 (two consumers): three would leave 160 registers a thread
// for O's 64 or 128.
// Changes from v07: the configuration at D = 64 (fa3::Config's consumer count); the loop, the
// softmax options (lazy rescale) and the producer are v07's.
// Prediction: docs/worklogs/attention.md.
// Requirements: v05's.
#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V09Name {
  static constexpr const char* kName = "attention.v09";
};
}  // namespace

Variant gpu_v09_fa3_three_consumers() {
  return fa3::variant<
      fa3::OverlapRung<V09Name, fa3::SoftmaxOptions<0, true>, fa3::ThreeConsumerConfig>>(
      "attention.v09_fa3_three_consumers",
      "v07 with three consumer warpgroups at D = 64 (192-row tiles, setmaxnreg 24/160, the "
      "ping-pong cycling over three)");
}

}  // namespace klab::attention
