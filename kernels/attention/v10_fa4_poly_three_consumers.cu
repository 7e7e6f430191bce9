// v10 fa4_poly_three_consumers (sm_90a): v09 with v08's emulated exponential, every eighth term
// of a row by device::ex2_poly on the FMA pipe instead of the MUFU. On two consumer warpgroups
// the polynomial gained 4-5% at D = 64 (v08 against v07, 52cd004's and bcbcce5's runs) and lost
// at D >= 128; with three, the MUFU serves three warpgroups' softmaxes where it served two, and
// the issue slots are busier (52.6% against 41.2% in bcbcce5's profile of v09), so the trade is
// measured again rather than assumed.
// Changes from v09: the softmax's options (SoftmaxOptions<8, true>); at D = 128 and 256 the rung
// is v08.
// Prediction: docs/worklogs/attention.md.
// Requirements: v05's.
#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V10Name {
  static constexpr const char* kName = "attention.v10";
};
}  // namespace

Variant gpu_v10_fa4_poly_three_consumers() {
  return fa3::variant<
      fa3::OverlapRung<V10Name, fa3::SoftmaxOptions<8, true>, fa3::ThreeConsumerConfig>>(
      "attention.v10_fa4_poly_three_consumers",
      "v09 with v08's emulated exponential (every eighth term of a row by a polynomial on the "
      "FMA pipe)");
}

}  // namespace klab::attention
